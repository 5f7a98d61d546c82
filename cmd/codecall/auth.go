package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"sort"
	"text/tabwriter"
	"time"

	"github.com/codecall-go/codecall/gateway"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/tokenstore"
)

const authUsage = `Usage:
  codecall auth login  [--config FILE] [--upstreams FILE] [--token-dir DIR] [--no-browser] [--timeout D] UPSTREAM
  codecall auth status [--config FILE] [--upstreams FILE] [--token-dir DIR] [--json]
  codecall auth logout [--config FILE] [--upstreams FILE] [--token-dir DIR] UPSTREAM

login logs CodeCall in to an HTTP or SSE upstream that needs OAuth: it
prints the authorization URL (and opens a browser when it can), waits for
the redirect on a loopback port, and stores the token in the token
directory (a file per upstream, mode 0600; default: the user's config
directory, codecall/tokens). A running codecall serve picks it up on its
next attempt to connect to that upstream (within a minute; SIGHUP for at
once). status lists the upstreams and their tokens (never the tokens
themselves); logout deletes an upstream's token.
`

// authCmd is codecall auth login|status|logout.
func authCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, authUsage)
		return errUsage
	}
	sub, rest := args[0], args[1:]
	switch sub {
	case "-h", "--help", "-help", "help":
		fmt.Fprint(stdout, authUsage)
		return nil
	case "login", "status", "logout":
	default:
		fmt.Fprintf(stderr, "codecall auth: unknown command %q\n\n%s", sub, authUsage)
		return errUsage
	}
	fs := newFlags("auth "+sub, stderr)
	var src source
	fs.StringVar(&src.configFile, "config", "", "CodeCall YAML config `file` (its upstreams: section and upstreams.tokenDir)")
	fs.StringVar(&src.upstreamsFile, "upstreams", "", "the MCP servers' `file` ({\"mcpServers\": ...})")
	fs.StringVar(&src.tokenDir, "token-dir", "", "the token `directory` (default: upstreams.tokenDir, else the user's config directory, codecall/tokens)")
	noBrowser := fs.Bool("no-browser", false, "login: only print the URL, do not try to open a browser")
	timeout := fs.Duration("timeout", 5*time.Minute, "login: how long to wait for the browser's redirect")
	asJSON := fs.Bool("json", false, "status: one JSON object per upstream")
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	wantArgs := 1
	if sub == "status" {
		wantArgs = 0
	}
	if fs.NArg() != wantArgs {
		fmt.Fprint(stderr, authUsage)
		return errUsage
	}
	cfg, servers, _, err := src.upstreams()
	if err != nil {
		return err
	}
	dir := src.tokenDir
	if dir == "" {
		dir = cfg.TokenDir
	}
	if dir == "" {
		if dir, err = tokenstore.DefaultDir(); err != nil {
			return err
		}
	}
	store := tokenstore.NewDir(dir)
	switch sub {
	case "status":
		return authStatus(ctx, store, servers, *asJSON, stdout)
	case "logout":
		id := fs.Arg(0)
		if _, err := store.Load(ctx, id); errors.Is(err, tokenstore.ErrNotFound) {
			fmt.Fprintf(stdout, "no token stored for %s in %s\n", id, dir)
			return nil
		}
		if err := store.Delete(ctx, id); err != nil {
			return fmt.Errorf("auth logout: %w", err)
		}
		fmt.Fprintf(stdout, "deleted the token of %s (%s); a running codecall serve stops using it at its next connection\n", id, store.File(id))
		return nil
	}
	id := fs.Arg(0)
	u, ok := servers[id]
	if !ok {
		return fmt.Errorf("auth login: no upstream %q in %s; the upstreams are: %s", id, describeSource(src), upstreamIDs(servers))
	}
	lctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	rec, err := gateway.Login(lctx, id, u, store, gateway.WithAuthorizationURL(func(url string) {
		fmt.Fprintf(stdout, "Open this URL in a browser to log CodeCall in to %s:\n\n  %s\n\n", id, url)
		if !*noBrowser {
			if why := openBrowser(url); why != "" {
				fmt.Fprintf(stdout, "(no browser opened: %s)\n", why)
			}
		}
		fmt.Fprintf(stdout, "Waiting for the redirect (at most %v)...\n", *timeout)
	}), gateway.WithClientName("CodeCall ("+id+")"))
	if err != nil {
		return fmt.Errorf("auth login: %w", err)
	}
	fmt.Fprintf(stdout, "logged in to %s; token stored in %s (mode 0600)%s\n", id, store.File(id), expiry(rec))
	return nil
}

func expiry(rec *tokenstore.Record) string {
	s := ""
	if !rec.Token.ExpiresAt.IsZero() {
		s += fmt.Sprintf(", access token valid until %s", rec.Token.ExpiresAt.Local().Format(time.DateTime))
	}
	if rec.Token.RefreshToken != "" {
		s += ", refreshed automatically"
	} else {
		s += ", no refresh token: log in again when it expires"
	}
	return s
}

