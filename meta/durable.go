package meta

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/codecall-go/codecall/state"
)

// Durable keeps the plans of 2026-07-28 clients that pause for a person's
// approval in a state.Store instead of this process's memory, so that the
// answer can reach any replica, and a replica can stop, between the
// prompt and the answer.
//
// A paused plan is saved as what it takes to run it again: the script, its
// context and allowedTools, its Replay seed and epoch, and the journal of
// the calls it completed with their results. The client's requestState is
// a reference to it, signed by the server. The answer runs the plan again
// from its start in a fresh sandbox (vm.Replay makes it repeatable): each
// call in the journal is answered from it without calling the tool, the
// answered call gets its answer, and the plan continues live. A call that
// differs from the journal (tool or input) ends the run with
// REPLAY_DIVERGED instead of calling a tool twice.
//
// Values are sealed with a key derived from the one given (journals hold
// tool results). Without a Durable, plans pause in process (PausedRuns).
type Durable struct {
	store   state.Store // sealed
	counted state.Store // the store as given, its round trips counted
	sign    []byte      // signs requestState references
	now     func() time.Time
	// grace is how long a saved plan outlives its prompt, so that a late
	// answer is told it expired instead of finding nothing.
	grace time.Duration
	// lease bounds how long one replica holds a resumed plan; a replica
	// that stops while it runs one releases it when the lease runs out.
	lease    time.Duration
	counters *durableCounters
	drift    drift // the digests of the catalog and config a plan saw
}

// DurableOption configures NewDurable.
type DurableOption func(*Durable)

// WithDurableClock makes a Durable read the time from now (tests).
func WithDurableClock(now func() time.Time) DurableOption {
	return func(d *Durable) { d.now = now }
}

// WithResumeLease sets how long a replica that resumes a plan holds it
// before another may (default 5 minutes; it should exceed the longest plan
// timeout).
func WithResumeLease(d time.Duration) DurableOption {
	return func(x *Durable) { x.lease = d }
}

// NewDurable keeps paused plans in store, sealing them with a key derived
// from key (state.KeyBytes long). Every replica must be given the same
// store and key.
func NewDurable(store state.Store, key []byte, opts ...DurableOption) (*Durable, error) {
	if store == nil {
		return nil, errors.New("meta: NewDurable needs a store")
	}
	if len(key) != state.KeyBytes {
		return nil, fmt.Errorf("meta: the state key has %d bytes, want %d", len(key), state.KeyBytes)
	}
	counters := &durableCounters{}
	sealed, err := state.NewSealed(timedStore{Store: store, c: counters}, derive(key, "codecall journal v1"))
	if err != nil {
		return nil, err
	}
	d := &Durable{store: sealed, counted: timedStore{Store: store, c: counters}, sign: derive(key, "codecall request state v1"), now: time.Now,
		grace: 10 * time.Minute, lease: 5 * time.Minute, counters: counters}
	for _, o := range opts {
		o(d)
	}
	if d.now == nil {
		d.now = time.Now
	}
	return d, nil
}

// derive makes one key per use from the configured key.
func derive(key []byte, label string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(label))
	return m.Sum(nil)
}

// CountedStore returns the store as given to NewDurable, its round trips
// counted in the durable metrics (codecall.state.ops, .errors, .duration),
// for the server's other users of the same store (the out-of-band
// approval queue), which seal what they keep with keys of their own.
func (d *Durable) CountedStore() state.Store { return d.counted }

// Ping reports whether the store can be used, for readiness checks.
func (d *Durable) Ping(ctx context.Context) error { return d.store.Ping(ctx) }

// tokenPrefix starts every requestState a Durable issues.
const tokenPrefix = "ccr1."

// IsDurableState reports whether a requestState is a Durable reference.
func IsDurableState(s string) bool { return strings.HasPrefix(s, tokenPrefix) }

// token is the requestState of a plan's pause-th pause: the run ID and the
// pause, signed, so a client can neither name another run nor answer an
// older prompt of this one.
func (d *Durable) token(runID string, pause int) string {
	payload := runID + "." + strconv.Itoa(pause)
	return tokenPrefix + payload + "." + d.mac(payload)
}

func (d *Durable) mac(payload string) string {
	m := hmac.New(sha256.New, d.sign)
	m.Write([]byte(payload))
	return hex.EncodeToString(m.Sum(nil)[:20])
}

