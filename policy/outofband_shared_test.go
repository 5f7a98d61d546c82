package policy_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/state"
	"github.com/codecall-go/codecall/state/statetest"
)

// stateQueue is a state.Store as a shared out-of-band queue, as
// middleware adapts it (there sealed as well).
type stateQueue struct{ s state.Store }

func (q stateQueue) Add(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	err := q.s.PutNew(ctx, key, value, ttl)
	if errors.Is(err, state.ErrExists) {
		return false, nil
	}
	return err == nil, err
}

func (q stateQueue) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	return q.s.Put(ctx, key, value, ttl)
}

func (q stateQueue) Get(ctx context.Context, key string) ([]byte, bool, error) {
	b, err := q.s.Get(ctx, key)
	if errors.Is(err, state.ErrNotFound) {
		return nil, false, nil
	}
	return b, err == nil, err
}

func (q stateQueue) Delete(ctx context.Context, key string) error { return q.s.Delete(ctx, key) }

func (q stateQueue) List(ctx context.Context, prefix string, limit int) ([][]byte, error) {
	entries, err := q.s.Scan(ctx, prefix, limit)
	out := make([][]byte, len(entries))
	for i, e := range entries {
		out[i] = e.Value
	}
	return out, err
}

// downQueue fails every round trip while down is set, as a store that
// cannot be reached does, and counts the round trips.
type downQueue struct {
	q    policy.OutOfBandStore
	down atomic.Bool
	ops  atomic.Int64
}

var errRefused = errors.New("dial tcp 127.0.0.1:6379: connection refused")

func (d *downQueue) fail() error {
	d.ops.Add(1)
	if d.down.Load() {
		return errRefused
	}
	return nil
}

func (d *downQueue) Add(ctx context.Context, key string, value []byte, ttl time.Duration) (bool, error) {
	if err := d.fail(); err != nil {
		return false, err
	}
	return d.q.Add(ctx, key, value, ttl)
}

func (d *downQueue) Put(ctx context.Context, key string, value []byte, ttl time.Duration) error {
	if err := d.fail(); err != nil {
		return err
	}
	return d.q.Put(ctx, key, value, ttl)
}

func (d *downQueue) Get(ctx context.Context, key string) ([]byte, bool, error) {
	if err := d.fail(); err != nil {
		return nil, false, err
	}
	return d.q.Get(ctx, key)
}

func (d *downQueue) Delete(ctx context.Context, key string) error {
	if err := d.fail(); err != nil {
		return err
	}
	return d.q.Delete(ctx, key)
}

func (d *downQueue) List(ctx context.Context, prefix string, limit int) ([][]byte, error) {
	if err := d.fail(); err != nil {
		return nil, err
	}
	return d.q.List(ctx, prefix, limit)
}

// sharedStores are the stores the replica tests run on: memory, and a
// real Redis when one is installed.
func sharedStores(t *testing.T) map[string]func(t *testing.T) state.Store {
	return map[string]func(t *testing.T) state.Store{
		"memory": func(*testing.T) state.Store { return state.NewMemory() },
		"redis": func(t *testing.T) state.Store {
			url := statetest.StartRedis(t)
			s, err := state.OpenRedis(context.Background(), url)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { _ = s.Close() })
			return s
		},
	}
}

// twoReplicas are two OutOfBands on one store, as two servers behind a
// load balancer.
func twoReplicas(store state.Store, timeout time.Duration, opts ...policy.OutOfBandOption) (a, b *policy.OutOfBand) {
	mk := func() *policy.OutOfBand {
		return policy.NewOutOfBand(policy.NewApprovals(timeout, false),
			append([]policy.OutOfBandOption{policy.WithSharedQueue(stateQueue{store}), policy.WithPollInterval(20 * time.Millisecond)}, opts...)...)
	}
	return mk(), mk()
}

// ask starts a call waiting on o and returns where its answer and error
// arrive.
func ask(ctx context.Context, o *policy.OutOfBand) (<-chan policy.Answer, <-chan error) {
	got, errc := make(chan policy.Answer, 1), make(chan error, 1)
	go func() {
		a, _, err := o.Ask(ctx, oobRequest())
		got <- a
		errc <- err
	}()
	return got, errc
}

