package meta

import (
	"context"
	"errors"
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
