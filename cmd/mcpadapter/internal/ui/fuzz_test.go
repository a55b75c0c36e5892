package ui

import (
	"encoding/json"
	"go/ast"
	"go/parser"
	"go/token"
	"net/http"
	"strings"
	"testing"
)

// FuzzGoTest: whatever names, arguments and texts the saved calls hold
// (a server chooses tool names and results), the exported test parses as
// Go and declares exactly its own functions: nothing a server wrote
// becomes code.
func FuzzGoTest(f *testing.F) {
	f.Add("forecast", `{"city":"Paris"}`, "Paris: sunny", `{"a":1}`, "https://example.com/mcp")
	f.Add("x\"` + \"\n}\nfunc init() { panic(1) }\n", "{}", "`\n*/ /*", "", "/tmp/x\"; rm -rf /")
	f.Add("\u2028\x00", `{"k":"\u0000"}`, "\xff\xfe", "null", "")
	f.Fuzz(func(t *testing.T, tool, args, text, structured, target string) {
		saved := []SavedCall{{Name: tool, Tool: tool, Args: json.RawMessage(args), Expected: &resultView{ModelText: text}}}
		if json.Valid([]byte(structured)) {
			saved[0].Expected.Structured = json.RawMessage(structured)
		}
		for _, tg := range []*Target{nil, {URL: target}, {Command: []string{target, tool}}, {Config: target}, {Script: target}, {Demo: []string{tool}}} {
			src, err := goTest(tg, saved)
			if err != nil {
				t.Fatalf("goTest: %v", err)
			}
			file, err := parser.ParseFile(token.NewFileSet(), "x_test.go", src, 0)
			if err != nil {
				t.Fatalf("the exported test does not parse: %v\n%s", err, src)
			}
			var names []string
			for _, d := range file.Decls {
				if fd, ok := d.(*ast.FuncDecl); ok {
					names = append(names, fd.Name.Name)
				} else if gd, ok := d.(*ast.GenDecl); ok && gd.Tok != token.IMPORT {
					t.Fatalf("a declaration that is not a function:\n%s", src)
				}
			}
			got := strings.Join(names, " ")
			if got != "TestSavedCalls listTools sameJSON" && got != "TestSavedCalls listTools sameJSON loadConfig" {
				t.Fatalf("the exported test declares %s:\n%s", got, src)
			}
		}
	})
}

// FuzzGuardCheck: a request passes the guard's Host and Origin checks
// only when its Host is a loopback host with the inspector's port, and
// its Origin, if any, is http on such a host.
func FuzzGuardCheck(f *testing.F) {
	f.Add("127.0.0.1:4000", "http://127.0.0.1:4000", "same-origin", "POST")
	f.Add("localhost:4000", "", "", "GET")
	f.Add("attacker.example:4000", "http://attacker.example:4000", "", "GET")
	f.Add("[::1]:4000", "null", "cross-site", "POST")
	f.Add("127.0.0.1:4000", "http://127.0.0.1:4000/x", "", "POST")
	f.Add("127.1:4000", "http://LOCALHOST:4000", "none", "PUT")
	g := newGuard("4000", "http://127.0.0.1:4001")
	f.Fuzz(func(t *testing.T, host, origin, site, method string) {
		r, err := http.NewRequest("GET", "http://127.0.0.1:4000/", nil)
		if err != nil {
			t.Fatal(err)
		}
		r.Method, r.Host = method, host
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if site != "" {
			r.Header.Set("Sec-Fetch-Site", site)
		}
		code, _ := g.check(r)
		if code != 0 {
			return
		}
		if !hostOK(host, "4000") {
			t.Fatalf("Host %q passed", host)
		}
		if site != "" && site != "same-origin" && site != "none" {
			t.Fatalf("Sec-Fetch-Site %q passed", site)
		}
		if origin == "" && method != "GET" && method != "HEAD" {
			t.Fatalf("%s without an Origin passed", method)
		}
		if origin != "" && !strings.HasPrefix(origin, "http://") {
			t.Fatalf("Origin %q passed", origin)
		}
		h := strings.TrimPrefix(origin, "http://")
		if origin != "" && !hostOK(h, "4000") {
			t.Fatalf("Origin %q passed", origin)
		}
	})
}
