package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// The health endpoints of serve --http, for load balancers and
// orchestrators. They answer without the bearer token and say nothing
// but whether the process is up and ready.
const (
	healthPath = "/healthz" // the process answers
	readyPath  = "/readyz"  // the catalog and the state store are ready, and the server is not draining
)

// pinger is the state store as readiness sees it.
type pinger interface {
	Ping(ctx context.Context) error
}

// health answers healthPath and readyPath.
type health struct {
	catalog  *atomic.Bool // set once every upstream has been tried
	store    pinger       // nil: state in memory, always ready
	draining atomic.Bool  // set on SIGTERM: no new work
	log      *slog.Logger // where a failed ping's cause goes; nil: nowhere

	// The last ping of the store, reused for readyReuse: readyPath needs
	// no token, so each request must not cost the store a round trip.
	// pingMu is held across a ping, so concurrent checks share one.
	pingMu   sync.Mutex
	pingedAt time.Time
	pingErr  error
}

const (
	// readyTimeout bounds the store's ping in a readiness check.
	readyTimeout = 2 * time.Second
	// readyReuse is how long one ping answers readiness checks: shorter
	// than any load balancer's check interval, long enough that a flood
	// of checks reaches the store once a second.
	readyReuse = time.Second
)

// storeErr pings the store, or returns the last ping's result when it is
// recent enough.
func (h *health) storeErr(ctx context.Context) error {
	h.pingMu.Lock()
	defer h.pingMu.Unlock()
	if !h.pingedAt.IsZero() && time.Since(h.pingedAt) < readyReuse {
		return h.pingErr
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	h.pingErr = h.store.Ping(ctx)
	h.pingedAt = time.Now()
	if h.pingErr != nil && h.log != nil {
		h.log.Warn("readiness: the state store does not answer", "err", h.pingErr)
	}
	return h.pingErr
}

// notReady lists what keeps the server from taking work, nil when ready.
func (h *health) notReady(ctx context.Context) []string {
	var why []string
	if h.draining.Load() {
		why = append(why, "draining: the server is stopping")
	}
	if !h.catalog.Load() {
		why = append(why, "catalog: upstreams are still starting")
	}
	if h.store != nil && h.storeErr(ctx) != nil {
		// The cause goes to the log, not to an unauthenticated client.
		why = append(why, "state: the state store does not answer")
	}
	return why
}

func (h *health) mount(mux *http.ServeMux) {
	mux.HandleFunc(healthPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		fmt.Fprintln(w, "ok")
	})
	mux.HandleFunc(readyPath, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		w.Header().Set("Cache-Control", "no-store")
		if why := h.notReady(r.Context()); len(why) > 0 {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "not ready\n"+strings.Join(why, "\n"))
			return
		}
		fmt.Fprintln(w, "ready")
	})
}
