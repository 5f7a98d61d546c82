package sandbox

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// Defaults of a Pool.
const (
	DefaultPoolSize     = 2
	DefaultQueueTimeout = 5 * time.Second
	// DefaultReadyTimeout bounds a worker's start-up, from spawn to ready.
	DefaultReadyTimeout = 10 * time.Second
	// killGrace is how long past its timeout a run may go before its worker
	// is killed: the runtime in the worker stops the plan at the deadline
	// by itself, and the kill is for a plan stuck where it cannot.
	killGrace = time.Second
	// exitGrace is how long a worker may take to exit after its result.
	exitGrace = 2 * time.Second
	// DefaultReuseRuns is how many successive runs of one session a worker
	// serves at most (WithReuse).
	DefaultReuseRuns = 100
	// DefaultReuseIdle is how long a worker that served a run of a session
	// waits for that session's next run before it is stopped.
	DefaultReuseIdle = 30 * time.Second
	// defaultRefillDelay is how long a run that took a worker while others
	// were warm holds back the spawn of its replacement, unless it ends
	// sooner (takeWarm).
	defaultRefillDelay = 20 * time.Millisecond
)

// Pool runs plans in sandboxed worker processes. It
// keeps a few workers started and confined ahead of time (warm), refills
// in the background, bounds how many processes live at once, and queues
// runs beyond that for at most a queue timeout. Runs are queued per session
// (vm.Options.Session), each session within its own limits on runs running
// and waiting, and a free worker goes to the sessions in turn (fairQueue),
// so that one session's burst cannot hold up another's runs.
//
// A worker serves runs of one session only. When a run of a session ends
// cleanly, its worker may wait (parked) for that session's next run, which
// it then runs in a runtime built fresh after the first ended, without a
// process start (WithReuse); a worker never serves two sessions, runs
// without a session, or a run after one that ended any other way. Its Run
// has the signature of meta.Runner. A Pool is safe for concurrent use;
// Close stops it.
type Pool struct {
	cfg   poolConfig
	log   *slog.Logger
	queue *fairQueue[*worker]

	warm  chan *worker
	slots chan struct{} // one token per live worker process
	ctx   context.Context
	stop  context.CancelFunc
	wg    sync.WaitGroup

	need     chan struct{} // wakes the spawners
	mu       sync.Mutex
	starting int // workers being spawned for the warm channel

	// parked are the workers waiting for their session's next run, by
	// session, oldest first. Each holds its slot. parkMu is taken inside
	// the fair queue's lock (dispatch), never the other way round.
	parkMu sync.Mutex
	parked map[string][]*worker

	conf      Confinement
	cgroups   *cgroupParent // where each worker gets a cgroup; nil: none
	st        stats
	closeOnce sync.Once
}

type poolConfig struct {
	size         int
	maxWorkers   int
	maxRunning   int // runs of one session holding a worker at once
	maxQueued    int // runs of one session waiting at once beyond the maxRunning it may run
	queueTimeout time.Duration
	readyTimeout time.Duration
	command      string
	limits       presets.Limits
	logger       *slog.Logger
	marker       string        // argv[1] of a worker; tests start misbehaving workers with their own
	frameRate    float64       // frames a second a worker may send (frameRate; tests lower it)
	refillDelay  time.Duration // defaultRefillDelay; tests change it
	cgroup       CgroupMode
	cgroupParent *cgroupParent // tests give the workers' cgroups a parent of their own
	python       *Python       // workers run this interpreter (WithPython); nil: JavaScript
	reuseRuns    int           // runs of one session a worker may serve; 1: one run per worker
	reuseIdle    time.Duration // how long a parked worker waits for its session's next run
}

// Option configures New.
type Option func(*poolConfig)

// WithSize sets how many workers are kept warm (default DefaultPoolSize).
func WithSize(n int) Option { return func(c *poolConfig) { c.size = n } }

// WithMaxWorkers bounds the worker processes alive at once, warm and
// running (default twice the pool size). Runs beyond it wait in a queue.
func WithMaxWorkers(n int) Option { return func(c *poolConfig) { c.maxWorkers = n } }

