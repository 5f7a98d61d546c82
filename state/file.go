package state

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"
	"time"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// File is the embedded store: a bbolt file, so that a single node keeps
// its paused runs and trust across restarts. bbolt locks the file, so one
// process uses it at a time; replicas share a redis store instead.
type File struct {
	o      options
	db     *bolt.DB
	path   string
	writes atomic.Int64
}

var fileBucket = []byte("codecall")

// fileLockWait is how long OpenFile waits for another process's lock.
const fileLockWait = 2 * time.Second

// sweepEvery is how many writes pass between two sweeps of expired
// entries (each Get drops the expired entry it meets as well).
const sweepEvery = 512

// OpenFile opens, or creates, the bbolt file at path (mode 0600) and drops
// the entries that expired while it was closed.
func OpenFile(path string, opts ...Option) (*File, error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: fileLockWait})
	if errors.Is(err, bolterrors.ErrTimeout) {
		return nil, fmt.Errorf("state.path %s: %w (waited %v): a file store serves one process; "+
			"stop the other one, or use state.store redis to share state among several", path, ErrLocked, fileLockWait)
	}
	if err != nil {
		return nil, fmt.Errorf("state.path %s cannot be opened as a bbolt file: %w", path, err)
	}
	f := &File{o: buildOptions(opts), db: db, path: path}
	if err := db.Update(func(tx *bolt.Tx) error {
		_, err := tx.CreateBucketIfNotExists(fileBucket)
		return err
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("state.path %s: %w", path, err)
	}
	if err := f.sweep(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return f, nil
}

// An entry is its expiry (Unix nanoseconds, big-endian) and its value.
func encodeEntry(value []byte, expires time.Time) []byte {
	b := make([]byte, 8+len(value))
	binary.BigEndian.PutUint64(b, uint64(expires.UnixNano()))
	copy(b[8:], value)
	return b
}

func (f *File) decode(raw []byte) ([]byte, bool) {
	if len(raw) < 8 {
		return nil, false
	}
	exp := time.Unix(0, int64(binary.BigEndian.Uint64(raw)))
	if !f.o.now().Before(exp) {
		return nil, false
	}
	return slices.Clone(raw[8:]), true
}

func (f *File) wrap(op, key string, err error) error {
	return fmt.Errorf("state %s %q in %s: %w", op, key, f.path, err)
}

// Get implements Store.
func (f *File) Get(_ context.Context, key string) ([]byte, error) {
	if err := checkKey("get", key); err != nil {
		return nil, err
	}
	var out []byte
	var found bool
	err := f.db.View(func(tx *bolt.Tx) error {
		out, found = f.decode(tx.Bucket(fileBucket).Get([]byte(key)))
		return nil
	})
	if err != nil {
		return nil, f.wrap("get", key, err)
	}
	if !found {
		return nil, ErrNotFound
	}
	return out, nil
}

// Put implements Store.
func (f *File) Put(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if err := checkKey("put", key); err != nil {
		return err
	}
	if err := checkTTL("put", key, ttl); err != nil {
		return err
	}
	err := f.db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket(fileBucket).Put([]byte(key), encodeEntry(value, f.o.now().Add(ttl)))
	})
	if err != nil {
		return f.wrap("put", key, err)
	}
	return f.wrote()
}

// PutNew implements Store.
func (f *File) PutNew(_ context.Context, key string, value []byte, ttl time.Duration) error {
	if err := checkKey("put", key); err != nil {
		return err
	}
	if err := checkTTL("put", key, ttl); err != nil {
		return err
	}
	err := f.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(fileBucket)
		if _, live := f.decode(b.Get([]byte(key))); live {
			return ErrExists
		}
		return b.Put([]byte(key), encodeEntry(value, f.o.now().Add(ttl)))
	})
	if errors.Is(err, ErrExists) {
		return ErrExists
	}
	if err != nil {
		return f.wrap("put", key, err)
	}
	return f.wrote()
}

// Take implements Store.
func (f *File) Take(_ context.Context, key string) ([]byte, error) {
	if err := checkKey("take", key); err != nil {
		return nil, err
	}
	var out []byte
	var found bool
	err := f.db.Update(func(tx *bolt.Tx) error {
		b := tx.Bucket(fileBucket)
		raw := b.Get([]byte(key))
		if raw == nil {
			return nil
		}
		out, found = f.decode(raw)
		return b.Delete([]byte(key))
	})
	if err != nil {
		return nil, f.wrap("take", key, err)
	}
	if !found {
		return nil, ErrNotFound
	}
	return out, nil
}

// Delete implements Store.
func (f *File) Delete(_ context.Context, key string) error {
	if err := checkKey("delete", key); err != nil {
		return err
	}
	if err := f.db.Update(func(tx *bolt.Tx) error { return tx.Bucket(fileBucket).Delete([]byte(key)) }); err != nil {
		return f.wrap("delete", key, err)
	}
	return nil
}

// Scan implements Store: a cursor seeks to the prefix and reads the keys
// that follow while they start with it (bbolt keeps keys sorted), skipping
// the expired ones (the next sweep drops them).
func (f *File) Scan(_ context.Context, prefix string, limit int) ([]Entry, error) {
	if err := checkScan(prefix, limit); err != nil {
		return nil, err
	}
	var out []Entry
	p := []byte(prefix)
	err := f.db.View(func(tx *bolt.Tx) error {
		c := tx.Bucket(fileBucket).Cursor()
		for k, v := c.Seek(p); k != nil && bytes.HasPrefix(k, p) && len(out) < limit; k, v = c.Next() {
			if value, live := f.decode(v); live {
				out = append(out, Entry{Key: string(k), Value: value})
			}
		}
		return nil
	})
	if err != nil {
		return nil, f.wrap("scan", prefix, err)
	}
	return out, nil
}

// Ping implements Store: a read transaction on the open file.
func (f *File) Ping(context.Context) error {
	if err := f.db.View(func(tx *bolt.Tx) error {
		if tx.Bucket(fileBucket) == nil {
			return errors.New("the codecall bucket is missing")
		}
		return nil
	}); err != nil {
		return fmt.Errorf("state file %s: %w", f.path, err)
	}
	return nil
}

// Close implements Store, releasing the file's lock.
func (f *File) Close() error { return f.db.Close() }

// wrote counts a write and sweeps expired entries every sweepEvery.
func (f *File) wrote() error {
	if f.writes.Add(1)%sweepEvery != 0 {
		return nil
	}
	return f.sweep()
}

// sweep drops every expired entry.
func (f *File) sweep() error {
	now := f.o.now()
	err := f.db.Update(func(tx *bolt.Tx) error {
		c := tx.Bucket(fileBucket).Cursor()
		for k, v := c.First(); k != nil; k, v = c.Next() {
			if len(v) < 8 || !now.Before(time.Unix(0, int64(binary.BigEndian.Uint64(v)))) {
				if err := c.Delete(); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("state file %s: dropping expired entries: %w", f.path, err)
	}
	return nil
}