func describeSource(src source) string {
	switch {
	case src.upstreamsFile != "" && src.configFile != "":
		return src.upstreamsFile + " and " + src.configFile
	case src.upstreamsFile != "":
		return src.upstreamsFile
	case src.configFile != "":
		return src.configFile
	}
	return "the configuration (give --upstreams FILE or --config FILE)"
}

func upstreamIDs(servers map[string]presets.Upstream) string {
	if len(servers) == 0 {
		return "(none)"
	}
	ids := make([]string, 0, len(servers))
	for id := range servers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	out := ""
	for i, id := range ids {
		if i > 0 {
			out += ", "
		}
		out += id
	}
	return out
}

// authLine is one upstream in codecall auth status: never a token.
type authLine struct {
	Upstream  string    `json:"upstream"`
	URL       string    `json:"url,omitempty"`
	OAuth     bool      `json:"oauthConfigured"`
	State     string    `json:"state"` // logged-in, expired, refreshable, not-logged-in, other-url, unreadable
	LoggedIn  time.Time `json:"loggedIn,omitzero"`
	Refreshed time.Time `json:"refreshed,omitzero"`
	Expires   time.Time `json:"expires,omitzero"`
	Error     string    `json:"error,omitempty"`
}

// authStatus lists the HTTP and SSE upstreams of the configuration and the
// tokens stored (also for upstreams no longer configured).
func authStatus(ctx context.Context, store *tokenstore.Dir, servers map[string]presets.Upstream, asJSON bool, stdout io.Writer) error {
	lines := map[string]*authLine{}
	for id, u := range servers {
		if t := u.Transport(); t == presets.UpstreamHTTP || t == presets.UpstreamSSE {
			lines[id] = &authLine{Upstream: id, URL: u.URL, OAuth: u.OAuth != nil, State: "not-logged-in"}
		}
	}
	ids := map[string]bool{}
	for id := range lines {
		ids[id] = true
	}
	if entries, err := os.ReadDir(store.Path()); err == nil {
		for _, e := range entries {
			if name, ok := cutJSON(e.Name()); ok {
				ids[name] = true
			}
		}
	}
	order := make([]string, 0, len(ids))
	for id := range ids {
		order = append(order, id)
	}
	sort.Strings(order)
	var out []*authLine
	for _, id := range order {
		l := lines[id]
		if l == nil {
			l = &authLine{Upstream: id, State: "not-logged-in"}
		}
		rec, err := store.Load(ctx, id)
		switch {
		case errors.Is(err, tokenstore.ErrNotFound):
		case err != nil:
			l.State, l.Error = "unreadable", err.Error()
		case l.URL != "" && rec.URL != l.URL:
			l.State, l.Error = "other-url", "the token was issued for "+rec.URL+"; log in again"
		default:
			if l.URL == "" {
				l.URL = rec.URL
				l.Error = "not in the configuration given"
			}
			l.LoggedIn, l.Refreshed, l.Expires = rec.LoggedIn, rec.Refreshed, rec.Token.ExpiresAt
			switch {
			case !rec.Token.IsExpired():
				l.State = "logged-in"
			case rec.Token.RefreshToken != "":
				l.State = "refreshable"
			default:
				l.State = "expired"
			}
		}
		out = append(out, l)
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		for _, l := range out {
			if err := enc.Encode(l); err != nil {
				return err
			}
		}
		return nil
	}
	if len(out) == 0 {
		fmt.Fprintf(stdout, "no HTTP or SSE upstreams and no tokens in %s\n", store.Path())
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "UPSTREAM\tSTATE\tEXPIRES\tURL\tNOTE")
	for _, l := range out {
		exp := "-"
		if !l.Expires.IsZero() {
			exp = l.Expires.Local().Format(time.DateTime)
		}
		note := l.Error
		if note == "" && l.State == "not-logged-in" {
			note = "codecall auth login " + l.Upstream + " (if it needs OAuth)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Upstream, l.State, exp, l.URL, note)
	}
	fmt.Fprintf(tw, "\ntokens: %s\n", store.Path())
	return tw.Flush()
}

func cutJSON(name string) (string, bool) {
	if len(name) > 5 && name[0] != '.' && name[len(name)-5:] == ".json" {
		return name[:len(name)-5], true
	}
	return "", false
}

// openBrowser opens url in the user's browser without waiting for it, or
// says why it did not. On Linux it tries only with a graphical session: a
// terminal browser started by xdg-open would take over this terminal.
func openBrowser(url string) string {
	var cmd *exec.Cmd
	switch runtime.GOOS {
	case "darwin":
		cmd = exec.Command("open", url)
	case "windows":
		cmd = exec.Command("rundll32", "url.dll,FileProtocolHandler", url)
	default:
		if os.Getenv("DISPLAY") == "" && os.Getenv("WAYLAND_DISPLAY") == "" {
			return "no graphical session (DISPLAY, WAYLAND_DISPLAY unset)"
		}
		path, err := exec.LookPath("xdg-open")
		if err != nil {
			return "xdg-open not found"
		}
		cmd = exec.Command(path, url)
	}
	if err := cmd.Start(); err != nil {
		return err.Error()
	}
	go func() { _ = cmd.Wait() }()
	return ""
}
