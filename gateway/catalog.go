package gateway

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/mcpadapter/mcpadapter"
	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/yosida95/uritemplate/v3"
)

// listing is what one server offers, as last listed.
type listing struct {
	tools     []*mcpadapter.Tool
	prompts   []*mcp.Prompt
	resources []*mcp.Resource
	templates []*mcp.ResourceTemplate
}

type toolRoute struct {
	u    *upstream
	tool *mcpadapter.Tool
}

type promptRoute struct {
	u    *upstream
	name string // the server's own name
}

type templateRoute struct {
	u   *upstream
	def *mcp.ResourceTemplate
	tpl *uritemplate.Template
}

// catalog merges the listings of the servers that are up into what the
// gateway's clients see, and keeps go-sdk's server registry (which sends
// the list_changed notifications) in step with it.
type catalog struct {
	g     *Gateway
	order []*upstream // config order: the first server keeps a contested name

	syncMu sync.Mutex // one publish at a time, registry included

	mu         sync.Mutex
	lists      map[*upstream]*listing
	tools      map[string]toolRoute
	prompts    map[string]promptRoute
	resources  map[string]*upstream
	templates  []templateRoute
	lastServer map[string]string // a tool name last seen, by its server: for errors about servers that are down
	reported   map[string]bool   // collisions reported once
	searching  bool              // the search pair stands for the catalog

	// What go-sdk's registry holds, as JSON by name, to register changes only.
	regTools, regPrompts, regResources, regTemplates map[string]string

	// registered holds the names of the tools in go-sdk's registry, for
	// the fast path's calls that skip it (direct.go): a name is in it only
	// while go-sdk's registry has it.
	registered atomic.Pointer[map[string]bool]
}

func newCatalog(g *Gateway) *catalog {
	return &catalog{
		g:            g,
		lists:        make(map[*upstream]*listing),
		tools:        make(map[string]toolRoute),
		prompts:      make(map[string]promptRoute),
		resources:    make(map[string]*upstream),
		lastServer:   make(map[string]string),
		reported:     make(map[string]bool),
		regTools:     make(map[string]string),
		regPrompts:   make(map[string]string),
		regResources: make(map[string]string),
		regTemplates: make(map[string]string),
	}
}

// What a server announced had changed (notifications/*/list_changed),
// as bits: a change it announced reaches the clients even when its new
// listing looks the same to the gateway.
const (
	changedTools = 1 << iota
	changedPrompts
	changedResources
)

// publish replaces the listing of u (nil: the server is down) and brings
// the registry up to date. announced says which lists u said changed.
func (c *catalog) publish(u *upstream, l *listing, announced uint32) {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	c.mu.Lock()
	if l == nil {
		delete(c.lists, u)
	} else {
		c.lists[u] = l
	}
	problems := c.rebuild()
	tools, prompts, resources, templates := c.wanted()
	var touchTool, touchPrompt, touchResource string
	for name, r := range c.tools {
		if r.u == u && !c.searching && (touchTool == "" || name < touchTool) {
			touchTool = name
		}
	}
	for name, r := range c.prompts {
		if r.u == u && (touchPrompt == "" || name < touchPrompt) {
			touchPrompt = name
		}
	}
	for uri, o := range c.resources {
		if o == u && (touchResource == "" || uri < touchResource) {
			touchResource = uri
		}
	}
	c.mu.Unlock()
	for _, p := range problems {
		c.g.event(p)
	}
	changed := c.sync(tools, prompts, resources, templates)
	// go-sdk tells the clients when its registry changes; adding an item
	// again as it is tells them too.
	s := c.g.server
	if announced&changedTools != 0 && changed&changedTools == 0 && touchTool != "" {
		_ = protect(func() { s.AddTool(tools[touchTool], c.g.toolHandler(touchTool)) })
	}
	if announced&changedPrompts != 0 && changed&changedPrompts == 0 && touchPrompt != "" {
		_ = protect(func() { s.AddPrompt(prompts[touchPrompt], c.g.promptHandler(touchPrompt)) })
	}
	if announced&changedResources != 0 && changed&changedResources == 0 && touchResource != "" {
		_ = protect(func() { s.AddResource(resources[touchResource], c.g.readHandler) })
	}
}