// parseToken checks a requestState's signature and returns its run ID and
// pause.
func (d *Durable) parseToken(s string) (runID string, pause int, ok bool) {
	rest, found := strings.CutPrefix(s, tokenPrefix)
	if !found {
		return "", 0, false
	}
	i := strings.LastIndexByte(rest, '.')
	if i < 0 {
		return "", 0, false
	}
	payload, sig := rest[:i], rest[i+1:]
	if subtle.ConstantTimeCompare([]byte(sig), []byte(d.mac(payload))) != 1 {
		return "", 0, false
	}
	runID, p, found := strings.Cut(payload, ".")
	if !found || runID == "" {
		return "", 0, false
	}
	pause, err := strconv.Atoi(p)
	if err != nil || pause < 1 {
		return "", 0, false
	}
	return runID, pause, true
}

func runKey(runID string) string   { return "run/" + runID }
func leaseKey(runID string) string { return "lease/" + runID }

// load reads a saved plan.
func (d *Durable) load(ctx context.Context, runID string) (*savedPlan, error) {
	b, err := d.store.Get(ctx, runKey(runID))
	if err != nil {
		return nil, err
	}
	var p savedPlan
	if err := json.Unmarshal(b, &p); err != nil {
		return nil, fmt.Errorf("the saved plan %s cannot be read: %w", runID, err)
	}
	if p.Version != savedPlanVersion && p.Version != 1 {
		return nil, fmt.Errorf("the saved plan %s has version %d; this server reads version %d", runID, p.Version, savedPlanVersion)
	}
	return &p, nil
}

// save writes a saved plan; it lives until its prompt expires, and grace
// longer.
func (d *Durable) save(ctx context.Context, p *savedPlan) error {
	if err := d.stillHolds(ctx, p); err != nil {
		return err
	}
	p.Version = savedPlanVersion
	b, err := json.Marshal(p)
	if err != nil {
		return fmt.Errorf("the plan cannot be saved: %w", err)
	}
	ttl := time.UnixMilli(p.ExpiresMs).Sub(d.now()) + d.grace
	if ttl <= 0 {
		ttl = d.grace
	}
	return d.store.Put(ctx, runKey(p.RunID), b, ttl)
}

// acquire takes the lease on a saved plan: one replica at a time resumes
// it. holder names this attempt.
func (d *Durable) acquire(ctx context.Context, runID, holder string) (until time.Time, err error) {
	sent := d.now()
	if err := d.store.PutNew(ctx, leaseKey(runID), []byte(holder), d.lease); err != nil {
		return time.Time{}, err
	}
	// The store starts the lease's TTL when it receives the request, after
	// sent: until four fifths of the lease have passed here, it is surely
	// still ours, and checking costs no round trip.
	return sent.Add(d.lease - d.lease/5), nil
}

// stillHolds is holds for a plan this replica resumes: answered locally
// while the lease surely runs, by the store after that.
func (d *Durable) stillHolds(ctx context.Context, p *savedPlan) error {
	if p.holder == "" || d.now().Before(p.leaseUntil) {
		return nil
	}
	return d.holds(ctx, p.RunID, p.holder)
}

// errLeaseLost: the lease on a plan ran out while this replica resumed it.
var errLeaseLost = errors.New("the lease on the plan ran out while it ran; another request may have resumed it")

// holds reports whether holder still holds the lease on a plan: a replica
// whose lease ran out (it was slow, or stalled) must not save over what a
// replica that took the plan after it wrote.
func (d *Durable) holds(ctx context.Context, runID, holder string) error {
	b, err := d.store.Get(ctx, leaseKey(runID))
	switch {
	case errors.Is(err, state.ErrNotFound):
		return errLeaseLost
	case err != nil:
		return err
	case string(b) != holder:
		return errLeaseLost
	}
	return nil
}

// release gives the lease back, unless it ran out and another holds it.
func (d *Durable) release(ctx context.Context, runID, holder string) {
	ctx = context.WithoutCancel(ctx)
	if d.holds(ctx, runID, holder) == nil {
		_ = d.store.Delete(ctx, leaseKey(runID))
	}
}

// forget removes a plan that ended, the record a sweep reads, and the
// lease of the replica that ran it last.
func (d *Durable) forget(ctx context.Context, p *savedPlan) error {
	ctx = context.WithoutCancel(ctx)
	if err := d.stillHolds(ctx, p); err != nil {
		return err
	}
	if err := d.store.Delete(ctx, runKey(p.RunID)); err != nil {
		return err
	}
	if err := d.store.Delete(ctx, pausedKey(p.RunID)); err != nil {
		return err
	}
	if p.holder == "" {
		return nil
	}
	p.holder = "" // released with it
	return d.store.Delete(ctx, leaseKey(p.RunID))
}
