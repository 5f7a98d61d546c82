package state

import (
	"context"
	"errors"
	"fmt"
	neturl "net/url"
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

// Ping implements Store.
func (r *Redis) Ping(ctx context.Context) error {
	if err := r.c.Ping(ctx).Err(); err != nil {
		return fmt.Errorf("state: redis at %s does not answer: %w", r.addr, err)
	}
	return nil
}

// Close implements Store.
func (r *Redis) Close() error { return r.c.Close() }
