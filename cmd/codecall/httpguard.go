package main

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
)

// httpGuard protects the streamable HTTP endpoint. A browser page on any
// site can send requests to a server on localhost, and DNS rebinding can
// make such a page same-origin with it; so requests carrying an Origin must
// come from an allowed origin, and a server bound to a loopback address
// answers only to loopback Host names. An optional bearer token closes the
// endpoint to everyone without it.
type httpGuard struct {
	next           http.Handler
	token          string
	allowedOrigins []string // scheme://host[:port], lower case
	loopbackOnly   bool     // bound to loopback: Host must be a loopback name
}

func newHTTPGuard(next http.Handler, addr, token string, origins []string) *httpGuard {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		host = addr
	}
	g := &httpGuard{next: next, token: token, loopbackOnly: isLoopbackName(host)}
	for _, o := range origins {
		g.allowedOrigins = append(g.allowedOrigins, strings.ToLower(strings.TrimRight(o, "/")))
	}
	return g
}

func isLoopbackName(host string) bool {
	host = strings.Trim(host, "[]")
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (g *httpGuard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if g.loopbackOnly {
		host, _, err := net.SplitHostPort(r.Host)
		if err != nil {
			host = r.Host
		}
		if !isLoopbackName(host) {
			http.Error(w, "codecall: Host "+r.Host+" refused: this server listens on a loopback address and answers only to localhost, 127.0.0.1 or [::1] (DNS rebinding protection)", http.StatusForbidden)
			return
		}
	}
	if origin := r.Header.Get("Origin"); origin != "" && !g.originAllowed(origin) {
		http.Error(w, "codecall: Origin "+origin+" refused; allow it with --allow-origin", http.StatusForbidden)
		return
	}
	if g.token != "" {
		got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		if !ok || !sameToken(got, g.token) {
			w.Header().Set("WWW-Authenticate", `Bearer realm="codecall"`)
			http.Error(w, "codecall: missing or wrong bearer token", http.StatusUnauthorized)
			return
		}
	}
	g.next.ServeHTTP(w, r)
}

// originAllowed accepts loopback origins and the configured ones.
func (g *httpGuard) originAllowed(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false
	}
	if (u.Scheme == "http" || u.Scheme == "https") && isLoopbackName(u.Hostname()) {
		return true
	}
	return slices.Contains(g.allowedOrigins, strings.ToLower(origin))
}