// TestOutOfBandSharedAcrossReplicas: a call waiting on replica A is listed
// by both replicas and answered through B; A gets B's answer, and the
// call leaves both lists.
func TestOutOfBandSharedAcrossReplicas(t *testing.T) {
	ctx := context.Background()
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			a, b := twoReplicas(open(t), time.Minute)
			got, _ := ask(ctx, a)
			p := waitPending(t, b)
			if p.Tool != "shop.delete" || p.RunID != "r1" || p.CallIndex != 3 || p.Prompt == "" {
				t.Fatalf("B lists %+v", p)
			}
			if la, err := a.Pending(ctx); err != nil || len(la) != 1 || la[0].ID != p.ID {
				t.Fatalf("A lists %+v, %v; want the one call", la, err)
			}
			if err := b.Answer(ctx, p.ID, true, policy.ChannelConsole, "olga"); err != nil {
				t.Fatal(err)
			}
			want := policy.Answer{Outcome: policy.ApprovalApproved, Channel: policy.ChannelConsole, By: "olga"}
			select {
			case ans := <-got:
				if ans != want {
					t.Fatalf("A's call got %+v, want %+v", ans, want)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("the call on A did not get the answer given through B within 10 s")
			}
			for _, o := range []*policy.OutOfBand{a, b} {
				if p, err := o.Pending(ctx); err != nil || len(p) != 0 {
					t.Errorf("after the answer: %+v, %v", p, err)
				}
			}
			if err := a.Answer(ctx, p.ID, false, policy.ChannelCLI, "late"); !errors.Is(err, policy.ErrNoPendingApproval) {
				t.Errorf("an answer after the call went on: %v, want ErrNoPendingApproval", err)
			}
		})
	}
}

// TestOutOfBandSharedOneAnswerWins: operators on both replicas answer the
// same call at once; exactly one answer is recorded, the others are told
// the call no longer waits, and the call gets the winner's answer.
func TestOutOfBandSharedOneAnswerWins(t *testing.T) {
	ctx := context.Background()
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			a, b := twoReplicas(open(t), time.Minute)
			got, _ := ask(ctx, a)
			p := waitPending(t, b)
			const answerers = 8
			var wins atomic.Int32
			winner := make(chan string, answerers)
			var wg sync.WaitGroup
			start := make(chan struct{})
			for i := range answerers {
				o := []*policy.OutOfBand{a, b}[i%2]
				wg.Go(func() {
					<-start
					by := fmt.Sprintf("op%d", i)
					switch err := o.Answer(ctx, p.ID, i%3 != 0, policy.ChannelCLI, by); {
					case err == nil:
						wins.Add(1)
						winner <- by
					case !errors.Is(err, policy.ErrNoPendingApproval):
						t.Errorf("%s: %v", by, err)
					}
				})
			}
			close(start)
			wg.Wait()
			if wins.Load() != 1 {
				t.Fatalf("%d answers recorded, want exactly 1", wins.Load())
			}
			ans := <-got
			if by := <-winner; ans.By != by {
				t.Fatalf("the call got %+v, but %s's answer was the one recorded", ans, by)
			}
		})
	}
}

// TestOutOfBandSharedExpiry: a call nobody answers expires on its replica,
// leaves every list, and a later answer is refused.
func TestOutOfBandSharedExpiry(t *testing.T) {
	ctx := context.Background()
	for name, open := range sharedStores(t) {
		t.Run(name, func(t *testing.T) {
			a, b := twoReplicas(open(t), 300*time.Millisecond)
			got, errc := ask(ctx, a)
			p := waitPending(t, b)
			if ans := <-got; ans.Outcome != policy.ApprovalExpired || ans.Channel != policy.ChannelOutOfBand {
				t.Fatalf("unanswered call: %+v, want expired", ans)
			}
			if err := <-errc; err != nil {
				t.Fatalf("an expired call's error: %v", err)
			}
			if l, err := b.Pending(ctx); err != nil || len(l) != 0 {
				t.Fatalf("B lists %+v, %v after the expiry", l, err)
			}
			if err := b.Answer(ctx, p.ID, true, policy.ChannelConsole, "late"); !errors.Is(err, policy.ErrNoPendingApproval) {
				t.Fatalf("an answer after the expiry: %v, want ErrNoPendingApproval", err)
			}
		})
	}
}