// WithQueueTimeout bounds how long a run waits for a worker before it is
// refused (default DefaultQueueTimeout).
func WithQueueTimeout(d time.Duration) Option { return func(c *poolConfig) { c.queueTimeout = d } }

// WithMaxRunningPerSession bounds the runs of one session
// (vm.Options.Session; the runs without one count as one session) that
// hold a worker at once (default half of maxWorkers, at least 1); its
// further runs wait, while other sessions' runs may take free workers.
func WithMaxRunningPerSession(n int) Option { return func(c *poolConfig) { c.maxRunning = n } }

// WithMaxQueuedPerSession bounds the runs of one session that wait for a
// worker beyond those it may run (default twice maxWorkers): a session may
// have at most maxRunning + maxQueued runs in the pool, running or
// waiting, and a run past that is refused at once, with limit_exceeded.
func WithMaxQueuedPerSession(n int) Option { return func(c *poolConfig) { c.maxQueued = n } }

// WithLimits sets the limits the workers' kernel caps derive from: the
// address space is memoryBytes plus what the Go runtime reserves; the CPU
// time, over all of a worker's threads, is the timeout plus its kill grace
// (one second), rounded down to whole seconds, plus one second (the soft
// RLIMIT_CPU; the hard one is a second later). Runs under larger limits
// still run, capped by these. The default is the secure preset's.
func WithLimits(l presets.Limits) Option { return func(c *poolConfig) { c.limits = l } }

// WithCommand sets the executable started as a worker (default the running
// binary, /proc/self/exe). It must call Main before anything else, which
// every binary importing this package does.
func WithCommand(path string) Option { return func(c *poolConfig) { c.command = path } }

// WithReuse bounds how a worker serves successive runs of one MCP session
// (vm.Options.Session): at most runs of them (default DefaultReuseRuns;
// 1 starts a worker for every run), waiting at most idle between two
// (default DefaultReuseIdle). Each run gets a runtime built after the
// previous run ended, so nothing a plan leaves in its runtime reaches the
// next; what the two share is the process, which a plan cannot reach
// unless it breaks out of the runtime, and then only within its own
// session. A worker is not reused after a run that ended other than with
// ok, runtime_error or tool_error, that was stopped or cancelled, or that
// left the worker with less than a run's CPU time under its cap or with
// much more memory than it started with; nor for runs without a session,
// nor for Python plans (an interpreter keeps what a plan imports or
// changes). A parked worker holds its place among maxWorkers until its
// session's next run, the idle time, or a spawn that needs its place.
func WithReuse(runs int, idle time.Duration) Option {
	return func(c *poolConfig) { c.reuseRuns, c.reuseIdle = runs, idle }
}

// WithLogger sets the logger for spawns, kills and refusals (default
// slog.Default()).
func WithLogger(l *slog.Logger) Option { return func(c *poolConfig) { c.logger = l } }

