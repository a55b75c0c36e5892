// Command catalogcapture installs real MCP servers from the npm registry,
// lists their tools over stdio with Node 22 and saves each listing as JSON
// under toolsearch/testdata/catalog: the catalog the tool-search evaluation
// and the schema-profile corpus read. It is run by hand, once, when the
// catalog is to be refreshed; the tests never run it.
//
//	go run ./toolsearch/internal/catalogcapture [-out dir] [-only name,...] [-j 3]
//
// Each server is installed into its own temporary directory with the
// machine's npm (browser downloads and install scripts switched off) and
// started with the keys it asks for set to placeholder values: listing
// tools needs no account. A file holds the package and version installed,
// the server's own serverInfo and the tools/list result verbatim (every
// page), so key order and unknown fields are kept.
package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testenv"
)

// A server is one npm package to capture.
type server struct {
	// Package and Version are installed with npm.
	Package, Version string
	// Bin is the package's bin to run ("" when it has one only).
	Bin string
	// Args are its arguments; "{dir}" is a temporary directory.
	Args []string
	// Env are placeholder credentials the server wants before it lists.
	Env []string
}

// servers are the captured packages: servers people install, of many
// kinds (browsers, code hosts, databases, search engines, docs, charts,
// issue trackers, observability), several of the same kind on purpose.
var servers = []server{
	{Package: "@playwright/mcp", Version: "0.0.83", Args: []string{"--headless", "--isolated"}},
	{Package: "chrome-devtools-mcp", Version: "1.11.0", Args: []string{"--headless", "--isolated"}},
	{Package: "@modelcontextprotocol/server-puppeteer", Version: "2025.5.12"},
	{Package: "@executeautomation/playwright-mcp-server", Version: "1.0.12"},
	{Package: "@browsermcp/mcp", Version: "0.1.3"},
	{Package: "fetcher-mcp", Version: "0.3.9"},
	{Package: "@upstash/context7-mcp", Version: "4.1.1"},
	{Package: "@modelcontextprotocol/server-filesystem", Version: "2026.8.31", Args: []string{"{dir}"}},
	{Package: "@wonderwhy-er/desktop-commander", Version: "0.2.52"},
	{Package: "@modelcontextprotocol/server-memory", Version: "2026.8.31"},
	{Package: "@modelcontextprotocol/server-sequential-thinking", Version: "2026.8.31"},
	{Package: "@modelcontextprotocol/server-github", Version: "2025.4.8", Env: []string{"GITHUB_PERSONAL_ACCESS_TOKEN=placeholder"}},
	{Package: "@zereight/mcp-gitlab", Version: "2.1.64", Env: []string{"GITLAB_PERSONAL_ACCESS_TOKEN=placeholder", "GITLAB_API_URL=http://127.0.0.1:9/api/v4"}},
	{Package: "@cyanheads/git-mcp-server", Version: "2.15.3", Env: []string{"MCP_TRANSPORT_TYPE=stdio", "MCP_LOG_LEVEL=error"}},
	{Package: "@notionhq/notion-mcp-server", Version: "2.5.2"},
	{Package: "@modelcontextprotocol/server-postgres", Version: "0.6.2", Args: []string{"postgresql://127.0.0.1:9/none"}},
	{Package: "mongodb-mcp-server", Version: "3.0.4"},
	{Package: "@bytebase/dbhub", Version: "1.4.0", Args: []string{"--transport", "stdio", "--dsn", "sqlite:///:memory:"}},
	{Package: "@benborla29/mcp-server-mysql", Version: "2.0.9", Env: []string{"MYSQL_HOST=127.0.0.1", "MYSQL_PORT=9", "MYSQL_USER=none", "MYSQL_DB=none"}},
	{Package: "@modelcontextprotocol/server-redis", Version: "2025.4.25", Args: []string{"redis://127.0.0.1:9"}},
	{Package: "@supabase/mcp-server-supabase", Version: "0.13.0", Env: []string{"SUPABASE_ACCESS_TOKEN=placeholder"}},
	{Package: "@modelcontextprotocol/server-slack", Version: "2025.4.25", Env: []string{"SLACK_BOT_TOKEN=xoxb-placeholder", "SLACK_TEAM_ID=T000"}},
	{Package: "@modelcontextprotocol/server-google-maps", Version: "0.6.2", Env: []string{"GOOGLE_MAPS_API_KEY=placeholder"}},
	{Package: "@modelcontextprotocol/server-brave-search", Version: "0.6.2", Env: []string{"BRAVE_API_KEY=placeholder"}},
	{Package: "@brave/brave-search-mcp-server", Version: "2.1.4", Args: []string{"--transport", "stdio"}, Env: []string{"BRAVE_API_KEY=placeholder"}},
	{Package: "tavily-mcp", Version: "0.2.22", Env: []string{"TAVILY_API_KEY=placeholder"}},
	{Package: "exa-mcp-server", Version: "3.4.1", Env: []string{"EXA_API_KEY=placeholder"}},
	{Package: "firecrawl-mcp", Version: "3.26.0", Env: []string{"FIRECRAWL_API_KEY=fc-placeholder"}},
	{Package: "@perplexity-ai/mcp-server", Version: "1.2.1", Env: []string{"PERPLEXITY_API_KEY=placeholder"}},
	{Package: "@antv/mcp-server-chart", Version: "0.9.10"},
	{Package: "@circleci/mcp-server-circleci", Version: "0.20.0", Env: []string{"CIRCLECI_TOKEN=placeholder"}},
	{Package: "@winor30/mcp-server-datadog", Version: "1.8.0", Env: []string{"DATADOG_API_KEY=placeholder", "DATADOG_APP_KEY=placeholder"}},
	{Package: "@sentry/mcp-server", Version: "0.39.0", Args: []string{"--access-token=placeholder"}},
	{Package: "@shortcut/mcp", Version: "0.25.0", Env: []string{"SHORTCUT_API_TOKEN=placeholder"}},
	{Package: "@aashari/mcp-server-atlassian-jira", Version: "3.3.0", Env: []string{"ATLASSIAN_SITE_NAME=placeholder", "ATLASSIAN_USER_EMAIL=a@example.com", "ATLASSIAN_API_TOKEN=placeholder"}},
	{Package: "figma-developer-mcp", Version: "0.13.2", Args: []string{"--stdio"}, Env: []string{"FIGMA_API_KEY=placeholder"}},
	{Package: "@eslint/mcp", Version: "0.3.13"},
	{Package: "mcp-server-kubernetes", Version: "4.1.7"},
	{Package: "@openbnb/mcp-server-airbnb", Version: "0.3.0", Args: []string{"--ignore-robots-txt"}},
	{Package: "airtable-mcp-server", Version: "1.14.0", Env: []string{"AIRTABLE_API_KEY=placeholder"}},
	{Package: "@heroku/mcp-server", Version: "1.2.8", Env: []string{"HEROKU_API_KEY=placeholder"}},
	{Package: "@drawio/mcp", Version: "1.6.1"},
	{Package: "@kimtaeyoon83/mcp-server-youtube-transcript", Version: "0.1.1"},
	{Package: "@elastic/mcp-server-elasticsearch", Version: "0.3.1", Env: []string{"ES_URL=http://127.0.0.1:9", "ES_API_KEY=placeholder"}},
	{Package: "@pinecone-database/mcp", Version: "0.3.0", Env: []string{"PINECONE_API_KEY=placeholder"}},
	{Package: "@line/line-bot-mcp-server", Version: "0.5.0", Env: []string{"CHANNEL_ACCESS_TOKEN=placeholder", "DESTINATION_USER_ID=U0"}},
}

