package openapi

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/clientcredentials"
)

// ClientCredentials are an OAuth 2.1 confidential client's settings for
// the client credentials grant: the broker fetches access tokens with
// them and sends each as a bearer token; plans never see either.
type ClientCredentials struct {
	TokenURL     string
	ClientID     string
	ClientSecret string
	Scopes       []string
}

// tokenTimeout bounds one request to the token endpoint.
const tokenTimeout = 30 * time.Second

// keptTokens is how many recent access tokens are remembered for
// redaction: a response may echo a token that was replaced a moment ago.
const keptTokens = 4

// tokens fetches and caches the access tokens of the client credentials
// grant. A token is reused until it expires or the API refuses it.
type tokens struct {
	cfg    clientcredentials.Config
	client *http.Client

	mu      sync.Mutex
	source  oauth2.TokenSource // reuses a token until it expires
	current string             // the token source's token, as last returned
	recent  []string           // the last keptTokens access tokens, for redaction
}

func newTokens(c ClientCredentials) *tokens {
	t := &tokens{
		cfg: clientcredentials.Config{
			ClientID:     c.ClientID,
			ClientSecret: c.ClientSecret,
			TokenURL:     c.TokenURL,
			Scopes:       c.Scopes,
		},
		// The token endpoint is the operator's, not the API's: the
		// API's address guard does not apply, a timeout does.
		client: &http.Client{Timeout: tokenTimeout},
	}
	t.reset()
	return t
}

// reset forgets the cached token, so the next call fetches a new one.
func (t *tokens) reset() {
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, t.client)
	t.source = oauth2.ReuseTokenSource(nil, t.cfg.TokenSource(ctx))
}

// token returns a valid access token, fetching one when needed.
func (t *tokens) token(ctx context.Context) (string, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return "", err
	}
	tok, err := t.source.Token()
	if err != nil {
		return "", tokenError(err)
	}
	if tok.AccessToken == "" {
		return "", errors.New("the token endpoint answered without an access_token")
	}
	t.current = tok.AccessToken
	if !slices.Contains(t.recent, tok.AccessToken) {
		t.recent = append(t.recent, tok.AccessToken)
		if len(t.recent) > keptTokens {
			t.recent = t.recent[len(t.recent)-keptTokens:]
		}
	}
	return tok.AccessToken, nil
}

// refused is called when the API answered 401 to a request that carried
// token: a revoked or expired token is dropped so the next call fetches a
// new one (unless another call has already done so).
func (t *tokens) refused(token string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.current == token {
		t.reset()
		t.current = ""
	}
}

// redact replaces every remembered access token in s.
func (t *tokens) redact(s string) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, tok := range t.recent {
		s = strings.ReplaceAll(s, tok, "[redacted]")
	}
	return s
}

// tokenError says what the token endpoint answered, without the raw
// response (which may echo what was sent).
func tokenError(err error) error {
	var re *oauth2.RetrieveError
	if errors.As(err, &re) {
		msg := fmt.Sprintf("the token endpoint answered HTTP %d", re.Response.StatusCode)
		if re.ErrorCode != "" {
			msg += " " + re.ErrorCode
			if re.ErrorDescription != "" {
				msg += " (" + re.ErrorDescription + ")"
			}
		}
		return errors.New(msg)
	}
	return fmt.Errorf("the token endpoint could not be reached: %w", err)
}