// New starts a pool. It starts one worker before it returns, so an error
// says the platform cannot run sandboxed workers, and why.
func New(ctx context.Context, opts ...Option) (*Pool, error) {
	limits, _ := presets.LimitsFor(presets.Secure)
	cfg := poolConfig{size: DefaultPoolSize, queueTimeout: DefaultQueueTimeout, readyTimeout: DefaultReadyTimeout,
		command: "/proc/self/exe", limits: limits, marker: workerArg, frameRate: frameRate, refillDelay: defaultRefillDelay,
		reuseRuns: DefaultReuseRuns, reuseIdle: DefaultReuseIdle}
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.size < 1 {
		return nil, fmt.Errorf("sandbox: pool size must be at least 1, got %d", cfg.size)
	}
	if cfg.maxWorkers == 0 {
		cfg.maxWorkers = 2 * cfg.size
	}
	if cfg.maxWorkers < cfg.size {
		return nil, fmt.Errorf("sandbox: maxWorkers (%d) must be at least the pool size (%d)", cfg.maxWorkers, cfg.size)
	}
	if cfg.maxRunning == 0 {
		cfg.maxRunning = max(1, cfg.maxWorkers/2)
	}
	if cfg.maxQueued == 0 {
		cfg.maxQueued = 2 * cfg.maxWorkers
	}
	if cfg.maxRunning < 0 || cfg.maxRunning > cfg.maxWorkers {
		return nil, fmt.Errorf("sandbox: the runs one session may run at once must be between 1 and maxWorkers (%d), got %d", cfg.maxWorkers, cfg.maxRunning)
	}
	if cfg.maxQueued < 0 {
		return nil, fmt.Errorf("sandbox: the runs one session may queue must be at least 1, got %d", cfg.maxQueued)
	}
	if cfg.queueTimeout <= 0 {
		return nil, fmt.Errorf("sandbox: queue timeout must be positive, got %v", cfg.queueTimeout)
	}
	if cfg.reuseRuns < 0 {
		return nil, fmt.Errorf("sandbox: the runs a worker may serve must not be negative, got %d", cfg.reuseRuns)
	}
	if cfg.reuseIdle < 0 {
		return nil, fmt.Errorf("sandbox: the idle time of a reused worker must not be negative, got %v", cfg.reuseIdle)
	}
	if cfg.reuseRuns == 0 {
		cfg.reuseRuns = DefaultReuseRuns
	}
	if cfg.reuseIdle == 0 {
		cfg.reuseIdle = DefaultReuseIdle
	}
	if cfg.python != nil {
		cfg.reuseRuns = 1
	}
	if cfg.logger == nil {
		cfg.logger = slog.Default()
	}
	cgroups, noCgroup, err := cfg.cgroups()
	if err != nil {
		return nil, err
	}
	p := &Pool{cfg: cfg, log: cfg.logger, queue: newFairQueue[*worker](cfg.maxRunning, cfg.maxQueued),
		warm: make(chan *worker, cfg.size), slots: make(chan struct{}, cfg.maxWorkers), need: make(chan struct{}, 2), cgroups: cgroups,
		parked: map[string][]*worker{}}
	p.ctx, p.stop = context.WithCancel(context.Background())

	p.slots <- struct{}{}
	w, err := p.spawn(ctx)
	if err != nil {
		<-p.slots
		p.stop()
		return nil, err
	}
	p.conf = checkConfinement(w)
	p.conf.NoCgroup = noCgroup
	p.warm <- w
	spawners := min(cfg.size, 2)
	for range spawners {
		p.wg.Add(1)
		go p.refill()
	}
	// Debug: these are the sandbox's internals; an operator reads the
	// confinement from `codecall check --config FILE` (isolation line).
	p.log.Debug("codecall: sandbox pool started", "size", cfg.size, "maxWorkers", cfg.maxWorkers,
		"maxRunningPerSession", cfg.maxRunning, "maxQueuedPerSession", cfg.maxQueued,
		"spawnMs", ms(w.ready), "namespaces", p.conf.Namespaces, "seccomp", p.conf.Seccomp, "landlock", p.conf.Landlock,
		"capabilitiesDropped", p.conf.CapabilitiesDropped, "checkedThreads", p.conf.CheckedThreads,
		"addressSpaceBytes", p.conf.AddressSpaceBytes, "kernelCaps", p.conf.KernelCaps())
	return p, nil
}

// Confinement returns what the pool's first worker reported applying.
func (p *Pool) Confinement() Confinement { return p.conf }

// Close stops refilling, kills the warm workers and waits for the running
// ones to end (each ends by its own deadline at the latest).
func (p *Pool) Close() error {
	p.closeOnce.Do(func() {
		p.stop()
		p.wg.Wait()
		p.unparkAll()
	drain:
		for {
			select {
			case w := <-p.warm:
				w.kill("pool closed")
				p.retire(w)
			default:
				break drain
			}
		}
		// Every slot comes back when the last worker has been reaped.
		for range cap(p.slots) {
			p.slots <- struct{}{}
		}
	})
	return nil
}

