package policy_test

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/mcpadapter/mcpadapter/gateway/policy"
)

func TestParseRefuses(t *testing.T) {
	for doc, want := range map[string][]string{
		`{"default":"maybe","rules":[]}`:                             {`default "maybe"`},
		`{"rules":[{"principals":["a"]}]}`:                           {"allows and denies nothing"},
		`{"rules":[{"allow":["files"]}]}`:                            {`"files": want [KIND:]SERVER/NAME`},
		`{"rules":[{"allow":["tools:files/x"],"deny":["/x","a/"]}]}`: {`kind "tools"`, `deny[0]`, `deny[1]`},
		`{"rules":[{"allow":["a/b"],"principal":["x"]}]}`:            {`unknown field "principal"`},
		`{"rules":[]} {}`:                                            {"more than one"},
	} {
		_, err := policy.Parse([]byte(doc))
		for _, w := range want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%s: %v, want %q", doc, err, w)
			}
		}
	}
}

// TestAllow: deny wins over allow among the rules that apply; a rule
// applies by principal (globs) and by all its scopes; nothing said means
// the default.
func TestAllow(t *testing.T) {
	p, err := policy.Parse([]byte(`{"rules":[
		{"allow":["tool:files/read_*", "prompt:*/*"]},
		{"principals":["alice","ci-*"], "allow":["github/*"], "deny":["github/delete_*"]},
		{"principals":["bob"], "allow":["resource:files/file:///pub/*"]}
	]}`))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, c := range []struct {
		principal, server, kind, name string
		want                          bool
	}{
		{"anyone", "files", "tool", "read_file", true},
		{"anyone", "files", "tool", "write_file", false},
		{"anyone", "files", "resource", "read_x", false},
		{"anyone", "x", "prompt", "p", true},
		{"alice", "github", "tool", "search", true},
		{"alice", "github", "tool", "delete_repo", false},
		{"ci-7", "github", "resource", "gh://x", true},
		{"ci", "github", "tool", "search", false},
		{"bob", "files", "resource", "file:///pub/a/b", true},
		{"bob", "files", "resource", "file:///etc/passwd", false},
		{"", "github", "tool", "search", false},
	} {
		if got := p.Allow(ctx, c.principal, c.server, c.kind, c.name); got != c.want {
			t.Errorf("%+v: %v", c, got)
		}
	}
	open, _ := policy.Parse([]byte(`{"default":"allow","rules":[{"deny":["*/secret*"]}]}`))
	if !open.Allow(ctx, "x", "a", "tool", "b") || open.Allow(ctx, "x", "a", "tool", "secret_b") {
		t.Error("default allow with a deny")
	}
}

// FuzzParse: any document is parsed or refused without panicking, and a
// policy that parsed answers without panicking.
func FuzzParse(f *testing.F) {
	f.Add(`{"rules":[{"allow":["tool:a/*"],"deny":["*/x"],"principals":["a*b"],"scopes":["s"]}]}`, "ab", "a", "tool", "x")
	f.Add(`{"default":"allow","rules":[]}`, "", "", "", "")
	f.Fuzz(func(t *testing.T, doc, principal, server, kind, name string) {
		p, err := policy.Parse([]byte(doc))
		if err != nil {
			return
		}
		p.Allow(context.Background(), principal, server, kind, name)
	})
}

// FuzzGlob checks the policy's "*" against a regular expression.
func FuzzGlob(f *testing.F) {
	f.Add("a*b*c", "axxbyyc")
	f.Add("*", "")
	f.Add("a**", "a")
	f.Add("*ab*ab", "abab")
	f.Add("*_admin", "x_admins")
	f.Add("a*c", "abd")
	f.Fuzz(func(t *testing.T, pat, s string) {
		if strings.ContainsAny(pat, "/:") || pat == "" || !utf8.ValidString(pat) || !utf8.ValidString(s) {
			return
		}
		var re strings.Builder
		re.WriteString("^")
		for i, part := range strings.Split(pat, "*") {
			if i > 0 {
				re.WriteString("(?s:.*)")
			}
			re.WriteString(regexp.QuoteMeta(part))
		}
		re.WriteString("$")
		want := regexp.MustCompile(re.String()).MatchString(s)
		p, err := policy.Parse([]byte(`{"rules":[{"allow":["srv/` + jsonEscape(pat) + `"]}]}`))
		if err != nil {
			t.Skip()
		}
		if got := p.Allow(context.Background(), "x", "srv", "tool", s); got != want {
			t.Fatalf("%q ~ %q: %v, want %v", pat, s, got, want)
		}
	})
}

func jsonEscape(s string) string {
	r := strings.NewReplacer(`\`, `\\`, `"`, `\"`)
	return r.Replace(s)
}

// TestLoadRefusesWhatIsNoPolicyFile: Load (serve reads --policy with it
// at the start and on every reload) refuses at once, naming the file, a
// path swapped for a link to /dev/zero, a pipe no one writes to, and a
// file far bigger than any policy; it never reads them whole or waits.
func TestLoadRefusesWhatIsNoPolicyFile(t *testing.T) {
	dir := t.TempDir()
	zero := filepath.Join(dir, "zero.json")
	if err := os.Symlink("/dev/zero", zero); err != nil {
		t.Fatal(err)
	}
	fifo := filepath.Join(dir, "fifo.json")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	huge := filepath.Join(dir, "huge.json")
	if err := os.WriteFile(huge, []byte(`{"rules":[{"allow":["s/t"]}]}`+strings.Repeat(" ", 5<<20)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{fifo, huge, zero} { // the pipe first: a Load that waits on it stops the test before /dev/zero
		done := make(chan error, 1)
		go func() {
			_, err := policy.Load(path)
			done <- err
		}()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(err.Error(), path) {
				t.Errorf("Load(%s): %v; want an error naming the file", path, err)
			}
		case <-time.After(5 * time.Second):
			t.Fatalf("Load(%s) is still reading after 5s", path)
		}
	}
}