func main() {
	out := flag.String("out", "toolsearch/testdata/catalog", "directory to write <server>.json into")
	only := flag.String("only", "", "comma-separated packages to capture (default all)")
	jobs := flag.Int("j", 3, "servers installed at once")
	flag.Parse()
	log.SetFlags(0)
	ctx := context.Background()
	node, err := testenv.InstallNode(ctx, log.Printf)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	var want []string
	if *only != "" {
		want = strings.Split(*only, ",")
	}
	sem := make(chan struct{}, max(*jobs, 1))
	var wg sync.WaitGroup
	var mu sync.Mutex
	var failed []string
	for _, s := range servers {
		if want != nil && !slices.Contains(want, s.Package) {
			continue
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			n, err := captureOne(ctx, node, s, *out)
			mu.Lock()
			defer mu.Unlock()
			if err != nil {
				failed = append(failed, s.Package)
				log.Printf("FAIL %s: %v", s.Package, err)
				return
			}
			log.Printf("ok   %s: %d tools", s.Package, n)
		}()
	}
	wg.Wait()
	if len(failed) > 0 {
		log.Printf("%d failed: %s", len(failed), strings.Join(failed, " "))
	}
}

// A capture is one saved listing.
type capture struct {
	Package    string            `json:"package"`
	Version    string            `json:"version"`
	Args       []string          `json:"args,omitempty"`
	ServerInfo json.RawMessage   `json:"serverInfo"`
	Protocol   string            `json:"protocolVersion"`
	Tools      []json.RawMessage `json:"tools"`
}

