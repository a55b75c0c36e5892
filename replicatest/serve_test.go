package replicatest

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/mcpadapter/mcpadapter/internal/testauth"
	"github.com/mcpadapter/mcpadapter/internal/testserver"
)

// serveResource is the audience of the JWTs the serve replicas accept:
// every replica has the same, as behind one public URL.
const serveResource = "http://127.0.0.1/mcp"

// serveEnv is what `mcpadapter serve` replicas share: the binary, a
// config of one go-sdk server on loopback, the test authorization server
// whose JWTs they accept, the API keys of half the principals, and a
// store (none: in the process).
type serveEnv struct {
	t          testing.TB
	bin, dir   string
	args, env  []string
	principals []string
	bearer     map[string]string // principal -> API key or JWT
}

// newServeEnv builds the CLI and makes n principals: the even ones have
// API keys (--api-key), the odd ones JWTs of the test authorization
// server (--issuer). With storeURL the replicas share sessions and limit
// counters there (--store-env); extra are more serve flags.
func newServeEnv(t testing.TB, n int, storeURL string, extra ...string) *serveEnv {
	t.Helper()
	dir := t.TempDir()
	e := &serveEnv{t: t, dir: dir, bin: filepath.Join(dir, "mcpadapter"), bearer: make(map[string]string, n)}
	build := exec.Command("go", "build", "-o", e.bin, "github.com/mcpadapter/mcpadapter/cmd/mcpadapter")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build mcpadapter: %v\n%s", err, out)
	}
	backend := testserver.StartStreamable(t, testserver.NewMinimal(testserver.Options{}), testserver.Stateless())
	cfg := filepath.Join(dir, "mcp.json")
	if err := os.WriteFile(cfg, []byte(fmt.Sprintf(`{"mcpServers": {"b": {"url": %q}}}`, backend.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	as := testauth.Start(t, testauth.Options{MCP: testserver.NewMinimal(testserver.Options{})})
	e.args = []string{"--config", cfg, "--listen", "127.0.0.1:0", "--issuer", as.URL, "--resource", serveResource}
	for i := range n {
		p := fmt.Sprintf("p%04d", i)
		e.principals = append(e.principals, p)
		if i%2 == 0 {
			key := fmt.Sprintf("key-%04d-0123456789abcdef", i)
			v := fmt.Sprintf("KEY_%04d", i)
			e.env = append(e.env, v+"="+key)
			e.args = append(e.args, "--api-key", p+"="+v)
			e.bearer[p] = key
			continue
		}
		tok, err := as.SignToken(map[string]any{"sub": p, "aud": serveResource, "exp": time.Now().Add(2 * time.Hour).Unix()})
		if err != nil {
			t.Fatal(err)
		}
		e.bearer[p] = tok
	}
	if storeURL != "" {
		e.env = append(e.env, "STORE="+storeURL)
		e.args = append(e.args, "--store-env", "STORE", "--store-timeout", "20s")
	}
	e.args = append(e.args, extra...)
	return e
}

// serveProc is a running `mcpadapter serve` replica.
type serveProc struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{}
	errs *bytes.Buffer
}

// start starts a replica and waits for it to say where it listens. The
// test's end kills it.
func (e *serveEnv) start() *serveProc {
	e.t.Helper()
	cmd := exec.Command(e.bin, append([]string{"serve"}, e.args...)...)
	cmd.Dir = e.dir
	cmd.Env = append(append(os.Environ(), "HOME="+e.dir), e.env...)
	p := &serveProc{cmd: cmd, done: make(chan struct{}), errs: &bytes.Buffer{}}
	cmd.Stderr = &lockedWriter{w: p.errs}
	out, err := cmd.StdoutPipe()
	if err != nil {
		e.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		e.t.Fatal(err)
	}
	lines := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if _, rest, ok := strings.Cut(sc.Text(), "listening on "); ok {
				select {
				case lines <- strings.Fields(rest)[0]:
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(p.done)
	}()
	e.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-p.done
	})
	select {
	case p.url = <-lines:
	case <-p.done:
		e.t.Fatalf("serve ended before it listened:\n%s", p.errs)
	case <-time.After(time.Minute):
		e.t.Fatalf("serve did not listen in a minute:\n%s", p.errs)
	}
	return p
}

