package search_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
)

// gatedBuild is a BuildFunc that holds every build until the gate opens,
// so a test knows the build is in flight without racing a timer. entered
// is closed when the build starts; built is the index it returned.
type gatedBuild struct {
	gate    chan struct{}
	entered chan struct{}
	once    sync.Once
	built   atomic.Pointer[search.Index]
}

func newGatedBuild() *gatedBuild {
	return &gatedBuild{gate: make(chan struct{}), entered: make(chan struct{})}
}

func (g *gatedBuild) build(ctx context.Context, tools []*catalog.Tool, opts ...search.Option) (*search.Index, error) {
	g.once.Do(func() { close(g.entered) })
	<-g.gate // New cannot be interrupted either: the build ignores ctx while held
	ix, err := search.New(tools, opts...)
	g.built.Store(ix)
	return ix, err
}

func (g *gatedBuild) open() { close(g.gate) }

func asyncTools(names ...string) []*catalog.Tool {
	tools := make([]*catalog.Tool, len(names))
	for i, n := range names {
		tools[i] = &catalog.Tool{Name: n, AppID: strings.SplitN(n, ".", 2)[0], Description: "Does " + n, Source: catalog.SourceUpstream, Enabled: true}
	}
	return tools
}

func asyncHitNames(res search.Result) []string {
	var out []string
	for _, h := range res.Hits {
		out = append(out, h.Tool.Name)
	}
	return out
}

func hasAsyncWarning(res search.Result, typ string) bool {
	for _, w := range res.Warnings {
		if w.Type == typ {
			return true
		}
	}
	return false
}

func TestAsyncSearchWaitsForBuild(t *testing.T) {
	g := newGatedBuild()
	a := search.Start(context.Background(), asyncTools("crm.create_invoice", "crm.delete_contact"), search.WithBuildFunc(g.build))
	defer a.Close()
	<-g.entered
	if a.Ready() || a.Serving() {
		t.Fatalf("Ready=%v Serving=%v while the build is held", a.Ready(), a.Serving())
	}
	if a.Len() != 2 {
		t.Errorf("Len = %d, want 2", a.Len())
	}
	type answer struct {
		res search.Result
		err error
	}
	got := make(chan answer, 1)
	go func() {
		res, err := a.Search(context.Background(), search.Query{Text: "create an invoice"})
		got <- answer{res, err}
	}()
	select {
	case ans := <-got:
		t.Fatalf("Search answered while the build was held: %v %v", asyncHitNames(ans.res), ans.err)
	default:
	}
	g.open()
	ans := <-got
	if ans.err != nil {
		t.Fatal(ans.err)
	}
	if names := asyncHitNames(ans.res); len(names) == 0 || names[0] != "crm.create_invoice" {
		t.Errorf("hits = %v, want crm.create_invoice first", names)
	}
	if !a.Ready() || !a.Serving() {
		t.Errorf("Ready=%v Serving=%v after the build", a.Ready(), a.Serving())
	}
	if hasAsyncWarning(ans.res, search.WarnIndexBuilding) {
		t.Errorf("a search of the built index carries %s", search.WarnIndexBuilding)
	}
}

func TestAsyncAnswersFromPrevious(t *testing.T) {
	prev, err := search.New(asyncTools("crm.create_invoice"))
	if err != nil {
		t.Fatal(err)
	}
	var released atomic.Int32
	g := newGatedBuild()
	a := search.Start(context.Background(), asyncTools("crm.create_invoice", "crm.refund_payment"),
		search.WithBuildFunc(g.build), search.WithPrevious(prev, func() { released.Add(1); _ = prev.Close() }))
	defer a.Close()
	<-g.entered
	if a.Ready() || !a.Serving() {
		t.Fatalf("Ready=%v Serving=%v with a previous index while building", a.Ready(), a.Serving())
	}
	res, err := a.Search(context.Background(), search.Query{Text: "refund a payment"})
	if err != nil {
		t.Fatal(err)
	}
	if !hasAsyncWarning(res, search.WarnIndexBuilding) {
		t.Errorf("an answer from the previous index has no %s warning: %+v", search.WarnIndexBuilding, res.Warnings)
	}
	for _, n := range asyncHitNames(res) {
		if n == "crm.refund_payment" {
			t.Errorf("the previous index found a tool it does not hold")
		}
	}
	if released.Load() != 0 {
		t.Fatal("the previous index was released while it still answers")
	}
	g.open()
	if err := a.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err = a.Search(context.Background(), search.Query{Text: "refund a payment"})
	if err != nil {
		t.Fatal(err)
	}
	if names := asyncHitNames(res); len(names) == 0 || names[0] != "crm.refund_payment" {
		t.Errorf("hits = %v after the build, want crm.refund_payment first", names)
	}
	// The release follows the build's end in the build's goroutine.
	deadline := time.Now().Add(10 * time.Second)
	for released.Load() == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	_ = a.Close()
	if n := released.Load(); n != 1 {
		t.Errorf("the previous index was released %d times, want once", n)
	}
}

func TestAsyncContextEnds(t *testing.T) {
	g := newGatedBuild()
	defer g.open()
	a := search.Start(context.Background(), asyncTools("crm.create_invoice"), search.WithBuildFunc(g.build))
	defer a.Close()
	<-g.entered
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err := a.Search(ctx, search.Query{Text: "invoice"})
	var be *search.BuildingError
	if !errors.As(err, &be) || !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want a BuildingError wrapping context.Canceled", err)
	}
	if be.Tools != 1 || !strings.Contains(err.Error(), "still being built") || !strings.Contains(err.Error(), "retry") {
		t.Errorf("error %q (tools %d) does not say the build is under way", err, be.Tools)
	}
	if err := a.Wait(ctx); !errors.As(err, &be) {
		t.Errorf("Wait = %v, want a BuildingError", err)
	}
}