// TestOutOfBandSharedCallEnds: a call whose request ends stops waiting,
// leaves the list, and an answer that comes afterwards is refused.
func TestOutOfBandSharedCallEnds(t *testing.T) {
	a, b := twoReplicas(state.NewMemory(), time.Minute)
	ctx, cancel := context.WithCancel(context.Background())
	got, errc := ask(ctx, a)
	p := waitPending(t, b)
	cancel()
	if ans := <-got; ans.Outcome != policy.ApprovalFailed {
		t.Fatalf("a call whose request ended: %+v, want failed", ans)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("its error: %v, want context.Canceled", err)
	}
	if err := b.Answer(context.Background(), p.ID, true, policy.ChannelConsole, "late"); !errors.Is(err, policy.ErrNoPendingApproval) {
		t.Fatalf("an answer after the call ended: %v, want ErrNoPendingApproval", err)
	}
}

// TestOutOfBandSharedStoreDown: a store that cannot be reached fails
// closed everywhere: a call cannot start waiting (not approved, the cause
// said), a waiting call ends failed once the store stays down past its
// grace, and an operator is told the list and the answer failed.
func TestOutOfBandSharedStoreDown(t *testing.T) {
	ctx := context.Background()
	q := &downQueue{q: stateQueue{state.NewMemory()}}
	mk := func() *policy.OutOfBand {
		return policy.NewOutOfBand(policy.NewApprovals(time.Minute, false), policy.WithSharedQueue(q),
			policy.WithPollInterval(10*time.Millisecond), policy.WithDownGrace(200*time.Millisecond))
	}
	a, b := mk(), mk()

	q.down.Store(true)
	ans, _, err := a.Ask(ctx, oobRequest())
	if ans.Outcome != policy.ApprovalFailed || !errors.Is(err, policy.ErrQueueUnavailable) || !errors.Is(err, errRefused) {
		t.Fatalf("Ask with the store down: %+v, %v; want failed, ErrQueueUnavailable wrapping the cause", ans, err)
	}
	if _, err := b.Pending(ctx); !errors.Is(err, policy.ErrQueueUnavailable) {
		t.Fatalf("Pending with the store down: %v", err)
	}

	q.down.Store(false)
	got, errc := ask(ctx, a)
	p := waitPending(t, b)
	q.down.Store(true)
	if err := b.Answer(ctx, p.ID, true, policy.ChannelConsole, "olga"); !errors.Is(err, policy.ErrQueueUnavailable) {
		t.Fatalf("Answer with the store down: %v, want ErrQueueUnavailable", err)
	}
	select {
	case ans := <-got:
		if ans.Outcome != policy.ApprovalFailed {
			t.Fatalf("a call whose store went down: %+v, want failed", ans)
		}
		if err := <-errc; !errors.Is(err, policy.ErrQueueUnavailable) {
			t.Fatalf("its error: %v, want ErrQueueUnavailable", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("a call whose store is down still waits 20 s later (grace 200 ms)")
	}
}

// TestOutOfBandSharedLease: a replica that can no longer reach the store
// (as one that died) stops renewing its calls' entries, so they leave
// every other replica's list within the lease, long before their
// deadline; the call itself ends failed, not approved.
func TestOutOfBandSharedLease(t *testing.T) {
	ctx := context.Background()
	store := state.NewMemory()
	lost := &downQueue{q: stateQueue{store}}
	a := policy.NewOutOfBand(policy.NewApprovals(time.Minute, false), policy.WithSharedQueue(lost),
		policy.WithPollInterval(10*time.Millisecond), policy.WithLease(300*time.Millisecond), policy.WithDownGrace(2*time.Second))
	_, b := twoReplicas(store, time.Minute)
	got, _ := ask(ctx, a)
	waitPending(t, b)
	// Renewed past its first lease while A reaches the store.
	time.Sleep(600 * time.Millisecond)
	if p, err := b.Pending(ctx); err != nil || len(p) != 1 {
		t.Fatalf("B lists %+v, %v while A renews the lease; want the call", p, err)
	}
	lost.down.Store(true)
	start := time.Now()
	for {
		p, err := b.Pending(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(p) == 0 {
			break
		}
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the call of a replica cut from the store is still listed 10 s later (lease 300 ms, deadline 1 min)")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if ans := <-got; ans.Outcome != policy.ApprovalFailed {
		t.Fatalf("the call cut from the store: %+v, want failed", ans)
	}
}

// TestOutOfBandSharedWatch: a console on replica B hears of a call that
// starts waiting on A.
func TestOutOfBandSharedWatch(t *testing.T) {
	store := state.NewMemory()
	changed := make(chan struct{}, 16)
	a, _ := twoReplicas(store, time.Minute)
	_, b := twoReplicas(store, time.Minute, policy.WithOnChange(func() {
		select {
		case changed <- struct{}{}:
		default:
		}
	}))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go b.Watch(ctx, 10*time.Millisecond)
	got, _ := ask(ctx, a)
	p := waitPending(t, b)
	select {
	case <-changed:
	case <-time.After(10 * time.Second):
		t.Fatal("B's watch did not report the call waiting on A")
	}
	_ = a.Answer(ctx, p.ID, false, policy.ChannelCLI, "x")
	<-got
}

// TestOutOfBandSharedRoundTrips pins the cost of a waiting call: one
// round trip per poll interval, plus a few to start, end and answer.
func TestOutOfBandSharedRoundTrips(t *testing.T) {
	q := &downQueue{q: stateQueue{state.NewMemory()}}
	o := policy.NewOutOfBand(policy.NewApprovals(time.Second, false), policy.WithSharedQueue(q), policy.WithPollInterval(100*time.Millisecond))
	start := time.Now()
	ans, _, _ := o.Ask(context.Background(), oobRequest())
	waited := time.Since(start)
	if ans.Outcome != policy.ApprovalExpired {
		t.Fatalf("%+v, want expired", ans)
	}
	// Add the wait; a Get per tick, and a Put renewing the lease every 5
	// s (none in 1 s); at the end Add the expiry and Delete the wait.
	// Ticks are at most waited/interval (a loaded machine gives fewer,
	// never more).
	maxOps := int64(waited/(100*time.Millisecond)) + 3
	if n := q.ops.Load(); n > maxOps || n < 3 {
		t.Fatalf("%d round trips for a call that waited %v at 100 ms polls; want 3 to %d", n, waited, maxOps)
	}
	t.Logf("%d store round trips for one call waiting %v (poll 100 ms)", q.ops.Load(), waited.Round(time.Millisecond))
}

// Two replicas share one store: a call waiting on a is answered by an
// operator whose request reached b.
func ExampleWithSharedQueue() {
	store := stateQueue{state.NewMemory()} // a state.Store, as middleware adapts it
	replica := func() *policy.OutOfBand {
		return policy.NewOutOfBand(policy.NewApprovals(time.Minute, false),
			policy.WithSharedQueue(store), policy.WithPollInterval(10*time.Millisecond))
	}
	a, b := replica(), replica()
	go func() {
		ctx := context.Background()
		for {
			if p, _ := b.Pending(ctx); len(p) > 0 {
				_ = b.Answer(ctx, p[0].ID, true, policy.ChannelConsole, "alice")
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	answer, _, _ := a.Ask(context.Background(), policy.ApprovalRequest{Tool: &catalog.Tool{Name: "billing.refund"}, Via: policy.ViaInvoke})
	fmt.Println(answer.Outcome, answer.Channel, answer.By)
	// Output: approved console alice
}
