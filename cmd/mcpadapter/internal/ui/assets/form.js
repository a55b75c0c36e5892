// form.js: a form made from a JSON Schema (a tool's input schema, an
// elicitation's requested schema). MCPForm.create(schema) returns
// {el, get(), set(value), errors()}: get returns the value the form holds
// (undefined where a field is left out), set fills the form from a value.
// Every input carries data-path, the JSON Pointer of its value.
"use strict";
(function () {
  const MAX_DEPTH = 24;

  function h(tag, attrs, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === undefined || v === null || v === false) continue;
      if (k === "text") e.textContent = v;
      else if (k === "class") e.className = v;
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const c of kids.flat()) if (c != null) e.append(c);
    return e;
  }

  function typeOf(v) {
    if (v === null) return "null";
    if (Array.isArray(v)) return "array";
    if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
    return typeof v; // string, boolean, object, undefined
  }

  function isObj(s) { return s && typeof s === "object" && !Array.isArray(s); }

  // resolve follows $ref (a JSON Pointer into the root), at most 32 hops.
  function resolve(root, s) {
    for (let i = 0; i < 32 && isObj(s) && typeof s.$ref === "string"; i++) {
      const ref = s.$ref;
      if (!ref.startsWith("#")) return {};
      let t = root;
      for (const part of ref.slice(1).split("/").slice(1)) {
        const key = decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~");
        t = t == null ? undefined : t[key];
      }
      if (t === undefined) return {};
      const rest = Object.assign({}, s);
      delete rest.$ref;
      s = Object.keys(rest).length ? Object.assign({}, t, rest) : t;
    }
    if (s === true || s === undefined) return {};
    if (s === false) return { not: {} };
    return s;
  }

  // merge folds allOf into one schema (properties and required joined).
  function merge(root, s) {
    s = resolve(root, s);
    if (!Array.isArray(s.allOf)) return s;
    const out = Object.assign({}, s);
    delete out.allOf;
    for (const part0 of s.allOf) {
      const part = merge(root, part0);
      for (const [k, v] of Object.entries(part)) {
        if (k === "properties") out.properties = Object.assign({}, out.properties, v);
        else if (k === "required") out.required = [...new Set([...(out.required || []), ...v])];
        else if (!(k in out)) out[k] = v;
      }
    }
    return out;
  }

  function types(s) {
    if (Array.isArray(s.type)) return s.type;
    if (typeof s.type === "string") return [s.type];
    if (s.properties || s.additionalProperties !== undefined) return ["object"];
    if (s.items || s.prefixItems) return ["array"];
    if ("const" in s) return [typeOf(s.const)];
    if (Array.isArray(s.enum)) return [...new Set(s.enum.map(typeOf))];
    return [];
  }

  // matches says, roughly, whether value v fits schema s: type, const,
  // enum and required keys; enough to choose a oneOf/anyOf branch.
  function matches(root, s, v, depth) {
    s = merge(root, s);
    if (depth > 8) return true;
    if ("const" in s) return JSON.stringify(s.const) === JSON.stringify(v);
    if (Array.isArray(s.enum)) return s.enum.some((e) => JSON.stringify(e) === JSON.stringify(v));
    const ts = types(s);
    const t = typeOf(v);
    if (ts.length && !ts.includes(t) && !(t === "integer" && ts.includes("number"))) return false;
    if (t === "object") {
      for (const r of s.required || []) if (!(r in v)) return false;
      for (const [k, ps] of Object.entries(s.properties || {})) {
        if (k in v && !matches(root, ps, v[k], depth + 1)) return false;
      }
      if (s.additionalProperties === false && s.properties) {
        for (const k of Object.keys(v)) if (!(k in s.properties)) return false;
      }
    }
    const alts = s.oneOf || s.anyOf;
    if (Array.isArray(alts)) return alts.some((a) => matches(root, Object.assign({}, s, { oneOf: undefined, anyOf: undefined }, merge(root, a)), v, depth + 1));
    return true;
  }

  function describe(s) {
    const parts = [];
    if (s.description) parts.push(s.description);
    const bounds = [];
    for (const k of ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minLength", "maxLength", "pattern", "minItems", "maxItems", "multipleOf"]) {
      if (k in s) bounds.push(k + " " + JSON.stringify(s[k]));
    }
    if (s.format) bounds.push("format " + s.format);
    if (bounds.length) parts.push("(" + bounds.join(", ") + ")");
    return parts.join(" ");
  }

  // Field constructors return {el, get(), set(v)}; get returns undefined
  // for "not given".
  function field(ctx, s0, path, depth, opts) {
    const s = merge(ctx.root, s0);
    if (depth > MAX_DEPTH) return jsonField(ctx, s, path, "nested too deeply for a form: JSON");
    if (s.not && Object.keys(s).length === 1) return jsonField(ctx, s, path, "no value is allowed");
    if ("const" in s) return constField(s, path);
    if (Array.isArray(s.enum) && s.enum.length) return enumField(s, path, opts);
    const alts = s.oneOf || s.anyOf;
    if (Array.isArray(alts) && alts.length) return choiceField(ctx, s, alts, path, depth, opts);
    const ts = types(s);
    if (ts.length > 1) {
      const branches = ts.map((t) => Object.assign({}, s, { type: t }));
      return choiceField(ctx, Object.assign({}, s, { type: undefined }), branches, path, depth, opts, ts);
    }
    switch (ts[0]) {
      case "object": return objectField(ctx, s, path, depth);
      case "array": return arrayField(ctx, s, path, depth);
      case "string": return stringField(s, path);
      case "number": case "integer": return numberField(s, path, ts[0]);
      case "boolean": return boolField(s, path, opts);
      case "null": return { el: h("span", { class: "muted", "data-path": path, text: "null" }), get: () => null, set() {} };
    }
    return jsonField(ctx, s, path, "any JSON value");
  }

  function constField(s, path) {
    return { el: h("code", { "data-path": path, "data-const": "", text: JSON.stringify(s.const) }), get: () => s.const, set() {} };
  }

  function enumField(s, path, opts) {
    const sel = h("select", { "data-path": path });
    const optional = !(opts && opts.required);
    if (optional) sel.append(h("option", { value: "", text: s.default !== undefined ? "(default " + JSON.stringify(s.default) + ")" : "(not given)" }));
    s.enum.forEach((v, i) => {
      const label = Array.isArray(s.enumNames) && s.enumNames[i] ? s.enumNames[i] : typeof v === "string" ? v : JSON.stringify(v);
      sel.append(h("option", { value: String(i), text: label }));
    });
    if (!optional && s.default !== undefined) {
      const i = s.enum.findIndex((e) => JSON.stringify(e) === JSON.stringify(s.default));
      if (i >= 0) sel.value = String(i);
    }
    return {
      el: sel,
      get: () => (sel.value === "" ? undefined : s.enum[Number(sel.value)]),
      set(v) {
        const i = s.enum.findIndex((e) => JSON.stringify(e) === JSON.stringify(v));
        sel.value = v === undefined || i < 0 ? (optional ? "" : "0") : String(i);
      },
    };
  }

  function inputType(format) {
    switch (format) {
      case "email": return "email";
      case "uri": case "url": return "url";
      case "date": return "date";
      case "time": return "text";
      default: return "text";
    }
  }

  function stringField(s, path) {
    const placeholder = s.default !== undefined ? "default: " + (typeof s.default === "string" ? s.default : JSON.stringify(s.default)) : s.format || "";
    const long = !s.format && !(s.maxLength && s.maxLength <= 80);
    const input = long
      ? h("textarea", { rows: 1, "data-path": path, placeholder, class: "str" })
      : h("input", { type: inputType(s.format), "data-path": path, placeholder, "data-format": s.format });
    let given = false; // an empty string that was set is a value
    input.addEventListener("input", () => { given = input.value !== ""; });
    return {
      el: input,
      get: () => (input.value === "" && !given ? undefined : input.value),
      set(v) {
        given = typeof v === "string";
        input.value = typeof v === "string" ? v : v === undefined ? "" : String(v);
      },
      clear() { given = false; input.value = ""; },
    };
  }

  function numberField(s, path, t) {
    const input = h("input", { type: "number", "data-path": path, step: t === "integer" ? "1" : "any", min: s.minimum, max: s.maximum,
      placeholder: s.default !== undefined ? "default: " + JSON.stringify(s.default) : t });
    let raw; // a value the input cannot hold (a huge integer)
    input.addEventListener("input", () => { raw = undefined; });
    return {
      el: input,
      get() {
        if (raw !== undefined) return raw;
        if (input.value === "") return undefined;
        const n = Number(input.value);
        return Number.isNaN(n) ? input.value : n;
      },
      set(v) {
        raw = undefined;
        if (typeof v === "number") {
          input.value = String(v);
          if (Number(input.value) !== v) raw = v;
        } else if (v === undefined) input.value = "";
        else { raw = v; input.value = ""; }
      },
    };
  }

  function boolField(s, path, opts) {
    const sel = h("select", { "data-path": path, "data-type": "boolean" });
    if (!(opts && opts.required)) sel.append(h("option", { value: "", text: s.default !== undefined ? "(default " + s.default + ")" : "(not given)" }));
    sel.append(h("option", { value: "true", text: "true" }), h("option", { value: "false", text: "false" }));
    if (opts && opts.required) sel.value = s.default === true ? "true" : "false";
    return {
      el: sel,
      get: () => (sel.value === "" ? undefined : sel.value === "true"),
      set(v) { sel.value = v === true ? "true" : v === false ? "false" : (opts && opts.required ? "false" : ""); },
    };
  }

  function jsonField(ctx, s, path, hint) {
    const ta = h("textarea", { rows: 2, class: "json", "data-path": path, "data-json": "", placeholder: hint + (s.default !== undefined ? "; default " + JSON.stringify(s.default) : "") });
    return {
      el: ta,
      get() {
        if (ta.value.trim() === "") return undefined;
        try { ta.classList.remove("bad"); return JSON.parse(ta.value); } catch (e) { ta.classList.add("bad"); ctx.errors.push(path + ": not JSON"); return undefined; }
      },
      set(v) { ta.value = v === undefined ? "" : JSON.stringify(v, null, 1); },
    };
  }

  // label makes a property's label row.
  function label(name, s, required, path) {
    return h("label", { class: "prop", for: undefined },
      h("span", { class: "name", text: s.title || name }),
      s.title && s.title !== name ? h("code", { class: "key", text: name }) : null,
      required ? h("span", { class: "req", title: "required", "data-required": path, text: "*" }) : null,
      h("span", { class: "type", text: types(s).join("|") || (s.oneOf ? "oneOf" : s.anyOf ? "anyOf" : "") }));
  }

  function objectField(ctx, s, path, depth) {
    const box = h("fieldset", { class: "obj", "data-path": path });
    const req = new Set(s.required || []);
    const props = [];
    let extra = {}; // values of keys the form has no field for
    for (const [name, ps0] of Object.entries(s.properties || {})) {
      const ps = merge(ctx.root, ps0);
      const p = path + "/" + name.replace(/~/g, "~0").replace(/\//g, "~1");
      const required = req.has(name);
      const row = h("div", { class: "row", "data-prop": name });
      row.append(label(name, ps, required, p));
      const d = describe(ps);
      if (d) row.append(h("div", { class: "desc", text: d }));
      const nested = types(ps)[0] === "object" || types(ps)[0] === "array" || ps.oneOf || ps.anyOf;
      if (nested && !required) {
        // An optional object or array is left out until the user adds it
        // (a recursive schema unfolds one level at a time).
        let f = null;
        const holder = h("div", { class: "nested" });
        const toggle = h("button", { type: "button", class: "small", "data-testid": "add-field", "data-add": p, text: "+ " + name });
        const remove = h("button", { type: "button", class: "small", "data-testid": "remove-field", "data-remove": p, text: "− remove", hidden: true });
        const add = () => { f = field(ctx, ps, p, depth + 1, { required: true }); holder.replaceChildren(f.el); toggle.hidden = true; remove.hidden = false; };
        toggle.addEventListener("click", add);
        remove.addEventListener("click", () => { f = null; holder.replaceChildren(); toggle.hidden = false; remove.hidden = true; });
        row.append(toggle, remove, holder);
        props.push({ name, get: () => (f ? f.get() : undefined), set(v) { if (v === undefined) { remove.click(); } else { if (!f) add(); f.set(v); } } });
      } else {
        const f = field(ctx, ps, p, depth + 1, { required });
        row.append(f.el);
        props.push({ name, get: f.get, set: f.set });
      }
      box.append(row);
    }
    if (!props.length && (s.additionalProperties === undefined || s.additionalProperties === false) && depth === 0) box.append(h("span", { class: "muted", text: "no arguments" }));
    // A map (additionalProperties with a schema): entries of key and value.
    let mapField = null;
    const ap = s.additionalProperties;
    if (ap !== undefined && ap !== false && !(ap === true && s.properties)) {
      mapField = mapEditor(ctx, ap === true ? {} : ap, path, depth, new Set(Object.keys(s.properties || {})));
      box.append(mapField.el);
    }
    return {
      el: box,
      get() {
        const out = {};
        for (const p of props) {
          const v = p.get();
          if (v !== undefined) out[p.name] = v;
        }
        if (mapField) Object.assign(out, mapField.get());
        for (const [k, v] of Object.entries(extra)) if (!(k in out)) out[k] = v;
        return out;
      },
      set(v) {
        extra = {};
        const known = new Set(props.map((p) => p.name));
        const obj = isObj(v) ? v : {};
        for (const p of props) p.set(obj[p.name]);
        const rest = {};
        for (const [k, x] of Object.entries(obj)) if (!known.has(k)) rest[k] = x;
        if (mapField) mapField.set(rest);
        else extra = rest;
      },
    };
  }

  function mapEditor(ctx, vs, path, depth, taken) {
    const list = h("div", { class: "map" });
    const entries = [];
    const addBtn = h("button", { type: "button", class: "small", "data-testid": "add-entry", "data-add": path, text: "+ entry" });
    const add = (key) => {
      const i = entries.length;
      const k = h("input", { type: "text", class: "mapkey", placeholder: "key", "data-path": path + "/*key" + i, value: key || "" });
      const f = field(ctx, vs, path + "/*" + i, depth + 1, { required: true });
      const row = h("div", { class: "entry" }, k, f.el);
      const e = { k, f, row };
      row.append(h("button", { type: "button", class: "small", text: "✕", onclick: () => { entries.splice(entries.indexOf(e), 1); row.remove(); } }));
      entries.push(e);
      list.append(row);
      return e;
    };
    addBtn.addEventListener("click", () => add(""));
    return {
      el: h("div", { class: "mapwrap" }, list, addBtn),
      get() {
        const out = {};
        for (const e of entries) if (e.k.value !== "" && !taken.has(e.k.value)) { const v = e.f.get(); out[e.k.value] = v === undefined ? null : v; }
        return out;
      },
      set(obj) {
        entries.splice(0).forEach((e) => e.row.remove());
        for (const [k, v] of Object.entries(obj || {})) add(k).f.set(v);
      },
    };
  }

  function arrayField(ctx, s, path, depth) {
    const list = h("ol", { class: "arr", "data-path": path });
    const items = [];
    const tuple = Array.isArray(s.prefixItems) ? s.prefixItems : Array.isArray(s.items) ? s.items : null;
    const itemSchema = (i) => (tuple ? (i < tuple.length ? tuple[i] : (Array.isArray(s.items) ? s.additionalItems : s.items) || {}) : s.items || {});
    const addBtn = h("button", { type: "button", class: "small", "data-testid": "add-item", "data-add": path, text: "+ item" });
    const add = () => {
      const i = items.length;
      const f = field(ctx, itemSchema(i), path + "/" + i, depth + 1, { required: true });
      const li = h("li", {}, f.el);
      const it = { f, li };
      li.append(h("button", { type: "button", class: "small", "data-testid": "remove-item", text: "✕", onclick: () => { items.splice(items.indexOf(it), 1); li.remove(); } }));
      items.push(it);
      list.append(li);
      return it;
    };
    addBtn.addEventListener("click", add);
    return {
      el: h("div", { class: "arrwrap" }, list, addBtn),
      get: () => items.map((it) => { const v = it.f.get(); return v === undefined ? null : v; }),
      set(v) {
        items.splice(0).forEach((it) => it.li.remove());
        if (Array.isArray(v)) for (const x of v) add().f.set(x);
      },
    };
  }

  // choiceField is oneOf/anyOf (or a list of types): a select of the
  // branches and the chosen branch's field. Properties beside oneOf are
  // folded into each branch.
  function choiceField(ctx, s, alts, path, depth, opts, typeNames) {
    const base = Object.assign({}, s);
    delete base.oneOf;
    delete base.anyOf;
    const branches = alts.map((a) => {
      const b = merge(ctx.root, a);
      if (typeNames) return b;
      const m = Object.assign({}, base, b);
      if (base.properties || b.properties) m.properties = Object.assign({}, base.properties, b.properties);
      if (base.required || b.required) m.required = [...new Set([...(base.required || []), ...(b.required || [])])];
      if (!b.type && !base.type) delete m.type;
      return m;
    });
    const optional = !(opts && opts.required);
    const sel = h("select", { class: "choice", "data-path": path, "data-choice": "" });
    if (optional) sel.append(h("option", { value: "", text: "(not given)" }));
    branches.forEach((b, i) => sel.append(h("option", { value: String(i), text: b.title || (typeNames ? typeNames[i] : types(b).join("|") || "option " + (i + 1)) + (b.description && !b.title ? ": " + b.description.slice(0, 40) : "") })));
    const holder = h("div", { class: "branch" });
    let cur = null;
    const pick = (i) => {
      sel.value = i < 0 ? "" : String(i);
      cur = i < 0 ? null : field(ctx, branches[i], path, depth + 1, { required: true });
      holder.replaceChildren(cur ? cur.el : "");
    };
    sel.addEventListener("change", () => pick(sel.value === "" ? -1 : Number(sel.value)));
    pick(optional ? -1 : 0);
    return {
      el: h("div", { class: "choicewrap" }, sel, holder),
      get: () => (cur ? cur.get() : undefined),
      set(v) {
        if (v === undefined) { pick(optional ? -1 : 0); return; }
        let i = branches.findIndex((b) => matches(ctx.root, b, v, 0));
        if (i < 0) i = 0;
        pick(i);
        cur.set(v);
      },
    };
  }

  // create makes the form for schema. The root is an object's fields; a
  // root that is not an object is one field.
  function create(schema) {
    let root = schema;
    if (typeof root === "string") { try { root = JSON.parse(root); } catch (e) { root = {}; } }
    if (root === null || root === undefined) root = { type: "object" };
    const ctx = { root, errors: [] };
    let f;
    try {
      f = field(ctx, root, "", 0, { required: true });
    } catch (e) {
      f = jsonField(ctx, {}, "", "the schema could not be made a form (" + e.message + "): JSON");
    }
    const el = h("div", { class: "schemaform", "data-testid": "schema-form" }, f.el);
    return {
      el,
      get() { ctx.errors = []; return f.get(); },
      set(v) { f.set(v); },
      errors: () => ctx.errors.slice(),
    };
  }

  window.MCPForm = { create, h, matches, resolve };
})();
