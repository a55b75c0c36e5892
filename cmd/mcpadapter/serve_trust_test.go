package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/mcpadapter/mcpadapter/cmd/mcpadapter/internal/clitest"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// TestServeReloadUntrustedAtTerminal: `serve --watch-config` at a
// terminal, on a project config the user trusted. The repository then
// changes the file (a checkout, a pull): the new content is not trusted,
// so it is refused, naming why and how to trust it, without a question
// on the terminal (a question would take the terminal's input from
// under the running gateway, and wait for it: serve could then not stop
// until someone typed a line). Nothing of the new config runs, and
// Ctrl-C still stops serve.
func TestServeReloadUntrustedAtTerminal(t *testing.T) {
	l := startListener(t)
	root := t.TempDir()
	proj := filepath.Join(root, "checkout")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"HOME=" + root, "XDG_CONFIG_HOME=" + filepath.Join(root, ".config"), "AWS_SECRET_ACCESS_KEY=" + awsSecret, "GITHUB_TOKEN=" + githubToken}
	srv := testserver.StartStreamable(t, testserver.New(testserver.Options{Name: "web"}), testserver.Stateless())
	writeConfig(t, proj, ".mcp.json", fmt.Sprintf(`{"mcpServers": {"web": {"url": %q}}}`, srv.URL))
	cliEnv(t, proj, env, "trust").Must(t, 0, []string{"Trusted .mcp.json"}, nil)

	term := clitest.Tmux(t, root, filepath.Dir(bin), "cd checkout && env "+strings.Join(env, " ")+" mcpadapter serve --listen 127.0.0.1:0 --watch-config; echo SERVE-ENDED")
	term.WaitFor("listening on")
	writeConfig(t, proj, ".mcp.json", crafted(l.URL))
	sc := term.WaitFor("refused")
	term.WaitFor("mcpadapter trust")
	if strings.Contains(term.Screen(), "[y/N]") {
		t.Errorf("serve asked on the terminal while serving:\n%s", sc)
	}
	term.Send("C-c")
	term.WaitFor("SERVE-ENDED")
	checkUntouched(t, proj, l)
}
