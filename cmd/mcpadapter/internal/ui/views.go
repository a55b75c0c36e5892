package ui

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/mcpadapter/mcpadapter"
)

// MCP Apps views (a tool's ui:// resource, HTML written by its server)
// are shown in the page in a frame that can do nothing to it: they are
// served from a second listener, so on another origin than the page, to
// a frame sandboxed with allow-scripts only (an opaque origin: no
// cookies, no storage, no reaching the parent's document), and with a
// Content-Security-Policy that forbids every connection. The views get
// no host bridge: they render, and cannot call tools.

// viewCSP is the policy of a view: its own inline scripts and styles,
// data: images, nothing fetched, a sandbox even when opened on its own,
// framed only by the inspector.
const viewCSP = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data:; font-src data:; media-src data:; " +
	"connect-src 'none'; form-action 'none'; base-uri 'none'; sandbox allow-scripts; frame-ancestors "

// views serves the views the page asked to show, each under an
// unguessable key.
type views struct {
	port   string
	origin string // the views' origin, for the page's frame-src
	http   *http.Server
	page   string // the inspector's origins, allowed to frame a view

	mu   sync.Mutex
	html map[string]string // key → HTML
}

// newViews listens next to the inspector (same loopback address, another
// port) for the views.
func newViews(ip net.IP, pagePort string) (*views, net.Listener, error) {
	l, err := net.Listen("tcp", net.JoinHostPort(ip.String(), "0"))
	if err != nil {
		return nil, nil, fmt.Errorf("ui: the views' listener: %w", err)
	}
	port := strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	host := ip.String()
	if ip.To4() == nil {
		host = "[" + host + "]"
	}
	v := &views{port: port, origin: "http://" + host + ":" + port, html: map[string]string{},
		page: "http://127.0.0.1:" + pagePort + " http://localhost:" + pagePort + " http://[::1]:" + pagePort}
	v.http = &http.Server{Handler: v, ReadHeaderTimeout: 10 * time.Second}
	return v, l, nil
}

// add keeps html and returns the URL that serves it.
func (v *views) add(html string) string {
	key := randomHex(16)
	v.mu.Lock()
	v.html[key] = html
	v.mu.Unlock()
	return v.origin + "/view/" + key
}

func (v *views) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if !hostOK(r.Host, v.port) || r.Method != http.MethodGet {
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	key, ok := strings.CutPrefix(r.URL.Path, "/view/")
	v.mu.Lock()
	html, found := v.html[key]
	v.mu.Unlock()
	if !ok || !found {
		http.NotFound(w, r)
		return
	}
	h.Set("Content-Security-Policy", viewCSP+v.page)
	h.Set("Content-Type", "text/html; charset=utf-8")
	_, _ = w.Write([]byte(html))
}

// handleView reads a tool's view from its server and returns the URL
// that shows it.
func (s *Server) handleView(w http.ResponseWriter, r *http.Request) {
	var req struct {
		Server string `json:"server"`
		Tool   string `json:"tool"`
	}
	if !readJSON(w, r, &req) {
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), time.Minute)
	defer cancel()
	tool, err := s.state.tool(ctx, req.Server, req.Tool)
	if err != nil {
		apiError(w, http.StatusNotFound, err)
		return
	}
	html, err := readView(ctx, tool)
	if err != nil {
		apiError(w, http.StatusBadGateway, err)
		return
	}
	writeJSON(w, map[string]string{"url": s.views.add(html)})
}

// readView returns the HTML of a tool's view.
func readView(ctx context.Context, tool *mcpadapter.Tool) (string, error) {
	res, err := tool.Client().ReadUIResource(ctx, tool)
	if err != nil {
		return "", err
	}
	for _, c := range res.Contents {
		if c.Text != "" && strings.HasPrefix(c.MIMEType, "text/html") {
			return c.Text, nil
		}
	}
	return "", errors.New("the tool's UI resource holds no text/html")
}
