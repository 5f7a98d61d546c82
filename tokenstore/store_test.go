package tokenstore

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client/transport"
)

func TestDirRoundTripAndModes(t *testing.T) {
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "tokens")
	s := NewDir(dir)
	if _, err := s.Load(ctx, "docs"); !errors.Is(err, ErrNotFound) || !errors.Is(err, transport.ErrNoToken) {
		t.Fatalf("missing record: %v, want ErrNotFound wrapping transport.ErrNoToken", err)
	}
	rec := &Record{Upstream: "docs", URL: "https://h/mcp", Token: transport.Token{AccessToken: "at-1", RefreshToken: "rt-1", TokenType: "Bearer"},
		ClientID: "dyn", ClientSecret: "cs-1", LoggedIn: time.Now().UTC()}
	if err := s.Save(ctx, rec); err != nil {
		t.Fatal(err)
	}
	for path, want := range map[string]os.FileMode{dir: 0o700, s.File("docs"): 0o600} {
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		if st.Mode().Perm() != want {
			t.Errorf("%s: mode %04o, want %04o", path, st.Mode().Perm(), want)
		}
	}
	got, err := s.Load(ctx, "docs")
	if err != nil || got.Token.AccessToken != "at-1" || got.ClientSecret != "cs-1" {
		t.Fatalf("Load = %+v, %v", got, err)
	}
	list, err := s.List(ctx)
	if err != nil || len(list) != 1 || list[0].Upstream != "docs" {
		t.Fatalf("List = %v, %v", list, err)
	}
	if err := s.Delete(ctx, "docs"); err != nil {
		t.Fatal(err)
	}
	if err := s.Delete(ctx, "docs"); err != nil {
		t.Fatalf("deleting a missing record: %v", err)
	}
	if _, err := s.Load(ctx, "docs"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after Delete: %v", err)
	}
}

func TestDirRefuses(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name  string
		setup func(t *testing.T, s *Dir) string // returns the upstream to load
		want  []string
	}{
		{"readable by others", func(t *testing.T, s *Dir) string {
			if err := s.Save(ctx, &Record{Upstream: "a", URL: "https://h/"}); err != nil {
				t.Fatal(err)
			}
			if err := os.Chmod(s.File("a"), 0o644); err != nil {
				t.Fatal(err)
			}
			return "a"
		}, []string{"mode 0644", "chmod 600"}},
		{"not a record", func(t *testing.T, s *Dir) string {
			if err := os.MkdirAll(s.Path(), 0o700); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(s.File("b"), []byte("{"), 0o600); err != nil {
				t.Fatal(err)
			}
			return "b"
		}, []string{"not a token record", "log in again"}},
		{"path in the id", func(*testing.T, *Dir) string { return "../x" }, []string{`"../x" is not a server id`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := NewDir(t.TempDir())
			_, err := s.Load(ctx, tt.setup(t, s))
			if err == nil {
				t.Fatal("Load succeeded")
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestUpstreamAdapter(t *testing.T) {
	ctx := context.Background()
	s := NewDir(t.TempDir())
	var learnt []string
	u := ForUpstream(s, "docs", "https://h/mcp", func(v ...string) { learnt = append(learnt, v...) })
	if _, err := u.GetToken(ctx); !errors.Is(err, transport.ErrNoToken) {
		t.Fatalf("no record: %v", err)
	}
	if err := s.Save(ctx, &Record{Upstream: "docs", URL: "https://other/mcp", Token: transport.Token{AccessToken: "at-other"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := u.GetToken(ctx); !errors.Is(err, transport.ErrNoToken) || !strings.Contains(err.Error(), "issued for https://other/mcp") {
		t.Fatalf("record for another URL: %v", err)
	}
	if err := s.Save(ctx, &Record{Upstream: "docs", URL: "https://h/mcp", ClientID: "dyn", ClientSecret: "cs",
		Token: transport.Token{AccessToken: "at-1", RefreshToken: "rt-1"}, LoggedIn: time.Now()}); err != nil {
		t.Fatal(err)
	}
	tok, err := u.GetToken(ctx)
	if err != nil || tok.AccessToken != "at-1" {
		t.Fatalf("GetToken = %v, %v", tok, err)
	}
	ok, err := u.Expire(ctx)
	if err != nil || !ok {
		t.Fatalf("Expire = %v, %v", ok, err)
	}
	if tok, _ := u.GetToken(ctx); !tok.IsExpired() {
		t.Fatal("token not expired after Expire")
	}
	if err := u.SaveToken(ctx, &transport.Token{AccessToken: "at-2", RefreshToken: "rt-2"}); err != nil {
		t.Fatal(err)
	}
	rec, err := s.Load(ctx, "docs")
	if err != nil || rec.Token.AccessToken != "at-2" || rec.ClientID != "dyn" || rec.ClientSecret != "cs" || rec.Refreshed.IsZero() {
		t.Fatalf("after SaveToken: %+v, %v", rec, err)
	}
	for _, want := range []string{"at-other", "at-1", "rt-1", "cs", "at-2", "rt-2"} {
		found := false
		for _, l := range learnt {
			found = found || l == want
		}
		if !found {
			t.Errorf("%q was not passed to learn (got %q)", want, learnt)
		}
	}
}
