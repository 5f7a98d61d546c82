package sandbox

import (
	"slices"
	"sync"
)

// fairQueue decides which waiting run gets the next free worker. Runs
// belong to sessions, each named by a key (vm.Options.Session: the MCP
// session; "" is one bucket shared by every run without a session).
// A session may have at most maxRunning runs holding a worker, and at most
// maxRunning + maxQueued runs in the queue at once, running or waiting; a
// run past that is refused when it arrives. (Runs the session may run but
// that wait for a worker to be started count as waiting: the bound on the
// runs in the queue does not depend on how many workers were warm.)
//
// When a worker is free it goes, among the sessions with runs waiting and
// under their running limit, to the one with the fewest runs running; among
// those, to the one served least recently (sessions take turns: one that is
// served goes to the back); within a session, to its oldest run. So a burst
// from one session never puts another's first run behind all of its own: a
// session with nothing running is served before any session that has runs
// running, and one run later at the latest when all have some.
//
// The queue holds no workers. dispatch asks take for one only when it has
// a run to give it to, so every event that can let a waiting run go (a run
// joins, a worker becomes free, a run ends) must be followed by a
// dispatch. Methods are safe for concurrent use.
type fairQueue[T any] struct {
	maxRunning, maxQueued int

	mu       sync.Mutex
	sessions map[string]*queueSession[T] // sessions with runs running or waiting
	turns    []*queueSession[T]          // sessions with runs waiting, least recently served first
	running  int
	waiting  int
}

type queueSession[T any] struct {
	key     string
	running int
	waiting []*ticket[T] // oldest first
}

// ticket is one run's place in the queue, from join until done.
type ticket[T any] struct {
	c       *queueSession[T]
	granted chan T // receives the run's worker, once
	settled bool   // granted or withdrawn; guarded by the queue's mu
}

// queueFull is the refusal of a run whose session already has as many
// runs in the queue as it may, with the session's counts when it arrived.
type queueFull struct{ running, waiting int }

func (queueFull) Error() string { return "queue full" }

func newFairQueue[T any](maxRunning, maxQueued int) *fairQueue[T] {
	return &fairQueue[T]{maxRunning: maxRunning, maxQueued: maxQueued, sessions: map[string]*queueSession[T]{}}
}

// join puts a run of session key at the back of its session's queue, or
// refuses it with a queueFull when the session has as many runs in the
// queue as it may.
func (q *fairQueue[T]) join(key string) (*ticket[T], error) {
	q.mu.Lock()
	defer q.mu.Unlock()
	c := q.sessions[key]
	if c == nil {
		c = &queueSession[T]{key: key}
		q.sessions[key] = c
	}
	if c.running+len(c.waiting) >= q.maxRunning+q.maxQueued {
		return nil, queueFull{running: c.running, waiting: len(c.waiting)}
	}
	t := &ticket[T]{c: c, granted: make(chan T, 1)}
	if len(c.waiting) == 0 {
		q.turns = append(q.turns, c)
	}
	c.waiting = append(c.waiting, t)
	q.waiting++
	return t, nil
}

// dispatch gives workers to waiting runs, in the queue's order, for as
// long as there is a run that may have one and a worker for it. The
// session whose turn it is takes a worker of its own if own (by session
// key; own may be nil) has one, else one from take. A worker of its own
// never lets a session jump the order: it only spares the session a
// worker from take when its turn comes.
func (q *fairQueue[T]) dispatch(own func(key string) (T, bool), take func() (T, bool)) {
	q.mu.Lock()
	defer q.mu.Unlock()
	for {
		i := q.next()
		if i < 0 {
			return
		}
		if own != nil {
			if v, ok := own(q.turns[i].key); ok {
				q.grant(i, v)
				continue
			}
		}
		v, ok := take()
		if !ok {
			return
		}
		q.grant(i, v)
	}
}

// grant gives v to the oldest waiting run of the session at turns[i],
// which goes to the back of the turns if it has more runs waiting; q.mu
// is held.
func (q *fairQueue[T]) grant(i int, v T) {
	c := q.turns[i]
	t := c.waiting[0]
	c.waiting[0] = nil
	c.waiting = c.waiting[1:]
	q.waiting--
	c.running++
	q.running++
	t.settled = true
	t.granted <- v
	q.turns = slices.Delete(q.turns, i, i+1)
	if len(c.waiting) > 0 {
		q.turns = append(q.turns, c)
	}
}

// next returns the index in turns of the session to serve next, or -1.
func (q *fairQueue[T]) next() int {
	best := -1
	for i, c := range q.turns {
		if c.running < q.maxRunning && (best < 0 || c.running < q.turns[best].running) {
			best = i
		}
	}
	return best
}

// leave withdraws a run that gave up waiting. If a worker was granted to
// it meanwhile, leave returns it with granted true and the run holds its
// running place as if it had received it. atLimit says whether the run's
// session had its maximum of runs running when it left.
func (q *fairQueue[T]) leave(t *ticket[T]) (v T, granted, atLimit bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if t.settled {
		return <-t.granted, true, false
	}
	t.settled = true
	c := t.c
	atLimit = c.running >= q.maxRunning
	c.waiting = slices.DeleteFunc(c.waiting, func(o *ticket[T]) bool { return o == t })
	q.waiting--
	if len(c.waiting) == 0 {
		q.turns = slices.DeleteFunc(q.turns, func(o *queueSession[T]) bool { return o == c })
	}
	q.forget(c)
	return v, false, atLimit
}

// done gives back the running place of a run that was granted a worker.
// The caller dispatches next: the place may let a waiting run go.
func (q *fairQueue[T]) done(t *ticket[T]) {
	q.mu.Lock()
	defer q.mu.Unlock()
	t.c.running--
	q.running--
	q.forget(t.c)
}

// forget drops a session with nothing running or waiting; q.mu is held.
func (q *fairQueue[T]) forget(c *queueSession[T]) {
	if c.running == 0 && len(c.waiting) == 0 {
		delete(q.sessions, c.key)
	}
}

// othersWaiting reports whether a session other than key has runs
// waiting.
func (q *fairQueue[T]) othersWaiting(key string) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, c := range q.turns {
		if c.key != key {
			return true
		}
	}
	return false
}

// queueStats are the queue's gauges.
type queueStats struct {
	running, waiting          int // runs holding a worker, and waiting for one
	sessions, waitingSessions int // sessions with runs running or waiting, and with runs waiting
	longest                   int // the most runs one session has waiting
}

func (q *fairQueue[T]) stats() queueStats {
	q.mu.Lock()
	defer q.mu.Unlock()
	s := queueStats{running: q.running, waiting: q.waiting, sessions: len(q.sessions), waitingSessions: len(q.turns)}
	for _, c := range q.turns {
		s.longest = max(s.longest, len(c.waiting))
	}
	return s
}