// FileName is the file a package's capture is saved as.
func FileName(pkg string) string {
	return strings.NewReplacer("@", "", "/", "__").Replace(pkg) + ".json"
}

func captureOne(ctx context.Context, node string, s server, outDir string) (int, error) {
	dir, err := os.MkdirTemp("", "catalogcapture-")
	if err != nil {
		return 0, err
	}
	defer os.RemoveAll(dir)
	env := append(testenv.NodeEnv(node), "PUPPETEER_SKIP_DOWNLOAD=1", "PUPPETEER_SKIP_CHROMIUM_DOWNLOAD=1",
		"PLAYWRIGHT_SKIP_BROWSER_DOWNLOAD=1", "npm_config_update_notifier=false", "npm_config_loglevel=error")
	ictx, cancel := context.WithTimeout(ctx, 10*time.Minute)
	defer cancel()
	if err := os.WriteFile(filepath.Join(dir, "package.json"), []byte(`{"private":true}`), 0o644); err != nil {
		return 0, err
	}
	cmd := exec.CommandContext(ictx, "npm", "install", "--no-audit", "--no-fund", "--ignore-scripts", s.Package+"@"+s.Version)
	cmd.Dir, cmd.Env = dir, env
	if b, err := cmd.CombinedOutput(); err != nil {
		return 0, fmt.Errorf("npm install: %w\n%s", err, tail(b))
	}
	entry, err := binEntry(dir, s)
	if err != nil {
		return 0, err
	}
	work := filepath.Join(dir, "work")
	if err := os.MkdirAll(work, 0o755); err != nil {
		return 0, err
	}
	args := []string{entry}
	for _, a := range s.Args {
		args = append(args, strings.ReplaceAll(a, "{dir}", work))
	}
	c, err := list(ctx, node, args, append(env, s.Env...), work)
	if err != nil {
		return 0, err
	}
	c.Package, c.Version, c.Args = s.Package, s.Version, s.Args
	b, err := json.MarshalIndent(c, "", "  ")
	if err != nil {
		return 0, err
	}
	return len(c.Tools), os.WriteFile(filepath.Join(outDir, FileName(s.Package)), append(b, '\n'), 0o644)
}

