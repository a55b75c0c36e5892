// Command docscheck keeps the documentation from rotting. scripts/docs
// runs it; it has three commands:
//
//	docscheck links FILE.md...
//	docscheck snippets -out DIR -work GOWORK -genkit-work GOWORK FILE.md...
//	docscheck quickstart -section NAME FILE.md
//
// links checks every relative link of the files: the file it names exists,
// and so does the heading its #fragment names.
//
// snippets writes every ```go block of the files into Go packages under
// DIR, in two workspaces (DIR/go.work, made from GOWORK, and
// DIR/genkit/go.work, made from the Genkit one, for the blocks that use
// Genkit), so that `go build ./...` in each compiles them all. Every
// ```json block must be JSON (one value, or several in a row); those that
// are mcpServers documents go into a program, DIR/snippets/configcheck,
// that parses each with mcpadapter.ParseConfigEnv.
// A block is compiled as it is when it starts with a package clause; as a
// file of package-level declarations when it parses as one; otherwise as
// the body of `func(ctx context.Context) error`. An HTML comment on the
// line before a block, <!-- go: DECLARATIONS -->, adds package-level
// declarations the block assumes (var tools []*mcpadapter.Tool). Imports
// are added for the package names the block uses (see imports); variables
// declared at the top of a body that it does not use are used for it.
//
// quickstart prints, as a bash script, what a reader of the section does:
// each ```sh block's lines, and each ```go block written to main.go.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"go/ast"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"

	"golang.org/x/mod/modfile"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "links":
		err = links(os.Args[2:])
	case "snippets":
		err = snippetsCmd(os.Args[2:])
	case "quickstart":
		err = quickstart(os.Args[2:])
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "docscheck:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: docscheck links|snippets|quickstart ...")
	os.Exit(2)
}

// A block is one fenced code block of a markdown file.
type block struct {
	file  string
	line  int    // of the opening fence
	lang  string // the fence's info string
	given string // the <!-- go: ... --> comment before the fence
	text  string
}

var givenRE = regexp.MustCompile(`^<!--\s*go:\s*(.*?)\s*-->\s*$`)

// blocks returns the fenced code blocks of a markdown file, and its lines
// with those of the blocks blanked, so that prose[i] is line i+1.
func blocks(file string) ([]block, []string, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, nil, err
	}
	lines := strings.Split(string(data), "\n")
	var out []block
	var prose []string
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		if !strings.HasPrefix(l, "```") {
			prose = append(prose, l)
			continue
		}
		b := block{file: file, line: i + 1, lang: strings.TrimSpace(strings.TrimPrefix(l, "```"))}
		if i > 0 {
			if m := givenRE.FindStringSubmatch(lines[i-1]); m != nil {
				b.given = m[1]
			}
		}
		var body []string
		prose = append(prose, "") // the opening fence
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
			prose = append(prose, "")
		}
		if i == len(lines) {
			return nil, nil, fmt.Errorf("%s:%d: code block never closed", file, b.line)
		}
		b.text = strings.Join(body, "\n") + "\n"
		out = append(out, b)
		prose = append(prose, "") // the closing fence
	}
	return out, prose, nil
}

// ---- links

var linkRE = regexp.MustCompile(`\]\(([^)\s]+)(?:\s+"[^"]*")?\)`)
var inlineCodeRE = regexp.MustCompile("`[^`]*`")

func links(files []string) error {
	var problems []string
	anchors := map[string]map[string]bool{}
	for _, f := range files {
		_, prose, err := blocks(f)
		if err != nil {
			return err
		}
		for i, l := range prose {
			for _, m := range linkRE.FindAllStringSubmatch(inlineCodeRE.ReplaceAllString(l, ""), -1) {
				target := m[1]
				if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
					continue
				}
				path, frag, _ := strings.Cut(target, "#")
				dest := f
				if path != "" {
					dest = filepath.Join(filepath.Dir(f), filepath.FromSlash(path))
					if _, err := os.Stat(dest); err != nil {
						problems = append(problems, fmt.Sprintf("%s:%d: %s: no such file", f, i+1, target))
						continue
					}
				}
				if frag == "" || !strings.HasSuffix(dest, ".md") {
					continue
				}
				if anchors[dest] == nil {
					a, err := headingAnchors(dest)
					if err != nil {
						return err
					}
					anchors[dest] = a
				}
				if !anchors[dest][frag] {
					problems = append(problems, fmt.Sprintf("%s:%d: %s: no heading #%s in %s", f, i+1, target, frag, dest))
				}
			}
		}
	}
	if len(problems) > 0 {
		return errors.New("broken links:\n  " + strings.Join(problems, "\n  "))
	}
	fmt.Printf("links: %d files checked\n", len(files))
	return nil
}

