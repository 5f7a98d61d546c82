package gateway

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"

	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/tokenstore"
	"github.com/codecall-go/codecall/toolerr"
)

// WithTokenStore sets where the OAuth tokens of HTTP and SSE upstreams are
// read from and refreshed tokens written to (default: a tokenstore.Dir in
// upstreams.tokenDir, else tokenstore.DefaultDir). codecall auth login
// writes them.
func WithTokenStore(s tokenstore.Store) Option { return func(o *options) { o.tokens = s } }

// defaultTokenStore is the store used without WithTokenStore; nil when the
// user's config directory cannot be found (OAuth upstreams then fail to
// start, saying so).
func defaultTokenStore(dir string) (tokenstore.Store, error) {
	if dir == "" {
		d, err := tokenstore.DefaultDir()
		if err != nil {
			return nil, err
		}
		dir = d
	}
	return tokenstore.NewDir(dir), nil
}

// LoginCommand is what an operator runs to log the gateway in to an
// upstream that needs OAuth.
func LoginCommand(id string) string { return "codecall auth login " + id }

// authFailure is why an upstream refused the gateway's credentials, with
// what to do. Its Error is safe to show: no token, no raw HTTP text.
type authFailure struct {
	upstream string
	why      string
	hint     string
	cause    error // the transport's error, never shown
}

func (e *authFailure) Error() string { return fmt.Sprintf("not authenticated: %s. %s", e.why, e.hint) }

// authState returns why the upstream is down for its credentials, nil when
// it is not.
func (u *upstream) authState() *authFailure {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state == stateReady {
		return nil
	}
	return u.auth
}

// lostAuth marks the connection of generation gen down because the
// upstream refused its credentials.
func (u *upstream) lostAuth(gen uint64, af *authFailure) {
	u.lost(gen, af.Error())
	u.mu.Lock()
	if u.gen == gen && u.state == stateFailed {
		u.auth = af
	}
	u.mu.Unlock()
}

// refreshAfterRefusal reports whether a call the upstream refused with 401
// should be made once more: the upstream uses OAuth and the stored access
// token had not expired and has a refresh token. The token is marked
// expired, so the next request refreshes it first.
func (u *upstream) refreshAfterRefusal(ctx context.Context, err error) bool {
	var oe *transport.OAuthAuthorizationRequiredError
	if !errors.As(err, &oe) {
		return false
	}
	st := u.oauthStore()
	if st == nil {
		return false
	}
	tok, terr := st.GetToken(ctx)
	if terr != nil || tok.IsExpired() || tok.RefreshToken == "" {
		return false // no token, or a refresh already failed
	}
	ok, xerr := st.Expire(ctx)
	if xerr != nil {
		u.g.log.Warn("gateway: cannot mark the refused OAuth token expired", "upstream", u.id, "error", u.red.String(xerr.Error()))
	}
	return ok && xerr == nil
}

// oauthStore is the upstream's view of the token store; nil for stdio and
// OpenAPI upstreams or without a store.
func (u *upstream) oauthStore() *tokenstore.Upstream {
	if u.g.tokens == nil || (u.cfg.Transport() != presets.UpstreamHTTP && u.cfg.Transport() != presets.UpstreamSSE) {
		return nil
	}
	return tokenstore.ForUpstream(u.g.tokens, u.id, u.cfg.URL, u.red.learnt.add)
}

// oauthConfig is the OAuth client configuration of an HTTP or SSE
// upstream, or nil when it does not use OAuth: an upstream uses it when
// its entry has an oauth key or a login stored a token for it (a server
// that answered 401 without the key in the config).
func (u *upstream) oauthConfig(ctx context.Context) (*transport.OAuthConfig, error) {
	st := u.oauthStore()
	if st == nil {
		if u.cfg.OAuth != nil && u.g.tokenErr != nil {
			return nil, &authFailure{upstream: u.id, why: "no token store: " + u.g.tokenErr.Error(), hint: "Set upstreams.tokenDir (or --token-dir)."}
		}
		return nil, nil
	}
	rec, err := st.Record(ctx)
	switch {
	case err == nil:
	case errors.Is(err, tokenstore.ErrNotFound):
		if u.cfg.OAuth == nil {
			return nil, nil
		}
		rec = &tokenstore.Record{}
	default:
		// A store that cannot be read (mode, corrupt file) fails closed.
		return nil, &authFailure{upstream: u.id, why: err.Error(), hint: fmt.Sprintf("Fix the token file, or log in again: %s.", LoginCommand(u.id))}
	}
	c := transport.OAuthConfig{TokenStore: st, PKCEEnabled: true,
		ClientID: rec.ClientID, ClientSecret: rec.ClientSecret, TokenEndpointAuthMethod: rec.AuthMethod}
	if o := u.cfg.OAuth; o != nil {
		if o.ClientID != "" {
			secret, err := u.cfg.OAuthSecret(u.g.opts.lookup)
			if err != nil {
				return nil, err
			}
			c.ClientID, c.ClientSecret, c.TokenEndpointAuthMethod = o.ClientID, secret, ""
			u.red.learnt.add(secret)
		}
		c.Scopes = o.Scopes
		c.AuthServerMetadataURL = o.AuthServerMetadataURL
	}
	return &c, nil
}

