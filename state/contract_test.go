package state

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codecall-go/codecall/state/statetest"
)

// opener opens a fresh, empty store for one test; the test closes it.
type opener func(t *testing.T) Store

// testContract is the one suite every Store passes.
func testContract(t *testing.T, open opener) {
	ctx := context.Background()
	t.Run("put get overwrite delete", func(t *testing.T) {
		s := open(t)
		if _, err := s.Get(ctx, "a"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get of a missing key: %v, want ErrNotFound", err)
		}
		in := []byte("one")
		if err := s.Put(ctx, "a", in, time.Minute); err != nil {
			t.Fatal(err)
		}
		in[0] = 'X' // the store keeps its own copy
		got, err := s.Get(ctx, "a")
		if err != nil || string(got) != "one" {
			t.Fatalf("Get = %q, %v; want one", got, err)
		}
		got[0] = 'Y'
		if again, _ := s.Get(ctx, "a"); string(again) != "one" {
			t.Fatalf("a returned value aliases the store: %q", again)
		}
		if err := s.Put(ctx, "a", []byte("two"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if got, _ := s.Get(ctx, "a"); string(got) != "two" {
			t.Fatalf("after overwrite Get = %q, want two", got)
		}
		if err := s.Delete(ctx, "a"); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "a"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get after Delete: %v, want ErrNotFound", err)
		}
		if err := s.Delete(ctx, "a"); err != nil {
			t.Fatalf("Delete of nothing: %v", err)
		}
	})
	t.Run("binary and empty values", func(t *testing.T) {
		s := open(t)
		for _, v := range [][]byte{{}, {0, 1, 2, 0xff}, bytes.Repeat([]byte("x"), 1<<20)} {
			if err := s.Put(ctx, "v", v, time.Minute); err != nil {
				t.Fatal(err)
			}
			got, err := s.Get(ctx, "v")
			if err != nil || !bytes.Equal(got, v) {
				t.Fatalf("value of %d bytes came back as %d bytes, %v", len(v), len(got), err)
			}
		}
	})
	t.Run("put new", func(t *testing.T) {
		s := open(t)
		if err := s.PutNew(ctx, "k", []byte("first"), time.Minute); err != nil {
			t.Fatal(err)
		}
		if err := s.PutNew(ctx, "k", []byte("second"), time.Minute); !errors.Is(err, ErrExists) {
			t.Fatalf("second PutNew: %v, want ErrExists", err)
		}
		if got, _ := s.Get(ctx, "k"); string(got) != "first" {
			t.Fatalf("PutNew replaced the value: %q", got)
		}
	})
	t.Run("take once among many", func(t *testing.T) {
		s := open(t)
		if err := s.Put(ctx, "run", []byte("paused"), time.Minute); err != nil {
			t.Fatal(err)
		}
		var wins atomic.Int32
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				v, err := s.Take(ctx, "run")
				switch {
				case err == nil && string(v) == "paused":
					wins.Add(1)
				case errors.Is(err, ErrNotFound):
				default:
					t.Errorf("Take: %q, %v", v, err)
				}
			})
		}
		wg.Wait()
		if wins.Load() != 1 {
			t.Fatalf("%d Takes got the value, want exactly 1", wins.Load())
		}
		if _, err := s.Get(ctx, "run"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Get after Take: %v, want ErrNotFound", err)
		}
	})
	t.Run("entries expire", func(t *testing.T) {
		s := open(t)
		if err := s.Put(ctx, "short", []byte("x"), 30*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "long", []byte("y"), time.Hour); err != nil {
			t.Fatal(err)
		}
		// The cause asserted: the entry goes once its TTL is past, however
		// late this goroutine is scheduled.
		deadline := time.Now().Add(5 * time.Second)
		for {
			_, err := s.Get(ctx, "short")
			if errors.Is(err, ErrNotFound) {
				break
			}
			if err != nil || time.Now().After(deadline) {
				t.Fatalf("short entry still there 5 s after its 30 ms TTL (err %v)", err)
			}
			time.Sleep(10 * time.Millisecond)
		}
		if _, err := s.Take(ctx, "short"); !errors.Is(err, ErrNotFound) {
			t.Fatalf("Take of an expired entry: %v", err)
		}
		if err := s.PutNew(ctx, "short", []byte("again"), time.Minute); err != nil {
			t.Fatalf("PutNew over an expired entry: %v", err)
		}
		if got, err := s.Get(ctx, "long"); err != nil || string(got) != "y" {
			t.Fatalf("long entry: %q, %v", got, err)
		}
	})
	t.Run("invalid input", func(t *testing.T) {
		s := open(t)
		long := string(bytes.Repeat([]byte("k"), MaxKeyBytes+1))
		for _, tc := range []struct {
			name string
			err  error
		}{
			{"get empty key", func() error { _, err := s.Get(ctx, ""); return err }()},
			{"take long key", func() error { _, err := s.Take(ctx, long); return err }()},
			{"put zero ttl", s.Put(ctx, "k", nil, 0)},
			{"put negative ttl", s.PutNew(ctx, "k", nil, -time.Second)},
			{"delete empty key", s.Delete(ctx, "")},
		} {
			if !errors.Is(tc.err, ErrInvalid) {
				t.Errorf("%s: %v, want ErrInvalid", tc.name, tc.err)
			}
		}
	})
	t.Run("scan prefix boundaries", func(t *testing.T) {
		s := open(t)
		for _, k := range []string{"a", "ab", "ab:1", "ab:2", "abc", "ac", "b", "Ab:1"} {
			if err := s.Put(ctx, k, []byte("v"+k), time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			prefix string
			want   []string
		}{
			{"ab:", []string{"ab:1", "ab:2"}},
			{"ab", []string{"ab", "ab:1", "ab:2", "abc"}},
			{"a", []string{"a", "ab", "ab:1", "ab:2", "abc", "ac"}},
			{"", []string{"Ab:1", "a", "ab", "ab:1", "ab:2", "abc", "ac", "b"}},
			{"ab:1", []string{"ab:1"}},
			{"ab:10", nil},
			{"c", nil},
			{"B", nil},
		} {
			got, err := s.Scan(ctx, tc.prefix, MaxScan)
			if err != nil {
				t.Fatalf("Scan %q: %v", tc.prefix, err)
			}
			if keys := entryKeys(got); !slices.Equal(keys, tc.want) {
				t.Errorf("Scan %q = %q, want %q", tc.prefix, keys, tc.want)
			}
			for _, e := range got {
				if string(e.Value) != "v"+e.Key {
					t.Errorf("Scan %q: %q holds %q, want %q", tc.prefix, e.Key, e.Value, "v"+e.Key)
				}
			}
		}
		got, _ := s.Scan(ctx, "ab:", 10)
		got[0].Value[0] = 'X' // the caller's copy
		if again, _ := s.Get(ctx, "ab:1"); string(again) != "vab:1" {
			t.Fatalf("a scanned value aliases the store: %q", again)
		}
	})
	t.Run("scan skips expired entries", func(t *testing.T) {
		s := open(t)
		if err := s.Put(ctx, "q/short", []byte("x"), 30*time.Millisecond); err != nil {
			t.Fatal(err)
		}
		if err := s.Put(ctx, "q/long", []byte("y"), time.Hour); err != nil {
			t.Fatal(err)
		}
		// The cause asserted: the entry leaves Scan once its TTL is past,
		// however late this goroutine runs.
		deadline := time.Now().Add(5 * time.Second)
		for {
			got, err := s.Scan(ctx, "q/", 10)
			if err != nil {
				t.Fatal(err)
			}
			keys := entryKeys(got)
			if slices.Equal(keys, []string{"q/long"}) {
				break
			}
			if !slices.Equal(keys, []string{"q/long", "q/short"}) || time.Now().After(deadline) {
				t.Fatalf("Scan = %q 5 s after the 30 ms TTL, want [q/long]", keys)
			}
			time.Sleep(10 * time.Millisecond)
		}
	})
	t.Run("scan cap", func(t *testing.T) {
		s := open(t)
		for i := range 25 {
			if err := s.Put(ctx, fmt.Sprintf("cap/%02d", i), []byte{byte(i)}, time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		if err := s.Put(ctx, "cap", []byte("outside"), time.Minute); err != nil {
			t.Fatal(err)
		}
		for _, limit := range []int{1, 7, 25, 26} {
			got, err := s.Scan(ctx, "cap/", limit)
			if err != nil {
				t.Fatal(err)
			}
			keys := entryKeys(got)
			if len(keys) != min(limit, 25) || !slices.IsSorted(keys) || len(slices.Compact(slices.Clone(keys))) != len(keys) {
				t.Fatalf("Scan limit %d = %q, want %d distinct sorted keys", limit, keys, min(limit, 25))
			}
			for _, k := range keys {
				if !strings.HasPrefix(k, "cap/") {
					t.Fatalf("Scan limit %d returned %q", limit, k)
				}
			}
		}
		for _, limit := range []int{0, -1, MaxScan + 1} {
			if _, err := s.Scan(ctx, "cap/", limit); !errors.Is(err, ErrInvalid) {
				t.Errorf("Scan limit %d: %v, want ErrInvalid", limit, err)
			}
		}
		if _, err := s.Scan(ctx, strings.Repeat("k", MaxKeyBytes+1), 1); !errors.Is(err, ErrInvalid) {
			t.Errorf("Scan of an oversized prefix: %v, want ErrInvalid", err)
		}
	})
	t.Run("scan glob characters are literal", func(t *testing.T) {
		s := open(t)
		keys := []string{`g*?[x]\1`, `g*?[x]\2`, `gA?[x]\3`, `g*Z[x]\4`, `g*?x]\5`, `g*?[y]\6`, `g\*?[x]7`, `g*?[x]\*`}
		for _, k := range keys {
			if err := s.Put(ctx, k, []byte(k), time.Minute); err != nil {
				t.Fatal(err)
			}
		}
		for _, tc := range []struct {
			prefix string
			want   []string
		}{
			{`g*?[`, []string{`g*?[x]\*`, `g*?[x]\1`, `g*?[x]\2`, `g*?[y]\6`}},
			{`g*?[x]\`, []string{`g*?[x]\*`, `g*?[x]\1`, `g*?[x]\2`}},
			{`g*?[x]\*`, []string{`g*?[x]\*`}},
			{`g\`, []string{`g\*?[x]7`}},
			{`g?`, nil},
			{`g[*]`, nil},
		} {
			got, err := s.Scan(ctx, tc.prefix, 100)
			if err != nil {
				t.Fatal(err)
			}
			if keys := entryKeys(got); !slices.Equal(keys, tc.want) {
				t.Errorf("Scan %q = %q, want %q", tc.prefix, keys, tc.want)
			}
		}
	})
	t.Run("ping", func(t *testing.T) {
		if err := open(t).Ping(ctx); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("sealed", func(t *testing.T) {
		raw := open(t)
		key := bytes.Repeat([]byte{7}, KeyBytes)
		s, err := NewSealed(raw, key)
		if err != nil {
			t.Fatal(err)
		}
		secret := []byte(`{"token":"sk-live-123"}`)
		if err := s.Put(ctx, "j", secret, time.Minute); err != nil {
			t.Fatal(err)
		}
		stored, err := raw.Get(ctx, "j")
		if err != nil || bytes.Contains(stored, []byte("sk-live")) {
			t.Fatalf("the store underneath holds the plaintext (or %v)", err)
		}
		if got, err := s.Get(ctx, "j"); err != nil || !bytes.Equal(got, secret) {
			t.Fatalf("sealed Get = %q, %v", got, err)
		}
		// A value moved under another key does not open.
		if err := raw.Put(ctx, "moved", stored, time.Minute); err != nil {
			t.Fatal(err)
		}
		if _, err := s.Get(ctx, "moved"); !errors.Is(err, ErrSealed) {
			t.Fatalf("value under another key: %v, want ErrSealed", err)
		}
		// Scan opens values; keys stay plain, so a prefix still matches.
		if err := s.Put(ctx, "sj/2", []byte("two"), time.Minute); err != nil {
			t.Fatal(err)
		}
		got, err := s.Scan(ctx, "sj/", 10)
		if err != nil || len(got) != 1 || got[0].Key != "sj/2" || string(got[0].Value) != "two" {
			t.Fatalf("sealed Scan = %+v, %v; want sj/2 = two", got, err)
		}
		// A value that does not open hides none of the others.
		got, err = s.Scan(ctx, "", 10)
		var bad *SealedKeysError
		if !errors.Is(err, ErrSealed) || !errors.As(err, &bad) || !slices.Contains(bad.Keys, "moved") || !strings.Contains(err.Error(), "moved") {
			t.Fatalf("sealed Scan over a moved value: %v, want a SealedKeysError naming it", err)
		}
		if !slices.ContainsFunc(got, func(e Entry) bool { return e.Key == "sj/2" && string(e.Value) == "two" }) ||
			slices.ContainsFunc(got, func(e Entry) bool { return e.Key == "moved" }) {
			t.Fatalf("sealed Scan over a moved value returned %+v; want the entries that open, and only those", got)
		}
		other, _ := NewSealed(raw, bytes.Repeat([]byte{8}, KeyBytes))
		if _, err := other.Take(ctx, "j"); !errors.Is(err, ErrSealed) {
			t.Fatalf("another key: %v, want ErrSealed", err)
		}
	})
}

func entryKeys(entries []Entry) []string {
	var keys []string
	for _, e := range entries {
		keys = append(keys, e.Key)
	}
	return keys
}

func TestMemoryContract(t *testing.T) {
	testContract(t, func(t *testing.T) Store {
		s := NewMemory()
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestFileContract(t *testing.T) {
	testContract(t, func(t *testing.T) Store {
		s, err := OpenFile(filepath.Join(t.TempDir(), "state.db"))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestRedisContract(t *testing.T) {
	url := statetest.StartRedis(t)
	n := 0
	testContract(t, func(t *testing.T) Store {
		n++ // a fresh prefix per subtest: an empty store on a shared server
		s, err := OpenRedis(context.Background(), url, WithPrefix(fmt.Sprintf("test%d:", n)))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
