package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"unicode/utf8"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/vm"
)

// workerArg is argv[1] of a worker process. It is an argument, not an
// environment variable: a worker's environment is empty, and CODECALL_
// variables are configuration.
const workerArg = "-codecall-sandbox-worker"

// Main turns the process into a sandbox worker when it was started as one,
// and returns at once otherwise. A worker confines itself, runs the plans
// the server sends it, one at a time and each in a fresh runtime, and
// exits when the server closes its input; Main never returns in a worker.
//
// Package sandbox calls Main from its init function, so every binary that
// imports it (directly, or through package middleware) can serve as its
// own worker: the worker path ends before main runs. Call Main yourself,
// first thing in main, only in a binary that is named as the worker
// command (WithCommand) and does not import this package's importers.
func Main() {
	if len(os.Args) < 2 || os.Args[1] != workerArg {
		return
	}
	// syscall.Exit ends the process at once: a worker has nothing to flush,
	// and in race-detector builds os.Exit would wait a second in the
	// detector's exit hook while the worker holds a slot of the pool.
	syscall.Exit(serveWorker(os.Stdin, os.Stdout))
}

func init() { Main() }

// exitCPUTime is a worker's exit status when the kernel told it its CPU
// time was spent (SIGXCPU, whose number it is on Linux). Nothing else in a
// worker exits with it; a Go runtime that dies exits with 2.
const exitCPUTime = 24

// serveWorker confines the process, reports ready, and runs plans until
// the server closes its input: one at a time, each in a runtime of its
// own built after the previous run ended (the server sends a worker
// successive runs of one session only, see Pool). It returns the exit
// code.
func serveWorker(in io.Reader, out io.Writer) int {
	wl := parseWorkerArgs(os.Args[2:])
	conf, err := confine(wl)
	if err != nil {
		// The parent reads stderr to explain the failure; it never sends a
		// plan to a worker that did not report ready.
		fmt.Fprintf(os.Stderr, "codecall sandbox: cannot confine the worker: %v\n", err)
		return 3
	}
	prewarm()
	// The run's hardened runtime is built now, while the worker waits in
	// the pool, for the pool's limits; a run under other limits builds
	// its own.
	rts := vm.NewRuntimes(1, vm.WithoutBuilder())
	poolLimits := presets.Limits{MaxStackDepth: int(wl.stackDepth), AllowConsole: wl.console}
	rts.Warm(poolLimits, false)
	w := &workerConn{out: bufio.NewWriterSize(out, 64<<10), pending: map[uint64]chan *message{}, runs: make(chan *runRequest, 1)}
	if err := w.send(&message{T: msgReady, Confinement: &conf}); err != nil {
		return 4
	}
	go w.readReplies(bufio.NewReaderSize(in, 64<<10))
	for req := range w.runs {
		ctx, stop := context.WithCancelCause(context.Background())
		w.begin(stop)
		// A worker that serves more than one run hands the memory a run
		// grew back to the system, so the next run starts where this one
		// did (see vm.Options.ReturnMemory).
		res := runPlan(ctx, req, w, rts)
		w.end()
		stop(nil)
		if err := w.send(&message{T: msgResult, Result: res}); err != nil {
			return 6
		}
		// The next run's runtime is built while the worker waits for it.
		rts.Warm(poolLimits, false)
	}
	return 0
}

// prewarm validates and runs a small plan of its own before the worker
// reports ready, so the first touch of the parser's, the runtime's and the
// heap's pages is paid while the worker waits in the pool, not by the
// request that takes it.
func prewarm() {
	limits, _ := presets.LimitsFor(presets.Balanced)
	const script = "const r = [1, 2, 3].map(x => ({x, s: String(x)})); console.log(JSON.stringify(r)); return r.length"
	checked, err := ast.Validate(script, ast.RulesFor(limits))
	if err != nil {
		return
	}
	vm.Run(context.Background(), checked, idleHost{}, vm.Options{RunID: "prewarm", Limits: limits, Context: json.RawMessage(`{}`)})
}

// idleHost answers the prewarm plan, which calls nothing.
type idleHost struct{}