// workerLimits are the kernel limits of the pool's workers.
func (p *Pool) workerLimits() workerLimits {
	// The runtime's soft limit sits well above the budget: the run's own
	// heap watchdog enforces the budget, and a soft limit at the budget
	// would have the collector spin instead of letting the watchdog see
	// the overrun.
	l := workerLimits{serverNS: serverNamespaces(), stackDepth: int64(p.cfg.limits.MaxStackDepth), console: p.cfg.limits.AllowConsole}
	if p.cfg.limits.MemoryBytes > 0 {
		l.memoryBytes = 2*p.cfg.limits.MemoryBytes + 64<<20
	}
	if p.cfg.limits.MemoryBytes > 0 && !raceEnabled {
		l.addressSpace = p.cfg.limits.MemoryBytes + addressReserve
	}
	if p.cfg.python != nil && p.cfg.limits.MemoryBytes > 0 {
		l.addressSpace = p.cfg.limits.MemoryBytes + pythonAddressReserve
	}
	if p.cfg.limits.Timeout > 0 {
		l.cpuSeconds = int64((p.cfg.limits.Timeout+killGrace)/time.Second) + 1
	}
	return l
}

// env is the worker's whole environment: the time zone, which is no
// secret and keeps Date's local time the same as in process, and a cap on
// the C library's malloc arenas (cgo binaries), each of which reserves
// 64 MiB of the worker's address space.
func env() []string {
	e := []string{"MALLOC_ARENA_MAX=1"}
	if tz, ok := os.LookupEnv("TZ"); ok {
		e = append(e, "TZ="+tz)
	}
	return e
}

// spawn starts one worker; the caller holds a slot for it.
func (p *Pool) spawn(ctx context.Context) (*worker, error) {
	l := p.workerLimits()
	w, err := p.start(ctx, l)
	if err != nil {
		p.st.spawnFailures.Add(1)
		return nil, err
	}
	w.cpuLimit = time.Duration(l.cpuSeconds) * time.Second
	if p.cfg.reuseRuns > 1 {
		if u, err := readUsage(w.pid); err == nil {
			w.startUsage = u
		}
	}
	p.st.spawned.Add(1)
	p.st.spawnNanos.Add(int64(w.ready))
	p.log.Debug("codecall: sandbox worker ready", "pid", w.pid, "spawnMs", ms(w.ready))
	return w, nil
}

// refill keeps the pool at its size: it spawns while the warm workers and
// those starting are fewer than the size, within the bound on live
// processes, and otherwise waits to be told a worker was taken.
func (p *Pool) refill() {
	defer p.wg.Done()
	backoff := 10 * time.Millisecond
	for {
		if !p.reserve() {
			select {
			case <-p.need:
				continue
			case <-p.ctx.Done():
				return
			}
		}
		if !p.takeSlot() {
			p.unreserve()
			return
		}
		w, err := p.spawn(p.ctx)
		if err != nil {
			<-p.slots
			p.unreserve()
			if p.ctx.Err() != nil {
				return
			}
			p.log.Warn("codecall: sandbox worker failed to start; retrying", "error", err, "retryIn", backoff)
			select {
			case <-time.After(backoff):
			case <-p.ctx.Done():
				return
			}
			backoff = min(2*backoff, 2*time.Second)
			continue
		}
		backoff = 10 * time.Millisecond
		p.warm <- w // room was reserved
		p.unreserve()
		p.dispatch()
	}
}

// takeSlot waits for a place for one more process among maxWorkers; when
// every place is held, a parked worker gives its place up, since a warm
// worker serves any session and a parked one only its own. It returns
// false when the pool is closed.
func (p *Pool) takeSlot() bool {
	select {
	case p.slots <- struct{}{}:
		return true
	default:
	}
	p.evictParked()
	select {
	case p.slots <- struct{}{}:
		return true
	case <-p.ctx.Done():
		return false
	}
}

// reserve claims a place for one more warm worker, if the pool is short.
func (p *Pool) reserve() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if len(p.warm)+p.starting >= p.cfg.size {
		return false
	}
	p.starting++
	return true
}

func (p *Pool) unreserve() {
	p.mu.Lock()
	p.starting--
	p.mu.Unlock()
}

// wake tells the spawners the pool may be short.
func (p *Pool) wake() {
	for range cap(p.need) {
		select {
		case p.need <- struct{}{}:
		default:
		}
	}
}

// retire reaps a worker in the background and gives its slot back.
// Closing its input first tells a worker between runs to exit (one that
// is not is killed, or exits when its run ends).
func (p *Pool) retire(w *worker) {
	_ = w.stdin.Close()
	go func() {
		w.reap(exitGrace)
		<-p.slots
	}()
}

