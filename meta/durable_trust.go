package meta

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/state"
)

// TrustStore returns the session trust kept in the Durable's store, for
// policy.WithTrustStore: trust a person grants on one replica is seen by
// every replica, for the same session and tool only. The key is a digest
// of the session and the tool, so the store never holds a session id.
func (d *Durable) TrustStore() policy.TrustStore { return durableTrust{d} }

type durableTrust struct{ d *Durable }

func (t durableTrust) key(session, tool string) string {
	return "trust/" + digestBytes([]byte(session+"\x00"+tool))
}

func (t durableTrust) Trusted(ctx context.Context, session, tool string) (bool, error) {
	_, err := t.d.store.Get(ctx, t.key(session, tool))
	switch {
	case err == nil:
		return true, nil
	case errors.Is(err, state.ErrNotFound):
		return false, nil
	}
	return false, err
}

func (t durableTrust) Trust(ctx context.Context, session, tool string, ttl time.Duration) error {
	return t.d.store.Put(ctx, t.key(session, tool), []byte(tool), ttl)
}

// PromptStore returns the approval prompts of direct calls and
// codecall.invoke kept in the Durable's store, for
// policy.WithPromptStore: a 2026-07-28 client's answer may reach any
// replica. A prompt is filed under a digest of its token, so the store
// never holds a token a client could answer with.
func (d *Durable) PromptStore() policy.PromptStore { return durablePrompts{d} }

type durablePrompts struct{ d *Durable }

func (durablePrompts) key(token string) string { return "prompt/" + digestBytes([]byte(token)) }

func (s durablePrompts) Keep(ctx context.Context, token string, p policy.IssuedPrompt, ttl time.Duration) error {
	b, err := json.Marshal(p)
	if err != nil {
		return err
	}
	return s.d.store.Put(ctx, s.key(token), b, ttl)
}

func (s durablePrompts) Take(ctx context.Context, token string) (policy.IssuedPrompt, bool, error) {
	var p policy.IssuedPrompt
	b, err := s.d.store.Take(ctx, s.key(token))
	switch {
	case errors.Is(err, state.ErrNotFound):
		return p, false, nil
	case err != nil:
		return p, false, err
	}
	if err := json.Unmarshal(b, &p); err != nil {
		return p, false, fmt.Errorf("the approval prompt in the state store cannot be read: %w", err)
	}
	return p, true, nil
}
