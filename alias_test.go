package mcpadapter_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestAliasDocs keeps the doc of each exported type alias of the root to
// an internal type telling a user what the type holds, since go doc of
// the alias does not show the internal type: every exported field of a
// struct is named, and every method of an interface is named with its
// parameters ("Name(") so that a user can implement it, its embedded
// interfaces by name.
func TestAliasDocs(t *testing.T) {
	const module = "github.com/mcpadapter/mcpadapter"
	fset := token.NewFileSet()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	internal := map[string]map[string]*ast.TypeSpec{} // dir -> name -> spec
	specsOf := func(dir string) map[string]*ast.TypeSpec {
		if m, ok := internal[dir]; ok {
			return m
		}
		m := map[string]*ast.TypeSpec{}
		fs, _ := filepath.Glob(filepath.Join(dir, "*.go"))
		for _, f := range fs {
			if strings.HasSuffix(f, "_test.go") {
				continue
			}
			af, err := parser.ParseFile(fset, f, nil, 0)
			if err != nil {
				t.Fatal(err)
			}
			for _, d := range af.Decls {
				if g, ok := d.(*ast.GenDecl); ok && g.Tok == token.TYPE {
					for _, s := range g.Specs {
						ts := s.(*ast.TypeSpec)
						m[ts.Name.Name] = ts
					}
				}
			}
		}
		internal[dir] = m
		return m
	}
	checked := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		af, err := parser.ParseFile(fset, f, src, parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		imports := map[string]string{}
		for _, imp := range af.Imports {
			p, _ := strconv.Unquote(imp.Path.Value)
			name := p[strings.LastIndex(p, "/")+1:]
			if imp.Name != nil {
				name = imp.Name.Name
			}
			imports[name] = p
		}
		for _, d := range af.Decls {
			g, ok := d.(*ast.GenDecl)
			if !ok || g.Tok != token.TYPE {
				continue
			}
			for _, s := range g.Specs {
				ts := s.(*ast.TypeSpec)
				sel, ok := ts.Type.(*ast.SelectorExpr)
				if !ts.Assign.IsValid() || !ts.Name.IsExported() || !ok {
					continue
				}
				x, _ := sel.X.(*ast.Ident)
				if x == nil {
					continue
				}
				dir, ok := strings.CutPrefix(imports[x.Name], module+"/")
				if !ok || !strings.HasPrefix(dir, "internal/") {
					continue
				}
				target := specsOf(dir)[sel.Sel.Name]
				if target == nil {
					t.Errorf("%s: %s's target %s.%s not found in %s", f, ts.Name.Name, x.Name, sel.Sel.Name, dir)
					continue
				}
				doc := g.Doc.Text() + ts.Doc.Text()
				checked++
				for _, want := range wantedInAliasDoc(target) {
					if !regexp.MustCompile(`\b` + regexp.QuoteMeta(want)).MatchString(doc) {
						t.Errorf("%s: the doc of %s (= %s.%s) does not name %q", f, ts.Name.Name, x.Name, sel.Sel.Name, want)
					}
				}
			}
		}
	}
	if checked < 10 {
		t.Fatalf("checked %d aliases of internal types; the root has more", checked)
	}
}

// wantedInAliasDoc are the names the doc of an alias of ts must hold: the
// exported fields of a struct, "Method(" for each method of an interface
// and the name of each interface it embeds.
func wantedInAliasDoc(ts *ast.TypeSpec) []string {
	var want []string
	switch tt := ts.Type.(type) {
	case *ast.StructType:
		for _, fl := range tt.Fields.List {
			for _, n := range fl.Names {
				if n.IsExported() {
					want = append(want, n.Name)
				}
			}
			if len(fl.Names) == 0 {
				if id, ok := fl.Type.(*ast.Ident); ok && id.IsExported() {
					want = append(want, id.Name)
				}
			}
		}
	case *ast.InterfaceType:
		for _, m := range tt.Methods.List {
			switch {
			case len(m.Names) > 0:
				for _, n := range m.Names {
					want = append(want, n.Name+"(")
				}
			default:
				if id, ok := m.Type.(*ast.Ident); ok {
					want = append(want, id.Name)
				}
			}
		}
	}
	return want
}
