package presets

import (
	"fmt"
	"net/url"
	"strings"
)

// UpstreamOAuth makes CodeCall the OAuth 2.1 client of a remote (HTTP or
// SSE) MCP server that needs authorization: the authorization code flow
// with PKCE, run once by an operator (codecall auth login), then refresh
// tokens. The authorization server is discovered from the server's
// protected resource metadata (RFC 9728) and its own metadata (RFC 8414).
// An HTTP or SSE server without this key still gets the flow when it
// answers 401 and an operator logs in; the key is needed only to name a
// pre-registered client, scopes or a fixed redirect port.
type UpstreamOAuth struct {
	// ClientID is a client registered with the authorization server for
	// CodeCall. Empty means dynamic client registration (RFC 7591) at
	// login, when the server offers it.
	ClientID string `koanf:"clientId" json:"clientId,omitempty"`
	// ClientSecretEnv names the environment variable holding the secret of
	// a confidential ClientID (the secret itself never goes in a file).
	ClientSecretEnv string `koanf:"clientSecretEnv" json:"clientSecretEnv,omitempty"`
	// Scopes are requested at login.
	Scopes []string `koanf:"scopes" json:"scopes,omitempty"`
	// RedirectPort is the loopback port of the redirect URI at login
	// (http://127.0.0.1:<port>/callback). Zero picks a free port, which
	// suits dynamic registration and servers that accept any loopback
	// port (RFC 8252 §7.3); a pre-registered client usually needs the
	// port it was registered with.
	RedirectPort int `koanf:"redirectPort" json:"redirectPort,omitempty"`
	// AuthServerMetadataURL skips discovery: the authorization server's
	// metadata document (RFC 8414), for servers that publish no protected
	// resource metadata.
	AuthServerMetadataURL string `koanf:"authServerMetadataUrl" json:"authServerMetadataUrl,omitempty"`
}

// oauthIssues checks an upstream's oauth key.
func (u Upstream) oauthIssues(p keyPath) []issue {
	o := u.OAuth
	if o == nil {
		return nil
	}
	var out []issue
	add := func(p keyPath, format string, args ...any) { out = append(out, newIssue(p, format, args...)) }
	op := p.field("oauth")
	if t := u.Transport(); t != UpstreamHTTP && t != UpstreamSSE {
		add(op, "only applies to HTTP and SSE servers (this one is %s); an OpenAPI app takes auth.clientCredentials", t)
		return out
	}
	if strings.TrimSpace(o.ClientID) != o.ClientID {
		add(op.field("clientId"), "%q has spaces around it", o.ClientID)
	}
	if o.ClientSecretEnv != "" {
		switch {
		case !envNamePattern.MatchString(o.ClientSecretEnv):
			add(op.field("clientSecretEnv"), "%q is not an environment variable name; write the variable's name (not ${...}, not the secret)", o.ClientSecretEnv)
		case o.ClientID == "":
			add(op.field("clientSecretEnv"), "needs clientId: a secret belongs to a registered client (leave both out for dynamic registration)")
		}
	}
	for i, s := range o.Scopes {
		if s == "" || strings.ContainsAny(s, " \t\"\\") {
			add(op.field("scopes").index(i), "%q is not a scope (no spaces, quotes or backslashes; one scope per entry)", s)
		}
	}
	if o.RedirectPort < 0 || o.RedirectPort > 65535 {
		add(op.field("redirectPort"), "%d is not a TCP port (1-65535, or 0 for any free port)", o.RedirectPort)
	}
	if o.AuthServerMetadataURL != "" {
		if parsed, err := url.Parse(o.AuthServerMetadataURL); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			add(op.field("authServerMetadataUrl"), "%q is not an absolute http:// or https:// URL", o.AuthServerMetadataURL)
		}
	}
	if _, ok := headerValue(u.Headers, "Authorization"); ok {
		add(op, "set either oauth or an Authorization header: both would send the Authorization header")
	}
	return out
}

// headerValue looks a header up by name, case-insensitively.
func headerValue(h map[string]string, name string) (string, bool) {
	for k, v := range h {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return "", false
}

// OAuthSecret returns the client secret of the upstream's oauth key from
// lookup, "" when it has none. An unset variable is an error naming it.
func (u Upstream) OAuthSecret(lookup func(string) (string, bool)) (string, error) {
	if u.OAuth == nil || u.OAuth.ClientSecretEnv == "" {
		return "", nil
	}
	v, ok := lookup(u.OAuth.ClientSecretEnv)
	if !ok || v == "" {
		return "", fmt.Errorf("oauth.clientSecretEnv: environment variable %s is not set; export it before starting codecall", u.OAuth.ClientSecretEnv)
	}
	return v, nil
}
