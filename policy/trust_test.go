package policy_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
)

// mapTrust is a TrustStore shared by the Approvals of several replicas.
type mapTrust struct {
	mu   sync.Mutex
	keys map[string]time.Duration
	down bool
}

func (m *mapTrust) Trusted(_ context.Context, session, tool string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return false, errors.New("store down")
	}
	_, ok := m.keys[session+"|"+tool]
	return ok, nil
}

func (m *mapTrust) Trust(_ context.Context, session, tool string, ttl time.Duration) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.down {
		return errors.New("store down")
	}
	m.keys[session+"|"+tool] = ttl
	return nil
}

func TestTrustStoreSharedAcrossReplicas(t *testing.T) {
	store := &mapTrust{keys: map[string]time.Duration{}}
	a := policy.NewApprovals(time.Minute, true, policy.WithTrustStore(store))
	b := policy.NewApprovals(time.Minute, true, policy.WithTrustStore(store))
	req := policy.ApprovalRequest{Tool: &catalog.Tool{Name: "shop.delete"}, SessionID: "s1"}
	forSession := &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
		Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"decision": policy.ChoiceApproveSession}}}
	if o := a.Interpret(forSession, req); !o.ForSession() {
		t.Fatalf("outcome %q, want approved for the session", o)
	}
	for _, tc := range []struct {
		session, tool string
		want          bool
	}{
		{"s1", "shop.delete", true},  // on the other replica
		{"s2", "shop.delete", false}, // never another session
		{"s1", "shop.charge", false}, // nor another tool
		{"", "shop.delete", false},   // nor a call without a session
	} {
		if got := b.Trusted(tc.session, tc.tool); got != tc.want {
			t.Errorf("Trusted(%q, %q) = %v, want %v", tc.session, tc.tool, got, tc.want)
		}
	}
	if ttl := store.keys["s1|shop.delete"]; ttl != policy.TrustTTL {
		t.Errorf("trust kept for %v, want %v", ttl, policy.TrustTTL)
	}
	// A store that fails: not trusted, and trust asked for is not granted.
	store.down = true
	if b.Trusted("s1", "shop.delete") {
		t.Error("a store that cannot answer must not trust")
	}
	if o := a.Interpret(forSession, req); o.ForSession() || o != policy.ApprovalApproved {
		t.Errorf("with the store down: %q, want this call approved only", o)
	}
}
