package sandbox

import (
	"errors"
	"maps"
	"slices"
	"strings"
	"testing"
)

// supply hands out n numbered workers, one per take, for a fairQueue test.
type supply struct{ next, left int }

func (s *supply) take() (int, bool) {
	if s.left == 0 {
		return 0, false
	}
	s.left--
	s.next++
	return s.next, true
}

// granted returns the runs of tickets that hold a worker, in the order
// they got one (workers are numbered in the order they were handed out).
func granted(t *testing.T, names []string, tickets []*ticket[int]) string {
	t.Helper()
	order := map[int]string{}
	for i, tk := range tickets {
		select {
		case w := <-tk.granted:
			order[w] = names[i]
			tk.granted <- w // leave it for later checks
		default:
		}
	}
	var out []string
	for _, w := range slices.Sorted(maps.Keys(order)) {
		out = append(out, order[w])
	}
	return strings.Join(out, " ")
}

// TestFairQueueOrder holds the queue's discipline: a session with fewer
// runs running goes first, sessions with as many take turns, and a session
// keeps its own runs in order. A queue over all runs in arrival order
// would serve a1 a2 a3 b1 c1.
func TestFairQueueOrder(t *testing.T) {
	q := newFairQueue[int](10, 10)
	var names []string
	var tickets []*ticket[int]
	for _, r := range []struct{ session, name string }{{"a", "a1"}, {"a", "a2"}, {"a", "a3"}, {"b", "b1"}, {"c", "c1"}} {
		tk, err := q.join(r.session)
		if err != nil {
			t.Fatal(err)
		}
		names, tickets = append(names, r.name), append(tickets, tk)
	}
	s := &supply{}
	for range 5 {
		s.left++
		q.dispatch(nil, s.take)
	}
	if got, want := granted(t, names, tickets), "a1 b1 c1 a2 a3"; got != want {
		t.Errorf("served %q, want %q", got, want)
	}

	// With as many running each, sessions take turns, the one served
	// least recently first.
	q = newFairQueue[int](10, 10)
	names, tickets = nil, nil
	for _, r := range []struct{ session, name string }{{"a", "a1"}, {"a", "a2"}, {"a", "a3"}, {"b", "b1"}, {"b", "b2"}} {
		tk, _ := q.join(r.session)
		names, tickets = append(names, r.name), append(tickets, tk)
	}
	s = &supply{left: 5}
	q.dispatch(nil, s.take)
	if got, want := granted(t, names, tickets), "a1 b1 a2 b2 a3"; got != want {
		t.Errorf("served %q, want %q", got, want)
	}
	if st := q.stats(); st.running != 5 || st.waiting != 0 || st.sessions != 2 || st.waitingSessions != 0 {
		t.Errorf("stats %+v", st)
	}
}

// TestFairQueueLimits holds the per-session limits: a session at its
// running limit waits while another is served, a run past the queue limit
// is refused, and a run that leaves says whether its session was at its
// running limit.
func TestFairQueueLimits(t *testing.T) {
	q := newFairQueue[int](1, 2)
	s := &supply{left: 10}
	a1, _ := q.join("a")
	q.dispatch(nil, s.take)
	a2, _ := q.join("a")
	a3, _ := q.join("a")
	q.dispatch(nil, s.take)
	if len(a2.granted) != 0 || len(a3.granted) != 0 {
		t.Fatal("a session past its running limit was given a worker")
	}
	_, err := q.join("a")
	var full queueFull
	if !errors.As(err, &full) || full.running != 1 || full.waiting != 2 {
		t.Fatalf("a run past the queue limit: %v %+v", err, full)
	}
	if st := q.stats(); st.running != 1 || st.waiting != 2 || st.longest != 2 || st.waitingSessions != 1 || st.sessions != 1 {
		t.Errorf("stats %+v", st)
	}
	// Another session is served at once, workers permitting.
	b1, _ := q.join("")
	q.dispatch(nil, s.take)
	if len(b1.granted) != 1 {
		t.Fatal("the other session waited behind a session at its limit")
	}
	if _, granted, atLimit := q.leave(a3); granted || !atLimit {
		t.Errorf("leave: granted %v, atLimit %v", granted, atLimit)
	}
	// a1 ends: a2 goes.
	<-a1.granted
	q.done(a1)
	q.dispatch(nil, s.take)
	if len(a2.granted) != 1 {
		t.Fatal("a2 was not served when a1 ended")
	}
	// A worker granted as its run gives up is the run's.
	q.done(a2)
	a4, _ := q.join("a")
	q.dispatch(nil, s.take)
	if w, granted, _ := q.leave(a4); !granted || w == 0 {
		t.Errorf("leave after the grant: %d %v", w, granted)
	}
	q.done(a4)
	q.done(b1)
	if st := q.stats(); st != (queueStats{}) {
		t.Errorf("stats after every run ended: %+v", st)
	}
	if len(q.sessions) != 0 {
		t.Errorf("sessions kept: %v", q.sessions)
	}
}

// TestFairQueueOwnWorkers holds what a session's own worker (a parked one)
// may do: serve that session when its turn comes, never let it jump the
// order, never serve another session.
func TestFairQueueOwnWorkers(t *testing.T) {
	q := newFairQueue[int](10, 10)
	mine := map[string][]int{"a": {100}}
	own := func(key string) (int, bool) {
		ws := mine[key]
		if len(ws) == 0 {
			return 0, false
		}
		mine[key] = ws[1:]
		return ws[0], true
	}
	a0, _ := q.join("a")
	q.dispatch(own, (&supply{left: 1}).take)
	if w := <-a0.granted; w != 100 {
		t.Fatalf("a's run got worker %d, want its own, 100", w)
	}
	// a has one running, b none: b goes first, and a's own worker (101)
	// waits for a's turn rather than jump b.
	mine["a"] = []int{101}
	a1, _ := q.join("a")
	b1, _ := q.join("b")
	q.dispatch(own, (&supply{}).take)
	if len(a1.granted) != 0 || len(b1.granted) != 0 {
		t.Fatal("a run was served out of turn, or from another session's own worker")
	}
	q.dispatch(own, (&supply{left: 1}).take)
	if w := <-b1.granted; w != 1 {
		t.Fatalf("b's run got worker %d, want 1 from the shared supply", w)
	}
	if w := <-a1.granted; w != 101 {
		t.Fatalf("a's run got worker %d, want its own, 101", w)
	}
}
