package search

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/codecall-go/codecall/catalog"
)

// WarnIndexBuilding: the index of the current catalog is still being built
// and the hits come from the previous catalog's index, so a tool added
// since may be missing.
const WarnIndexBuilding = "index_building"

// Searcher answers queries: an *Index, or an *AsyncIndex whose index may
// still be building.
type Searcher interface {
	Search(ctx context.Context, q Query) (Result, error)
}

// BuildFunc builds an Index over tools; New, which ignores ctx, is the
// default. See WithBuildFunc.
type BuildFunc func(ctx context.Context, tools []*catalog.Tool, opts ...Option) (*Index, error)

// AsyncOption configures Start.
type AsyncOption func(*asyncConfig)

type asyncConfig struct {
	index   []Option
	build   BuildFunc
	prev    Searcher
	release func()
}

// WithIndexOptions passes opts to the index being built.
func WithIndexOptions(opts ...Option) AsyncOption {
	return func(c *asyncConfig) { c.index = append(c.index, opts...) }
}

// WithBuildFunc replaces New as the way the index is built: for a test
// that needs to hold a build at a known point instead of racing a timer,
// or a caller that builds another way.
func WithBuildFunc(f BuildFunc) AsyncOption {
	return func(c *asyncConfig) { c.build = f }
}

// WithPrevious lets prev answer the searches that arrive while the new
// index is built, typically the index of the catalog the new one
// replaces, so that a catalog change never makes search wait. Its hits
// carry a WarnIndexBuilding warning.
//
// The AsyncIndex stops using prev when its own build ends (or fails, or is
// closed) and then, once no search is still running on prev, calls
// release, if not nil, exactly once: the caller keeps prev open until then.
// An *AsyncIndex that cannot answer without waiting itself (see Serving)
// would only make searches wait on it, so it is released at once and not
// used.
func WithPrevious(prev Searcher, release func()) AsyncOption {
	return func(c *asyncConfig) { c.prev, c.release = prev, release }
}

// AsyncIndex is an Index built in the background, so that a large catalog
// does not hold up whoever needs the rest of it. Its Search answers from
// the index once built; before that it answers from the previous index
// given to WithPrevious, or waits for the build. It is safe for concurrent
// use; Close releases it.
type AsyncIndex struct {
	total   int
	started time.Time
	cancel  context.CancelFunc
	done    chan struct{} // closed when the build has ended, ix or err set

	mu     sync.Mutex // guards the fields below
	ix     *Index
	err    error
	closed bool

	// prevMu is held for reading by each search answered from prev, so
	// that prev is released only when none is running on it.
	prevMu  sync.RWMutex
	prev    Searcher
	release func()
}

// Start begins building an index over tools in a new goroutine and
// returns at once. ctx bounds the build: when it ends before the build
// does, the build is abandoned (the default build stops embedding tools
// for dense retrieval early; whatever index a build returns late is
// closed) and Search returns
// the context's error.
func Start(ctx context.Context, tools []*catalog.Tool, opts ...AsyncOption) *AsyncIndex {
	cfg := asyncConfig{build: func(ctx context.Context, tools []*catalog.Tool, opts ...Option) (*Index, error) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		return NewContext(ctx, tools, opts...)
	}}
	for _, o := range opts {
		o(&cfg)
	}
	if p, ok := cfg.prev.(*AsyncIndex); ok && !p.Serving() {
		if cfg.release != nil {
			cfg.release()
		}
		cfg.prev, cfg.release = nil, nil
	}
	n := 0
	for _, t := range tools {
		if t != nil {
			n++
		}
	}
	ctx, cancel := context.WithCancel(ctx)
	a := &AsyncIndex{total: n, started: time.Now(), cancel: cancel, done: make(chan struct{}),
		prev: cfg.prev, release: cfg.release}
	go a.run(ctx, tools, cfg)
	return a
}

// run builds the index and publishes it, then lets go of the previous one.
func (a *AsyncIndex) run(ctx context.Context, tools []*catalog.Tool, cfg asyncConfig) {
	defer a.cancel()
	ix, err := cfg.build(ctx, tools, cfg.index...)
	switch {
	case err != nil:
		err = fmt.Errorf("search: building the index of %d tools: %w", a.total, err)
	case ix == nil:
		err = fmt.Errorf("search: building the index of %d tools: the build returned no index", a.total)
	case ctx.Err() != nil:
		// Closed or abandoned while building: nobody will search it.
		_ = ix.Close()
		ix, err = nil, fmt.Errorf("search: building the index of %d tools: %w", a.total, ctx.Err())
	}
	a.mu.Lock()
	a.ix, a.err = ix, err
	if a.closed && ix != nil {
		// Close ran after the check above and found no index to close.
		_ = ix.Close()
	}
	a.mu.Unlock()
	close(a.done)
	a.dropPrevious()
}

