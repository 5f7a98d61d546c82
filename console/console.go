// Package console is the operator's console of codecall serve --http: the
// recent runs with a waterfall of their tool calls, their script digests,
// statuses, events and policy decisions; the calls waiting for an
// operator's approval, with approve and deny; a search of the audit
// events by run, session, tool and decision; pages that update live.
//
// It is a face on the core, not a fork: a Store is an audit sink
// (middleware.WithAuditSink), so the console shows exactly what the audit
// log holds (digests and sizes, never arguments, results or scripts, and
// free text already redacted), and the approvals it answers are those of
// policy.OutOfBand, the asker of last resort. The pages are rendered on
// the server with html/template (everything from tools, plans and
// policies is escaped) and carry one small script, for live updates.
//
// Access: a bearer token, compared in constant time; in a browser, the
// token is typed once into a login form, which opens a session held in a
// Secure, HttpOnly, SameSite=Strict cookie, and every form that changes
// something carries the session's CSRF token. Only loopback clients are
// served unless WithAllowRemote is given.
package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/hex"
	"errors"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/codecall-go/codecall/policy"
)

//go:embed templates/*.html static/*
var assets embed.FS

// Approvals is what the console needs of the calls waiting for an
// operator; *policy.OutOfBand provides it. Both methods may fail when the
// calls are kept in a shared store that cannot be reached: the console
// says so, and answers nothing.
type Approvals interface {
	Pending(ctx context.Context) ([]policy.PendingApproval, error)
	Answer(ctx context.Context, id string, approve bool, ch policy.Channel, by string) error
}

// Prefix is the path the console is served under.
const Prefix = "/console"

// MinTokenBytes is the shortest token New accepts: a console token guards
// who may approve calls, and a short one can be guessed.
const MinTokenBytes = 16

// Console is the console's HTTP handler, serving Prefix and everything
// under it.
type Console struct {
	store       *Store
	approvals   Approvals
	tokenSum    [32]byte
	allowRemote bool
	log         *slog.Logger
	now         func() time.Time
	pages       *template.Template
	mux         *http.ServeMux
	sessions    sessions
	done        chan struct{} // closed by Close: long polls return
	closeOnce   sync.Once
}

// Option configures a Console.
type Option func(*Console)

// WithApprovals lets operators answer the calls a waits with (policy.OutOfBand);
// without it the console lists no approvals and answers none.
func WithApprovals(a Approvals) Option { return func(c *Console) { c.approvals = a } }

// WithAllowRemote serves clients at any address, not only loopback ones.
// The token is still required; put TLS in front, since the session cookie
// is Secure and the token crosses the network.
func WithAllowRemote(allow bool) Option { return func(c *Console) { c.allowRemote = allow } }

// WithLogger sets where refused logins and answered approvals are logged
// (default slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *Console) { c.log = l } }

// New returns the console over store, guarded by token (at least
// MinTokenBytes long).
func New(store *Store, token string, opts ...Option) (*Console, error) {
	if store == nil {
		return nil, errors.New("console: New needs a store, got nil")
	}
	if len(token) < MinTokenBytes {
		return nil, fmt.Errorf("console: the token must be at least %d bytes long, got %d; generate one with: openssl rand -hex 32", MinTokenBytes, len(token))
	}
	c := &Console{store: store, tokenSum: sha256.Sum256([]byte(token)), log: slog.Default(), now: time.Now, done: make(chan struct{})}
	for _, o := range opts {
		o(c)
	}
	c.sessions.m = map[string]*session{}
	var err error
	if c.pages, err = template.New("").Funcs(funcs).ParseFS(assets, "templates/*.html"); err != nil {
		return nil, fmt.Errorf("console: templates: %w", err)
	}
	c.routes()
	return c, nil
}

// Close ends the pages' long polls at once, so that an HTTP server's
// Shutdown need not wait for them (http.Server.RegisterOnShutdown). The
// console keeps serving other requests.
func (c *Console) Close() { c.closeOnce.Do(func() { close(c.done) }) }

// ServeHTTP implements http.Handler.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Cache-Control", "no-store")
	if !c.allowRemote && !loopbackClient(r.RemoteAddr) {
		http.Error(w, "codecall console: only loopback clients are served (console.allowRemote is false)", http.StatusForbidden)
		return
	}
	c.mux.ServeHTTP(w, r)
}

func loopbackClient(remote string) bool {
	host, _, err := net.SplitHostPort(remote)
	if err != nil {
		host = remote
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

func (c *Console) routes() {
	m := http.NewServeMux()
	static, _ := fs.Sub(assets, "static")
	m.Handle("GET "+Prefix+"/static/", http.StripPrefix(Prefix+"/static/", http.FileServerFS(static)))
	m.HandleFunc("GET "+Prefix, func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, Prefix+"/", http.StatusSeeOther)
	})
	m.HandleFunc("GET "+Prefix+"/login", c.loginForm)
	m.HandleFunc("POST "+Prefix+"/login", c.login)
	m.HandleFunc("POST "+Prefix+"/logout", c.page(c.logout))
	m.HandleFunc("GET "+Prefix+"/{$}", c.page(c.runsPage))
	m.HandleFunc("GET "+Prefix+"/runs/{id}", c.page(c.runPage))
	m.HandleFunc("GET "+Prefix+"/approvals", c.page(c.approvalsPage))
	m.HandleFunc("POST "+Prefix+"/approvals/{id}", c.page(c.answerForm))
	m.HandleFunc("GET "+Prefix+"/audit", c.page(c.auditPage))
	m.HandleFunc("GET "+Prefix+"/api/version", c.api(c.versionAPI, false))
	m.HandleFunc("GET "+Prefix+"/api/approvals", c.api(c.listAPI, false))
	m.HandleFunc("POST "+Prefix+"/api/approvals/{id}", c.api(c.answerAPI, true))
	c.mux = m
}

