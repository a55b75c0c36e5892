// more.js: the inspector's other views: resources, prompts, tasks, the
// protocol trace, the model view (provider profiles, token cost, tool
// search) and saved calls.
"use strict";
(function () {
  const App = window.App;
  const { h } = window.MCPForm;

  function serverSelect(testid, cap, onchange) {
    const sel = h("select", { "data-testid": testid });
    for (const s of App.state.servers) {
      if (cap && !(s.capabilities && s.capabilities[cap])) continue;
      sel.append(h("option", { value: s.name, text: s.name }));
    }
    sel.addEventListener("change", onchange);
    return sel;
  }

  // completionInput is an input whose suggestions come from the server's
  // completion/complete, as the user types.
  function completionInput(server, ref, name, arg, testid, context) {
    const listId = "dl-" + Math.random().toString(36).slice(2);
    const dl = h("datalist", { id: listId });
    const input = h("input", { type: "text", list: listId, "data-testid": testid, "data-arg": arg });
    let n = 0;
    input.addEventListener("input", async () => {
      const my = ++n;
      try {
        const r = await App.api("POST", "/api/complete", { server: server(), ref, name, argument: arg, value: input.value, context: context ? context() : undefined });
        if (my !== n) return;
        dl.replaceChildren(...r.values.map((v) => h("option", { value: v })));
        input.dataset.completions = String(r.values.length);
      } catch (e) { input.dataset.completions = "error"; }
    });
    return h("span", {}, input, dl);
  }

  // ---- resources ----
  App.views.resources = {
    el: () => document.getElementById("view-resources"),
    show() {
      const root = this.el();
      if (!App.state.servers.length) { root.replaceChildren(h("p", { class: "muted", text: "No server is connected." })); return; }
      this.sel = serverSelect("resource-server", "resources", () => this.load());
      this.out = h("div", { "data-testid": "resource-content" });
      this.lists = h("div");
      root.replaceChildren(h("div", { class: "toolbar" }, h("h2", { text: "Resources" }), this.sel), h("div", { class: "split" }, this.lists, this.out));
      if (this.sel.options.length) this.load();
      else this.lists.append(h("p", { class: "muted", text: "No server offers resources." }));
    },
    async load() {
      const server = this.sel.value;
      this.lists.replaceChildren(h("p", { class: "muted", text: "listing…" }));
      let r;
      try { r = await App.api("GET", "/api/resources?server=" + encodeURIComponent(server)); } catch (e) { this.lists.replaceChildren(App.errorBox(e.info || e)); return; }
      const list = h("div", { class: "list", "data-testid": "resource-list" });
      for (const res of r.resources) {
        const it = h("div", { class: "item", "data-testid": "resource-item", "data-uri": res.uri }, h("b", { text: res.name || res.uri }), h("div", { class: "d", text: res.uri + (res.mimeType ? "  " + res.mimeType : "") }));
        it.addEventListener("click", () => this.read(res.uri));
        list.append(it);
      }
      const tpls = h("div", { "data-testid": "template-list" });
      for (const t of r.templates) tpls.append(this.template(t));
      this.lists.replaceChildren(h("h3", { text: r.resources.length + " resources" }), list, r.resourcesError ? App.errorBox(r.resourcesError) : null,
        h("h3", { text: r.templates.length + " templates" }), tpls, r.templatesError ? App.errorBox(r.templatesError) : null);
      this.lists.dataset.state = "ready";
    },
    template(t) {
      const vars = [...new Set([...(t.uriTemplate.matchAll(/\{[+#./;?&]?([^}]+)\}/g))].flatMap((m) => m[1].split(",").map((v) => v.replace(/\*$|:\d+$/, ""))))];
      const inputs = {};
      const ctx = () => { const o = {}; for (const [k, i] of Object.entries(inputs)) if (i.value) o[k] = i.value; return o; };
      const fields = vars.map((v) => {
        const w = completionInput(() => this.sel.value, "resource", t.uriTemplate, v, "template-arg", ctx);
        inputs[v] = w.querySelector("input");
        return h("label", {}, v + " ", w);
      });
      const read = h("button", { class: "small", "data-testid": "template-read", text: "Read", onclick: () => {
        const uri = t.uriTemplate.replace(/\{([+#./;?&]?)([^}]+)\}/g, (_, op, names) => names.split(",").map((n) => {
          const v = (inputs[n.replace(/\*$|:\d+$/, "")] || {}).value || "";
          return op === "+" || op === "#" ? encodeURI(v) : encodeURIComponent(v);
        }).join(","));
        this.read(uri);
      } });
      return h("div", { class: "card", "data-testid": "template", "data-template": t.uriTemplate }, h("b", { text: t.name || t.uriTemplate }), h("div", { class: "muted mono", text: t.uriTemplate }), h("div", { class: "toolbar" }, ...fields, read));
    },
    async read(uri) {
      this.out.replaceChildren(h("p", { class: "muted", text: "reading " + uri }));
      this.out.dataset.state = "loading";
      try {
        const r = await App.api("POST", "/api/resource", { server: this.sel.value, uri });
        this.out.replaceChildren(h("h3", { text: uri }), ...r.contents.map((c) => App.renderBlock(c)));
      } catch (e) { this.out.replaceChildren(App.errorBox(e.info || e)); }
      this.out.dataset.state = "ready";
      this.out.dataset.uri = uri;
    },
  };

  // ---- prompts ----
  App.views.prompts = {
    el: () => document.getElementById("view-prompts"),
    show() {
      const root = this.el();
      if (!App.state.servers.length) { root.replaceChildren(h("p", { class: "muted", text: "No server is connected." })); return; }
      this.sel = serverSelect("prompt-server", "prompts", () => this.load());
      this.lists = h("div");
      this.out = h("div", { "data-testid": "prompt-detail" });
      root.replaceChildren(h("div", { class: "toolbar" }, h("h2", { text: "Prompts" }), this.sel), h("div", { class: "split" }, this.lists, this.out));
      if (this.sel.options.length) this.load();
      else this.lists.append(h("p", { class: "muted", text: "No server offers prompts." }));
    },
    async load() {
      let r;
      try { r = await App.api("GET", "/api/prompts?server=" + encodeURIComponent(this.sel.value)); } catch (e) { this.lists.replaceChildren(App.errorBox(e.info || e)); return; }
      const list = h("div", { class: "list", "data-testid": "prompt-list" });
      for (const p of r.prompts) {
        const it = h("div", { class: "item", "data-testid": "prompt-item", "data-prompt": p.name }, h("b", { text: p.name }), h("div", { class: "d", text: p.description || "" }));
        it.addEventListener("click", () => this.open(p));
        list.append(it);
      }
      this.lists.replaceChildren(list);
      this.lists.dataset.state = "ready";
    },
    open(p) {
      const inputs = {};
      const ctx = () => { const o = {}; for (const [k, i] of Object.entries(inputs)) if (i.value) o[k] = i.value; return o; };
      const rows = (p.arguments || []).map((a) => {
        const w = completionInput(() => this.sel.value, "prompt", p.name, a.name, "prompt-arg", ctx);
        inputs[a.name] = w.querySelector("input");
        return h("div", { class: "row" }, h("b", { text: a.name }), a.required ? h("span", { class: "req", text: " *" }) : null, " ", w, a.description ? h("div", { class: "muted", text: a.description }) : null);
      });
      const msgs = h("div", { "data-testid": "prompt-messages" });
      const get = h("button", { class: "primary", "data-testid": "prompt-get", text: "Get prompt", onclick: async () => {
        const args = {};
        for (const [k, i] of Object.entries(inputs)) if (i.value !== "") args[k] = i.value;
        try {
          const r = await App.api("POST", "/api/prompt", { server: this.sel.value, name: p.name, args });
          msgs.replaceChildren(r.description ? h("p", { class: "muted", text: r.description }) : "", ...r.messages.map((m) => h("div", { class: "card", "data-testid": "prompt-message", "data-role": m.role }, h("b", { text: m.role }), App.renderBlock(m.content))));
        } catch (e) { msgs.replaceChildren(App.errorBox(e.info || e)); }
        msgs.dataset.state = "ready";
      } });
      this.out.replaceChildren(h("div", { class: "card" }, h("h3", { text: p.name }), p.description ? h("p", { text: p.description }) : null, ...rows, get, msgs));
    },
  };

  // ---- tasks ----
  App.views.tasks = {
    el: () => document.getElementById("view-tasks"),
    show() { this.render(); },
    render() {
      const root = this.el();
      const withTask = [...App.calls.values()].filter((c) => c.task);
      const list = h("div", { "data-testid": "task-list" });
      for (const c of withTask.reverse()) {
        list.append(h("div", { class: "card call", "data-testid": "task-card", "data-status": c.status, "data-call-id": c.id },
          h("div", { class: "toolbar" }, h("b", { text: c.tool }), h("span", { class: "muted", text: "on " + c.server + ", call " + c.id }), h("span", { class: "badge", text: c.status }),
            !c.ended ? h("button", { class: "danger small", "data-testid": "task-cancel-call", onclick: () => App.api("POST", "/api/call/cancel", { id: c.id }), text: "Cancel" }) : null),
          App.taskTimeline(c), c.result ? App.renderResult(c.result) : null, c.error ? App.errorBox(c.error) : null));
      }
      if (!withTask.length) list.append(h("p", { class: "muted", text: "No call has run as a task yet. A tool whose taskSupport is required runs as one; choose \"task: whenever allowed\" to ask for one." }));
      const srv = serverSelect("tasks-server", null, () => {});
      const out = h("div", { "data-testid": "server-tasks" });
      const listBtn = h("button", { "data-testid": "tasks-list", text: "List the server's tasks", onclick: async () => {
        try {
          const r = await App.api("GET", "/api/tasks?server=" + encodeURIComponent(srv.value));
          const tbl = h("table", {}, h("tr", {}, ...["task", "status", "message", "created", "updated", ""].map((x) => h("th", { text: x }))));
          for (const t of r.tasks) {
            tbl.append(h("tr", { "data-testid": "server-task", "data-status": t.status }, h("td", { class: "mono", text: t.taskId }), h("td", { text: t.status }), h("td", { text: t.statusMessage || "" }), h("td", { text: t.createdAt || "" }), h("td", { text: t.lastUpdatedAt || "" }),
              h("td", {}, ["completed", "failed", "cancelled"].includes(t.status) ? null : h("button", { class: "small danger", text: "Cancel", onclick: () => App.api("POST", "/api/task/cancel", { server: srv.value, taskId: t.taskId }).then(() => listBtn.click(), (e) => App.toast(e.message)) }))));
          }
          out.replaceChildren(tbl);
        } catch (e) { out.replaceChildren(App.errorBox(e.info || e)); }
      } });
      root.replaceChildren(h("h2", { text: "Tasks" }), list, h("h3", { text: "On the server" }), h("div", { class: "toolbar" }, srv, listBtn), out);
    },
  };
  App.on((what) => { if (what === "call" && App.tab === "tasks") App.views.tasks.render(); });

  // ---- trace ----
  App.views.trace = {
    built: false,
    el: () => document.getElementById("view-trace"),
    show() {
      if (!this.built) this.build();
      this.render();
    },
    build() {
      this.built = true;
      this.q = h("input", { type: "search", placeholder: "filter: method, id or text", "data-testid": "trace-filter", oninput: () => this.render() });
      this.server = h("select", { "data-testid": "trace-server", onchange: () => this.render() }, h("option", { value: "", text: "all servers" }));
      for (const s of App.state.servers) this.server.append(h("option", { value: s.name, text: s.name }));
      this.dir = h("select", { "data-testid": "trace-dir", onchange: () => this.render() }, h("option", { value: "", text: "sent, received and logs" }), h("option", { value: "send", text: "sent" }), h("option", { value: "recv", text: "received" }), h("option", { value: "log", text: "logs" }));
      this.count = h("span", { class: "muted", "data-testid": "trace-count" });
      this.body = h("tbody", {});
      const exp = App.download("/api/trace/export.json", "mcpadapter-trace.json", "Export JSON", "trace-export");
      this.el().replaceChildren(h("div", { class: "toolbar" }, h("h2", { text: "Protocol trace" }), this.q, this.server, this.dir, this.count, exp),
        h("div", { class: "tracewrap" }, h("table", { class: "trace" }, h("thead", {}, h("tr", {}, ...["time", "server", "", "method", "id", "message"].map((x) => h("th", { text: x })))), this.body)));
    },
    render() {
      const q = this.q.value.toLowerCase(), srv = this.server.value, dir = this.dir.value;
      const rows = App.trace.filter((e) => (!srv || e.server === srv) && (!dir || e.dir === dir) && (!q || ((e.method || "") + " " + JSON.stringify(e.id || "") + " " + e.message).toLowerCase().includes(q)));
      const shown = rows.slice(-500);
      const t0 = App.trace.length ? new Date(App.trace[0].time) : new Date();
      const frag = document.createDocumentFragment();
      for (const e of shown) {
        const msg = h("td", { class: "msg", text: e.message });
        const tr = h("tr", { "data-testid": "trace-row", "data-dir": e.dir, "data-server": e.server, "data-method": e.method || "", "data-seq": String(e.seq) },
          h("td", { class: "mono", text: "+" + ((new Date(e.time) - t0) / 1000).toFixed(3) + "s" }), h("td", { text: e.server }),
          h("td", { class: e.dir, text: e.dir === "send" ? "→" : e.dir === "recv" ? "←" : "•" }), h("td", { text: e.method || (e.dir === "log" ? e.level : "(response)") }),
          h("td", { class: "mono", text: e.id ? String(e.id) : "" }), msg);
        msg.addEventListener("click", () => { tr.classList.toggle("open"); msg.textContent = tr.classList.contains("open") ? App.pretty(e.message) : e.message; });
        frag.append(tr);
      }
      this.body.replaceChildren(frag);
      this.count.textContent = rows.length + " of " + App.trace.length + (rows.length > shown.length ? " (the latest 500 shown)" : "");
      this.count.dataset.shown = String(rows.length);
    },
  };
  App.on((what) => { if (what === "trace" && App.tab === "trace") App.views.trace.render(); });

  // ---- model view ----
  App.views.model = {
    el: () => document.getElementById("view-model"),
    profile: "openai-strict",
    show() { this.load(); },
    async load() {
      const root = this.el();
      root.dataset.state = "loading";
      let r;
      try { r = await App.api("GET", "/api/model?profile=" + encodeURIComponent(this.profile)); } catch (e) { root.replaceChildren(App.errorBox(e.info || e)); return; }
      const sel = h("select", { "data-testid": "profile-select", onchange: () => { this.profile = sel.value; this.load(); } });
      for (const t of r.totals) sel.append(h("option", { value: t.profile, text: t.profile }));
      sel.value = r.profile;
      const totals = h("table", { "data-testid": "profile-totals" }, h("tr", {}, ...["profile", "estimated tokens", "schemas changed", "strict", "refused"].map((x) => h("th", { text: x }))));
      for (const t of r.totals) {
        totals.append(h("tr", { "data-testid": "profile-total", "data-profile": t.profile, "data-tokens": String(t.tokens) }, h("td", { text: t.profile }), h("td", { text: String(t.tokens) }), h("td", { text: String(t.changed) }), h("td", { text: t.profile === "openai-strict" ? String(t.strict) : "" }), h("td", { text: String(t.failed) })));
      }
      const tools = h("div", { "data-testid": "profiled-tools" });
      for (const t of r.tools) {
        const changes = h("ul", {}, t.changes.map((c) => h("li", { "data-testid": "change", "data-rule": c.rule }, h("code", { text: c.rule }), " at ", h("code", { text: c.path || "/" }), c.detail ? ": " + c.detail : "")));
        tools.append(h("details", { class: "card", "data-testid": "profiled-tool", "data-tool": t.name, "data-changed": String(t.changed), "data-strict": String(!!t.strict) },
          h("summary", {}, h("b", { text: t.name }), " ", h("span", { class: "muted", text: t.tokens + " tokens" }), " ",
            t.error ? h("span", { class: "badge bad", text: "refused" }) : t.changed ? h("span", { class: "badge warn", text: t.changes.length + " changes" }) : h("span", { class: "badge ok", text: "sent as is" }),
            r.profile === "openai-strict" ? h("span", { class: "badge " + (t.strict ? "ok" : "warn"), text: t.strict ? "strict" : "not strict" }) : null),
          t.notStrict ? h("p", { class: "muted", text: "not strict: " + t.notStrict }) : null,
          t.error ? h("div", { class: "err", text: t.error }) : null,
          t.changes.length ? changes : null,
          h("pre", { "data-testid": "sent-schema", text: App.pretty(t.schema) })));
      }
      const pair = h("div", { "data-testid": "search-pair" });
      if (r.pair) {
        pair.append(h("p", { class: "muted", text: "Above " + r.threshold + " estimated tokens (Options.ToolSearch), a model is given these two tools instead of the catalog: " + r.pairTokens + " tokens whatever the catalog's size." }));
        for (const t of r.pair.tools) pair.append(h("details", { class: "card", "data-testid": "pair-tool", "data-tool": t.name }, h("summary", {}, h("b", { text: t.name }), " — " + t.description.split("\n")[0]), h("pre", { text: t.description }), h("pre", { text: App.pretty(t.inputSchema) })));
      } else if (r.pairError) pair.append(App.errorBox(r.pairError));
      const query = h("input", { type: "search", placeholder: "a query, as a model would write it", "data-testid": "search-query", class: "wide" });
      const hits = h("div", { "data-testid": "search-hits" });
      const run = async () => {
        try {
          const s = await App.api("POST", "/api/search", { query: query.value, k: 5 });
          hits.replaceChildren(...s.hits.map((x) => h("div", { class: "card", "data-testid": "search-hit", "data-tool": x.name }, h("b", { text: x.name }), " ", h("span", { class: "muted", text: "score " + x.score.toFixed(2) }), h("div", { text: x.description }))));
          if (!s.hits.length) hits.append(h("p", { class: "muted", text: "no tool matches" }));
          hits.dataset.query = query.value;
        } catch (e) { hits.replaceChildren(App.errorBox(e.info || e)); }
      };
      query.addEventListener("keydown", (e) => { if (e.key === "Enter") run(); });
      root.replaceChildren(h("div", { class: "toolbar" }, h("h2", { text: "The tools as a model sees them" }), "profile ", sel),
        totals, h("h3", { text: "Each tool under " + r.profile }), tools,
        h("h3", { text: "Tool search" }), pair, h("div", { class: "toolbar" }, query, h("button", { "data-testid": "search-run", onclick: run, text: "Search" })), hits);
      root.dataset.state = "ready";
      root.dataset.profile = r.profile;
    },
  };

  // ---- saved calls ----
  App.views.saved = {
    el: () => document.getElementById("view-saved"),
    show() { this.load(); },
    async load() {
      const root = this.el();
      let list;
      try { list = await App.api("GET", "/api/saved"); } catch (e) { root.replaceChildren(App.errorBox(e.info || e)); return; }
      const rows = h("div", { "data-testid": "saved-list" });
      for (const s of list) {
        const runs = [...App.calls.values()].filter((c) => c.saved === s.id);
        const last = runs[runs.length - 1];
        rows.append(h("div", { class: "card", "data-testid": "saved-call", "data-saved-id": s.id, "data-tool": s.tool, "data-match": last && last.match !== undefined ? String(last.match) : "" },
          h("div", { class: "toolbar" }, h("b", { text: s.name }), h("span", { class: "muted", text: s.server + " / " + s.tool }),
            h("button", { class: "small primary", "data-testid": "saved-run", text: "Run again", onclick: () => App.api("POST", "/api/saved/run", { id: s.id }).catch((e) => App.toast(e.message)) }),
            h("button", { class: "small danger", "data-testid": "saved-delete", text: "Delete", onclick: () => App.api("POST", "/api/saved/delete", { id: s.id }).then(() => this.load()) }),
            last ? h("span", { class: "badge " + (last.match === true ? "ok" : last.match === false ? "bad" : ""), "data-testid": "saved-result", text: last.match === true ? "passed" : last.match === false ? "failed: the result differs" : last.status }) : null),
          h("div", { class: "mono muted", text: "arguments " + JSON.stringify(s.args) }),
          h("details", {}, h("summary", { text: "expected result" }), App.renderResult(s.expected))));
      }
      if (!list.length) rows.append(h("p", { class: "muted", text: "No saved call yet: call a tool, then \"Save call\" on its result." }));
      const imp = h("textarea", { rows: 3, placeholder: "paste saved calls (JSON, as exported) to import", "data-testid": "saved-import-text" });
      root.replaceChildren(h("div", { class: "toolbar" }, h("h2", { text: "Saved calls" }),
        App.download("/api/saved/export.go", "saved_calls_test.go", "Export as a Go test", "export-go"),
        App.download("/api/saved/export.json", "mcpadapter-saved-calls.json", "Export JSON", "export-json")),
        rows, h("h3", { text: "Import" }), imp,
        h("button", { "data-testid": "saved-import", text: "Import", onclick: async () => {
          try { await App.api("POST", "/api/saved/import", JSON.parse(imp.value)); this.load(); } catch (e) { App.toast(e.message); }
        } }));
      root.dataset.state = "ready";
    },
  };
  App.on((what, c) => { if (App.tab === "saved" && (what === "saved" || (what === "call" && c.saved && c.ended))) App.views.saved.load(); });
})();