// kill kills the replica with SIGKILL and waits for its end.
func (p *serveProc) kill() {
	_ = p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// cpu returns the replica's CPU time so far (user + system, all threads,
// from /proc/PID/stat, in ticks of 10 ms).
func (p *serveProc) cpu() (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0, err
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the name may hold spaces
	if i < 0 {
		return 0, errors.New("/proc stat: no ')'")
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 13 {
		return 0, errors.New("/proc stat: too few fields")
	}
	ut, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return time.Duration(ut+st) * 10 * time.Millisecond, nil
}

type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(b []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(b)
}

// bearerTransport sends a principal's credential on a shared transport
// that keeps enough idle connections for many clients.
type bearerTransport struct {
	base  http.RoundTripper
	token string
}

func (b bearerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+b.token)
	return b.base.RoundTrip(r)
}

// sharedTransport is a loopback transport for many clients.
func sharedTransport() *http.Transport {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.MaxIdleConns, t.MaxIdleConnsPerHost = 1024, 1024
	return t
}

// roundRobin is a load balancer with no affinity in front of replica
// slots: each request goes to the next slot; a replica that refuses the
// connection is skipped for that request, as nginx's proxy_next_upstream
// does. It notes which slot answered each session's last request.
type roundRobin struct {
	next atomic.Int64
	mu   sync.Mutex
	urls []*url.URL
	last map[string]int // session id -> slot of its last answered request
	tr   *http.Transport
}

func newRoundRobin(t testing.TB, urls ...string) (*roundRobin, string) {
	t.Helper()
	rr := &roundRobin{last: map[string]int{}, tr: sharedTransport()}
	for _, u := range urls {
		pu, err := url.Parse(u)
		if err != nil {
			t.Fatal(err)
		}
		rr.urls = append(rr.urls, pu)
	}
	ts := httptest.NewServer(rr)
	t.Cleanup(ts.Close)
	t.Cleanup(rr.tr.CloseIdleConnections)
	return rr, ts.URL + rr.urls[0].Path
}

// set puts the replica at u in slot i.
func (rr *roundRobin) set(i int, u string) {
	pu, _ := url.Parse(u)
	rr.mu.Lock()
	defer rr.mu.Unlock()
	rr.urls[i] = pu
}

// aim makes the next request go to slot i first (other clients'
// requests would bring the turn round to it).
func (rr *roundRobin) aim(i int) {
	rr.mu.Lock()
	n := len(rr.urls)
	rr.mu.Unlock()
	rr.next.Store(int64(i - 1 + n))
}

// lastOf returns the slot that answered session id's last request.
func (rr *roundRobin) lastOf(id string) (int, bool) {
	rr.mu.Lock()
	defer rr.mu.Unlock()
	i, ok := rr.last[id]
	return i, ok
}

func (rr *roundRobin) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	rr.mu.Lock()
	urls := append([]*url.URL(nil), rr.urls...)
	rr.mu.Unlock()
	start := int(rr.next.Add(1))
	for k := range urls {
		i := (start + k) % len(urls)
		out := r.Clone(r.Context())
		out.URL.Scheme, out.URL.Host, out.Host, out.RequestURI = urls[i].Scheme, urls[i].Host, urls[i].Host, ""
		out.Body = io.NopCloser(bytes.NewReader(body))
		resp, err := rr.tr.RoundTrip(out)
		if err != nil {
			var oe *net.OpError
			if errors.As(err, &oe) && oe.Op == "dial" {
				continue // down: the next one
			}
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		if id := r.Header.Get("Mcp-Session-Id"); id != "" && resp.StatusCode < 300 {
			rr.mu.Lock()
			rr.last[id] = i
			rr.mu.Unlock()
		}
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, err := resp.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
			}
			if err != nil {
				break
			}
		}
		resp.Body.Close()
		return
	}
	http.Error(w, "no backend is up", http.StatusBadGateway)
}

// serveCtx is a context that ends after d or with the test.
func serveCtx(t testing.TB, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// quantileMs returns the pct-th percentile of sorted (nearest rank), in
// milliseconds.
func quantileMs(sorted []time.Duration, pct int) float64 {
	i := max((len(sorted)*pct+99)/100-1, 0)
	return float64(sorted[i].Microseconds()) / 1000
}