func TestAsyncStartContextAbandonsBuild(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	entered := make(chan struct{})
	a := search.Start(ctx, asyncTools("crm.create_invoice"), search.WithBuildFunc(
		func(ctx context.Context, tools []*catalog.Tool, opts ...search.Option) (*search.Index, error) {
			close(entered)
			<-ctx.Done()
			return nil, ctx.Err()
		}))
	defer a.Close()
	<-entered
	cancel()
	if err := a.Wait(context.Background()); !errors.Is(err, context.Canceled) {
		t.Fatalf("Wait = %v, want context.Canceled", err)
	}
	if _, err := a.Search(context.Background(), search.Query{Text: "invoice"}); !errors.Is(err, context.Canceled) {
		t.Errorf("Search = %v, want the abandoned build's error", err)
	}
}

func TestAsyncBuildFails(t *testing.T) {
	boom := errors.New("boom")
	a := search.Start(context.Background(), asyncTools("crm.create_invoice"), search.WithBuildFunc(
		func(context.Context, []*catalog.Tool, ...search.Option) (*search.Index, error) { return nil, boom }))
	defer a.Close()
	if err := a.Wait(context.Background()); !errors.Is(err, boom) {
		t.Fatalf("Wait = %v, want the build's error", err)
	}
	if _, err := a.Search(context.Background(), search.Query{Text: "invoice"}); !errors.Is(err, boom) {
		t.Errorf("Search = %v, want the build's error", err)
	}
}

func TestAsyncCloseDuringBuild(t *testing.T) {
	prev, err := search.New(asyncTools("crm.create_invoice"))
	if err != nil {
		t.Fatal(err)
	}
	var released atomic.Int32
	g := newGatedBuild()
	a := search.Start(context.Background(), asyncTools("crm.create_invoice"),
		search.WithBuildFunc(g.build), search.WithPrevious(prev, func() { released.Add(1) }))
	<-g.entered
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if released.Load() != 1 {
		t.Errorf("Close released the previous index %d times, want once", released.Load())
	}
	if _, err := a.Search(context.Background(), search.Query{Text: "invoice"}); !errors.Is(err, search.ErrClosed) {
		t.Errorf("Search after Close = %v, want ErrClosed", err)
	}
	g.open()
	if err := a.Wait(context.Background()); !errors.Is(err, search.ErrClosed) && !errors.Is(err, context.Canceled) {
		t.Errorf("Wait after Close = %v, want ErrClosed or context.Canceled", err)
	}
	// What the abandoned build made is closed, not leaked.
	ix := g.built.Load()
	if ix == nil {
		t.Fatal("the build returned no index")
	}
	if _, err := ix.Search(context.Background(), search.Query{Text: "invoice"}); !errors.Is(err, search.ErrClosed) {
		t.Errorf("the abandoned build's index answers after Close: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if released.Load() != 1 {
		t.Errorf("the previous index was released %d times, want once", released.Load())
	}
}

func TestAsyncPreviousThatCannotAnswerIsReleased(t *testing.T) {
	g := newGatedBuild()
	defer g.open()
	older := search.Start(context.Background(), asyncTools("crm.create_invoice"), search.WithBuildFunc(g.build))
	defer older.Close()
	<-g.entered
	var released atomic.Int32
	a := search.Start(context.Background(), asyncTools("crm.create_invoice"), search.WithPrevious(older, func() { released.Add(1) }))
	defer a.Close()
	if released.Load() != 1 {
		t.Errorf("a previous index still building with nothing to answer from was released %d times, want once at Start", released.Load())
	}
	if _, err := a.Search(context.Background(), search.Query{Text: "invoice"}); err != nil {
		t.Fatal(err)
	}
}

// TestAsyncSwitchUnderLoad searches from many goroutines while the build
// ends and the previous index is released: every search answers, from one
// index or the other, and none reaches a closed previous index (run it
// with -race).
func TestAsyncSwitchUnderLoad(t *testing.T) {
	prev, err := search.New(synthTools(200))
	if err != nil {
		t.Fatal(err)
	}
	g := newGatedBuild()
	a := search.Start(context.Background(), synthTools(300), search.WithBuildFunc(g.build),
		search.WithPrevious(prev, func() { _ = prev.Close() }))
	defer a.Close()
	<-g.entered
	var wg sync.WaitGroup
	var fromPrev, fromNew atomic.Int64
	errs := make(chan error, 8)
	var opened sync.Once
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Each searcher goes on until it has seen the new index answer
			// a few times: the switch happens under its feet.
			for i, seenNew := 0, 0; seenNew < 3; i++ {
				res, err := a.Search(context.Background(), search.Query{Text: synthQueries[(w+i)%len(synthQueries)]})
				if err != nil {
					errs <- err
					return
				}
				if hasAsyncWarning(res, search.WarnIndexBuilding) {
					fromPrev.Add(1)
				} else {
					fromNew.Add(1)
					seenNew++
				}
				if i == 5 {
					opened.Do(g.open)
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if err := a.Wait(context.Background()); err != nil {
		t.Fatal(err)
	}
	if fromPrev.Load() == 0 {
		t.Error("no search was answered from the previous index while the build was held")
	}
}
