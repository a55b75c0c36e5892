package gateway

import (
	"encoding/json"
	"net/http"
	"strings"
)

// HealthHandler answers an orchestrator's probes: a GET whose path ends
// in /readyz is answered 200 when the gateway has started, is not
// shutting down and has at least one server up (503 otherwise), with a
// JSON body naming each server and whether it is up (never why it is
// down: errors may name hosts); any other GET is the liveness probe,
// 200 until the gateway shuts down. Mount it beside the gateway:
//
//	mux.Handle("/healthz", gw.HealthHandler())
//	mux.Handle("/readyz", gw.HealthHandler())
//	mux.Handle("/", gw)
//
// It checks the Host header as the gateway does (DNS rebinding).
func (g *Gateway) HealthHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !g.hostAllowed(r.Host) {
			http.Error(w, "Forbidden: Host is not a loopback name or an allowed host", http.StatusForbidden)
			return
		}
		if r.Method != http.MethodGet && r.Method != http.MethodHead {
			w.Header().Set("Allow", "GET, HEAD")
			http.Error(w, "method not allowed", http.StatusMethodNotAllowed)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Cache-Control", "no-store")
		alive := !g.draining.Load() && g.ctx.Err() == nil
		if !strings.HasSuffix(r.URL.Path, "/readyz") {
			writeHealth(w, alive, map[string]any{"alive": alive})
			return
		}
		type server struct {
			Name string `json:"name"`
			Up   bool   `json:"up"`
		}
		var servers []server
		up := 0
		for _, u := range g.servers() {
			ok, _, _ := u.status()
			if ok {
				up++
			}
			servers = append(servers, server{Name: u.name, Up: ok})
		}
		ready := alive && g.started.Load() && up > 0
		writeHealth(w, ready, map[string]any{"ready": ready, "servers": servers})
	})
}

func writeHealth(w http.ResponseWriter, ok bool, body any) {
	if !ok {
		w.WriteHeader(http.StatusServiceUnavailable)
	}
	_ = json.NewEncoder(w).Encode(body)
}