func (idleHost) CallTool(context.Context, string, map[string]any) (json.RawMessage, error) {
	return nil, errors.New("no tools while prewarming")
}
func (idleHost) GetTool(string) (json.RawMessage, bool) { return nil, false }
func (idleHost) Discover(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return nil, errors.New("no host")
}
func (idleHost) Log(context.Context, string, string, json.RawMessage) {}
func (idleHost) Notify(context.Context, string, json.RawMessage)      {}

// runPlan validates and runs the plan of one request.
func runPlan(ctx context.Context, req *runRequest, host vm.Host, rts *vm.Runtimes) *vm.Result {
	opts := vm.Options{RunID: req.Options.RunID, Limits: req.Options.Limits, Context: req.Context, CodeMode: req.Options.CodeMode, Runtimes: rts,
		Replay: req.Options.Replay, ReturnMemory: true}
	checked, err := ast.Validate(req.Script, req.Rules)
	if err != nil {
		// The server validated the same script with the same rules before
		// sending it; a difference means the two disagree, and the plan
		// does not run.
		return &vm.Result{Status: vm.StatusIllegalAccess, RunID: opts.RunID, ToolTrace: []vm.TraceEntry{},
			Error: &vm.ErrorInfo{Kind: "validation", Message: clip("the sandbox worker refused the plan: "+err.Error(), 4<<10)}}
	}
	return vm.Run(ctx, checked, host, opts)
}

// workerConn is the worker's end of the bridge and the vm.Host of its run:
// every call crosses to the server, which runs it through the gate.
type workerConn struct {
	wmu sync.Mutex
	out *bufio.Writer

	mu      sync.Mutex
	pending map[uint64]chan *message
	nextID  atomic.Uint64

	// runs receives the plans the server sends; closed when its input
	// ends. A second plan while one runs breaks the protocol.
	runs chan *runRequest

	// stop ends the current run's context when the server says the
	// request ended (msgStop): the runtime stops the plan and reports it
	// cancelled, or a timeout at the client's deadline, with the logs so
	// far. nil between runs, when a stop has nothing to stop.
	stopMu sync.Mutex
	stop   context.CancelCauseFunc
}

// begin marks a run started, with the function that stops it.
func (w *workerConn) begin(stop context.CancelCauseFunc) {
	w.stopMu.Lock()
	w.stop = stop
	w.stopMu.Unlock()
}

// end marks the run over: a stop that arrives later stops nothing.
func (w *workerConn) end() {
	w.stopMu.Lock()
	w.stop = nil
	w.stopMu.Unlock()
}

// stopRun stops the current run, if there is one.
func (w *workerConn) stopRun(cause error) {
	w.stopMu.Lock()
	stop := w.stop
	w.stopMu.Unlock()
	if stop != nil {
		stop(cause)
	}
}

// accept hands a plan to the run loop; false when a run is going on or
// one is already waiting, which no server does.
func (w *workerConn) accept(req *runRequest) bool {
	w.stopMu.Lock()
	busy := w.stop != nil
	w.stopMu.Unlock()
	if busy || req == nil {
		return false
	}
	select {
	case w.runs <- req:
		return true
	default:
		return false
	}
}

func (w *workerConn) send(m *message) error {
	w.wmu.Lock()
	defer w.wmu.Unlock()
	if err := writeFrame(w.out, m); err != nil {
		return err
	}
	return w.out.Flush()
}

