package schemaprofile_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/internal/schemacheck"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
	"github.com/mcpadapter/mcpadapter/schemaprofile"
)

// minCorpus is the fewest distinct server schemas the corpus must hold.
const minCorpus = 100

// A corpusSchema is one distinct input schema and where it came from.
type corpusSchema struct {
	source string // server/tool
	schema json.RawMessage
}

// corpusTargets are the MCP servers the corpus lists tools from: the
// project's go-sdk test servers of both eras, server-everything and the
// pinned npm servers.
func corpusTargets(t *testing.T) map[string]func() any {
	targets := map[string]func() any{
		"testserver-modern": func() any {
			return testserver.New(testserver.Options{Era: testserver.Modern, ManyTools: true})
		},
		"testserver-legacy": func() any { return testserver.New(testserver.Options{Era: testserver.Legacy}) },
		"server-everything": func() any {
			path, args, env := testenv.EverythingStdio(t)
			return mcpadapter.Command{Path: path, Args: args, Env: env}
		},
	}
	for _, s := range testenv.NPMServers() {
		targets[strings.TrimPrefix(s.Package, "@modelcontextprotocol/")] = func() any {
			path, args, env := s.StdioCommand(t)
			return mcpadapter.Command{Path: path, Args: args, Env: env, Dir: t.TempDir()}
		}
	}
	return targets
}

// captureCorpus lists the tools of every corpus server, concurrently,
// and returns the distinct input schemas (by canonical JSON).
func captureCorpus(t *testing.T) []corpusSchema {
	t.Helper()
	targets := corpusTargets(t)
	var mu sync.Mutex
	seen := map[string]bool{}
	var out []corpusSchema
	perServer := map[string]int{}
	var wg sync.WaitGroup
	for name, target := range targets {
		tg := target()
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
			defer cancel()
			a, err := mcpadapter.New(tg, nil)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			defer a.Close()
			tools, err := a.Tools(ctx)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			mu.Lock()
			defer mu.Unlock()
			perServer[name] = len(tools)
			for _, tool := range tools {
				key := canonical(t, tool.InputSchema)
				if !seen[key] {
					seen[key] = true
					out = append(out, corpusSchema{source: name + "/" + tool.Name, schema: tool.InputSchema})
				}
			}
		}()
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].source < out[j].source })
	t.Logf("corpus: %d distinct schemas from %v (tools per server)", len(out), perServer)
	return out
}

func canonical(t testing.TB, raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("schema is not JSON: %v", err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// validators are the provider rules each profile's output must pass;
// OpenAIStrict's output is checked as strict when Result.Strict is true.
func validate(r *schemaprofile.Result) []schemacheck.Problem {
	switch r.Profile {
	case schemaprofile.OpenAI:
		return schemacheck.OpenAI(r.Schema)
	case schemaprofile.OpenAIStrict:
		if r.Strict {
			return schemacheck.OpenAIStrict(r.Schema)
		}
		return schemacheck.OpenAI(r.Schema)
	case schemaprofile.Anthropic:
		return schemacheck.Anthropic(r.Schema)
	case schemaprofile.AnthropicStrict:
		if r.Strict {
			return schemacheck.AnthropicStrict(r.Schema)
		}
		return schemacheck.Anthropic(r.Schema)
	case schemaprofile.Gemini:
		return schemacheck.Gemini(r.Schema)
	}
	return nil
}

// TestCorpus runs every profile on every schema of the corpus (the
// servers' schemas and the fuzz seeds), checks each output with its
// provider's validator and reports what each profile changed.
func TestCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("starts npm servers")
	}
	corpus := captureCorpus(t)
	if len(corpus) < minCorpus {
		t.Errorf("corpus has %d distinct schemas, want at least %d", len(corpus), minCorpus)
	}
	servers := len(corpus)
	for i, s := range fuzzSeeds(t) {
		corpus = append(corpus, corpusSchema{source: fmt.Sprintf("seed/%d", i), schema: s})
	}
	var report strings.Builder
	fmt.Fprintf(&report, "corpus: %d server schemas + %d fuzz seeds\n", servers, len(corpus)-servers)
	for _, p := range schemaprofile.Profiles() {
		changed, strict := 0, 0
		rules := map[string]int{}
		for _, s := range corpus {
			r, err := schemaprofile.Apply(p, s.schema)
			if err != nil {
				t.Errorf("%s: %s: %v", p, s.source, err)
				continue
			}
			for _, prob := range validate(r) {
				t.Errorf("%s: %s: output refused: %s\n%s", p, s.source, prob, r.Schema)
			}
			if r.Strict {
				strict++
			}
			if r.Changed() {
				changed++
			}
			for _, c := range r.Changes {
				rules[c.Rule]++
			}
		}
		fmt.Fprintf(&report, "%-14s changed %3d of %d", p, changed, len(corpus))
		if p == schemaprofile.OpenAIStrict {
			fmt.Fprintf(&report, ", strict %d", strict)
		}
		fmt.Fprintf(&report, "; rules: %s\n", ruleCounts(rules))
	}
	t.Log("\n" + report.String())
	if dir := os.Getenv("SCHEMAPROFILE_REPORT"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, "schemaprofile-report.txt"), []byte(report.String()), 0o644)
	}
}

func ruleCounts(rules map[string]int) string {
	var keys []string
	for k := range rules {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var parts []string
	for _, k := range keys {
		parts = append(parts, fmt.Sprintf("%s=%d", k, rules[k]))
	}
	return strings.Join(parts, " ")
}
