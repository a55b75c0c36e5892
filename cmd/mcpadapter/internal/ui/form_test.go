package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/mcpadapter/mcpadapter"
	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/ui"
	"github.com/mcpadapter/mcpadapter/internal/testenv"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// corpusSchema is one distinct input schema and where it came from.
type corpusSchema struct {
	Source string          `json:"source"`
	Schema json.RawMessage `json:"schema"`
}

// captureCorpus lists the tools of the servers the schemaprofile corpus
// is made of (the project's go-sdk test servers of both eras,
// server-everything and the pinned npm servers) and returns their
// distinct input schemas, with the schemaprofile fuzz seeds.
func captureCorpus(t *testing.T) []corpusSchema {
	t.Helper()
	targets := map[string]any{
		"testserver-modern": testserver.New(testserver.Options{Era: testserver.Modern, ManyTools: true, Apps: true}),
		"testserver-legacy": testserver.New(testserver.Options{Era: testserver.Legacy}),
	}
	path, args, env := testenv.EverythingStdio(t)
	targets["server-everything"] = mcpadapter.Command{Path: path, Args: args, Env: env}
	for _, s := range testenv.NPMServers() {
		path, args, env := s.StdioCommand(t)
		targets[strings.TrimPrefix(s.Package, "@modelcontextprotocol/")] = mcpadapter.Command{Path: path, Args: args, Env: env, Dir: t.TempDir()}
	}
	var mu sync.Mutex
	seen := map[string]bool{}
	var out []corpusSchema
	var wg sync.WaitGroup
	slots := make(chan struct{}, 3) // node servers starting at once, on a shared machine
	for name, target := range targets {
		wg.Add(1)
		go func() {
			defer wg.Done()
			slots <- struct{}{}
			defer func() { <-slots }()
			ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
			defer cancel()
			o := &mcpadapter.ClientOptions{Name: name, ConnectTimeout: 3 * time.Minute}
			if _, ok := target.(mcpadapter.Command); ok {
				o.ProtocolVersion = "2025-11-25" // the npm servers speak the handshake: no probe
			}
			c, err := mcpadapter.NewClient(target, o)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				return
			}
			a, err := mcpadapter.New(c, nil)
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
			for _, tool := range tools {
				if key := canonicalJSON(t, tool.InputSchema); !seen[key] {
					seen[key] = true
					out = append(out, corpusSchema{Source: name + "/" + tool.Name, Schema: tool.InputSchema})
				}
			}
		}()
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].Source < out[j].Source })
	seeds, err := os.ReadFile("../../../../schemaprofile/testdata/seeds.json")
	if err != nil {
		t.Fatal(err)
	}
	var list []json.RawMessage
	if err := json.Unmarshal(seeds, &list); err != nil {
		t.Fatal(err)
	}
	for i, s := range list {
		out = append(out, corpusSchema{Source: fmt.Sprintf("seed/%d", i), Schema: s})
	}
	return out
}

