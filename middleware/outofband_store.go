package middleware

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"errors"
	"fmt"
	"time"

	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/state"
)

// oobStore keeps the out-of-band approval queue in the state store every
// replica shares (policy.WithSharedQueue), sealed with a key of its own
// derived from the state key: a prompt can quote (redacted) arguments,
// and whoever can write to the store must not be able to file an answer.
type oobStore struct{ s state.Store }

var _ policy.OutOfBandStore = oobStore{}

func newOOBStore(store state.Store, key []byte) (oobStore, error) {
	if len(key) != state.KeyBytes {
		return oobStore{}, fmt.Errorf("the state key has %d bytes, want %d", len(key), state.KeyBytes)
	}
	m := hmac.New(sha256.New, key)
	m.Write([]byte("codecall out-of-band queue v1"))
	sealed, err := state.NewSealed(store, m.Sum(nil))
	if err != nil {
		return oobStore{}, err
	}
	return oobStore{s: sealed}, nil
}

func (q oobStore) Add(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	err := q.s.PutNew(ctx, key, value, ttl)
	switch {
	case errors.Is(err, state.ErrExists):
		return false, nil
	case err != nil:
		return false, err
	}
	return true, nil
}

func (q oobStore) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return q.s.Put(ctx, key, value, ttl)
}

func (q oobStore) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := q.s.Get(ctx, key)
	switch {
	case errors.Is(err, state.ErrNotFound):
		return nil, false, nil
	case err != nil:
		return nil, false, err
	}
	return b, true, nil
}

func (q oobStore) Delete(ctx context.Context, key string) error { return q.s.Delete(ctx, key) }

func (q oobStore) List(ctx context.Context, prefix string, limit int) ([][]byte, error) {
	entries, err := q.s.Scan(ctx, prefix, limit)
	if err != nil {
		return nil, err
	}
	out := make([][]byte, len(entries))
	for i, e := range entries {
		out[i] = e.Value
	}
	return out, nil
}
