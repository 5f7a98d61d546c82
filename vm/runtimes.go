package vm

import (
	"sync"

	"github.com/codecall-go/codecall/presets"
)

// Runtimes builds hardened runtimes ahead of the runs that take them.
//
// Hardening a fresh goja runtime (its intrinsics locked, its allocating
// built-ins guarded, the bridge bound) is most of what a short plan costs:
// about three quarters of a trivial run's time in vm.Run. None of it
// depends on the plan, its host or its context, only on a few limits (the
// stack cap, Code Mode, the console), so a Runtimes builds the next
// runtimes on its own goroutine while the server waits for requests, and
// a run takes one ready-made.
//
// Every run still gets a runtime of its own that no script has touched: a
// runtime is built for exactly one run and dropped with it, never
// returned, reset or shared. Runs whose limits differ from the runtimes
// ready take none and build their own, as without a Runtimes; the next
// runtimes are then built for the new limits.
//
// A Runtimes is safe for concurrent use. Close stops its goroutine; the
// zero value is not usable, make one with NewRuntimes.
type Runtimes struct {
	size      int
	noBuilder bool

	mu      sync.Mutex
	want    hardening // what the runtimes in ready were built for
	ready   []*run
	started bool
	closed  bool
	wake    chan struct{} // a run took one, or the hardening changed
	quit    chan struct{}
	done    chan struct{}
}

// DefaultRuntimes is how many hardened runtimes a Runtimes keeps ready when
// NewRuntimes is given no positive size: enough for a client's few
// concurrent plans, little memory (a hardened runtime holds a few hundred
// KiB).
const DefaultRuntimes = 2

// RuntimesOption configures a Runtimes.
type RuntimesOption func(*Runtimes)

// WithoutBuilder has runtimes built only by Warm, never in the background:
// for a process that runs one plan (a sandbox worker), where a runtime
// built while the plan runs would never be used.
func WithoutBuilder() RuntimesOption { return func(p *Runtimes) { p.noBuilder = true } }

// NewRuntimes returns a Runtimes that keeps up to size hardened runtimes
// ready (DefaultRuntimes when size is not positive). It starts building on
// the first run that asks it for one.
func NewRuntimes(size int, opts ...RuntimesOption) *Runtimes {
	if size <= 0 {
		size = DefaultRuntimes
	}
	p := &Runtimes{size: size, wake: make(chan struct{}, 1), quit: make(chan struct{}), done: make(chan struct{})}
	for _, o := range opts {
		o(p)
	}
	return p
}

// Warm builds, on the caller's goroutine, runtimes for runs under limits
// (Code Mode runs when codeMode is set) until size are ready. A process
// that knows its next run's limits warms before it reports ready, so the
// run does not pay for the hardening.
func (p *Runtimes) Warm(limits presets.Limits, codeMode bool) {
	h := hardeningFor(limits, codeMode)
	for {
		p.mu.Lock()
		if p.closed || len(p.ready) >= p.size && h == p.want {
			p.mu.Unlock()
			return
		}
		if h != p.want {
			p.want, p.ready = h, nil
		}
		p.mu.Unlock()
		r := prepare(h)
		if r == nil {
			return
		}
		p.mu.Lock()
		if h == p.want && len(p.ready) < p.size {
			p.ready = append(p.ready, r)
		}
		p.mu.Unlock()
	}
}

// take returns a runtime hardened for h, or nil when none is ready; in
// both cases it has the builder make up the difference.
func (p *Runtimes) take(h hardening) *run {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	if !p.started && !p.noBuilder {
		p.started = true
		go p.build()
	}
	var r *run
	if h != p.want {
		// Other limits than the ready runtimes': drop those, prepare for
		// these. A server whose runs alternate between presets builds for
		// the last one asked.
		p.want, p.ready = h, nil
	} else if n := len(p.ready); n > 0 {
		r = p.ready[n-1]
		p.ready[n-1] = nil
		p.ready = p.ready[:n-1]
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return r
}

// build is the builder's goroutine: it keeps size runtimes ready for the
// hardening last asked for, one at a time, until Close.
func (p *Runtimes) build() {
	defer close(p.done)
	for {
		p.mu.Lock()
		full := len(p.ready) >= p.size
		h := p.want
		p.mu.Unlock()
		if full {
			select {
			case <-p.wake:
				continue
			case <-p.quit:
				return
			}
		}
		r := prepare(h)
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			return
		}
		if r != nil && h == p.want && len(p.ready) < p.size {
			p.ready = append(p.ready, r)
		}
		p.mu.Unlock()
		if r == nil {
			// Hardening failed, which a run building its own runtime
			// reports as an internal error; do not spin on it.
			select {
			case <-p.wake:
			case <-p.quit:
				return
			}
		}
	}
}

// prepare builds a run hardened for h, or nil if hardening panicked.
func prepare(h hardening) (r *run) {
	defer func() {
		if recover() != nil {
			r = nil
		}
	}()
	r = &run{}
	r.caps.stackDepth = h.stackDepth
	r.harden(h)
	return r
}

// Close stops building and drops the runtimes ready. Runs already holding
// one are not affected; later runs build their own. Close always returns
// nil.
func (p *Runtimes) Close() error {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil
	}
	p.closed = true
	p.ready = nil
	started := p.started
	p.mu.Unlock()
	close(p.quit)
	if started {
		<-p.done
	}
	return nil
}
