// Package tokenstore keeps the OAuth tokens CodeCall holds as the client
// of remote MCP servers, outside anything a plan or an upstream can read:
// by default one JSON file per upstream, mode 0600, in a directory of
// mode 0700 under the user's config directory.
//
// A Store is keyed by upstream id. Upstream adapts one upstream's record to
// mcp-go's transport.TokenStore, which the OAuth handler of an HTTP or SSE
// transport reads before each request and writes after each refresh.
package tokenstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

// ErrNotFound is returned by Load when no record is kept for an upstream.
// It wraps transport.ErrNoToken, so mcp-go's OAuth handler reads it as "log
// in first".
var ErrNotFound = fmt.Errorf("no token stored: %w", transport.ErrNoToken)

// Record is what CodeCall keeps for one upstream after a login. It holds
// secrets (the tokens, a registered client's secret): never log it.
type Record struct {
	// Upstream is the upstream id the record belongs to.
	Upstream string `json:"upstream"`
	// URL is the server the token was issued for: a record for another URL
	// is not sent (the token's audience is that server).
	URL string `json:"url"`
	// Token is the access token, its refresh token and expiry.
	Token transport.Token `json:"token"`
	// ClientID, ClientSecret and AuthMethod are the client registered by
	// dynamic client registration at login, reused for refreshes; empty
	// when the upstream's config names its client.
	ClientID     string `json:"clientId,omitempty"`
	ClientSecret string `json:"clientSecret,omitempty"`
	AuthMethod   string `json:"authMethod,omitempty"`
	// LoggedIn is when the login that created the record ended.
	LoggedIn time.Time `json:"loggedIn"`
	// Refreshed is when the token was last replaced by a refresh.
	Refreshed time.Time `json:"refreshed,omitzero"`
}

// Secrets returns the record's secret values, for redaction.
func (r *Record) Secrets() []string {
	if r == nil {
		return nil
	}
	var out []string
	for _, s := range []string{r.Token.AccessToken, r.Token.RefreshToken, r.ClientSecret} {
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Store keeps one Record per upstream. Implementations must be safe for
// concurrent use, also by several processes at once when they are shared
// (codecall serve refreshes while codecall auth login writes), and must
// return an error wrapping ErrNotFound when no record exists.
type Store interface {
	Load(ctx context.Context, upstream string) (*Record, error)
	Save(ctx context.Context, rec *Record) error
	// Delete removes the record; deleting a missing record is not an error.
	Delete(ctx context.Context, upstream string) error
	// List returns every record, sorted by upstream.
	List(ctx context.Context) ([]*Record, error)
}

// DefaultDir is where tokens are kept when no directory is configured:
// os.UserConfigDir()/codecall/tokens ($XDG_CONFIG_HOME or ~/.config on
// Linux).
func DefaultDir() (string, error) {
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("cannot find the user's config directory for OAuth tokens (%w); set upstreams.tokenDir or --token-dir", err)
	}
	return filepath.Join(base, "codecall", "tokens"), nil
}

// Dir is a Store of one file per upstream, <dir>/<upstream>.json, mode
// 0600, written atomically (a temporary file renamed over the old one).
type Dir struct{ path string }

// NewDir returns a Store in dir; the directory is created (mode 0700) on
// the first Save.
func NewDir(dir string) *Dir { return &Dir{path: dir} }

// Path is the directory the store writes to.
func (d *Dir) Path() string { return d.path }

// File is the file that holds upstream's record.
func (d *Dir) File(upstream string) string { return filepath.Join(d.path, upstream+".json") }

// upstreamID is what may name a token file: an upstream id (see
// presets' server id rule), so a name can never leave the directory.
var upstreamID = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

func checkID(upstream string) error {
	if !upstreamID.MatchString(upstream) {
		return fmt.Errorf("upstream id %q is not a server id (ASCII letters, digits, '_' and '-')", upstream)
	}
	return nil
}

// Load reads upstream's record. A file that others than its owner may read
// is refused, not used: a token there may already have leaked.
func (d *Dir) Load(ctx context.Context, upstream string) (*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkID(upstream); err != nil {
		return nil, err
	}
	return d.read(d.File(upstream))
}

func (d *Dir) read(file string) (*Record, error) {
	f, err := os.Open(file)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w in %s", ErrNotFound, file)
	}
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("token file: %w", err)
	}
	if st.Mode().Perm()&0o077 != 0 {
		return nil, fmt.Errorf("token file %s has mode %04o, readable by others: it is not used; run chmod 600 %s (and log in again if others may have read it)",
			file, st.Mode().Perm(), file)
	}
	var rec Record
	if err := json.NewDecoder(f).Decode(&rec); err != nil {
		return nil, fmt.Errorf("token file %s is not a token record (%v); delete it and log in again", file, err)
	}
	return &rec, nil
}

// Save writes rec, replacing the upstream's record.
func (d *Dir) Save(ctx context.Context, rec *Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkID(rec.Upstream); err != nil {
		return err
	}
	if err := os.MkdirAll(d.path, 0o700); err != nil {
		return fmt.Errorf("token directory: %w", err)
	}
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return fmt.Errorf("token record: %w", err)
	}
	tmp, err := os.CreateTemp(d.path, "."+rec.Upstream+".*.tmp")
	if err != nil {
		return fmt.Errorf("token directory: %w", err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; say so for other umasks.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return fmt.Errorf("token file: %w", err)
	}
	if _, err := tmp.Write(append(b, '\n')); err != nil {
		tmp.Close()
		return fmt.Errorf("token file: %w", err)
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return fmt.Errorf("token file: %w", err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	if err := os.Rename(tmp.Name(), d.File(rec.Upstream)); err != nil {
		return fmt.Errorf("token file: %w", err)
	}
	return nil
}

// Delete removes upstream's record.
func (d *Dir) Delete(ctx context.Context, upstream string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkID(upstream); err != nil {
		return err
	}
	if err := os.Remove(d.File(upstream)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("token file: %w", err)
	}
	return nil
}

// List returns every record in the directory; a missing directory holds
// none. A file that cannot be read is an error naming it.
func (d *Dir) List(ctx context.Context) ([]*Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	entries, err := os.ReadDir(d.path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("token directory: %w", err)
	}
	var out []*Record
	for _, e := range entries {
		name, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() || checkID(name) != nil {
			continue
		}
		rec, err := d.read(filepath.Join(d.path, e.Name()))
		if err != nil {
			return nil, err
		}
		out = append(out, rec)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Upstream < out[j].Upstream })
	return out, nil
}