// acquire waits for a warm worker, in the fair queue, at most the queue
// timeout. The run holds a running place of its session from then until
// release.
func (p *Pool) acquire(ctx context.Context, session string) (*worker, *ticket[*worker], time.Duration, error) {
	start := time.Now()
	t, err := p.queue.join(session)
	if err != nil {
		return nil, nil, 0, err
	}
	p.dispatch()
	timer := time.NewTimer(p.cfg.queueTimeout)
	defer timer.Stop()
	var w *worker
	select {
	case w = <-t.granted:
	case <-timer.C:
		got, granted, atLimit := p.queue.leave(t)
		if !granted {
			return nil, nil, time.Since(start), queueTimeout{sessionLimit: atLimit}
		}
		w = got // it came as the time ran out
	case <-ctx.Done():
		p.abandon(t)
		return nil, nil, time.Since(start), ctx.Err()
	case <-p.ctx.Done():
		p.abandon(t)
		return nil, nil, time.Since(start), errClosed
	}
	wait := time.Since(start)
	p.st.queueNanos.Add(int64(wait))
	p.st.acquired.Add(1)
	return w, t, wait, nil
}

// takeWarm takes a live warm worker, if one is ready; dead ones are
// reaped on the way. The fair queue calls it under its lock: it never
// blocks.
func (p *Pool) takeWarm() (*worker, bool) {
	for {
		select {
		case w := <-p.warm:
			if !w.alive() {
				p.st.kills(causeDiedWarm)
				p.retire(w)
				p.wake()
				continue
			}
			if len(p.warm) == 0 {
				// The pool is empty: the next run would wait for the
				// replacement, which starts now.
				p.wake()
			}
			// Otherwise the replacement starts when this run ends, or
			// the refill delay after it began (run): a spawn (clone into new
			// namespaces, exec, the worker's start) takes a core for
			// milliseconds, which on a small machine the run would wait
			// for, while the next run finds another warm worker.
			return w, true
		default:
			return nil, false
		}
	}
}

// dispatch gives the parked workers to their sessions' waiting runs, and
// the warm workers to the waiting runs in the fair queue's order.
func (p *Pool) dispatch() { p.queue.dispatch(p.unpark, p.takeWarm) }

// release gives back the running place of a run that had a worker, and
// starts the replacement of the worker it took (takeWarm), if the pool is
// short.
func (p *Pool) release(t *ticket[*worker]) {
	p.queue.done(t)
	p.dispatch()
	p.wake()
}

// abandon withdraws a run that will not run: a worker granted to it
// meanwhile, never sent a plan, is killed rather than put back, since the
// pool may be closing.
func (p *Pool) abandon(t *ticket[*worker]) {
	if w, granted, _ := p.queue.leave(t); granted {
		w.kill("its run was withdrawn")
		p.retire(w)
		p.release(t)
	}
}

// queueTimeout is the refusal of a run that waited the queue timeout;
// sessionLimit says its session had its maximum of runs running then.
type queueTimeout struct{ sessionLimit bool }

func (queueTimeout) Error() string { return "queue timeout" }

var errClosed = errors.New("the sandbox pool is closed")

// LimitConcurrency is the limit a limit_exceeded result names when a run
// was refused a worker under load: its session had as many runs waiting as
// it may, or it waited the queue timeout for a worker. Such a result is
// retryable.
const LimitConcurrency = "concurrency"

// Reasons a run is refused a worker, the labels of Stats.Refusals.
const (
	RefusedQueueFull    = "session_queue_full"    // its session had maxRunning + maxQueued runs running or waiting
	RefusedSessionLimit = "session_running_limit" // it waited the queue timeout while its session ran maxRunning runs
	RefusedServerBusy   = "server_busy"           // it waited the queue timeout while no worker became free
)