// binEntry returns the JS file of the package's bin.
func binEntry(dir string, s server) (string, error) {
	pkgDir := filepath.Join(dir, "node_modules", filepath.FromSlash(s.Package))
	b, err := os.ReadFile(filepath.Join(pkgDir, "package.json"))
	if err != nil {
		return "", err
	}
	var meta struct {
		Bin  json.RawMessage `json:"bin"`
		Main string          `json:"main"`
	}
	if err := json.Unmarshal(b, &meta); err != nil {
		return "", err
	}
	var rel string
	var bins map[string]string
	if json.Unmarshal(meta.Bin, &rel) != nil {
		if err := json.Unmarshal(meta.Bin, &bins); err != nil || len(bins) == 0 {
			return "", fmt.Errorf("%s has no bin", s.Package)
		}
		base := s.Package[strings.LastIndex(s.Package, "/")+1:]
		switch {
		case s.Bin != "":
			rel = bins[s.Bin]
		case bins[base] != "":
			rel = bins[base]
		default:
			keys := make([]string, 0, len(bins))
			for k := range bins {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			rel = bins[keys[0]]
		}
	}
	if rel == "" {
		return "", fmt.Errorf("%s: no bin %q", s.Package, s.Bin)
	}
	return filepath.Join(pkgDir, filepath.FromSlash(rel)), nil
}

// list speaks just enough JSON-RPC over the server's stdio to initialize
// and page through tools/list, keeping each tool's JSON as sent.
func list(ctx context.Context, node string, args, env []string, dir string) (*capture, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, node, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	stdin, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	defer func() {
		stdin.Close()
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
	}()
	lines := make(chan []byte)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			select {
			case lines <- append([]byte(nil), sc.Bytes()...):
			case <-ctx.Done():
				return
			}
		}
	}()
	id := 0
	call := func(method string, params any) (json.RawMessage, error) {
		id++
		req, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params})
		if _, err := stdin.Write(append(req, '\n')); err != nil {
			return nil, fmt.Errorf("%s: %w\n%s", method, err, tail(stderr.Bytes()))
		}
		for {
			select {
			case line, ok := <-lines:
				if !ok {
					return nil, fmt.Errorf("%s: server exited\n%s", method, tail(stderr.Bytes()))
				}
				var msg struct {
					ID     *int            `json:"id"`
					Method string          `json:"method"`
					Result json.RawMessage `json:"result"`
					Error  json.RawMessage `json:"error"`
				}
				if json.Unmarshal(line, &msg) != nil || msg.ID == nil || msg.Method != "" || *msg.ID != id {
					continue // a log line, a notification or a request of its own
				}
				if msg.Error != nil {
					return nil, fmt.Errorf("%s: %s", method, msg.Error)
				}
				return msg.Result, nil
			case <-ctx.Done():
				return nil, fmt.Errorf("%s: %w\n%s", method, ctx.Err(), tail(stderr.Bytes()))
			}
		}
	}
	res, err := call("initialize", map[string]any{"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "catalogcapture", "version": "1"}})
	if err != nil {
		return nil, err
	}
	var init struct {
		ProtocolVersion string          `json:"protocolVersion"`
		ServerInfo      json.RawMessage `json:"serverInfo"`
	}
	if err := json.Unmarshal(res, &init); err != nil {
		return nil, fmt.Errorf("initialize: %w", err)
	}
	if _, err := stdin.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/initialized"}` + "\n")); err != nil {
		return nil, err
	}
	c := &capture{ServerInfo: init.ServerInfo, Protocol: init.ProtocolVersion}
	cursor := ""
	for page := 0; page < 50; page++ {
		params := map[string]any{}
		if cursor != "" {
			params["cursor"] = cursor
		}
		res, err := call("tools/list", params)
		if err != nil {
			return nil, err
		}
		var lr struct {
			Tools      []json.RawMessage `json:"tools"`
			NextCursor string            `json:"nextCursor"`
		}
		if err := json.Unmarshal(res, &lr); err != nil {
			return nil, fmt.Errorf("tools/list: %w", err)
		}
		c.Tools = append(c.Tools, lr.Tools...)
		if cursor = lr.NextCursor; cursor == "" {
			break
		}
	}
	if len(c.Tools) == 0 {
		return nil, fmt.Errorf("no tools listed\n%s", tail(stderr.Bytes()))
	}
	return c, nil
}

// tail returns the last 1500 bytes of b.
func tail(b []byte) string {
	if len(b) > 1500 {
		b = b[len(b)-1500:]
	}
	return string(b)
}
