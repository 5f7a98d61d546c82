package tokenstore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// Upstream is one upstream's view of a Store, as mcp-go's OAuth handler
// uses it (transport.TokenStore). Every token it reads or writes is passed
// to learn first, so the caller can redact it from everything it shows.
type Upstream struct {
	store Store
	id    string
	url   string
	learn func(...string)

	mu sync.Mutex // serialises read-modify-write of the record
}

// ForUpstream returns the token store of upstream id served at url. learn
// may be nil.
func ForUpstream(s Store, id, url string, learn func(...string)) *Upstream {
	if learn == nil {
		learn = func(...string) {}
	}
	return &Upstream{store: s, id: id, url: url, learn: learn}
}

// Record returns the upstream's record when it is for this upstream's URL.
// A record for another URL reads as not found: its token was issued for
// another server.
func (u *Upstream) Record(ctx context.Context) (*Record, error) {
	rec, err := u.store.Load(ctx, u.id)
	if err != nil {
		return nil, err
	}
	u.learn(rec.Secrets()...)
	if rec.URL != u.url {
		return nil, fmt.Errorf("%w: the stored token was issued for %s, not %s", ErrNotFound, rec.URL, u.url)
	}
	return rec, nil
}

// GetToken returns the stored token (transport.TokenStore).
func (u *Upstream) GetToken(ctx context.Context) (*transport.Token, error) {
	rec, err := u.Record(ctx)
	if err != nil {
		return nil, err
	}
	tok := rec.Token
	return &tok, nil
}

// SaveToken replaces the stored token, keeping the registered client
// (transport.TokenStore). mcp-go calls it after a refresh.
func (u *Upstream) SaveToken(ctx context.Context, tok *transport.Token) error {
	u.learn(tok.AccessToken, tok.RefreshToken)
	u.mu.Lock()
	defer u.mu.Unlock()
	rec, err := u.store.Load(ctx, u.id)
	if errors.Is(err, ErrNotFound) {
		rec, err = &Record{Upstream: u.id, URL: u.url, LoggedIn: time.Now().UTC()}, nil
	}
	if err != nil {
		return err
	}
	if !rec.LoggedIn.IsZero() && rec.Token.AccessToken != "" {
		rec.Refreshed = time.Now().UTC()
	}
	rec.URL = u.url
	rec.Token = *tok
	return u.store.Save(ctx, rec)
}

// Expire marks the stored access token as expired, so the next request
// refreshes it: the server refused it before its time (revoked, or the
// server's clock differs). It reports whether a refresh token is there to
// try.
func (u *Upstream) Expire(ctx context.Context) (bool, error) {
	u.mu.Lock()
	defer u.mu.Unlock()
	rec, err := u.store.Load(ctx, u.id)
	if err != nil {
		return false, err
	}
	if rec.Token.RefreshToken == "" || rec.URL != u.url {
		return false, nil
	}
	rec.Token.ExpiresAt = time.Now().Add(-time.Second).UTC()
	return true, u.store.Save(ctx, rec)
}

var _ transport.TokenStore = (*Upstream)(nil)
