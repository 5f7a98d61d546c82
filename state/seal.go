package state

import (
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"os"
	"strings"
	"time"
)

// KeyBytes is the size of a sealing key: AES-256.
const KeyBytes = 32

// Sealed is a Store whose values are encrypted with AES-256-GCM before
// they reach the store underneath, the key they are filed under being the
// additional data: a value copied under another key does not open.
type Sealed struct {
	Store
	aead cipher.AEAD
}

// NewSealed wraps s so that values are sealed with key (KeyBytes long).
func NewSealed(s Store, key []byte) (*Sealed, error) {
	if len(key) != KeyBytes {
		return nil, fmt.Errorf("state: a sealing key has %d bytes, not %d: %w", KeyBytes, len(key), ErrInvalid)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, fmt.Errorf("state: %w", err)
	}
	return &Sealed{Store: s, aead: aead}, nil
}

// KeyFromEnv reads a sealing key from the environment variable name: 32
// bytes written as 64 hex digits or in standard base64 (openssl rand
// -base64 32 prints one). The error never repeats the value.
func KeyFromEnv(name string) ([]byte, error) {
	v := strings.TrimSpace(os.Getenv(name))
	if v == "" {
		return nil, fmt.Errorf("state.keyEnv names %s, which is not set or empty; set it to 32 random bytes in base64, e.g. `openssl rand -base64 32`", name)
	}
	if b, err := hex.DecodeString(v); err == nil && len(b) == KeyBytes {
		return b, nil
	}
	if b, err := base64.StdEncoding.DecodeString(v); err == nil && len(b) == KeyBytes {
		return b, nil
	}
	return nil, fmt.Errorf("%s must hold %d bytes as 64 hex digits or base64 (`openssl rand -base64 32`); its value (%d characters) is neither", name, KeyBytes, len(v))
}

func (s *Sealed) seal(key string, value []byte) []byte {
	nonce := make([]byte, s.aead.NonceSize(), s.aead.NonceSize()+len(value)+s.aead.Overhead())
	_, _ = rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, value, []byte(key))
}

func (s *Sealed) open(key string, sealed []byte) ([]byte, error) {
	n := s.aead.NonceSize()
	if len(sealed) < n+s.aead.Overhead() {
		return nil, fmt.Errorf("state %q: the value is too short to be sealed: %w", key, ErrSealed)
	}
	out, err := s.aead.Open(nil, sealed[:n], sealed[n:], []byte(key))
	if err != nil {
		return nil, fmt.Errorf("state %q: the key changed, or the entry was altered: %w", key, ErrSealed)
	}
	return out, nil
}

// Get implements Store.
func (s *Sealed) Get(ctx context.Context, key string) ([]byte, error) {
	b, err := s.Store.Get(ctx, key)
	if err != nil {
		return nil, err
	}
	return s.open(key, b)
}

// Take implements Store.
func (s *Sealed) Take(ctx context.Context, key string) ([]byte, error) {
	b, err := s.Store.Take(ctx, key)
	if err != nil {
		return nil, err
	}
	return s.open(key, b)
}

// Put implements Store.
func (s *Sealed) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return s.Store.Put(ctx, key, s.seal(key, value), ttl)
}

// PutNew implements Store.
func (s *Sealed) PutNew(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return s.Store.PutNew(ctx, key, s.seal(key, value), ttl)
}

// Scan implements Store: keys stay plain (they are what Scan matches), and
// each value is opened with its key. Values that do not open are not
// skipped in silence, nor do they hide the others: Scan returns the
// entries that opened with a *SealedKeysError, which wraps ErrSealed and
// names the keys of the rest.
func (s *Sealed) Scan(ctx context.Context, prefix string, limit int) ([]Entry, error) {
	entries, err := s.Store.Scan(ctx, prefix, limit)
	if err != nil {
		return nil, err
	}
	opened := entries[:0]
	var bad []string
	for _, e := range entries {
		v, err := s.open(e.Key, e.Value)
		if err != nil {
			bad = append(bad, e.Key)
			continue
		}
		opened = append(opened, Entry{Key: e.Key, Value: v})
	}
	if len(bad) > 0 {
		return opened, &SealedKeysError{Prefix: prefix, Keys: bad}
	}
	return opened, nil
}

// SealedKeysError is the error of a Scan through Sealed some of whose
// values do not open with its key (the key changed, a replica uses
// another, or the entries were altered). The entries that opened come with
// it; Keys names the others, which stay in the store until their TTL.
type SealedKeysError struct {
	Prefix string
	Keys   []string
}

func (e *SealedKeysError) Error() string {
	return fmt.Sprintf("state scan %q: %d entries (%s) %v", e.Prefix, len(e.Keys), clipKeys(e.Keys), ErrSealed)
}

// Unwrap makes errors.Is(err, ErrSealed) hold.
func (e *SealedKeysError) Unwrap() error { return ErrSealed }

// clipKeys lists the first few keys, for a message.
func clipKeys(keys []string) string {
	const most = 3
	if len(keys) <= most {
		return strings.Join(keys, ", ")
	}
	return strings.Join(keys[:most], ", ") + fmt.Sprintf(" and %d more", len(keys)-most)
}
