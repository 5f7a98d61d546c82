package state

import (
	"context"
	"encoding/base64"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/state/statetest"
)

func TestFileSurvivesReopenAndDropsExpired(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "state.db")
	now := time.Unix(1000, 0)
	clock := func() time.Time { return now }
	f, err := OpenFile(path, WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Put(ctx, "keep", []byte("k"), time.Hour); err != nil {
		t.Fatal(err)
	}
	if err := f.Put(ctx, "drop", []byte("d"), time.Minute); err != nil {
		t.Fatal(err)
	}
	// A second process cannot open the file while the first holds it.
	if _, err := OpenFile(path); !errors.Is(err, ErrLocked) || !strings.Contains(err.Error(), "a file store serves one process") {
		t.Fatalf("second open: %v, want the lock explained", err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	now = now.Add(10 * time.Minute)
	f, err = OpenFile(path, WithClock(clock))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if got, err := f.Get(ctx, "keep"); err != nil || string(got) != "k" {
		t.Fatalf("after reopen: %q, %v", got, err)
	}
	if _, err := f.Get(ctx, "drop"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("expired entry after reopen: %v", err)
	}
}

func TestMemoryFullRefusesLiveEntries(t *testing.T) {
	ctx := context.Background()
	now := time.Unix(0, 0)
	m := NewMemory(WithMaxEntries(2), WithClock(func() time.Time { return now }))
	for _, k := range []string{"a", "b"} {
		if err := m.Put(ctx, k, nil, time.Minute); err != nil {
			t.Fatal(err)
		}
	}
	if err := m.Put(ctx, "c", nil, time.Minute); !errors.Is(err, ErrFull) {
		t.Fatalf("third entry: %v, want ErrFull", err)
	}
	if err := m.Put(ctx, "a", []byte("again"), time.Minute); err != nil {
		t.Fatalf("overwrite in a full store: %v", err)
	}
	now = now.Add(2 * time.Minute)
	if err := m.PutNew(ctx, "c", nil, time.Minute); err != nil {
		t.Fatalf("once the others expired: %v", err)
	}
}

func TestOpenSpecErrors(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for _, tc := range []struct {
		spec Spec
		want string
	}{
		{Spec{Store: "etcd"}, `state.store "etcd"`},
		{Spec{Store: "file"}, "state.path is empty"},
		{Spec{Store: "redis"}, "state.url is empty"},
		{Spec{Store: "redis", URL: "http://u:hunter2@x/"}, "not a redis"},
		{Spec{Store: "redis", URL: "redis://u:hunter2@127.0.0.1:1/0"}, "does not answer"},
		{Spec{Store: "file", Path: filepath.Join(t.TempDir(), "missing", "dir", "s.db")}, "cannot be opened"},
	} {
		s, err := Open(ctx, tc.spec)
		if err == nil {
			_ = s.Close()
			t.Errorf("%+v: no error", tc.spec)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.spec, err, tc.want)
		}
		if strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%+v: the error repeats the password: %v", tc.spec, err)
		}
	}
	s, err := Open(ctx, Spec{})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s.(*Memory); !ok {
		t.Fatalf("the default store is %T, want *Memory", s)
	}
}

func TestKeyFromEnv(t *testing.T) {
	key := make([]byte, KeyBytes)
	for i := range key {
		key[i] = byte(i)
	}
	for _, tc := range []struct {
		value string
		ok    bool
	}{
		{base64.StdEncoding.EncodeToString(key), true},
		{"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f", true},
		{"", false},
		{"short-secret", false},
		{base64.StdEncoding.EncodeToString(key[:16]), false},
	} {
		t.Setenv("CC_TEST_STATE_KEY", tc.value)
		got, err := KeyFromEnv("CC_TEST_STATE_KEY")
		if tc.ok != (err == nil) {
			t.Errorf("%q: err %v, want ok %v", tc.value, err, tc.ok)
			continue
		}
		if err != nil && tc.value != "" && strings.Contains(err.Error(), tc.value) {
			t.Errorf("the error repeats the value: %v", err)
		}
		if tc.ok && string(got) != string(key) {
			t.Errorf("%q decoded to %x", tc.value, got)
		}
	}
}

// The store's own key prefix is escaped in SCAN MATCH too: a prefix with
// glob characters does not reach another prefix's keys.
func TestRedisScanPrefixWithGlobCharacters(t *testing.T) {
	ctx := context.Background()
	url := statetest.StartRedis(t)
	open := func(prefix string) *Redis {
		s, err := OpenRedis(ctx, url, WithPrefix(prefix))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	glob, plain := open("cc[*]?:"), open("cc*:")
	if err := glob.Put(ctx, "k", []byte("mine"), time.Minute); err != nil {
		t.Fatal(err)
	}
	if err := plain.Put(ctx, "k", []byte("theirs"), time.Minute); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		s    *Redis
		want string
	}{{glob, "mine"}, {plain, "theirs"}} {
		got, err := tc.s.Scan(ctx, "", 10)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].Key != "k" || string(got[0].Value) != tc.want {
			t.Errorf("Scan under %q = %+v, want k = %s", tc.s.prefix, got, tc.want)
		}
	}
}