// headingAnchors returns the fragments GitHub gives the headings of a file.
func headingAnchors(file string) (map[string]bool, error) {
	_, prose, err := blocks(file)
	if err != nil {
		return nil, err
	}
	seen := map[string]int{}
	out := map[string]bool{}
	for _, l := range prose {
		if !strings.HasPrefix(l, "#") {
			continue
		}
		h := strings.TrimSpace(strings.TrimLeft(l, "#"))
		slug := slugify(h)
		if n := seen[slug]; n > 0 {
			out[slug+"-"+strconv.Itoa(n)] = true
		} else {
			out[slug] = true
		}
		seen[slug]++
	}
	return out, nil
}

func slugify(h string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(h) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// ---- quickstart

func quickstart(args []string) error {
	fs := flag.NewFlagSet("quickstart", flag.ExitOnError)
	section := fs.String("section", "Quickstart", "the section's heading")
	_ = fs.Parse(args)
	if fs.NArg() != 1 {
		return errors.New("quickstart: one file")
	}
	data, err := os.ReadFile(fs.Arg(0))
	if err != nil {
		return err
	}
	lines := strings.Split(string(data), "\n")
	start := -1
	for i, l := range lines {
		if strings.HasPrefix(l, "#") && strings.TrimSpace(strings.TrimLeft(l, "#")) == *section {
			start = i
			break
		}
	}
	if start < 0 {
		return fmt.Errorf("%s has no section %q", fs.Arg(0), *section)
	}
	level := len(lines[start]) - len(strings.TrimLeft(lines[start], "#"))
	var script []string
	for i := start + 1; i < len(lines); i++ {
		l := lines[i]
		if strings.HasPrefix(l, "#") && len(l)-len(strings.TrimLeft(l, "#")) <= level {
			break
		}
		if !strings.HasPrefix(l, "```") {
			continue
		}
		lang := strings.TrimSpace(strings.TrimPrefix(l, "```"))
		var body []string
		for i++; i < len(lines) && !strings.HasPrefix(lines[i], "```"); i++ {
			body = append(body, lines[i])
		}
		switch lang {
		case "sh", "bash", "shell":
			for _, b := range body {
				if strings.TrimSpace(b) != "" {
					script = append(script, "echo '$ '"+shellQuote(b), b)
				}
			}
		case "go":
			script = append(script, "echo '$ cat > main.go'", "cat > main.go <<'MAIN_GO_EOF'")
			script = append(script, body...)
			script = append(script, "MAIN_GO_EOF")
		}
	}
	if len(script) == 0 {
		return fmt.Errorf("section %q has no commands", *section)
	}
	fmt.Println("set -euo pipefail\n" + strings.Join(script, "\n"))
	return nil
}

func shellQuote(s string) string { return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'" }

// ---- snippets

// imports maps the package names a block may use without importing them to
// their import paths. A binding and the SDK it binds share a name; the
// SDK is imported under the name these pages give it (oai, ant, gk).
var imports = map[string]string{
	"context": "context", "json": "encoding/json", "fmt": "fmt", "os": "os", "log": "log", "http": "net/http",
	"time": "time", "errors": "errors", "slog": "log/slog", "url": "net/url", "strings": "strings", "io": "io",

	"mcpadapter":    "github.com/mcpadapter/mcpadapter",
	"elicitation":   "github.com/mcpadapter/mcpadapter/elicitation",
	"schemaprofile": "github.com/mcpadapter/mcpadapter/schemaprofile",
	"toolcall":      "github.com/mcpadapter/mcpadapter/toolcall",
	"toolsearch":    "github.com/mcpadapter/mcpadapter/toolsearch",
	"mcp":           "github.com/modelcontextprotocol/go-sdk/mcp",
	"auth":          "github.com/modelcontextprotocol/go-sdk/auth",

	"eino":   "github.com/mcpadapter/mcpadapter/eino",
	"adk":    "github.com/cloudwego/eino/adk",
	"model":  "github.com/cloudwego/eino/components/model",
	"schema": "github.com/cloudwego/eino/schema",

	"openai":    "github.com/mcpadapter/mcpadapter/openai",
	"oai":       "github.com/openai/openai-go/v3",
	"responses": "github.com/openai/openai-go/v3/responses",
	"option":    "github.com/openai/openai-go/v3/option",

	"anthropic": "github.com/mcpadapter/mcpadapter/anthropic",
	"ant":       "github.com/anthropics/anthropic-sdk-go/v2",

	"gemini": "github.com/mcpadapter/mcpadapter/gemini",
	"genai":  "google.golang.org/genai",

	"genkit": "github.com/mcpadapter/mcpadapter/genkit",
	"gk":     "github.com/firebase/genkit/go/genkit",
	"ai":     "github.com/firebase/genkit/go/ai",

	"langchaingo": "github.com/mcpadapter/mcpadapter/langchaingo",
	"llms":        "github.com/tmc/langchaingo/llms",

	"mcpotel":        "github.com/mcpadapter/mcpadapter/otel",
	"gateway":        "github.com/mcpadapter/mcpadapter/gateway",
	"resourceserver": "github.com/mcpadapter/mcpadapter/gateway/resourceserver",
	"policy":         "github.com/mcpadapter/mcpadapter/gateway/policy",
	"trace":          "go.opentelemetry.io/otel/trace",
	"metric":         "go.opentelemetry.io/otel/metric",
	"redisstore":     "github.com/mcpadapter/mcpadapter/redisstore",
	"pgstore":        "github.com/mcpadapter/mcpadapter/pgstore",
	"redis":          "github.com/redis/go-redis/v9",
	"pgxpool":        "github.com/jackc/pgx/v5/pgxpool",
}

// genkitNames are the package names whose blocks build in the Genkit workspace.
var genkitNames = map[string]bool{"genkit": true, "gk": true, "ai": true}

func snippetsCmd(args []string) error {
	fs := flag.NewFlagSet("snippets", flag.ExitOnError)
	out := fs.String("out", "", "directory to write into")
	work := fs.String("work", "", "the repository's go.work")
	gkWork := fs.String("genkit-work", "", "the repository's workspace of the Genkit modules")
	_ = fs.Parse(args)
	if *out == "" || *work == "" || *gkWork == "" {
		return errors.New("snippets: -out, -work and -genkit-work are required")
	}
	var goBlocks, configs []block
	var problems []string
	for _, f := range fs.Args() {
		bs, _, err := blocks(f)
		if err != nil {
			return err
		}
		for _, b := range bs {
			switch b.lang {
			case "go":
				goBlocks = append(goBlocks, b)
			case "json":
				if err := jsonValues(b.text); err != nil {
					problems = append(problems, fmt.Sprintf("%s:%d: not JSON: %v", b.file, b.line, err))
				} else if isConfig(b.text) {
					configs = append(configs, b)
				}
			}
		}
	}
	main, gk := filepath.Join(*out, "snippets"), filepath.Join(*out, "genkit", "snippets")
	for _, d := range []string{main, gk} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(d, "go.mod"), []byte("module docsnippets\n\ngo 1.26.0\n"), 0o644); err != nil {
			return err
		}
	}
	if err := writeWork(*work, filepath.Join(*out, "go.work"), "./snippets"); err != nil {
		return err
	}
	if err := writeWork(*gkWork, filepath.Join(*out, "genkit", "go.work"), "./snippets"); err != nil {
		return err
	}
	nMain, nGk := 0, 0
	for i, b := range goBlocks {
		src, usesGenkit, err := compose(b, fmt.Sprintf("s%03d", i))
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		dir := main
		if usesGenkit {
			dir, nGk = gk, nGk+1
		} else {
			nMain++
		}
		pkgDir := filepath.Join(dir, fmt.Sprintf("s%03d", i))
		if err := os.MkdirAll(pkgDir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(pkgDir, "snippet.go"), src, 0o644); err != nil {
			return err
		}
	}
	if err := writeConfigCheck(filepath.Join(main, "configcheck"), configs); err != nil {
		return err
	}
	if len(problems) > 0 {
		return errors.New("snippets that do not parse:\n  " + strings.Join(problems, "\n  "))
	}
	fmt.Printf("snippets: %d Go blocks (%d in the Genkit workspace), %d config documents\n", nMain+nGk, nGk, len(configs))
	return nil
}