// dropPrevious stops answering from the previous index and releases it
// once the searches running on it have ended.
func (a *AsyncIndex) dropPrevious() {
	a.prevMu.Lock()
	release := a.release
	a.prev, a.release = nil, nil
	a.prevMu.Unlock()
	if release != nil {
		release()
	}
}

// Search runs q on the index. Before the build ends it answers from the
// previous index, when WithPrevious gave one, or waits for the build until
// ctx ends; the error is then a *BuildingError that says how far the build
// is. After a failed build it returns the build's error.
func (a *AsyncIndex) Search(ctx context.Context, q Query) (Result, error) {
	if a.isClosed() {
		return Result{}, ErrClosed
	}
	if !a.Ready() {
		if res, ok, err := a.searchPrevious(ctx, q); ok {
			return res, err
		}
		if err := a.Wait(ctx); err != nil {
			return Result{}, err
		}
	}
	ix, err := a.built()
	if err != nil {
		return Result{}, err
	}
	return ix.Search(ctx, q)
}

// searchPrevious answers from the previous index while there is one; ok
// is false when there is none left.
func (a *AsyncIndex) searchPrevious(ctx context.Context, q Query) (res Result, ok bool, err error) {
	a.prevMu.RLock()
	defer a.prevMu.RUnlock()
	if a.prev == nil {
		return Result{}, false, nil
	}
	res, err = a.prev.Search(ctx, q)
	if err != nil {
		return Result{}, true, err
	}
	res.Warnings = append(res.Warnings, Warning{Type: WarnIndexBuilding, Message: fmt.Sprintf(
		"The search index of the current catalog (%d tools) is still being built; these hits come from the previous catalog and may miss tools added since.", a.total)})
	return res, true, nil
}

func (a *AsyncIndex) isClosed() bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.closed
}

// built returns the index, or why there is none.
func (a *AsyncIndex) built() (*Index, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	switch {
	case a.closed:
		return nil, ErrClosed
	case a.err != nil:
		return nil, a.err
	}
	return a.ix, nil
}

// Wait blocks until the build has ended or ctx ends. It returns the
// build's error, or a *BuildingError wrapping ctx's error when ctx ended
// first.
func (a *AsyncIndex) Wait(ctx context.Context) error {
	select {
	case <-a.done:
		_, err := a.built()
		return err
	default:
	}
	select {
	case <-a.done:
		_, err := a.built()
		return err
	case <-ctx.Done():
		return &BuildingError{Tools: a.total, Started: a.started, Err: ctx.Err()}
	}
}

// Ready reports whether the build has ended, whether or not it succeeded.
func (a *AsyncIndex) Ready() bool {
	select {
	case <-a.done:
		return true
	default:
		return false
	}
}

// Serving reports whether Search answers without waiting for the build:
// the build has ended, or a previous index answers meanwhile.
func (a *AsyncIndex) Serving() bool {
	if a.Ready() {
		return true
	}
	a.prevMu.RLock()
	defer a.prevMu.RUnlock()
	return a.prev != nil
}

// Len returns the number of tools being indexed.
func (a *AsyncIndex) Len() int { return a.total }

// Started returns when the build began.
func (a *AsyncIndex) Started() time.Time { return a.started }

// Close releases the index and the previous one. It does not wait for a
// build in flight: the build is abandoned, and the goroutine building it
// closes what it built when the build returns. Searches after Close fail
// with ErrClosed; closing twice is harmless.
func (a *AsyncIndex) Close() error {
	a.mu.Lock()
	if a.closed {
		a.mu.Unlock()
		return nil
	}
	a.closed = true
	ix := a.ix
	a.mu.Unlock()
	a.cancel()
	a.dropPrevious()
	if ix != nil {
		if err := ix.Close(); err != nil {
			return fmt.Errorf("search: close the index: %w", err)
		}
	}
	return nil
}

// BuildingError is returned by AsyncIndex's Search and Wait when the
// caller's context ends before the build does.
type BuildingError struct {
	// Tools is the number of tools being indexed.
	Tools int
	// Started is when the build began.
	Started time.Time
	// Err is the context's error.
	Err error
}

// Error says what to do, in words a model can act on: the build is
// still running, so the same search will work shortly.
func (e *BuildingError) Error() string {
	return fmt.Sprintf("the search index for %d tools is still being built (started %s ago); retry in a few seconds",
		e.Tools, time.Since(e.Started).Round(100*time.Millisecond))
}

// Unwrap returns the context's error.
func (e *BuildingError) Unwrap() error { return e.Err }