// Run runs a plan in a worker and returns its result: a warm worker, or
// one that served the previous run of the same session (WithReuse), in a
// runtime built for this run. The worker
// validates script against rules again before it runs it (checked is the
// server's own validation, which a worker does not take on trust). Every
// callTool, getTool, mcpLog and mcpNotify of the plan is answered by host,
// in this process, within the run's budgets, which the server enforces
// itself. A worker that outlives the run's timeout or breaks the protocol
// is killed; a worker that dies is reported as timeout or limit_exceeded,
// with its cause.
//
// script must be checked.Source(): the worker locates errors in it, and Run
// maps the location of the result's error back to the script as sent with
// checked.ScriptLocation (for a TypeScript plan, script is the JavaScript
// its types were stripped to).
func (p *Pool) Run(ctx context.Context, script string, checked *ast.Checked, rules ast.Rules, host vm.Host, opts vm.Options) *vm.Result {
	res := p.run(ctx, script, rules, host, opts)
	if res != nil && res.Error != nil && res.Error.Location != nil {
		loc := checked.ScriptLocation(ast.Location(*res.Error.Location))
		res.Error.Location = &vm.Location{Line: loc.Line, Column: loc.Column}
	}
	return res
}

func (p *Pool) run(ctx context.Context, script string, rules ast.Rules, host vm.Host, opts vm.Options) *vm.Result {
	start := time.Now()
	req := &runRequest{Script: script, Rules: rules, Context: opts.Context,
		Options: runOptions{RunID: opts.RunID, Limits: opts.Limits, CodeMode: opts.CodeMode, Replay: opts.Replay}}
	for attempt := 1; ; attempt++ {
		w, t, wait, err := p.acquire(ctx, opts.Session)
		if err != nil {
			return p.refused(err, opts, start)
		}
		// A run still going after refillDelay has its replacement
		// started without waiting for its end (takeWarm).
		later := time.AfterFunc(p.cfg.refillDelay, p.wake)
		if wait > 10*time.Millisecond {
			p.log.Debug("codecall: run waited for a sandbox worker", "runId", opts.RunID, "waitMs", ms(wait))
		}
		if err := w.send(&message{T: msgRun, Run: req}); err != nil {
			// The worker died after it was checked: nothing of the plan
			// reached it, so another worker may take the run.
			p.st.kills(causeDiedWarm)
			w.kill(causeDiedWarm)
			later.Stop()
			p.retire(w)
			p.release(t)
			if attempt < 3 {
				continue
			}
			return p.refused(fmt.Errorf("sandbox workers keep dying before they take a plan: %w", err), opts, start)
		}
		if w.runs++; w.runs > 1 {
			p.st.reused.Add(1)
		}
		res, clean := p.runOn(ctx, w, req, host, start)
		later.Stop()
		if clean && p.mayReuse(w, opts, res) && p.roomToPark(opts.Session) {
			p.park(w, opts.Session)
		} else {
			p.retire(w)
		}
		p.release(t)
		return res
	}
}

