// app.js: the inspector page. It talks to its own server only (/api/...),
// renders every server-supplied string as text (never as HTML), and makes
// a link only of an http(s) URL: anything else (javascript:, data:,
// file:) is shown inert.
"use strict";
(function () {
  const { h } = window.MCPForm;
  const App = {
    state: null, calls: new Map(), trace: [], seq: 0, views: {}, tab: "servers",
    selected: null, // {server, name} of the tool shown
    metrics: { filterMs: [] }, // how long the tool list took to render and filter
    listeners: [],
  };
  window.App = App;

  // The session key: given once in the address's fragment, then kept in
  // this origin's storage (other ports cannot read it) and sent with
  // every request, beside the cookie (which browsers also send to other
  // ports of the host).
  const KEY = "mcpadapter_ui_key";
  const given = new URLSearchParams(location.hash.slice(1)).get("key");
  if (given) {
    localStorage.setItem(KEY, given);
    history.replaceState(null, "", location.pathname + location.search);
  }

  // api calls the inspector's server; a failure throws an Error whose
  // info holds the server's error view.
  App.api = async function (method, path, body) {
    const r = await App.fetch(method, path, body);
    const text = await r.text();
    let data;
    try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text }; }
    if (!r.ok) { const e = new Error((data && data.error) || r.statusText); e.info = data; throw e; }
    return data;
  };

  // fetch makes a request to the inspector's server, with the key.
  App.fetch = function (method, path, body) {
    const opts = { method, headers: { "X-Mcpadapter-Key": localStorage.getItem(KEY) || "" }, credentials: "same-origin" };
    if (body !== undefined) { opts.headers["Content-Type"] = "application/json"; opts.body = JSON.stringify(body); }
    return fetch(path, opts);
  };

  // download is a link that saves what GET path answers as file.
  App.download = function (path, file, text, testid) {
    return h("a", { href: "#", "data-testid": testid, text, onclick: async (ev) => {
      ev.preventDefault();
      try {
        const r = await App.fetch("GET", path);
        if (!r.ok) throw new Error(await r.text());
        const a = h("a", { href: URL.createObjectURL(await r.blob()), download: file });
        a.click();
        setTimeout(() => URL.revokeObjectURL(a.href), 60000);
      } catch (e) { App.toast(e.message); }
    } });
  };

  App.toast = function (msg) {
    const t = document.getElementById("toast");
    t.textContent = msg;
    t.hidden = false;
    clearTimeout(App.toastTimer);
    App.toastTimer = setTimeout(() => { t.hidden = true; }, 3000);
  };

  // safeURL returns the URL when it is http(s), else null.
  App.safeURL = function (s) {
    try { const u = new URL(s); return u.protocol === "http:" || u.protocol === "https:" ? u.href : null; } catch (e) { return null; }
  };

  // link is a link that opens an http(s) URL in a new tab, or the URL as
  // inert text when it is anything else.
  App.link = function (url, text) {
    const safe = App.safeURL(url);
    if (safe) return h("a", { href: safe, target: "_blank", rel: "noopener noreferrer", "data-testid": "safe-link", text: text || url });
    return h("span", { class: "inert", "data-testid": "inert-link", title: "not opened: only http and https links are", text: text && text !== url ? text + " <" + url + ">" : url });
  };

  // richText shows text with its http(s) URLs as links; nothing else in
  // it becomes markup.
  App.richText = function (text, cls) {
    const span = h("span", { class: cls });
    const re = /\bhttps?:\/\/[^\s<>"')\]]+/g;
    let last = 0, m;
    while ((m = re.exec(text || "")) !== null) {
      span.append(text.slice(last, m.index), App.link(m[0]));
      last = m.index + m[0].length;
    }
    span.append((text || "").slice(last));
    return span;
  };

  App.errorBox = function (info, testid) {
    if (!info) return null;
    const box = h("div", { class: "err", "data-testid": testid || "error", "data-kind": info.kind || "" }, info.error || String(info));
    if (info.stderr && info.stderr.length && !(info.error || "").includes("stderr")) box.append(h("div", { text: "stderr:\n  " + info.stderr.join("\n  ") }));
    return box;
  };

  App.pretty = function (v) {
    if (typeof v === "string") { try { return JSON.stringify(JSON.parse(v), null, 2); } catch (e) { return v; } }
    return JSON.stringify(v, null, 2);
  };

  App.on = function (fn) { App.listeners.push(fn); };

  // ---- tabs ----
  App.show = function (tab) {
    App.tab = tab;
    for (const b of document.querySelectorAll("#tabs button")) b.classList.toggle("on", b.dataset.tab === tab);
    for (const s of document.querySelectorAll("main > section")) s.hidden = s.dataset.view !== tab;
    const v = App.views[tab];
    if (v && v.show) v.show();
  };

  // ---- events: the server's long poll ----
  async function poll() {
    for (;;) {
      try {
        const r = await App.api("GET", "/api/events?after=" + App.seq);
        if (r.lost) await reloadCalls();
        const calls = new Map(); // each call's latest state: drawn once
        for (const e of r.events) {
          App.seq = e.seq;
          if (e.kind === "call") calls.set(e.call.id, e.call);
          else if (e.kind === "trace" || e.kind === "log") keepTrace(Object.assign({ seq: e.seq, time: e.time }, e.trace));
          else if (e.kind === "servers") { /* a reconnect: the view that asked re-renders */ }
        }
        for (const c of calls.values()) App.updateCall(c);
        if (r.events.some((e) => e.kind === "trace" || e.kind === "log")) for (const fn of App.listeners) fn("trace");
      } catch (e) {
        await new Promise((res) => setTimeout(res, 1000));
      }
    }
  }

  // keepTrace adds an entry to the page's trace, which keeps the latest
  // entries only (as the server does): at most TRACE_MAX of them, holding
  // at most TRACE_CHARS characters.
  const TRACE_MAX = 20000, TRACE_CHARS = 16 << 20;
  App.traceChars = 0;
  function keepTrace(e) {
    App.trace.push(e);
    App.traceChars += e.message.length;
    if (App.trace.length <= TRACE_MAX && App.traceChars <= TRACE_CHARS) return;
    let drop = 0;
    while (drop < App.trace.length && (App.trace.length - drop > TRACE_MAX / 2 || App.traceChars > TRACE_CHARS / 2)) App.traceChars -= App.trace[drop++].message.length;
    App.trace.splice(0, drop);
  }

  async function reloadCalls() {
    for (const c of await App.api("GET", "/api/calls")) App.updateCall(c);
  }

  // ---- servers ----
  const servers = {
    el: () => document.getElementById("view-servers"),
    show() { this.render(); },
    render(diff) {
      const st = App.state;
      const root = this.el();
      root.replaceChildren();
      const bar = h("div", { class: "toolbar" },
        h("h2", { text: "Servers" }),
        h("button", { "data-testid": "reconnect", onclick: () => this.reconnect(), text: "Reconnect all and compare" }));
      root.append(bar);
      for (const g of st.groups) {
        root.append(h("p", { class: "muted", "data-testid": "group" }, "Group " + g.servers.join(", ") + ": one protocol era, " + g.era + (g.pulledDownBy ? " (pulled down to the handshake era by " + g.pulledDownBy + ")" : "")));
      }
      for (const s of st.servers) root.append(serverCard(s));
      for (const f of st.unavailable) {
        root.append(h("div", { class: "card failed", "data-testid": "server-failed", "data-server": f.server },
          h("h3", {}, h("span", { class: "badge bad", text: "unavailable" }), f.server || "(server)"),
          f.op ? h("div", { class: "muted", text: "failed at: " + f.op }) : null,
          App.errorBox(f, "failure")));
      }
      if (diff) root.append(diffBox(diff));
    },
    async reconnect() {
      const btn = this.el().querySelector("[data-testid=reconnect]");
      btn.disabled = true;
      document.body.dataset.reconnect = "running";
      try {
        const r = await App.api("POST", "/api/reconnect", {});
        App.setState(r.state);
        this.render(r.diff);
      } catch (e) { App.toast(e.message); }
      document.body.dataset.reconnect = "done";
    },
  };
  App.views.servers = servers;

  function capsList(c) {
    if (!c) return [];
    const out = [];
    if (c.tools) out.push("tools" + (c.tools.listChanged ? " (listChanged)" : ""));
    if (c.prompts) out.push("prompts" + (c.prompts.listChanged ? " (listChanged)" : ""));
    if (c.resources) out.push("resources" + (c.resources.subscribe ? " (subscribe)" : ""));
    if (c.completions) out.push("completions");
    if (c.logging) out.push("logging");
    for (const k of Object.keys(c.extensions || {})) out.push(k);
    for (const k of Object.keys(c.experimental || {})) out.push("experimental: " + k);
    return out;
  }

  function serverCard(s) {
    const impl = s.implementation || {};
    return h("div", { class: "card", "data-testid": "server", "data-server": s.name, "data-protocol": s.protocolVersion, "data-era": s.era },
      h("h3", {}, h("span", { class: "badge ok", text: "connected" }), s.name),
      h("div", { class: "grid" },
        "implementation", h("span", { "data-field": "implementation" }, (impl.title || impl.name || "") + " " + (impl.version || "")),
        "protocol", h("span", { "data-field": "protocol" }, s.protocolVersion + " (" + s.era + " era)"),
        "transport", h("span", { "data-field": "transport", text: s.transport }),
        "capabilities", h("span", { "data-field": "capabilities" }, capsList(s.capabilities).map((c) => h("span", { class: "badge", text: c }))),
        "connect time", h("span", { "data-field": "connect-time", text: s.connectMs.toFixed(1) + " ms" }),
        "connected at", h("span", { text: new Date(s.connectedAt).toLocaleTimeString() }),
        s.instructions ? "instructions" : null, s.instructions ? App.richText(s.instructions) : null));
  }

  function diffBox(d) {
    const box = h("div", { class: "card diff", "data-testid": "reconnect-diff" }, h("h3", { text: "What the reconnect changed" }));
    let n = 0;
    const line = (cls, text, testid) => { n++; box.append(h("div", { class: cls, "data-testid": testid, text })); };
    for (const s of d.serversAdded) line("add", "+ server " + s, "diff-server-added");
    for (const s of d.serversRemoved) line("del", "− server " + s, "diff-server-removed");
    for (const c of d.serverChanges) line("", "server " + c.name + ": " + c.field + ": " + c.before + " → " + c.after, "diff-server-changed");
    for (const t of d.toolsAdded) line("add", "+ tool " + t, "diff-tool-added");
    for (const t of d.toolsRemoved) line("del", "− tool " + t, "diff-tool-removed");
    for (const c of d.toolsChanged) line("", "tool " + c.name + ": " + c.field + " changed", "diff-tool-changed");
    if (!n) box.append(h("div", { class: "ok", "data-testid": "diff-none", text: "Nothing changed: same servers, versions, capabilities and tools." }));
    return box;
  }

  // ---- tools ----
  const PAGE = 100; // tools drawn at a time
  const tools = {
    built: false,
    items: [],
    el: () => document.getElementById("view-tools"),
    show() { if (!this.built) this.build(); },
    build() {
      const t0 = performance.now();
      this.built = true;
      const root = this.el();
      const st = App.state;
      const filter = h("input", { type: "search", placeholder: "filter tools", "data-testid": "tool-filter", oninput: () => this.filter(filter.value) });
      this.count = h("span", { class: "muted", "data-testid": "tool-count" });
      this.list = h("div", { class: "list", "data-testid": "tool-list" });
      this.detail = h("div", { "data-testid": "tool-detail" });
      this.items = st.tools.map((t) => ({ t, el: null, hay: (t.name + " " + t.server + " " + (t.title || "") + " " + (t.description || "")).toLowerCase() }));
      this.more = h("button", { class: "small more", "data-testid": "tool-more", onclick: () => this.grow() });
      // The list is drawn a page at a time: the next page when its end
      // scrolls into view, so a catalog of thousands costs what a hundred do.
      this.observer = new IntersectionObserver((es) => { if (es.some((e) => e.isIntersecting)) this.grow(); }, { root: this.list });
      this.observer.observe(this.more);
      const head = [h("h2", { text: "Tools" }), filter, this.count];
      if (st.listError) head.push(App.errorBox(st.listError, "list-error"));
      root.replaceChildren(h("div", { class: "toolbar" }, ...head), h("div", { class: "split" }, this.list, this.detail));
      this.filter("");
      App.metrics.toolsBuildMs = performance.now() - t0;
      root.dataset.state = "ready";
      if (this.items.length && !App.selected) this.select(this.items[0].t);
      // Make the other tools' entries while the page is idle, so that a
      // filter only moves them.
      const items = this.items;
      let next = 0;
      const work = (deadline) => {
        while (next < items.length && deadline.timeRemaining() > 2) this.itemEl(items[next++]);
        if (next < items.length && this.items === items) requestIdleCallback(work);
      };
      requestIdleCallback(work);
    },
    itemEl(it) {
      if (!it.el) {
        const t = it.t;
        it.el = h("div", { class: "item", "data-testid": "tool-item", "data-tool": t.name, "data-server": t.server },
          h("div", {}, t.collides ? h("span", { class: "badge bad", "data-testid": "collision", text: "collision" }) : null, h("b", { text: t.name }),
            t.name !== t.originalName ? h("span", { class: "muted", text: " ← " + t.server + "/" + t.originalName }) : h("span", { class: "muted", text: " " + t.server })),
          h("div", { class: "d", text: t.title || t.description || "" }));
        it.el.addEventListener("click", () => this.select(t));
        it.el.classList.toggle("sel", !!App.selected && App.selected.server === t.server && App.selected.name === t.name);
      }
      return it.el;
    },
    // draw adds the matches from shown up to limit, and the "more" button.
    draw() {
      const frag = document.createDocumentFragment();
      const end = Math.min(this.limit, this.matches.length);
      for (let i = this.shown; i < end; i++) frag.append(this.itemEl(this.matches[i]));
      this.shown = end;
      this.more.remove();
      const left = this.matches.length - end;
      if (left > 0) {
        this.more.textContent = "show " + Math.min(left, PAGE) + " more of " + left;
        frag.append(this.more);
      }
      this.list.append(frag);
      this.list.dataset.drawn = String(end);
      void this.list.offsetHeight; // lay the list out before the clock stops
    },
    grow() {
      if (this.shown >= this.matches.length) return;
      this.limit = this.shown + PAGE;
      this.draw();
    },
    filter(q) {
      const t0 = performance.now();
      const words = q.toLowerCase().split(/\s+/).filter(Boolean);
      this.matches = this.items.filter((it) => words.every((w) => it.hay.includes(w)));
      this.list.replaceChildren();
      this.shown = 0;
      this.limit = PAGE;
      this.draw();
      this.count.textContent = this.matches.length + " of " + this.items.length + " tools";
      this.count.dataset.shown = String(this.matches.length);
      this.list.dataset.query = q;
      App.metrics.filterMs.push(performance.now() - t0);
    },
    select(t) {
      App.selected = { server: t.server, name: t.name };
      for (const it of this.items) if (it.el) it.el.classList.toggle("sel", it.t === t);
      this.detail.replaceChildren(toolDetail(t));
    },
  };
  App.views.tools = tools;

  function annotationsOf(a) {
    if (!a) return [];
    const out = [];
    if (a.readOnlyHint) out.push("read-only");
    if (a.destructiveHint) out.push("destructive");
    if (a.idempotentHint) out.push("idempotent");
    if (a.openWorldHint) out.push("open world");
    return out;
  }

  function toolDetail(t) {
    let schema;
    try { schema = typeof t.inputSchema === "string" ? JSON.parse(t.inputSchema) : t.inputSchema; } catch (e) { schema = { type: "object" }; }
    const form = window.MCPForm.create(schema || { type: "object" });
    const raw = h("textarea", { rows: 10, "data-testid": "raw-json", hidden: true });
    let rawMode = false;
    const rawToggle = h("button", { "data-testid": "raw-toggle", text: "Raw JSON" });
    rawToggle.addEventListener("click", () => {
      if (!rawMode) {
        raw.value = JSON.stringify(form.get() || {}, null, 2);
      } else {
        try { form.set(JSON.parse(raw.value)); } catch (e) { App.toast("not JSON: " + e.message); return; }
      }
      rawMode = !rawMode;
      raw.hidden = !rawMode;
      form.el.hidden = rawMode;
      rawToggle.textContent = rawMode ? "Form" : "Raw JSON";
      rawToggle.dataset.mode = rawMode ? "raw" : "form";
    });
    const timeout = h("input", { type: "number", min: 0, step: 1, placeholder: "none", "data-testid": "call-timeout", class: "narrow" });
    const reset = h("input", { type: "checkbox", "data-testid": "call-reset" });
    const task = h("select", { "data-testid": "call-task" }, h("option", { value: "", text: "task: when the tool needs one" }), h("option", { value: "prefer", text: "task: whenever allowed" }), h("option", { value: "never", text: "task: never" }));
    const callBtn = h("button", { class: "primary", "data-testid": "call-button", text: "Call" });
    callBtn.addEventListener("click", async () => {
      let args;
      if (rawMode) {
        try { args = JSON.parse(raw.value || "{}"); } catch (e) { App.toast("the arguments are not JSON: " + e.message); return; }
      } else {
        args = form.get();
        const errs = form.errors();
        if (errs.length) { App.toast(errs.join("; ")); return; }
      }
      try {
        const body = { server: t.server, tool: t.name, args: args === undefined ? {} : args, task: task.value };
        if (Number(timeout.value) > 0) body.timeoutMs = Math.round(Number(timeout.value) * 1000);
        if (reset.checked) body.resetOnProgress = true;
        const r = await App.api("POST", "/api/call", body);
        App.updateCall({ id: r.id, server: t.server, tool: t.name, args: body.args, status: "running", started: new Date().toISOString() });
      } catch (e) { App.toast(e.message); }
    });
    const calls = h("div", { "data-testid": "calls" });
    const box = h("div", { class: "card", "data-testid": "tool", "data-tool": t.name, "data-server": t.server },
      h("h3", {}, t.name, t.title ? h("span", { class: "muted", text: " — " + t.title }) : null),
      h("div", { class: "muted" }, "server " + t.server + (t.originalName !== t.name ? ", its name " + t.originalName : "") + (t.taskSupport ? ", tasks " + t.taskSupport : ""),
        annotationsOf(t.annotations).map((a) => h("span", { class: "badge", text: a }))),
      t.description ? h("p", { "data-testid": "tool-description" }, App.richText(t.description)) : null,
      t.ui ? appView(t) : null,
      form.el, raw,
      h("div", { class: "toolbar" }, callBtn, rawToggle, "timeout (s)", timeout, h("label", {}, reset, " timeout resets on progress"), task),
      h("details", {}, h("summary", { text: "input schema" }), h("pre", { "data-testid": "input-schema", text: App.pretty(t.inputSchema) })),
      t.outputSchema ? h("details", {}, h("summary", { text: "output schema" }), h("pre", { text: App.pretty(t.outputSchema) })) : null,
      calls);
    box.form = form;
    App.currentForm = form;
    App.renderCalls(calls, t);
    return box;
  }

  // appView shows the tool's MCP Apps view on demand, in a frame on the
  // views' own origin, sandboxed to scripts only; it gets no host bridge.
  function appView(t) {
    const holder = h("div", {});
    const btn = h("button", { class: "small", "data-testid": "app-show", text: "Show the view", onclick: async () => {
      try {
        const r = await App.api("POST", "/api/view", { server: t.server, tool: t.name });
        const frame = h("iframe", { sandbox: "allow-scripts", referrerpolicy: "no-referrer", class: "appframe", "data-testid": "app-frame", title: "MCP Apps view of " + t.name });
        frame.src = r.url;
        holder.replaceChildren(frame);
      } catch (e) { holder.replaceChildren(App.errorBox(e.info || e)); }
    } });
    return h("div", { class: "muted", "data-testid": "app-view" }, "MCP Apps view: ", h("code", { text: t.ui.resourceUri || "" }),
      t.ui.visibility && t.ui.visibility.length ? " (visible to " + t.ui.visibility.join(", ") + ") " : " ", btn,
      h("div", { class: "muted", text: "It runs sandboxed on another origin, with no network and no host bridge: it renders, and cannot call tools." }), holder);
  }

  // ---- calls ----
  App.updateCall = function (c) {
    const old = App.calls.get(c.id);
    if (old && old.ended && !c.ended) return; // an older state
    App.calls.set(c.id, c);
    const box = document.querySelector('[data-testid=calls]');
    if (box && App.selected && c.server === App.selected.server && c.tool === App.selected.name) App.renderCall(box, c);
    for (const fn of App.listeners) fn("call", c);
  };

  App.renderCalls = function (box, t) {
    const list = [...App.calls.values()].filter((c) => c.server === t.server && c.tool === t.name);
    for (const c of list) App.renderCall(box, c);
  };

  App.renderCall = function (box, c) {
    let card = box.querySelector('[data-call-id="' + CSS.escape(c.id) + '"]');
    const fresh = callCard(c);
    if (card) {
      // Keep an open question form as the user is filling it in.
      const q = card.querySelector("[data-testid=elicitation]");
      if (q && c.status === "input" && card.dataset.round === String(c.questions && c.questions.round)) {
        const nq = fresh.querySelector("[data-testid=elicitation]");
        if (nq) nq.replaceWith(q);
      }
      card.replaceWith(fresh);
    } else box.prepend(fresh);
  };

  function callCard(c) {
    const card = h("div", { class: "card call", "data-testid": "call", "data-call-id": c.id, "data-status": c.status, "data-round": c.questions ? String(c.questions.round) : "" },
      h("div", { class: "toolbar" },
        h("b", { text: c.id }), h("span", { class: "badge", "data-testid": "call-status", text: c.status }),
        c.saved ? h("span", { class: "badge " + (c.match === true ? "ok" : c.match === false ? "bad" : ""), "data-testid": "saved-match", "data-match": c.match === undefined ? "" : String(c.match), text: c.match === true ? "as saved" : c.match === false ? "differs from saved" : "checking" }) : null,
        c.ended ? h("span", { class: "muted", text: Math.round(new Date(c.ended) - new Date(c.started)) + " ms" }) : null,
        !c.ended ? h("button", { class: "danger small", "data-testid": "cancel-call", onclick: () => App.api("POST", "/api/call/cancel", { id: c.id }).catch((e) => App.toast(e.message)), text: "Cancel" }) : null,
        c.result ? h("button", { class: "small", "data-testid": "save-call", onclick: () => saveCall(c), text: "Save call" }) : null),
      h("div", { class: "muted mono", text: "arguments " + JSON.stringify(c.args) }));
    if (c.progress || (c.status === "running" && !c.task)) card.append(progressBar(c));
    if (c.task) card.append(taskTimeline(c));
    if (c.status === "input" && c.questions) card.append(elicitForm(c));
    if (c.error) card.append(App.errorBox(c.error, "call-error"));
    if (c.result) card.append(App.renderResult(c.result));
    return card;
  }

  function progressBar(c) {
    const p = c.progress;
    const bar = h("div", { class: "progress" + (p && p.total ? "" : " indeterminate"), "data-testid": "progress", "data-progress": p ? String(p.progress) : "", "data-total": p && p.total ? String(p.total) : "", "data-count": p ? String(p.count) : "0" }, h("div", {}));
    if (p && p.total) bar.firstChild.style.width = Math.min(100, (100 * p.progress) / p.total) + "%";
    return h("div", {}, bar, p ? h("div", { class: "muted", "data-testid": "progress-text", text: p.progress + (p.total ? " / " + p.total : "") + (p.message ? " — " + p.message : "") }) : null);
  }

  App.taskTimeline = taskTimeline;
  function taskTimeline(c) {
    const t = c.task;
    const last = t.history.length ? t.history[t.history.length - 1].status : "";
    return h("div", { "data-testid": "task", "data-task-id": t.handle.taskId, "data-status": last },
      h("span", { class: "muted", text: "task " + t.handle.taskId + " (" + t.handle.protocol + ")" + (t.skipped ? ", " + t.skipped + " earlier statuses not kept" : "") }),
      h("div", { class: "timeline" }, t.history.map((s) => h("span", { class: "st", "data-testid": "task-status", "data-status": s.status, title: new Date(s.time).toLocaleTimeString(),
        text: "+" + ((new Date(s.time) - new Date(c.started)) / 1000).toFixed(1) + "s " + s.status + (s.message ? ": " + s.message : "") }))));
  }

  async function saveCall(c) {
    try {
      const s = await App.api("POST", "/api/saved", { callId: c.id, name: "" });
      App.toast("saved as " + s.name);
      for (const fn of App.listeners) fn("saved");
    } catch (e) { App.toast(e.message); }
  }

  // elicitForm asks the server's questions: a form made from each form
  // request's schema, or a URL-mode request's link (http(s) only).
  function elicitForm(c) {
    const q = c.questions;
    const box = h("div", { class: "elicit", "data-testid": "elicitation", "data-era": q.era || "" },
      h("b", { text: "The server asks" + (q.era ? " (" + q.era + ")" : "") }));
    if (q.problem) box.append(h("div", { class: "err", "data-testid": "elicit-problem", text: q.problem }));
    const forms = {};
    for (const r of q.requests) {
      const part = h("div", { "data-testid": "elicit-request", "data-key": r.key, "data-mode": r.mode }, h("p", { text: r.message }));
      if (r.mode === "url") {
        part.append(h("div", { "data-testid": "elicit-url" }, "Visit: ", App.link(r.url)));
      } else {
        const f = window.MCPForm.create(r.requested_schema || { type: "object" });
        forms[r.key] = f;
        part.append(f.el);
      }
      box.append(part);
    }
    const answer = async (action) => {
      const responses = {};
      for (const r of q.requests) {
        responses[r.key] = { action };
        if (action === "accept" && forms[r.key]) responses[r.key].content = forms[r.key].get() || {};
      }
      try { await App.api("POST", "/api/call/answer", { id: c.id, responses }); } catch (e) { App.toast(e.message); }
    };
    box.append(h("div", { class: "toolbar" },
      h("button", { class: "primary", "data-testid": "answer-accept", onclick: () => answer("accept"), text: "Accept" }),
      h("button", { "data-testid": "answer-decline", onclick: () => answer("decline"), text: "Decline" }),
      h("button", { "data-testid": "answer-cancel", onclick: () => answer("cancel"), text: "Cancel the call" })));
    return box;
  }

  // ---- results ----
  App.renderResult = function (r) {
    const box = h("div", { class: "result", "data-testid": "result", "data-is-error": String(!!r.isError) });
    if (r.isError) box.append(h("span", { class: "badge bad", "data-testid": "tool-error", text: "the tool reported an error" }));
    if (r.failure) box.append(App.errorBox(r.failure, "call-error"));
    for (const c of r.content || []) box.append(App.renderBlock(c));
    if (r.structured) {
      box.append(h("div", { class: "block", "data-testid": "structured" }, h("div", { class: "label", text: "structured content" }), h("pre", { text: App.pretty(r.structured) }),
        r.outputSchema ? h("details", {}, h("summary", { text: "output schema" }), h("pre", { text: App.pretty(r.outputSchema) })) : null));
    }
    if (r.meta) box.append(h("details", {}, h("summary", { text: "_meta" }), h("pre", { text: App.pretty(r.meta) })));
    return box;
  };

  App.renderBlock = function (c) {
    const label = (t) => h("div", { class: "label", text: t });
    const wrap = (kids) => h("div", { class: "block", "data-testid": "content-" + c.type, "data-type": c.type }, ...kids);
    switch (c.type) {
      case "text": return wrap([h("pre", { text: c.text })]);
      case "image":
        return wrap([label("image " + c.mimeType), c.mimeType.startsWith("image/") && c.mimeType !== "image/svg+xml" ? h("img", { src: "data:" + c.mimeType + ";base64," + c.data, alt: "image from the tool" }) : h("span", { class: "muted", text: (c.data || "").length + " base64 characters" })]);
      case "audio":
        return wrap([label("audio " + c.mimeType), c.mimeType.startsWith("audio/") ? h("audio", { controls: true, src: "data:" + c.mimeType + ";base64," + c.data }) : null]);
      case "resource_link":
        return wrap([label("resource link"), App.link(c.uri, c.title || c.name || c.uri), c.description ? h("div", { class: "muted", text: c.description }) : null, h("div", { class: "muted", text: c.mimeType || "" })]);
      case "resource":
        return wrap([label("embedded resource " + (c.uri || "") + " " + (c.mimeType || "")), c.text !== undefined && c.text !== "" ? h("pre", { text: c.text }) : h("span", { class: "muted", text: c.data ? atob(c.data).length + " bytes" : "(empty)" })]);
      default:
        return wrap([label("content of type " + (c.name || "unknown")), h("pre", { text: App.pretty(c.raw || c) })]);
    }
  };

  App.setState = function (st) {
    App.state = st;
    document.getElementById("source").textContent = st.source + " — " + st.servers.length + " connected" + (st.unavailable.length ? ", " + st.unavailable.length + " unavailable" : "") + ", " + st.tools.length + " tools";
    tools.built = false;
    if (App.tab === "tools") tools.build();
    for (const fn of App.listeners) fn("state");
  };

  async function start() {
    for (const b of document.querySelectorAll("#tabs button")) b.addEventListener("click", () => App.show(b.dataset.tab));
    try {
      const t0 = performance.now();
      const [st, calls] = await Promise.all([App.api("GET", "/api/state"), App.api("GET", "/api/calls")]);
      const t1 = performance.now();
      App.metrics.stateMs = t1 - t0; // the server connecting and listing
      App.setState(st);
      for (const c of calls) App.updateCall(c);
      App.show(App.tab);
      document.body.dataset.state = "ready";
      void document.body.offsetHeight;
      App.metrics.renderMs = performance.now() - t1;
      App.metrics.readyMs = performance.now();
    } catch (e) {
      document.body.dataset.state = "error";
      document.querySelector("main").replaceChildren(h("div", { class: "err", "data-testid": "load-error", text: "The inspector could not load: " + e.message }));
      return;
    }
    poll();
  }
  document.addEventListener("DOMContentLoaded", start);
})();