// touchAll tells every client that its lists of tools, prompts and
// resources changed (go-sdk tells them when an item is added again as it
// is), for a change of what they may see that changed no item.
func (c *catalog) touchAll() {
	c.syncMu.Lock()
	defer c.syncMu.Unlock()
	c.mu.Lock()
	tools, prompts, resources, _ := c.wanted()
	c.mu.Unlock()
	s := c.g.server
	if name := firstKey(tools); name != "" {
		_ = protect(func() { s.AddTool(tools[name], c.g.toolHandler(name)) })
	}
	if name := firstKey(prompts); name != "" {
		_ = protect(func() { s.AddPrompt(prompts[name], c.g.promptHandler(name)) })
	}
	if uri := firstKey(resources); uri != "" {
		_ = protect(func() { s.AddResource(resources[uri], c.g.readHandler) })
	}
}

// isRegistered reports whether go-sdk's registry holds the tool name.
func (c *catalog) isRegistered(name string) bool {
	m := c.registered.Load()
	return m != nil && (*m)[name]
}

// unregister takes names out of the tools isRegistered reports.
func (c *catalog) unregister(names []string) {
	m := c.registered.Load()
	if m == nil {
		return
	}
	left := maps.Clone(*m)
	for _, n := range names {
		delete(left, n)
	}
	c.registered.Store(&left)
}

// firstKey returns the least key of m, or "".
func firstKey[V any](m map[string]V) string {
	first := ""
	for k := range m {
		if first == "" || k < first {
			first = k
		}
	}
	return first
}

// rebuild recomputes the routes from the listings. c.mu is held.
func (c *catalog) rebuild() []Event {
	var problems []Event
	clash := func(kind, name, first, second string, server string) {
		key := kind + "\x00" + name + "\x00" + first + "\x00" + second
		if c.reported[key] {
			return
		}
		c.reported[key] = true
		var err error
		if kind == "tool" {
			err = &mcpadapter.NameCollisionError{Name: name, First: first, Second: second}
		} else {
			err = fmt.Errorf("%s %q is claimed by both %s and %s; the first is kept", kind, name, first, second)
		}
		problems = append(problems, Event{Kind: ServerProblem, Server: server, Err: err})
	}
	oldTools, oldPrompts, oldResources := c.tools, c.prompts, c.resources
	c.tools = make(map[string]toolRoute)
	c.prompts = make(map[string]promptRoute)
	c.resources = make(map[string]*upstream)
	c.templates = nil
	seenTpl := make(map[string]*upstream)
	for _, u := range c.order {
		l := c.lists[u]
		if l == nil {
			continue
		}
		for _, t := range l.tools {
			if prev, ok := c.tools[t.Name]; ok {
				if !takesBack(oldTools[t.Name].u, prev.u, u) {
					clash("tool", t.Name, prev.u.name+"/"+prev.tool.OriginalName, u.name+"/"+t.OriginalName, u.name)
					continue
				}
				clash("tool", t.Name, u.name+"/"+t.OriginalName, prev.u.name+"/"+prev.tool.OriginalName, prev.u.name)
			}
			c.tools[t.Name] = toolRoute{u: u, tool: t}
			c.lastServer[t.Name] = u.name
		}
		prefix := c.g.promptPrefix(u)
		for _, p := range l.prompts {
			name := p.Name
			if prefix != "" {
				name = prefix + "_" + p.Name
			}
			if prev, ok := c.prompts[name]; ok {
				if !takesBack(oldPrompts[name].u, prev.u, u) {
					clash("prompt", name, prev.u.name+"/"+prev.name, u.name+"/"+p.Name, u.name)
					continue
				}
				clash("prompt", name, u.name+"/"+p.Name, prev.u.name+"/"+prev.name, prev.u.name)
			}
			c.prompts[name] = promptRoute{u: u, name: p.Name}
		}
		for _, r := range l.resources {
			if prev, ok := c.resources[r.URI]; ok {
				if !takesBack(oldResources[r.URI], prev, u) {
					clash("resource", r.URI, prev.name, u.name, u.name)
					continue
				}
				clash("resource", r.URI, u.name, prev.name, prev.name)
			}
			c.resources[r.URI] = u
		}
		for _, t := range l.templates {
			if prev, ok := seenTpl[t.URITemplate]; ok {
				clash("resource template", t.URITemplate, prev.name, u.name, u.name)
				continue
			}
			tpl, err := uritemplate.New(t.URITemplate)
			if err != nil {
				key := "badtpl\x00" + u.name + "\x00" + t.URITemplate
				if !c.reported[key] {
					c.reported[key] = true
					problems = append(problems, Event{Kind: ServerProblem, Server: u.name, Err: fmt.Errorf("resource template %q is not a URI template: %w", t.URITemplate, err)})
				}
				continue
			}
			seenTpl[t.URITemplate] = u
			c.templates = append(c.templates, templateRoute{u: u, def: t, tpl: tpl})
		}
	}
	return problems
}

