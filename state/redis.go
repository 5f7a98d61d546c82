package state

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// Redis is the shared store: a Redis or Valkey server that every replica
// reaches. Expiry is the server's (SET with PX), and Take is GETDEL, so
// one replica at most takes a paused run.
type Redis struct {
	c      *redis.Client
	prefix string
	addr   string
}

// OpenRedis connects to the server at url (redis://[user:pass@]host:port/db
// or rediss:// for TLS) and pings it.
func OpenRedis(ctx context.Context, url string, opts ...Option) (*Redis, error) {
	o := buildOptions(opts)
	ro, err := redis.ParseURL(url)
	if err != nil {
		// The URL may hold a password: say what is wrong, not what it is.
		return nil, fmt.Errorf("state.url is not a redis:// or rediss:// URL (%v): %w", redactURLError(err), ErrInvalid)
	}
	r := &Redis{c: redis.NewClient(ro), prefix: o.prefix, addr: ro.Addr}
	if err := r.Ping(ctx); err != nil {
		_ = r.c.Close()
		return nil, err
	}
	return r, nil
}

// redactURLError keeps the reason a URL was refused without the URL: a
// *url.Error quotes the whole URL, password included.
func redactURLError(err error) string {
	var ue *neturl.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

func (r *Redis) wrap(op, key string, err error) error {
	return fmt.Errorf("state %s %q on redis %s: %w", op, key, r.addr, err)
}

// Get implements Store.
func (r *Redis) Get(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey("get", key); err != nil {
		return nil, err
	}
	b, err := r.c.Get(ctx, r.prefix+key).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, ErrNotFound
	case err != nil:
		return nil, r.wrap("get", key, err)
	}
	return b, nil
}

// Put implements Store.
func (r *Redis) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := checkKey("put", key); err != nil {
		return err
	}
	if err := checkTTL("put", key, ttl); err != nil {
		return err
	}
	if err := r.c.Set(ctx, r.prefix+key, value, ttl).Err(); err != nil {
		return r.wrap("put", key, err)
	}
	return nil
}

// PutNew implements Store.
func (r *Redis) PutNew(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := checkKey("put", key); err != nil {
		return err
	}
	if err := checkTTL("put", key, ttl); err != nil {
		return err
	}
	// SET NX PX: go-redis's SetNX is the same command.
	ok, err := r.c.SetNX(ctx, r.prefix+key, value, ttl).Result()
	switch {
	case err != nil:
		return r.wrap("put", key, err)
	case !ok:
		return ErrExists
	}
	return nil
}

// Take implements Store with GETDEL (Redis 6.2 and later, Valkey).
func (r *Redis) Take(ctx context.Context, key string) ([]byte, error) {
	if err := checkKey("take", key); err != nil {
		return nil, err
	}
	b, err := r.c.GetDel(ctx, r.prefix+key).Bytes()
	switch {
	case errors.Is(err, redis.Nil):
		return nil, ErrNotFound
	case err != nil:
		return nil, r.wrap("take", key, err)
	}
	return b, nil
}

// Delete implements Store.
func (r *Redis) Delete(ctx context.Context, key string) error {
	if err := checkKey("delete", key); err != nil {
		return err
	}
	if err := r.c.Del(ctx, r.prefix+key).Err(); err != nil {
		return r.wrap("delete", key, err)
	}
	return nil
}

// redisScanCount is the COUNT hint of each SCAN: about how many keys of
// the database the server looks at per round trip.
const redisScanCount = 1000

// Scan implements Store with SCAN MATCH on the escaped prefix, and one
// MGET for the keys each SCAN step finds. SCAN walks the whole database,
// not only the matching keys: a Scan costs about (keys in the database /
// 1000) SCAN round trips, plus one MGET per step that found keys, and
// stops early once limit entries are read. A key that expires between
// SCAN and MGET is left out. The database should hold CodeCall's keys and
// little else.
func (r *Redis) Scan(ctx context.Context, prefix string, limit int) ([]Entry, error) {
	if err := checkScan(prefix, limit); err != nil {
		return nil, err
	}
	match := globEscape(r.prefix+prefix) + "*"
	seen := map[string]bool{} // SCAN may return a key twice
	var out []Entry
	var cursor uint64
	for {
		batch, next, err := r.c.Scan(ctx, cursor, match, redisScanCount).Result()
		if err != nil {
			return nil, r.wrap("scan", prefix, err)
		}
		fresh := batch[:0]
		for _, k := range batch {
			if !seen[k] {
				seen[k] = true
				fresh = append(fresh, k)
			}
		}
		if len(fresh) > 0 {
			values, err := r.c.MGet(ctx, fresh...).Result()
			if err != nil {
				return nil, r.wrap("scan", prefix, err)
			}
			for i, v := range values {
				if s, ok := v.(string); ok { // nil: expired or removed meanwhile
					out = append(out, Entry{Key: strings.TrimPrefix(fresh[i], r.prefix), Value: []byte(s)})
				}
			}
		}
		cursor = next
		if cursor == 0 || len(out) >= limit {
			break
		}
	}
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Key, b.Key) })
	return out[:min(len(out), limit)], nil
}

// globEscape quotes the characters a Redis MATCH pattern gives a meaning
// to, so that s matches itself only.
func globEscape(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		switch c {
		case '\\', '*', '?', '[', ']':
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// Ping implements Store.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("state: redis at %s does not answer: %w", r.addr, err)
	}
	return nil
}

// Close implements Store.
func (r *Redis) Close() error { return r.c.Close() }