// writeWork writes a go.work that is the workspace file src with every
// directory made absolute, plus the module at dir.
func writeWork(src, dst, dir string) error {
	data, err := os.ReadFile(src)
	if err != nil {
		return err
	}
	wf, err := modfile.ParseWork(src, data, nil)
	if err != nil {
		return err
	}
	base, err := filepath.Abs(filepath.Dir(src))
	if err != nil {
		return err
	}
	var out bytes.Buffer
	fmt.Fprintf(&out, "go %s\n\nuse (\n\t%s\n", wf.Go.Version, dir)
	for _, u := range wf.Use {
		fmt.Fprintf(&out, "\t%s\n", filepath.Join(base, u.Path))
	}
	out.WriteString(")\n\nreplace (\n")
	for _, r := range wf.Replace {
		fmt.Fprintf(&out, "\t%s %s => %s\n", r.Old.Path, r.Old.Version, filepath.Join(base, r.New.Path))
	}
	out.WriteString(")\n")
	return os.WriteFile(dst, out.Bytes(), 0o644)
}

// compose makes the Go file of a block.
func compose(b block, pkg string) ([]byte, bool, error) {
	where := fmt.Sprintf("%s:%d", b.file, b.line)
	header := fmt.Sprintf("// Code from %s. DO NOT EDIT.\n\n", where)
	if strings.HasPrefix(strings.TrimSpace(b.text), "package ") {
		f, err := parser.ParseFile(token.NewFileSet(), "", b.text, parser.ImportsOnly)
		if err != nil {
			return nil, false, fmt.Errorf("%s: %v", where, err)
		}
		gk := false
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			gk = gk || strings.HasPrefix(p, "github.com/firebase/genkit") || p == imports["genkit"]
		}
		return []byte(header + lineDirective(b) + b.text), gk, nil
	}
	decls := b.given + "\n"
	body := ""
	if _, err := parser.ParseFile(token.NewFileSet(), "", "package p\n"+b.text, 0); err == nil {
		decls += lineDirective(b) + b.text
	} else {
		body = lineDirective(b) + b.text
	}
	src := "package " + pkg + "\n\n" + decls + "\nfunc _(ctx context.Context) error {\n" + body + "\nreturn nil\n}\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, where, src, 0)
	if err != nil {
		return nil, false, fmt.Errorf("%s: %v", where, err)
	}
	declared := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		switch n := n.(type) {
		case *ast.AssignStmt:
			if n.Tok == token.DEFINE {
				for _, e := range n.Lhs {
					if id, ok := e.(*ast.Ident); ok {
						declared[id.Name] = true
					}
				}
			}
		case *ast.ValueSpec:
			for _, id := range n.Names {
				declared[id.Name] = true
			}
		case *ast.TypeSpec:
			declared[n.Name.Name] = true
		case *ast.FuncDecl:
			declared[n.Name.Name] = true
		case *ast.Field:
			for _, id := range n.Names {
				declared[id.Name] = true
			}
		case *ast.RangeStmt:
			for _, e := range []ast.Expr{n.Key, n.Value} {
				if id, ok := e.(*ast.Ident); ok && n.Tok == token.DEFINE {
					declared[id.Name] = true
				}
			}
		}
		return true
	})
	used := map[string]bool{}
	ast.Inspect(f, func(n ast.Node) bool {
		if sel, ok := n.(*ast.SelectorExpr); ok {
			if id, ok := sel.X.(*ast.Ident); ok && !declared[id.Name] {
				if _, known := imports[id.Name]; known {
					used[id.Name] = true
				}
			}
		}
		return true
	})
	used["context"] = true
	// Variables declared at the top of the body, used for it.
	var blanks []string
	for _, d := range f.Decls {
		fd, ok := d.(*ast.FuncDecl)
		if !ok || fd.Name.Name != "_" {
			continue
		}
		for _, st := range fd.Body.List {
			switch st := st.(type) {
			case *ast.AssignStmt:
				if st.Tok == token.DEFINE {
					for _, e := range st.Lhs {
						if id, ok := e.(*ast.Ident); ok && id.Name != "_" {
							blanks = append(blanks, id.Name)
						}
					}
				}
			case *ast.DeclStmt:
				if gd, ok := st.Decl.(*ast.GenDecl); ok {
					for _, sp := range gd.Specs {
						if vs, ok := sp.(*ast.ValueSpec); ok {
							for _, id := range vs.Names {
								blanks = append(blanks, id.Name)
							}
						}
					}
				}
			}
		}
	}
	sort.Strings(blanks)
	var use strings.Builder
	seen := map[string]bool{}
	for _, n := range blanks {
		if !seen[n] {
			seen[n] = true
			fmt.Fprintf(&use, "_ = %s\n", n)
		}
	}
	var imps []string
	gk := false
	for name := range used {
		path := imports[name]
		gk = gk || genkitNames[name]
		imps = append(imps, fmt.Sprintf("%s %q", name, path))
	}
	sort.Strings(imps)
	src = header + "package " + pkg + "\n\nimport (\n" + strings.Join(imps, "\n") + "\n)\n\n" + decls +
		"\nfunc _(ctx context.Context) error {\n" + body + "\n" + use.String() + "return nil\n}\n"
	if out, err := format.Source([]byte(src)); err == nil {
		return out, gk, nil
	}
	return []byte(src), gk, nil
}