// takesBack reports whether u takes a name that holder, earlier in the
// config, also claims: only when u had it in the catalog being replaced
// (owner). A name clients have used never moves to another server because
// that server listed it later; at the start the first in the config has
// it.
func takesBack(owner, holder, u *upstream) bool {
	return owner == u && holder != u
}

// wanted returns the definitions go-sdk's registry should hold. c.mu is
// held.
func (c *catalog) wanted() (tools map[string]*mcp.Tool, prompts map[string]*mcp.Prompt, resources map[string]*mcp.Resource, templates map[string]*mcp.ResourceTemplate) {
	tools = make(map[string]*mcp.Tool, len(c.tools))
	all := make([]*mcpadapter.Tool, 0, len(c.tools))
	for _, r := range c.tools {
		if r.tool.ModelVisible() {
			all = append(all, r.tool)
		}
	}
	c.searching = c.g.search.over(all)
	if c.searching {
		for _, d := range c.g.search.defs() {
			tools[d.Name] = d
		}
	}
	for name, r := range c.tools {
		// With the search pair shown, the tools for apps only are
		// still listed: the host keeps them from its model.
		if !c.searching || !r.tool.ModelVisible() {
			tools[name] = toolDef(r.tool)
		}
	}
	prompts = make(map[string]*mcp.Prompt, len(c.prompts))
	for name, r := range c.prompts {
		for _, p := range c.lists[r.u].prompts {
			if p.Name == r.name {
				d := *p
				d.Name = name
				prompts[name] = &d
				break
			}
		}
	}
	resources = make(map[string]*mcp.Resource, len(c.resources))
	for uri, u := range c.resources {
		for _, r := range c.lists[u].resources {
			if r.URI == uri {
				resources[uri] = r
				break
			}
		}
	}
	templates = make(map[string]*mcp.ResourceTemplate, len(c.templates))
	for _, t := range c.templates {
		templates[t.def.URITemplate] = t.def
	}
	return tools, prompts, resources, templates
}

// toolDef is the definition clients see of t.
func toolDef(t *mcpadapter.Tool) *mcp.Tool {
	d := &mcp.Tool{
		Name:        t.Name,
		Title:       t.Title,
		Description: t.Description,
		InputSchema: t.InputSchema,
		Annotations: t.Annotations,
		Meta:        t.Meta,
		Icons:       t.Icons,
	}
	if len(t.OutputSchema) > 0 {
		d.OutputSchema = t.OutputSchema
	}
	return d
}

// sync brings go-sdk's registry to the wanted definitions: what is gone is
// removed, what is new or changed is added (go-sdk then tells the clients,
// debounced). It returns which kinds changed.
func (c *catalog) sync(tools map[string]*mcp.Tool, prompts map[string]*mcp.Prompt, resources map[string]*mcp.Resource, templates map[string]*mcp.ResourceTemplate) uint32 {
	s := c.g.server
	var changed uint32
	removeTools := func(names ...string) {
		c.unregister(names) // before go-sdk's registry loses them
		s.RemoveTools(names...)
	}
	if syncKind(c.regTools, tools, removeTools, func(name string, d *mcp.Tool) error {
		return protect(func() { s.AddTool(d, c.g.toolHandler(name)) })
	}, c.badDef("tool")) {
		changed |= changedTools
	}
	now := make(map[string]bool, len(c.regTools))
	for name := range c.regTools {
		now[name] = true
	}
	c.registered.Store(&now) // after go-sdk added the new ones
	if syncKind(c.regPrompts, prompts, s.RemovePrompts, func(name string, d *mcp.Prompt) error {
		return protect(func() { s.AddPrompt(d, c.g.promptHandler(name)) })
	}, c.badDef("prompt")) {
		changed |= changedPrompts
	}
	if syncKind(c.regResources, resources, s.RemoveResources, func(uri string, d *mcp.Resource) error {
		return protect(func() { s.AddResource(d, c.g.readHandler) })
	}, c.badDef("resource")) {
		changed |= changedResources
	}
	if syncKind(c.regTemplates, templates, s.RemoveResourceTemplates, func(uri string, d *mcp.ResourceTemplate) error {
		return protect(func() { s.AddResourceTemplate(d, c.g.readHandler) })
	}, c.badDef("resource template")) {
		changed |= changedResources
	}
	return changed
}

