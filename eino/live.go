package eino

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"

	"github.com/cloudwego/eino/components/model"
	"github.com/cloudwego/eino/components/tool"
	"github.com/cloudwego/eino/schema"
	"github.com/mcpadapter/mcpadapter"
)

// liveTools is an agent's view of an adapter whose servers change their
// tool lists (AgentConfig.Live): the list as of the last change, as eino
// tools and as the definitions the model is given.
type liveTools struct {
	a     *mcpadapter.Adapter
	cfg   AgentConfig
	extra []*schema.ToolInfo // AgentConfig.ExtraTools

	mu      sync.Mutex
	version uint64             // Adapter.ToolsVersion of the list below
	changed bool               // the list differs from the one NewAgent was given
	infos   []*schema.ToolInfo // what the model is given, once changed
	byName  map[string]tool.InvokableTool
}

func newLiveTools(ctx context.Context, cfg AgentConfig, ets []tool.BaseTool) *liveTools {
	l := &liveTools{a: cfg.Live, cfg: cfg, version: cfg.Live.ToolsVersion(), byName: make(map[string]tool.InvokableTool)}
	for _, et := range ets {
		info, err := et.Info(ctx)
		if err != nil {
			continue
		}
		if it, ok := et.(tool.InvokableTool); ok {
			l.byName[info.Name] = it
		}
	}
	for _, et := range cfg.ExtraTools {
		if info, err := et.Info(ctx); err == nil {
			l.extra = append(l.extra, info)
		}
	}
	return l
}

// refresh lists the adapter's tools again if a server announced a change
// since the last listing. A listing that fails keeps the list it has.
func (l *liveTools) refresh(ctx context.Context) {
	l.mu.Lock()
	defer l.mu.Unlock()
	v := l.a.ToolsVersion()
	if v == l.version {
		return
	}
	tools, err := l.a.Tools(ctx)
	if err != nil {
		slog.Default().Warn("eino: listing the changed tools failed; the model keeps the last list", "err", err)
		return
	}
	ets, _ := Tools(tools)
	infos := slices.Clone(l.extra)
	byName := make(map[string]tool.InvokableTool, len(ets))
	for _, et := range ets {
		t := et.(*Tool)
		t.soft, t.onFailure = l.cfg.TransportErrorsAsResults, l.cfg.OnTransportError
		info, err := t.Info(ctx)
		if err != nil {
			continue
		}
		infos = append(infos, info)
		byName[info.Name] = t
	}
	l.version, l.changed, l.infos, l.byName = v, true, infos, byName
}

// options gives the model the current list, when it changed.
func (l *liveTools) options(ctx context.Context, opts []model.Option) []model.Option {
	l.refresh(ctx)
	l.mu.Lock()
	defer l.mu.Unlock()
	if !l.changed {
		return opts
	}
	return append(slices.Clip(opts), model.WithTools(l.infos))
}

// unknown runs a tool the agent was not built with: one a server added
// since. Any other name gets an answer listing the tools there are.
func (l *liveTools) unknown(ctx context.Context, name, input string) (string, error) {
	l.mu.Lock()
	t := l.byName[name]
	names := make([]string, 0, len(l.byName))
	for n := range l.byName {
		names = append(names, n)
	}
	l.mu.Unlock()
	if t == nil {
		slices.Sort(names)
		return fmt.Sprintf("There is no tool named %q. The tools are: %s.", name, strings.Join(names, ", ")), nil
	}
	return t.InvokableRun(ctx, input)
}

// liveModel gives its model the live list of tools on every call.
type liveModel struct {
	inner model.ToolCallingChatModel
	l     *liveTools
}

func (m liveModel) WithTools(tools []*schema.ToolInfo) (model.ToolCallingChatModel, error) {
	inner, err := m.inner.WithTools(tools)
	if err != nil {
		return nil, err
	}
	return liveModel{inner: inner, l: m.l}, nil
}

func (m liveModel) Generate(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.Message, error) {
	return m.inner.Generate(ctx, in, m.l.options(ctx, opts)...)
}

func (m liveModel) Stream(ctx context.Context, in []*schema.Message, opts ...model.Option) (*schema.StreamReader[*schema.Message], error) {
	return m.inner.Stream(ctx, in, m.l.options(ctx, opts)...)
}
