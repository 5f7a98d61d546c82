package meta

import (
	"context"
	"errors"
	"sync/atomic"
	"time"

	"github.com/codecall-go/codecall/state"
)

// DurableStats counts what a Durable did since it was made, for metrics.
type DurableStats struct {
	// Pauses: plans saved while waiting for an answer.
	Pauses int64
	// Resumes: answers that ran a saved plan again.
	Resumes int64
	// ReplayedCalls: calls answered from a journal instead of being made.
	ReplayedCalls int64
	// Divergences: resumed plans ended by REPLAY_DIVERGED.
	Divergences int64
	// StoreOps and StoreSeconds: round trips to the state store and the
	// time they took, summed (divide for the mean).
	StoreOps     int64
	StoreSeconds float64
	// StoreErrors: round trips that failed (a missing key is not a
	// failure).
	StoreErrors int64
}

type durableCounters struct {
	pauses, resumes, replayed, divergences atomic.Int64
	ops, errs, nanos                       atomic.Int64
}

// Stats returns the Durable's counters.
func (d *Durable) Stats() DurableStats {
	c := d.counters
	return DurableStats{Pauses: c.pauses.Load(), Resumes: c.resumes.Load(), ReplayedCalls: c.replayed.Load(),
		Divergences: c.divergences.Load(), StoreOps: c.ops.Load(), StoreErrors: c.errs.Load(),
		StoreSeconds: time.Duration(c.nanos.Load()).Seconds()}
}

// timedStore counts and times every round trip to the store underneath.
type timedStore struct {
	state.Store
	c *durableCounters
}

func (s timedStore) done(start time.Time, err error) {
	s.c.ops.Add(1)
	s.c.nanos.Add(int64(time.Since(start)))
	if err != nil && !errors.Is(err, state.ErrNotFound) && !errors.Is(err, state.ErrExists) {
		s.c.errs.Add(1)
	}
}

func (s timedStore) Get(ctx context.Context, key string) ([]byte, error) {
	start := time.Now()
	b, err := s.Store.Get(ctx, key)
	s.done(start, err)
	return b, err
}

func (s timedStore) Take(ctx context.Context, key string) ([]byte, error) {
	start := time.Now()
	b, err := s.Store.Take(ctx, key)
	s.done(start, err)
	return b, err
}

func (s timedStore) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	start := time.Now()
	err := s.Store.Put(ctx, key, value, ttl)
	s.done(start, err)
	return err
}

func (s timedStore) PutNew(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	start := time.Now()
	err := s.Store.PutNew(ctx, key, value, ttl)
	s.done(start, err)
	return err
}

func (s timedStore) Delete(ctx context.Context, key string) error {
	start := time.Now()
	err := s.Store.Delete(ctx, key)
	s.done(start, err)
	return err
}

func (s timedStore) Scan(ctx context.Context, prefix string, limit int) ([]state.Entry, error) {
	start := time.Now()
	entries, err := s.Store.Scan(ctx, prefix, limit)
	s.done(start, err)
	return entries, err
}

func (s timedStore) Ping(ctx context.Context) error {
	start := time.Now()
	err := s.Store.Ping(ctx)
	s.done(start, err)
	return err
}