func (c *catalog) badDef(kind string) func(string, error) {
	return func(name string, err error) {
		c.g.event(Event{Kind: ServerProblem, Server: c.serverOf(kind, name), Err: fmt.Errorf("%s %q left out: %w", kind, name, err)})
	}
}

func (c *catalog) serverOf(kind, name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	switch kind {
	case "tool":
		return c.lastServer[name]
	case "prompt":
		if r, ok := c.prompts[name]; ok {
			return r.u.name
		}
	case "resource":
		if u := c.resources[name]; u != nil {
			return u.name
		}
	}
	return ""
}

// syncKind registers the changes between reg (name → JSON registered) and
// want, updates reg, and reports whether anything changed.
func syncKind[T any](reg map[string]string, want map[string]T, remove func(...string), add func(string, T) error, bad func(string, error)) (changed bool) {
	var gone []string
	for name := range reg {
		if _, ok := want[name]; !ok {
			gone = append(gone, name)
		}
	}
	if len(gone) > 0 {
		sort.Strings(gone)
		remove(gone...)
		for _, n := range gone {
			delete(reg, n)
		}
		changed = true
	}
	names := make([]string, 0, len(want))
	for name := range want {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		b, err := json.Marshal(want[name])
		if err != nil {
			bad(name, err)
			continue
		}
		if reg[name] == string(b) {
			continue
		}
		if err := add(name, want[name]); err != nil {
			bad(name, err)
			if _, had := reg[name]; had {
				remove(name)
				delete(reg, name)
				changed = true
			}
			continue
		}
		reg[name] = string(b)
		changed = true
	}
	return changed
}

// protect turns a panic of go-sdk's registry (a tool whose input schema is
// not an object schema, say) into an error.
func protect(fn func()) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	fn()
	return nil
}

// tool returns the route of the tool clients know as name.
func (c *catalog) tool(name string) (toolRoute, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.tools[name]
	return r, ok
}

// toolNames returns the names of the tools clients see, sorted.
func (c *catalog) toolNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.tools))
	for n := range c.tools {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// allTools returns the tools of the catalog, sorted by name.
func (c *catalog) allTools() []*mcpadapter.Tool {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]*mcpadapter.Tool, 0, len(c.tools))
	for _, r := range c.tools {
		out = append(out, r.tool)
	}
	slices.SortFunc(out, func(a, b *mcpadapter.Tool) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// wasServerOf returns the server that last listed a tool of this name.
func (c *catalog) wasServerOf(name string) string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastServer[name]
}

func (c *catalog) prompt(name string) (promptRoute, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.prompts[name]
	return r, ok
}

func (c *catalog) promptNames() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	names := make([]string, 0, len(c.prompts))
	for n := range c.prompts {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// resourceOwner returns the server that serves uri: the one that lists it,
// else the first whose template matches it.
func (c *catalog) resourceOwner(uri string) *upstream {
	c.mu.Lock()
	defer c.mu.Unlock()
	if u := c.resources[uri]; u != nil {
		return u
	}
	for _, t := range c.templates {
		if t.tpl.Regexp().MatchString(uri) {
			return t.u
		}
	}
	return nil
}

// templateOwner returns the server of a resource template.
func (c *catalog) templateOwner(uriTemplate string) *upstream {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.templates {
		if t.def.URITemplate == uriTemplate {
			return t.u
		}
	}
	return nil
}

// resourceServers returns the servers that are up and offer resources.
func (c *catalog) resourceServers() []*upstream {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*upstream
	for _, u := range c.order {
		if l := c.lists[u]; l != nil && (len(l.resources) > 0 || len(l.templates) > 0) {
			out = append(out, u)
		}
	}
	return out
}
