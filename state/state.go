// Package state is where CodeCall keeps what must outlive one request and
// be seen by every replica: plans paused for a person's approval (with
// their journals), session trust and approval decisions.
//
// A Store is a small key-value contract with a time to live on every
// entry: nothing CodeCall keeps there is meant to last, and an entry a
// store forgets on its own cannot pile up. Three implementations keep it:
//
//   - NewMemory, in the process (the default; a restart forgets);
//   - OpenFile, an embedded bbolt file, so one node survives restarts
//     (bbolt locks the file: one process at a time);
//   - OpenRedis, a Redis or Valkey server, shared by many replicas.
//
// They pass one contract test suite (contract_test.go). Take is the
// operation replicas rely on: it returns and removes an entry atomically,
// so of two replicas that receive the same answer, exactly one gets the
// paused run. Scan lists the live entries under a key prefix, bounded: it
// is how any replica lists what every replica keeps under one kind (the
// calls waiting for an operator, for one).
//
// NewSealed wraps a Store so that values are encrypted at rest with
// AES-256-GCM, bound to their key: tool results in a journal can hold
// secrets, and a store operator should not read them.
package state

import (
	"context"
	"errors"
	"fmt"
	"time"
)

// Store keeps byte values under string keys, each for a limited time.
// Methods may be called from any goroutine. Values passed in and returned
// are the caller's: a store keeps its own copy.
//
// Every method returns, besides ErrNotFound and ErrExists, an error that
// wraps the cause when the store cannot be reached: callers fail closed
// on it (an approval that cannot be recorded is not granted).
type Store interface {
	// Get returns the value under key, or ErrNotFound when there is none
	// or it expired.
	Get(ctx context.Context, key string) ([]byte, error)
	// Put sets the value under key for ttl, replacing any value.
	Put(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// PutNew sets the value under key for ttl only when there is none;
	// otherwise it returns ErrExists and changes nothing.
	PutNew(ctx context.Context, key string, value []byte, ttl time.Duration) error
	// Take returns the value under key and removes it, atomically: of
	// concurrent Takes of one key, one gets the value and the others
	// ErrNotFound.
	Take(ctx context.Context, key string) ([]byte, error)
	// Delete removes the value under key; removing nothing is no error.
	Delete(ctx context.Context, key string) error
	// Scan returns up to limit live entries whose keys start with prefix
	// ("" matches every key), sorted by key; expired entries are never
	// returned. limit is 1 to MaxScan: a listing is bounded, and a caller
	// that must know whether more match asks for one more than it shows.
	// When more than limit entries match, which of them come back is the
	// store's choice (memory and file: the first by key). Scan is not a
	// snapshot: an entry written or removed meanwhile may or may not be
	// in it. Its cost grows with the entries that match (memory: with all
	// entries; redis: with every key of the database, see Redis.Scan).
	Scan(ctx context.Context, prefix string, limit int) ([]Entry, error)
	// Ping reports whether the store can be used now.
	Ping(ctx context.Context) error
	// Close releases the store; it is not used afterwards.
	Close() error
}

// Entry is one key and its value, as Scan returns them. The value is the
// caller's.
type Entry struct {
	Key   string
	Value []byte
}

// MaxScan bounds the limit of one Scan: a listing for a person or a
// sweep, not a dump of the store.
const MaxScan = 10000

// Errors a Store returns; match them with errors.Is.
var (
	// ErrNotFound: no value under the key, or it expired.
	ErrNotFound = errors.New("not found")
	// ErrExists: PutNew found a value under the key.
	ErrExists = errors.New("already exists")
	// ErrInvalid: an empty or oversized key, a TTL that is not positive,
	// a Scan limit out of 1..MaxScan.
	ErrInvalid = errors.New("invalid argument")
	// ErrSealed: a sealed value cannot be opened with this key (the key
	// changed, or the entry was altered).
	ErrSealed = errors.New("cannot be opened with this key")
	// ErrFull: a bounded store holds as many live entries as it may.
	ErrFull = errors.New("store full")
	// ErrLocked: the file store's file is held by another process.
	ErrLocked = errors.New("locked by another process")
)

// MaxKeyBytes bounds a key; CodeCall's keys are a kind and a digest.
const MaxKeyBytes = 512

// Kinds names the implementations Open accepts, as state.store spells
// them.
var Kinds = []string{"memory", "file", "redis"}

// Spec says which store to open: state.store, state.path and state.url of
// the config.
type Spec struct {
	// Store is memory, file or redis; "" means memory.
	Store string
	// Path is the bbolt file of the file store.
	Path string
	// URL is the redis:// or rediss:// URL of the redis store.
	URL string
}

// Open opens the store spec names. The file and redis stores are checked
// (the file opened and locked, the server pinged) before Open returns.
func Open(ctx context.Context, spec Spec, opts ...Option) (Store, error) {
	switch spec.Store {
	case "", "memory":
		return NewMemory(opts...), nil
	case "file":
		if spec.Path == "" {
			return nil, fmt.Errorf("state.store is file and state.path is empty: %w; set state.path to the store's file, e.g. /var/lib/codecall/state.db", ErrInvalid)
		}
		return OpenFile(spec.Path, opts...)
	case "redis":
		if spec.URL == "" {
			return nil, fmt.Errorf("state.store is redis and state.url is empty: %w; set state.url, e.g. redis://127.0.0.1:6379/0", ErrInvalid)
		}
		return OpenRedis(ctx, spec.URL, opts...)
	default:
		return nil, fmt.Errorf("state.store %q: %w; use memory, file or redis", spec.Store, ErrInvalid)
	}
}

// Option configures a store. Each store reads the options that concern it
// and ignores the others.
type Option func(*options)

type options struct {
	now        func() time.Time
	maxEntries int
	prefix     string
}

func buildOptions(opts []Option) options {
	o := options{now: time.Now, maxEntries: DefaultMaxEntries, prefix: DefaultPrefix}
	for _, opt := range opts {
		opt(&o)
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.maxEntries <= 0 {
		o.maxEntries = DefaultMaxEntries
	}
	return o
}

// DefaultMaxEntries bounds the memory store.
const DefaultMaxEntries = 100000

// DefaultPrefix starts every key CodeCall writes to Redis, so that it can
// share a database with other programs.
const DefaultPrefix = "codecall:"

// WithClock makes the memory and file stores read the time from now
// (tests); Redis expires entries on its own clock.
func WithClock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// WithMaxEntries bounds the entries of the memory store (default
// DefaultMaxEntries): past it, Put and PutNew fail once expired entries
// are dropped.
func WithMaxEntries(n int) Option { return func(o *options) { o.maxEntries = n } }

// WithPrefix sets the prefix of the redis store's keys (default
// DefaultPrefix).
func WithPrefix(p string) Option { return func(o *options) { o.prefix = p } }

// checkKey refuses what no store should hold.
func checkKey(op, key string) error {
	switch {
	case key == "":
		return fmt.Errorf("state %s: empty key: %w", op, ErrInvalid)
	case len(key) > MaxKeyBytes:
		return fmt.Errorf("state %s: key of %d bytes, at most %d: %w", op, len(key), MaxKeyBytes, ErrInvalid)
	}
	return nil
}

// checkScan refuses a prefix no key could have and a limit out of range.
func checkScan(prefix string, limit int) error {
	switch {
	case len(prefix) > MaxKeyBytes:
		return fmt.Errorf("state scan: prefix of %d bytes, keys have at most %d: %w", len(prefix), MaxKeyBytes, ErrInvalid)
	case limit < 1 || limit > MaxScan:
		return fmt.Errorf("state scan %q: limit %d, want 1 to %d: %w", prefix, limit, MaxScan, ErrInvalid)
	}
	return nil
}

func checkTTL(op, key string, ttl time.Duration) error {
	if ttl <= 0 {
		return fmt.Errorf("state %s %q: TTL %v must be positive (every entry expires): %w", op, key, ttl, ErrInvalid)
	}
	return nil
}