// readReplies routes the server's frames: plans to the run loop, replies
// to the calls waiting for them, a stop to the current run. When the
// server closes the worker's input between runs the worker is done; when
// it goes away mid-run, or sends what no server sends, it exits at once.
func (w *workerConn) readReplies(r io.Reader) {
	for {
		m, err := readFrame(r, maxFrameToWorker)
		if err != nil {
			if errors.Is(err, io.EOF) {
				w.stopMu.Lock()
				idle := w.stop == nil
				w.stopMu.Unlock()
				if idle {
					close(w.runs)
					return
				}
			}
			syscall.Exit(7)
		}
		switch m.T {
		case msgRun:
			if !w.accept(m.Run) {
				syscall.Exit(5)
			}
			continue
		case msgStop:
			w.stopRun(replyError("", m))
			continue
		case msgReply, msgSuspend, msgResume:
		default:
			continue
		}
		w.mu.Lock()
		ch := w.pending[m.ID]
		if m.T == msgReply {
			delete(w.pending, m.ID)
		}
		w.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// request sends m with a fresh id and returns the channel its reply comes
// on.
func (w *workerConn) request(m *message) (uint64, chan *message, error) {
	id := w.nextID.Add(1)
	// Room for a suspend, a resume and the reply, so the reader never
	// waits on a call that is busy.
	ch := make(chan *message, 4)
	w.mu.Lock()
	w.pending[id] = ch
	w.mu.Unlock()
	m.ID = id
	if err := w.send(m); err != nil {
		w.forget(id)
		return 0, nil, err
	}
	return id, ch, nil
}

func (w *workerConn) forget(id uint64) {
	w.mu.Lock()
	delete(w.pending, id)
	w.mu.Unlock()
}

// CallTool implements vm.Host.
func (w *workerConn) CallTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
	b, err := json.Marshal(input)
	if err != nil {
		return nil, &toolerr.Error{Code: toolerr.Validation, Tool: name, Message: "the tool input cannot be encoded as JSON"}
	}
	id, ch, err := w.request(&message{T: msgCall, Name: name, Input: b, Index: callIndex(ctx)})
	if err != nil {
		return nil, err
	}
	// While the server waits for a person to approve the call, the plan's
	// clock stands still (vm.SuspendClock), here as on the server.
	var resume func()
	defer func() {
		if resume != nil {
			resume()
		}
	}()
	for {
		select {
		case m := <-ch:
			switch m.T {
			case msgSuspend:
				if resume == nil {
					resume = vm.SuspendClock(ctx)
				}
				continue
			case msgResume:
				if resume != nil {
					resume()
					resume = nil
				}
				continue
			}
			if m.OK {
				return m.Value, nil
			}
			return nil, replyError(name, m)
		case <-ctx.Done():
			w.forget(id)
			_ = w.send(&message{T: msgCancel, ID: id})
			return nil, ctx.Err()
		}
	}
}

// callIndex is the index of the call ctx belongs to in a run under
// vm.Replay, for the server's journal; nil otherwise.
func callIndex(ctx context.Context) *int {
	if i, ok := vm.CallIndex(ctx); ok {
		return &i
	}
	return nil
}

// replyError rebuilds the error of a failed call as the runtime expects it.
func replyError(name string, m *message) error {
	switch m.Code {
	case codeDeadline:
		return context.DeadlineExceeded
	case codeCanceled:
		return context.Canceled
	case "":
		return errors.New(m.Error)
	}
	return &toolerr.Error{Code: toolerr.Code(m.Code), Tool: name, Message: m.Error, Reason: m.Reason, Hint: m.Hint, Retryable: m.Retry,
		Mismatch: m.Mismatch}
}

// GetTool implements vm.Host.
func (w *workerConn) GetTool(name string) (json.RawMessage, bool) {
	_, ch, err := w.request(&message{T: msgGet, Name: name})
	if err != nil {
		return nil, false
	}
	m := <-ch
	return m.Value, m.OK
}

// Discover implements vm.Host: the server answers, through its own host,
// on a goroutine of its own; the request is dropped if the plan's context
// ends first.
func (w *workerConn) Discover(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	id, ch, err := w.request(&message{T: msgDiscover, Name: op, Input: args, Index: callIndex(ctx)})
	if err != nil {
		return nil, err
	}
	select {
	case m := <-ch:
		if m.OK {
			return m.Value, nil
		}
		return nil, replyError(op, m)
	case <-ctx.Done():
		w.forget(id)
		_ = w.send(&message{T: msgCancel, ID: id})
		return nil, ctx.Err()
	}
}

// Log implements vm.Host.
func (w *workerConn) Log(ctx context.Context, level, msg string, data json.RawMessage) {
	_ = w.send(&message{T: msgLog, Name: level, Message: msg, Data: data})
}

// Notify implements vm.Host.
func (w *workerConn) Notify(ctx context.Context, event string, payload json.RawMessage) {
	_ = w.send(&message{T: msgNotify, Name: event, Data: payload})
}

// Codes of a reply for errors that are not policy errors: the runtime
// treats a cancelled call differently from a failed one.
const (
	codeDeadline = "@deadline"
	codeCanceled = "@canceled"
)

// clip cuts s to at most n bytes, on a UTF-8 boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}