// authError turns an error that means the upstream refused the gateway's
// credentials into an *authFailure saying what to run; other errors come
// back unchanged.
func (u *upstream) authError(ctx context.Context, err error) error {
	var af *authFailure
	if errors.As(err, &af) {
		return af
	}
	login := LoginCommand(u.id)
	switch {
	case errors.Is(err, transport.ErrOAuthAuthorizationRequired):
		why := "the stored OAuth token was refused or has expired, and it could not be refreshed"
		if st := u.oauthStore(); st != nil {
			if _, rerr := st.Record(ctx); errors.Is(rerr, tokenstore.ErrNotFound) {
				why = "no OAuth token is stored for it (never logged in, logged out, or the token was issued for another URL)"
			}
		}
		return &authFailure{upstream: u.id, why: why, hint: fmt.Sprintf("Log the gateway in to it: %s.", login), cause: err}
	case errors.Is(err, transport.ErrAuthorizationRequired), errors.Is(err, transport.ErrUnauthorized):
		return &authFailure{upstream: u.id, why: "it answered 401 Unauthorized: it needs credentials",
			hint: fmt.Sprintf("If it uses OAuth, log the gateway in: %s; otherwise set its Authorization header (headers in the upstreams file).", login), cause: err}
	case errors.Is(err, errForbidden):
		return &authFailure{upstream: u.id, why: "it answered 403 Forbidden: the gateway's credentials do not allow this",
			hint: fmt.Sprintf("Log in again with the scopes it needs (oauth.scopes): %s; or fix its Authorization header.", login), cause: err}
	}
	return err
}

// refused is the result of a call the upstream refused for missing or
// invalid credentials: isError, code UNAUTHENTICATED as data with the
// hint, not retryable (the same credentials will be refused again).
func (af *authFailure) result(tool string) *mcp.CallToolResult {
	msg := fmt.Sprintf("UNAUTHENTICATED: upstream %q refused %s: %s", af.upstream, tool, af.why)
	res := mcp.NewToolResultError(msg + ". " + af.hint)
	res.Meta = mcp.NewMetaFromMap(map[string]any{toolerr.MetaKey: map[string]any{
		"code": string(toolerr.Unauthenticated), "message": msg, "retryable": false, "hint": af.hint}})
	return res
}

// errForbidden is what the gateway's HTTP client returns for a 403 answer
// of an HTTP or SSE upstream, which mcp-go would otherwise report as text
// carrying the response body.
var errForbidden = errors.New("403 Forbidden")

// statusTransport turns 403 answers into errForbidden.
type statusTransport struct{ base http.RoundTripper }

func (t statusTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil && resp.StatusCode == http.StatusForbidden {
		_ = resp.Body.Close()
		return nil, errForbidden
	}
	return resp, err
}

// httpClient is the client of an HTTP or SSE upstream's MCP requests.
func upstreamHTTPClient() *http.Client {
	return &http.Client{Transport: statusTransport{base: http.DefaultTransport}}
}

// redactResult removes learnt secrets (and the entry's resolved
// placeholders) from a result of an upstream that has any: a server that
// echoes the bearer token it received cannot hand it to a plan, a client
// or the audit log.
func (u *upstream) redactResult(res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || u.red.learnt == nil || !u.red.active() {
		return res
	}
	out := *res
	out.Content = make([]mcp.Content, len(res.Content))
	for i, c := range res.Content {
		switch v := c.(type) {
		case mcp.TextContent:
			v.Text = u.red.String(v.Text)
			out.Content[i] = v
		case *mcp.TextContent:
			cp := *v
			cp.Text = u.red.String(cp.Text)
			out.Content[i] = cp
		default:
			out.Content[i] = c
		}
	}
	if res.StructuredContent != nil {
		out.StructuredContent = redactJSON(u.red, res.StructuredContent)
	}
	if len(res.RawStructuredContent) > 0 {
		// The bytes as received, which mcp-go sends on in preference.
		out.RawStructuredContent = json.RawMessage(u.red.String(string(res.RawStructuredContent)))
		if !json.Valid(out.RawStructuredContent) {
			out.RawStructuredContent = nil
		}
	}
	return &out
}

// baseURL is the upstream URL without query and fragment, as mcp-go's
// transports give it to their OAuth handler.
func baseURL(raw string) (string, error) {
	p, err := url.Parse(raw)
	if err != nil {
		return "", err
	}
	p.RawQuery, p.Fragment = "", ""
	return p.String(), nil
}

// redactJSON removes the redactor's secrets from the strings of a JSON
// value; a value that does not survive the round trip is replaced by a
// note rather than passed on unredacted.
func redactJSON(red redactor, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		return map[string]any{"redacted": "the structured content could not be checked for secrets"}
	}
	clean := red.String(string(b))
	if clean == string(b) {
		return v
	}
	var out any
	if err := json.Unmarshal([]byte(clean), &out); err != nil {
		return map[string]any{"redacted": "the structured content could not be checked for secrets"}
	}
	return out
}
