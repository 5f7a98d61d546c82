package state

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
)

// Memory is the in-process store: what a single server without
// configuration had before stores existed. A restart forgets everything.
type Memory struct {
	o       options
	mu      sync.Mutex
	entries map[string]memEntry
}

type memEntry struct {
	value   []byte
	expires time.Time
}

// NewMemory returns an empty in-process store.
func NewMemory(opts ...Option) *Memory {
	return &Memory{o: buildOptions(opts), entries: map[string]memEntry{}}
}

// Get implements Store.
func (m *Memory) Get(_ context.Context, key string) ([]byte, error) {
	if err := checkKey("get", key); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.liveLocked(key)
	if !ok {
		return nil, ErrNotFound
	}
	return slices.Clone(e.value), nil
}

// Put implements Store.
func (m *Memory) Put(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if err := checkKey("put", key); err != nil {
		return err
	}
	if err := checkTTL("put", key, ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.entries[key]; !ok {
		if err := m.roomLocked(); err != nil {
			return err
		}
	}
	m.entries[key] = memEntry{value: slices.Clone(value), expires: m.o.now().Add(ttl)}
	return nil
}

// PutNew implements Store.
func (m *Memory) PutNew(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if err := checkKey("put", key); err != nil {
		return err
	}
	if err := checkTTL("put", key, ttl); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.liveLocked(key); ok {
		return ErrExists
	}
	if err := m.roomLocked(); err != nil {
		return err
	}
	m.entries[key] = memEntry{value: slices.Clone(value), expires: m.o.now().Add(ttl)}
	return nil
}

// Take implements Store.
func (m *Memory) Take(_ context.Context, key string) ([]byte, error) {
	if err := checkKey("take", key); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.liveLocked(key)
	if !ok {
		return nil, ErrNotFound
	}
	delete(m.entries, key)
	return e.value, nil
}

// Delete implements Store.
func (m *Memory) Delete(_ context.Context, key string) error {
	if err := checkKey("delete", key); err != nil {
		return err
	}
	m.mu.Lock()
	delete(m.entries, key)
	m.mu.Unlock()
	return nil
}

// Scan implements Store. It walks every entry (a map has no order) and
// drops the expired ones it meets.
func (m *Memory) Scan(_ context.Context, prefix string, limit int) ([]Entry, error) {
	if err := checkScan(prefix, limit); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	now := m.o.now()
	var keys []string
	for k, e := range m.entries {
		if !now.Before(e.expires) {
			delete(m.entries, k)
			continue
		}
		if strings.HasPrefix(k, prefix) {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	keys = keys[:min(len(keys), limit)]
	out := make([]Entry, len(keys))
	for i, k := range keys {
		out[i] = Entry{Key: k, Value: slices.Clone(m.entries[k].value)}
	}
	return out, nil
}

// Ping implements Store; memory is always there.
func (m *Memory) Ping(context.Context) error { return nil }

// Close implements Store.
func (m *Memory) Close() error { return nil }

// liveLocked returns the entry under key unless it expired, dropping it
// then.
func (m *Memory) liveLocked(key string) (memEntry, bool) {
	e, ok := m.entries[key]
	if ok && !m.o.now().Before(e.expires) {
		delete(m.entries, key)
		return memEntry{}, false
	}
	return e, ok
}

// roomLocked makes room for one more entry: expired ones go first, and a
// store still full refuses rather than dropping live state.
func (m *Memory) roomLocked() error {
	if len(m.entries) < m.o.maxEntries {
		return nil
	}
	now := m.o.now()
	for k, e := range m.entries {
		if !now.Before(e.expires) {
			delete(m.entries, k)
		}
	}
	if len(m.entries) >= m.o.maxEntries {
		return fmt.Errorf("state put: the memory store holds %d live entries, its limit: %w", len(m.entries), ErrFull)
	}
	return nil
}