// refused is the result of a run that found no worker.
func (p *Pool) refused(err error, opts vm.Options, start time.Time) *vm.Result {
	res := &vm.Result{Status: vm.StatusLimitExceeded, RunID: opts.RunID, ToolTrace: []vm.TraceEntry{},
		Metrics: vm.Metrics{DurationMs: ms(time.Since(start))}}
	who := "this session"
	if opts.Session == "" {
		who = "clients without an MCP session, which count as one session,"
	}
	var full queueFull
	var late queueTimeout
	switch {
	case errors.As(err, &full):
		p.st.refusal(RefusedQueueFull)
		p.log.Info("codecall: sandbox run refused: its session has too many runs waiting", "runId", opts.RunID,
			"running", full.running, "waiting", full.waiting, "maxQueuedPerSession", p.cfg.maxQueued)
		res.Error = &vm.ErrorInfo{Limit: LimitConcurrency, Retryable: true,
			Message: fmt.Sprintf("too many plans at once: %s had %s waiting for a sandbox worker (and %d running), "+
				"the most one session may queue; this plan was not started", who, plans(full.waiting), full.running),
			Hint: "retry once some of the plans already sent have finished; send fewer plans at once"}
	case errors.As(err, &late) && late.sessionLimit:
		p.st.queueTimeouts.Add(1)
		p.st.refusal(RefusedSessionLimit)
		p.log.Warn("codecall: sandbox run refused: its session's own runs held its workers for the queue timeout", "runId", opts.RunID,
			"queueTimeout", p.cfg.queueTimeout, "maxRunningPerSession", p.cfg.maxRunning)
		res.Error = &vm.ErrorInfo{Limit: LimitConcurrency, Retryable: true,
			Message: fmt.Sprintf("no sandbox worker within %v: %s had %s running, the most one session may run at once, "+
				"and this plan waited behind them; it was not started", p.cfg.queueTimeout, who, plans(p.cfg.maxRunning)),
			Hint: "retry once some of the plans already running have finished; send fewer plans at once"}
	case errors.As(err, &late):
		p.st.queueTimeouts.Add(1)
		p.st.refusal(RefusedServerBusy)
		p.log.Warn("codecall: sandbox run refused: no worker free within the queue timeout", "runId", opts.RunID,
			"queueTimeout", p.cfg.queueTimeout, "waiting", p.queue.stats().waiting)
		res.Error = &vm.ErrorInfo{Limit: LimitConcurrency, Retryable: true,
			Message: fmt.Sprintf("the server is busy: no sandbox worker became free within %v; this plan was not started", p.cfg.queueTimeout),
			Hint:    "retry in a few seconds"}
	case errors.Is(err, errClosed):
		res.Status = vm.StatusIllegalAccess
		res.Error = &vm.ErrorInfo{Kind: vm.KindIsolation, Message: "the server is shutting down: its sandbox workers are stopped"}
	case errors.Is(err, context.DeadlineExceeded):
		res.Status = vm.StatusTimeout
		res.Error = &vm.ErrorInfo{Message: "the request reached its deadline while it waited for a sandbox worker"}
	case errors.Is(err, context.Canceled):
		res.Status = vm.StatusCancelled
		res.Error = &vm.ErrorInfo{Message: "the request was cancelled while it waited for a sandbox worker"}
	default:
		res.Error = &vm.ErrorInfo{Limit: LimitWorker, Message: err.Error()}
	}
	return res
}

func plans(n int) string {
	if n == 1 {
		return "1 plan"
	}
	return fmt.Sprintf("%d plans", n)
}

// Stats are a pool's counters since it started.
type Stats struct {
	// Warm is the number of workers ready now.
	Warm int `json:"warm"`
	// Live is the number of worker processes alive or being reaped now.
	Live int `json:"live"`
	// Spawned counts workers that became ready; SpawnFailures those that
	// did not.
	Spawned       int64 `json:"spawned"`
	SpawnFailures int64 `json:"spawnFailures"`
	// Parked is the number of workers waiting for their session's next
	// run now; Reused counts the runs served by a worker that had served
	// an earlier run of the same session.
	Parked int   `json:"parked"`
	Reused int64 `json:"reused"`
	// MeanSpawnMs is the mean time from spawn to ready.
	MeanSpawnMs float64 `json:"meanSpawnMs"`
	// Running is the number of runs holding a worker now; Queued the
	// number waiting for one.
	Running int   `json:"running"`
	Queued  int64 `json:"queued"`
	// Sessions is the number of sessions with runs running or waiting now,
	// WaitingSessions of those with runs waiting, and LongestSessionQueue
	// the most runs one session has waiting (the runs without a session
	// count as one session).
	Sessions            int `json:"sessions"`
	WaitingSessions     int `json:"waitingSessions"`
	LongestSessionQueue int `json:"longestSessionQueue"`
	// QueueTimeouts counts runs refused after waiting the queue timeout.
	QueueTimeouts int64 `json:"queueTimeouts"`
	// Refusals counts runs refused a worker under load, by reason:
	// "session_queue_full" (its session had as many runs waiting as it
	// may), "session_running_limit" (it waited the queue timeout while its
	// session ran as many runs as it may) and "server_busy" (it waited the
	// queue timeout and no worker became free).
	Refusals map[string]int64 `json:"refusals"`
	// Acquired counts runs that got a worker; QueueWaitSeconds is the
	// time they spent waiting for it, in total.
	Acquired         int64   `json:"acquired"`
	QueueWaitSeconds float64 `json:"queueWaitSeconds"`
	// SpawnSeconds is the time from spawn to ready of every worker that
	// became ready, in total.
	SpawnSeconds float64 `json:"spawnSeconds"`
	// Kills counts workers killed or lost, by cause: "timeout" and
	// "cancelled" (the server's kills), "protocol" (a worker that broke
	// the bridge protocol), "cpu" (its CPU-time cap), "memory", "stack",
	// "killed" (a SIGKILL from outside), "crashed", and "died while warm".
	Kills map[string]int64 `json:"kills"`
}