// lineDirective is the //line comment that makes the compiler's messages
// about a block's code name its file and line, not the generated file's.
func lineDirective(b block) string {
	return fmt.Sprintf("//line %s:%d\n", b.file, b.line+1)
}

// jsonValues checks that a JSON block is one or more JSON values (a block
// may show a request and its answer one after the other).
func jsonValues(text string) error {
	dec := json.NewDecoder(strings.NewReader(text))
	for n := 0; ; n++ {
		var v json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) && n > 0 {
			return nil
		}
		if err != nil {
			return err
		}
	}
}

// isConfig reports whether a JSON block is an mcpServers document.
func isConfig(text string) bool {
	var doc map[string]json.RawMessage
	if json.Unmarshal([]byte(text), &doc) != nil {
		return false
	}
	_, a := doc["mcpServers"]
	_, b := doc["servers"]
	return a || b
}

// writeConfigCheck writes a program that parses every config block.
func writeConfigCheck(dir string, configs []block) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var b strings.Builder
	b.WriteString(`// Code generated by docscheck. DO NOT EDIT.

// Command configcheck parses the mcpServers documents of the docs.
package main

import (
	"fmt"
	"os"

	"github.com/mcpadapter/mcpadapter"
)

var docs = []struct{ where, text string }{
`)
	for _, c := range configs {
		fmt.Fprintf(&b, "\t{%q, %q},\n", fmt.Sprintf("%s:%d", c.file, c.line), c.text)
	}
	b.WriteString(`}

func main() {
	failed := false
	for _, d := range docs {
		// Every variable is set, to a value of the right shape for any member.
		lookup := func(string) (string, bool) { return "1", true }
		if _, err := mcpadapter.ParseConfigEnv([]byte(d.text), lookup); err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", d.where, err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
	fmt.Printf("configcheck: %d documents parse\n", len(docs))
}
`)
	return os.WriteFile(filepath.Join(dir, "main.go"), []byte(b.String()), 0o644)
}
