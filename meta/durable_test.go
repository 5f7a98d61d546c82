package meta

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/state"
)

func TestDurableTokens(t *testing.T) {
	d, err := NewDurable(state.NewMemory(), bytes.Repeat([]byte{1}, state.KeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	other, _ := NewDurable(state.NewMemory(), bytes.Repeat([]byte{2}, state.KeyBytes))
	tok := d.token("abc123", 2)
	if !IsDurableState(tok) {
		t.Fatalf("token %q is not recognised", tok)
	}
	if run, pause, ok := d.parseToken(tok); !ok || run != "abc123" || pause != 2 {
		t.Fatalf("parse(%q) = %q %d %v", tok, run, pause, ok)
	}
	for name, bad := range map[string]string{
		"another key":     other.token("abc123", 2),
		"another pause":   strings.Replace(tok, "abc123.2.", "abc123.3.", 1),
		"another run":     strings.Replace(tok, "abc123", "abc124", 1),
		"no signature":    "ccr1.abc123.2",
		"not ours":        "cc-approval-00",
		"pause zero":      d.token("abc123", 0),
		"empty run":       d.token("", 1),
		"signature moved": tok + "00",
	} {
		if _, _, ok := d.parseToken(bad); ok {
			t.Errorf("%s: %q accepted", name, bad)
		}
	}
}

func TestDurableTrustKeysHideSessions(t *testing.T) {
	ctx := context.Background()
	mem := state.NewMemory()
	d, err := NewDurable(mem, bytes.Repeat([]byte{1}, state.KeyBytes))
	if err != nil {
		t.Fatal(err)
	}
	trust := d.TrustStore()
	if err := trust.Trust(ctx, "session-secret-id", "shop.delete", time.Hour); err != nil {
		t.Fatal(err)
	}
	if ok, err := trust.Trusted(ctx, "session-secret-id", "shop.delete"); !ok || err != nil {
		t.Fatalf("Trusted: %v %v", ok, err)
	}
	if ok, _ := trust.Trusted(ctx, "other-session", "shop.delete"); ok {
		t.Fatal("trust crossed sessions")
	}
	key := durableTrust{d}.key("session-secret-id", "shop.delete")
	if strings.Contains(key, "session-secret-id") {
		t.Fatalf("the store key holds the session id: %s", key)
	}
	if _, err := mem.Get(ctx, key); err != nil {
		t.Fatalf("trust not in the store under %s: %v", key, err)
	}
}

func TestNewDurableRefusesBadKeys(t *testing.T) {
	if _, err := NewDurable(state.NewMemory(), []byte("short")); err == nil {
		t.Fatal("a short key was accepted")
	}
	if _, err := NewDurable(nil, bytes.Repeat([]byte{1}, state.KeyBytes)); err == nil {
		t.Fatal("a nil store was accepted")
	}
}