type stats struct {
	spawned, spawnFailures, spawnNanos, queueNanos, queueTimeouts, acquired, reused atomic.Int64
	mu                                                                              sync.Mutex
	killed, refused                                                                 map[string]int64
}

func (s *stats) refusal(reason string) {
	s.mu.Lock()
	if s.refused == nil {
		s.refused = map[string]int64{}
	}
	s.refused[reason]++
	s.mu.Unlock()
}

func (s *stats) kills(cause string) {
	s.mu.Lock()
	if s.killed == nil {
		s.killed = map[string]int64{}
	}
	s.killed[cause]++
	s.mu.Unlock()
}

// Stats returns the pool's counters.
func (p *Pool) Stats() Stats {
	q := p.queue.stats()
	s := Stats{Warm: len(p.warm), Live: len(p.slots), Spawned: p.st.spawned.Load(), SpawnFailures: p.st.spawnFailures.Load(),
		Running: q.running, Queued: int64(q.waiting), Sessions: q.sessions, WaitingSessions: q.waitingSessions,
		LongestSessionQueue: q.longest, QueueTimeouts: p.st.queueTimeouts.Load(), Kills: map[string]int64{}, Refusals: map[string]int64{}}
	s.Acquired = p.st.acquired.Load()
	s.Reused = p.st.reused.Load()
	s.Parked = p.parkedCount()
	s.QueueWaitSeconds = time.Duration(p.st.queueNanos.Load()).Seconds()
	s.SpawnSeconds = time.Duration(p.st.spawnNanos.Load()).Seconds()
	if s.Spawned > 0 {
		s.MeanSpawnMs = ms(time.Duration(p.st.spawnNanos.Load() / s.Spawned))
	}
	p.st.mu.Lock()
	for k, v := range p.st.killed {
		s.Kills[k] = v
	}
	for k, v := range p.st.refused {
		s.Refusals[k] = v
	}
	p.st.mu.Unlock()
	return s
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }

// Check starts one worker, as New does, and stops it again. It reports
// what a worker applies to itself on this host, or why none can start.
func Check(ctx context.Context, opts ...Option) (Confinement, error) {
	p, err := New(ctx, append(opts, WithSize(1), WithMaxWorkers(1))...)
	if err != nil {
		return Confinement{}, err
	}
	defer p.Close()
	return p.Confinement(), nil
}

// String describes a confinement in one line.
func (c Confinement) String() string {
	var parts []string
	parts = append(parts, "namespaces "+strings.Join(c.Namespaces, ","))
	yes := func(ok bool, name string) {
		if ok {
			parts = append(parts, name)
		} else {
			parts = append(parts, "no "+name)
		}
	}
	switch {
	case c.EmptyRoot:
		parts = append(parts, "empty root")
	case c.PythonView:
		parts = append(parts, "read-only view of the interpreter and its libraries, 16 MiB scratch /tmp")
	default:
		parts = append(parts, "host file system visible")
	}
	yes(c.Seccomp, "seccomp")
	yes(c.NoNewPrivs, "no_new_privs")
	if c.Landlock {
		parts = append(parts, fmt.Sprintf("landlock (ABI %d)", c.LandlockABI))
	} else {
		parts = append(parts, "no landlock")
	}
	if c.CapabilitiesDropped {
		parts = append(parts, "no capabilities")
	} else {
		parts = append(parts, "capabilities kept")
	}
	if c.CheckedThreads > 0 {
		parts = append(parts, fmt.Sprintf("checked on %d threads in /proc", c.CheckedThreads))
	}
	parts = append(parts, "kernel caps: "+c.KernelCaps())
	return strings.Join(parts, "; ")
}
