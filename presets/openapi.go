package presets

import (
	"net/url"
	"strings"
	"time"
)

// OpenAPIAuth are the credentials of an OpenAPI app, added by CodeCall to
// every request and never visible to plans or clients. Values may hold
// ${VAR} placeholders, resolved from the environment like headers; the
// resolved values are redacted from everything the app returns. API keys
// sent as headers go under the entry's headers.
type OpenAPIAuth struct {
	// Bearer is sent as "Authorization: Bearer <value>".
	Bearer string `koanf:"bearer" json:"bearer,omitempty"`
	// Query are query parameters (an API key in the query) added to every
	// request.
	Query map[string]string `koanf:"query" json:"query,omitempty"`
	// ClientCredentials makes CodeCall an OAuth 2.1 client of the API's
	// authorization server (the client credentials grant): it fetches an
	// access token, sends it as a bearer token and fetches a new one when
	// it expires or the API refuses it. Not with Bearer.
	ClientCredentials *OpenAPIClientCredentials `koanf:"clientCredentials" json:"clientCredentials,omitempty"`
}

// OpenAPIClientCredentials are an OAuth 2.1 confidential client's
// settings for the client credentials grant.
type OpenAPIClientCredentials struct {
	// TokenURL is the authorization server's token endpoint.
	TokenURL string `koanf:"tokenUrl" json:"tokenUrl"`
	// ClientID and ClientSecret authenticate CodeCall to the token
	// endpoint; write the secret as a ${VAR} placeholder.
	ClientID     string `koanf:"clientId" json:"clientId"`
	ClientSecret string `koanf:"clientSecret" json:"clientSecret"`
	// Scopes are requested with each token.
	Scopes []string `koanf:"scopes" json:"scopes,omitempty"`
}

// OperationOverride changes how one operation of an OpenAPI app is served.
type OperationOverride struct {
	// RequiresApproval, when set, replaces the tool's requiresApproval
	// (which follows the HTTP method otherwise).
	RequiresApproval *bool `koanf:"requiresApproval" json:"requiresApproval,omitempty"`
	// Timeout bounds a call of this operation, instead of the entry's.
	Timeout time.Duration `koanf:"timeout" json:"timeout,omitempty"`
}

// openapiIssues checks the keys of an OpenAPI app, and that other kinds
// of upstream do not use them.
func (u Upstream) openapiIssues(p keyPath) []issue {
	var out []issue
	add := func(p keyPath, format string, args ...any) { out = append(out, newIssue(p, format, args...)) }
	if u.Transport() != UpstreamOpenAPI {
		for _, k := range []struct {
			key string
			set bool
		}{{"openapi", u.OpenAPI != ""}, {"baseUrl", u.BaseURL != ""}, {"auth", u.Auth.Bearer != "" || len(u.Auth.Query) > 0 || u.Auth.ClientCredentials != nil},
			{"operations", len(u.Operations) > 0}, {"allowPrivateNetwork", u.AllowPrivateNetwork}, {"maxResponseBytes", u.MaxResponseBytes != 0}} {
			if k.set {
				add(p.field(k.key), "only applies to OpenAPI apps (type openapi)")
			}
		}
		return out
	}
	switch {
	case u.OpenAPI == "":
		add(p.field("openapi"), "required for an OpenAPI app: the document's file or http(s) URL")
	case strings.Contains(u.OpenAPI, "://") && !strings.HasPrefix(u.OpenAPI, "http://") && !strings.HasPrefix(u.OpenAPI, "https://"):
		add(p.field("openapi"), "%q: a document is read from a file or an http:// or https:// URL", u.OpenAPI)
	}
	if u.Command != "" {
		add(p.field("command"), "an OpenAPI app has no command; CodeCall sends the HTTP requests itself")
	}
	if u.URL != "" {
		add(p.field("url"), "an OpenAPI app takes baseUrl (where requests go) and openapi (the document), not url")
	}
	if u.BaseURL != "" {
		if parsed, err := url.Parse(u.BaseURL); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			add(p.field("baseUrl"), "%q is not an absolute http:// or https:// URL", u.BaseURL)
		}
	}
	if msg := CheckPlaceholders(u.Auth.Bearer); msg != "" {
		add(p.field("auth").field("bearer"), "%s", msg)
	}
	for _, name := range sortedMapKeys(u.Auth.Query) {
		if name == "" {
			add(p.field("auth").field("query"), "a query parameter needs a name")
		}
		if msg := CheckPlaceholders(u.Auth.Query[name]); msg != "" {
			add(p.field("auth").field("query").key(name), "%s", msg)
		}
	}
	if cc := u.Auth.ClientCredentials; cc != nil {
		cp := p.field("auth").field("clientCredentials")
		if u.Auth.Bearer != "" {
			add(cp, "set either auth.bearer or auth.clientCredentials: both would send the Authorization header")
		}
		if parsed, err := url.Parse(cc.TokenURL); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			add(cp.field("tokenUrl"), "%q is not an absolute http:// or https:// URL; write the authorization server's token endpoint", cc.TokenURL)
		}
		if cc.ClientID == "" {
			add(cp.field("clientId"), "is required: the client id the authorization server knows CodeCall by")
		}
		if cc.ClientSecret == "" {
			add(cp.field("clientSecret"), "is required; write it as a ${VAR} placeholder so it stays out of the file")
		}
		for _, f := range []struct{ name, v string }{{"clientId", cc.ClientID}, {"clientSecret", cc.ClientSecret}} {
			if msg := CheckPlaceholders(f.v); msg != "" {
				add(cp.field(f.name), "%s", msg)
			}
		}
	}
	for _, id := range sortedMapKeys(u.Operations) {
		if u.Operations[id].Timeout < 0 {
			add(p.field("operations").key(id).field("timeout"), "must not be negative, got %v", u.Operations[id].Timeout)
		}
	}
	if u.MaxResponseBytes < 0 {
		add(p.field("maxResponseBytes"), "must not be negative, got %d", u.MaxResponseBytes)
	}
	return out
}