// bearer reports whether r carries the console's token.
func (c *Console) bearer(r *http.Request) bool {
	got := r.Header.Get("Authorization")
	const p = "Bearer "
	if len(got) <= len(p) || got[:len(p)] != p {
		return false
	}
	return c.tokenMatches(got[len(p):])
}

// tokenMatches compares digests in constant time, so neither the token's
// content nor its length leaks through timing.
func (c *Console) tokenMatches(s string) bool {
	sum := sha256.Sum256([]byte(s))
	return subtle.ConstantTimeCompare(sum[:], c.tokenSum[:]) == 1
}

// session is a browser logged in with the token.
type session struct {
	name    string // who the operator said they are, recorded with their answers
	csrf    string
	expires time.Time
}

// sessions are the logged-in browsers, bounded.
type sessions struct {
	mu sync.Mutex
	m  map[string]*session
}

const (
	sessionCookie = "codecall_console"
	loginCookie   = "codecall_console_login" // the login form's CSRF token, before any session
	sessionTTL    = 12 * time.Hour
	maxSessions   = 1000
)

func (s *sessions) open(name string, now time.Time) (id string, sess *session) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for k, v := range s.m {
		if now.After(v.expires) {
			delete(s.m, k)
		}
	}
	if len(s.m) >= maxSessions {
		var oldest string
		var at time.Time
		for k, v := range s.m {
			if oldest == "" || v.expires.Before(at) {
				oldest, at = k, v.expires
			}
		}
		delete(s.m, oldest)
	}
	id = randomToken()
	sess = &session{name: name, csrf: randomToken(), expires: now.Add(sessionTTL)}
	s.m[id] = sess
	return id, sess
}

func (s *sessions) get(id string, now time.Time) *session {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.m[id]
	if !ok {
		return nil
	}
	if now.After(v.expires) {
		delete(s.m, id)
		return nil
	}
	return v
}

func (s *sessions) close(id string) {
	s.mu.Lock()
	delete(s.m, id)
	s.mu.Unlock()
}

func randomToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// sameString compares two secrets in constant time.
func sameString(a, b string) bool {
	sa, sb := sha256.Sum256([]byte(a)), sha256.Sum256([]byte(b))
	return subtle.ConstantTimeCompare(sa[:], sb[:]) == 1 && a != ""
}

// who is the caller of a page: a browser session, or a bearer token.
type who struct {
	sess   *session // nil for a bearer token
	cookie string
}

func (c *Console) identify(r *http.Request) (who, bool) {
	if ck, err := r.Cookie(sessionCookie); err == nil {
		if s := c.sessions.get(ck.Value, c.now()); s != nil {
			return who{sess: s, cookie: ck.Value}, true
		}
	}
	if c.bearer(r) {
		return who{}, true
	}
	return who{}, false
}

// page guards a page: a browser without a session goes to the login form;
// a POST from a session must carry its CSRF token (and, when the browser
// sends one, this server's Origin).
func (c *Console) page(h func(http.ResponseWriter, *http.Request, who)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, ok := c.identify(r)
		if !ok {
			if r.Method == http.MethodGet {
				http.Redirect(w, r, Prefix+"/login", http.StatusSeeOther)
				return
			}
			http.Error(w, "codecall console: log in first", http.StatusUnauthorized)
			return
		}
		if r.Method == http.MethodPost && u.sess != nil && !c.csrfOK(r, u.sess.csrf) {
			http.Error(w, "codecall console: the form's CSRF token is missing or wrong; reload the page and try again", http.StatusForbidden)
			return
		}
		h(w, r, u)
	}
}

// csrfOK checks a session's form: the csrf field must match, and a
// browser's Origin, when sent, must be this server.
func (c *Console) csrfOK(r *http.Request, want string) bool {
	if o := r.Header.Get("Origin"); o != "" && o != "null" && o != "http://"+r.Host && o != "https://"+r.Host {
		return false
	}
	if err := r.ParseForm(); err != nil {
		return false
	}
	return sameString(r.PostFormValue("csrf"), want)
}

// api guards the JSON API: a bearer token always works; a browser session
// may read, and must not write (its forms do that, with CSRF tokens).
func (c *Console) api(h func(http.ResponseWriter, *http.Request, who), write bool) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		u, ok := c.identify(r)
		if ok && write && u.sess != nil && !c.bearer(r) {
			ok = false
		}
		if !ok {
			w.Header().Set("WWW-Authenticate", `Bearer realm="codecall console"`)
			writeJSON(w, http.StatusUnauthorized, apiError{Error: "missing or wrong bearer token (the console's token, from the variable console.tokenEnv names)"})
			return
		}
		h(w, r, u)
	}
}
