package trust

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode"
)

func TestUserLevel(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_CONFIG_HOME", filepath.Join(home, ".config"))
	write := func(rel string) string {
		p := filepath.Join(home, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(`{}`), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	for rel, want := range map[string]bool{
		".mcp.json":                            true,
		".claude.json":                         true,
		".config/mcpadapter/mcp.json":          true,
		".config/mcpadapter/team/mcp.json":     true,
		".cursor/mcp.json":                     true,
		".config/Code/User/mcp.json":           true,
		"src/repo/.mcp.json":                   false,
		".config/nvim/.mcp.json":               false, // a checkout under ~/.config
		".cursor/extensions/evil/.mcp.json":    false,
		".config/mcpadapter-evil/mcp.json":     false,
		".local/share/checkout/.cursor/x.json": false,
	} {
		if got := UserLevel(write(rel)); got != want {
			t.Errorf("UserLevel(~/%s) = %v, want %v", rel, got, want)
		}
	}
	// A link in a checkout to the user's own file is the user's file; a
	// link in the home directory to a checkout's file is not.
	repo := write("src/repo/.mcp.json")
	link := filepath.Join(home, "src", "repo", "own.json")
	if err := os.Symlink(write(".config/mcpadapter/mcp.json"), link); err != nil {
		t.Fatal(err)
	}
	if !UserLevel(link) {
		t.Errorf("a link to the user's own config is not user-level")
	}
	homeLink := filepath.Join(home, ".cursor", "mcp-link.json")
	if err := os.Symlink(repo, homeLink); err != nil {
		t.Fatal(err)
	}
	if UserLevel(homeLink) {
		t.Errorf("a link to a checkout's config is user-level")
	}
}

func TestStore(t *testing.T) {
	dir := t.TempDir()
	s := NewStore(filepath.Join(dir, "cfg", "trusted.json"))
	f := filepath.Join(dir, ".mcp.json")
	if err := os.WriteFile(f, []byte(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Approved(f, []byte(`{"a":1}`)); ok || err != nil {
		t.Fatalf("approved before approval: %v %v", ok, err)
	}
	if err := s.Approve(f, []byte(`{"a":1}`)); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Approved(f, []byte(`{"a":1}`)); !ok {
		t.Errorf("not approved after approval")
	}
	if ok, _ := s.Approved(f, []byte(`{"a":2}`)); ok {
		t.Errorf("other content approved")
	}
	other := filepath.Join(t.TempDir(), ".mcp.json")
	_ = os.WriteFile(other, []byte(`{"a":1}`), 0o644)
	if ok, _ := s.Approved(other, []byte(`{"a":1}`)); ok {
		t.Errorf("the same content in another place approved (its relative commands are other programs)")
	}
	if err := s.Revoke(f); err != nil {
		t.Fatal(err)
	}
	if ok, _ := s.Approved(f, []byte(`{"a":1}`)); ok {
		t.Errorf("approved after revoke")
	}
}

func TestSummary(t *testing.T) {
	doc := `{"mcpServers": {
		"a": {"command": "sh", "args": ["-c", "x"], "env": {"K": "${SECRET}"}, "cwd": "/tmp", "inheritEnv": ["AWS_*"]},
		"b": {"url": "https://h/mcp?k=${env:KEY}", "headers": {"X": "${TOK:-${TOK2}}"}, "auth": {"type": "enterprise", "clientSecret": "literal", "idTokenCommand": ["sso", "tok"], "idTokenFile": "/f"}},
		"b": {"url": "https://dup.example"},
		"c\u001b[31m": {"url": "\u0024{HIDDEN}", "auth": "${BEARER}"},
		"d": {"command": "x", "disabled": true},
		"e": {"url": "https://e.example/mcp", "skipArgumentCheck": true, "tools": {"pay": {"skipArgumentCheck": true}, "list": {"skipArgumentCheck": false}}}
	}}`
	got, err := Summary([]byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		`runs the command "sh"`, `with the arguments "-c" "x"`, `with the environment "K"="${SECRET}"`, `in the directory "/tmp"`,
		`passing on these variables of your environment: "AWS_*"`,
		`contacts "https://h/mcp?k=${env:KEY}"`, `"X"="${TOK:-${TOK2}}"`, `clientSecret (a literal value, not shown)`,
		`runs the command "sso" "tok" to get an ID token`, `reads the file "/f" (idTokenFile)`,
		`contacts "https://dup.example"`, `server "c\x1b[31m"`, `contacts "${HIDDEN}"`, `sends the bearer token "${BEARER}"`,
		"disabled", "environment variables it expands: BEARER, HIDDEN, KEY, SECRET, TOK, TOK2",
		`sends the model's arguments to its tools unchecked (skipArgumentCheck)`,
		`sends the model's arguments to its tool "pay" unchecked (skipArgumentCheck)`,
	} {
		if !strings.Contains(got, want) {
			t.Errorf("summary lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, `tool "list" unchecked`) {
		t.Errorf("summary says a tool with \"skipArgumentCheck\": false is unchecked:\n%s", got)
	}
	if strings.Contains(got, "literal\"") || strings.ContainsRune(got, 0x1b) {
		t.Errorf("summary shows a literal secret or a raw escape:\n%s", got)
	}
	if _, err := Summary([]byte(`[1]`)); err == nil {
		t.Errorf("an array summarized")
	}
}

// FuzzSummary: any document: no panic, and the summary holds no control
// or format character but newlines (nothing a terminal would play).
func FuzzSummary(f *testing.F) {
	f.Add([]byte(`{"mcpServers":{"a":{"command":"sh","args":["-c","x"],"env":{"K":"${S}"}}}}`))
	f.Add([]byte(`{"servers":{"a\u202e":{"url":"\u001b]0;x\u0007","auth":{"type":"jwt_bearer","assertionFile":"/x"}}}}`))
	f.Add([]byte(`{"mcpServers":{"a":{"auth":"oauth","headers":[1]},"b":7}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := Summary(data)
		if err != nil {
			return
		}
		for _, r := range s {
			if r != '\n' && (unicode.IsControl(r) || unicode.Is(unicode.Cf, r)) {
				t.Fatalf("summary holds %U:\n%q", r, s)
			}
		}
	})
}