func canonicalJSON(t *testing.T, raw json.RawMessage) string {
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatalf("not JSON: %v", err)
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// TestFormRoundTrip makes a form from every schema of the corpus in the
// browser, fills it with a value that fits the schema (every optional
// field given, arrays of two, the first branch of a oneOf), and reads the
// same value back; a form made from each schema also reads back, empty,
// without an error.
func TestFormRoundTrip(t *testing.T) {
	chromium(t)
	testenv.SkipShort(t, "starts the npm servers")
	corpus := captureCorpus(t)

	type sample struct {
		Source string          `json:"source"`
		Schema json.RawMessage `json:"schema"`
		Value  any             `json:"value"`
	}
	var samples []sample
	validated, seeds := 0, 0
	for _, c := range corpus {
		var root any
		if err := json.Unmarshal(c.Schema, &root); err != nil {
			t.Fatal(err)
		}
		v := example(root, root, 0)
		if validate(c.Schema, v) == nil {
			validated++
		}
		samples = append(samples, sample{Source: c.Source, Schema: c.Schema, Value: v})
		if strings.HasPrefix(c.Source, "seed/") {
			seeds++
		}
	}
	rec := ui.NewRecorder()
	srv := startUI(t, demoSession(t, rec), rec, nil)
	p := openPage(t, srv)
	in, _ := json.Marshal(samples)
	var results []struct {
		Got   json.RawMessage `json:"got"`
		Empty json.RawMessage `json:"empty"`
		Err   string          `json:"err"`
	}
	p.eval(`(() => { const out = []; for (const s of `+string(in)+`) {
		try {
			const empty = MCPForm.create(s.schema).get();
			const f = MCPForm.create(s.schema);
			f.set(s.value);
			out.push({got: JSON.stringify(f.get() === undefined ? null : f.get()), empty: JSON.stringify(empty === undefined ? null : empty)});
		} catch (e) { out.push({err: String(e && e.stack || e)}); }
	} return out; })()`, &results)
	if len(results) != len(samples) {
		t.Fatalf("%d results for %d schemas", len(results), len(samples))
	}
	failed := 0
	for i, r := range results {
		s := samples[i]
		if r.Err != "" {
			failed++
			t.Errorf("%s: the form threw: %s", s.Source, r.Err)
			continue
		}
		var got any
		var gotRaw string
		if err := json.Unmarshal(r.Got, &gotRaw); err == nil {
			_ = json.Unmarshal([]byte(gotRaw), &got)
		}
		want := roundJSON(s.Value)
		if !reflect.DeepEqual(got, want) {
			failed++
			w, _ := json.Marshal(want)
			t.Errorf("%s: set %s, the form gives back %s\nschema %s", s.Source, w, gotRaw, s.Schema)
		}
	}
	if len(samples)-seeds < 100 {
		t.Errorf("the servers gave %d distinct schemas, want at least 100", len(samples)-seeds)
	}
	t.Logf("%d schemas (%d from servers, %d fuzz seeds; %d example values valid for jsonschema-go), %d round-trips failed", len(samples), len(samples)-seeds, seeds, validated, failed)
}

// roundJSON is v as it comes back from JSON.
func roundJSON(v any) any {
	b, _ := json.Marshal(v)
	var out any
	_ = json.Unmarshal(b, &out)
	return out
}

// validate checks v against schema with google/jsonschema-go.
func validate(schema json.RawMessage, v any) error {
	var s jsonschema.Schema
	if err := json.Unmarshal(schema, &s); err != nil {
		return err
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		return err
	}
	return rs.Validate(roundJSON(v))
}

// example makes a value for schema s (within root): every property,
// arrays of two items, the first branch of a oneOf/anyOf, a value of each
// string format.
func example(root, s any, depth int) any {
	m, ok := s.(map[string]any)
	if !ok || depth > 6 {
		return nil
	}
	if ref, ok := m["$ref"].(string); ok && strings.HasPrefix(ref, "#") {
		var t any = root
		for _, part := range strings.Split(ref[1:], "/")[1:] {
			part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
			tm, _ := t.(map[string]any)
			t = tm[part]
		}
		return example(root, t, depth+1)
	}
	if all, ok := m["allOf"].([]any); ok && len(all) > 0 {
		merged := map[string]any{}
		props := map[string]any{}
		for _, k := range []any{s} {
			for kk, vv := range k.(map[string]any) {
				if kk != "allOf" {
					merged[kk] = vv
				}
			}
		}
		for _, part := range all {
			if pm, ok := part.(map[string]any); ok {
				for k, v := range pm {
					if k == "properties" {
						for pk, pv := range v.(map[string]any) {
							props[pk] = pv
						}
					} else if _, has := merged[k]; !has {
						merged[k] = v
					}
				}
			}
		}
		if len(props) > 0 {
			if mp, ok := merged["properties"].(map[string]any); ok {
				for k, v := range mp {
					props[k] = v
				}
			}
			merged["properties"] = props
		}
		return example(root, merged, depth+1)
	}
	if c, ok := m["const"]; ok {
		return c
	}
	if e, ok := m["enum"].([]any); ok && len(e) > 0 {
		return e[len(e)-1]
	}
	for _, k := range []string{"oneOf", "anyOf"} {
		if alts, ok := m[k].([]any); ok && len(alts) > 0 {
			branch, _ := alts[0].(map[string]any)
			merged := map[string]any{}
			for kk, vv := range m {
				if kk != "oneOf" && kk != "anyOf" {
					merged[kk] = vv
				}
			}
			for kk, vv := range branch {
				merged[kk] = vv
			}
			return example(root, merged, depth+1)
		}
	}
	if d, ok := m["default"]; ok {
		return d
	}
	typ, _ := m["type"].(string)
	if list, ok := m["type"].([]any); ok && len(list) > 0 {
		typ, _ = list[0].(string)
	}
	if typ == "" {
		switch {
		case m["properties"] != nil:
			typ = "object"
		case m["items"] != nil:
			typ = "array"
		default:
			return "any"
		}
	}
	switch typ {
	case "object":
		out := map[string]any{}
		props, _ := m["properties"].(map[string]any)
		for k, ps := range props {
			out[k] = example(root, ps, depth+1)
			if out[k] == nil {
				delete(out, k)
			}
		}
		if ap, ok := m["additionalProperties"].(map[string]any); ok && len(props) == 0 {
			out["key1"] = example(root, ap, depth+1)
		}
		return out
	case "array":
		n := 2
		if mx, ok := m["maxItems"].(float64); ok && int(mx) < n {
			n = int(mx)
		}
		var out []any
		if tuple, ok := m["prefixItems"].([]any); ok {
			for _, it := range tuple {
				out = append(out, example(root, it, depth+1))
			}
			return out
		}
		for i := 0; i < n; i++ {
			v := example(root, m["items"], depth+1)
			if v == nil {
				break
			}
			if s, ok := v.(string); ok && i > 0 {
				if _, isEnum := m["items"].(map[string]any)["enum"]; !isEnum {
					v = s + "2"
				}
			}
			out = append(out, v)
		}
		if out == nil {
			out = []any{}
		}
		return out
	case "string":
		switch m["format"] {
		case "email":
			return "ada@example.com"
		case "uri", "url":
			return "https://example.com/a"
		case "date":
			return "2024-02-03"
		case "date-time":
			return "2024-02-03T04:05:06Z"
		case "uuid":
			return "123e4567-e89b-12d3-a456-426614174000"
		}
		s := "text"
		if mn, ok := m["minLength"].(float64); ok {
			for len(s) < int(mn) {
				s += "x"
			}
		}
		return s
	case "integer":
		n := 2.0
		if mn, ok := m["minimum"].(float64); ok && mn > n {
			n = mn
		}
		if mx, ok := m["maximum"].(float64); ok && mx < n {
			n = mx
		}
		return n
	case "number":
		n := 1.5
		if mn, ok := m["minimum"].(float64); ok && mn > n {
			n = mn
		}
		if mx, ok := m["maximum"].(float64); ok && mx < n {
			n = mx
		}
		return n
	case "boolean":
		return true
	case "null":
		return nil
	}
	return "any"
}
