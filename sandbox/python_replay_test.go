package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

// indexedCall is one call or discovery a replay host received.
type indexedCall struct {
	Index int    // vm.CallIndex, -1 when the call had none
	Name  string // the tool, or "discover:" and the operation
	Input string
}

// replayHost answers a Python plan's calls as pythonHost does, records
// each call's index, and answers "slow" only after "fast" has answered
// (and a little later), so that a later call's reply reaches the plan
// before an earlier one's.
type replayHost struct {
	*mcptest.Host
	mu       sync.Mutex
	calls    []indexedCall
	answered []string      // the order the host answered in
	fastDone chan struct{} // closed when "fast" has answered
	once     sync.Once
}

func newReplayHost() *replayHost {
	return &replayHost{Host: pythonHost(), fastDone: make(chan struct{})}
}

func (h *replayHost) record(ctx context.Context, name string, input any) {
	i, ok := vm.CallIndex(ctx)
	if !ok {
		i = -1
	}
	b, _ := json.Marshal(input)
	h.mu.Lock()
	h.calls = append(h.calls, indexedCall{Index: i, Name: name, Input: string(b)})
	h.mu.Unlock()
}

func (h *replayHost) CallTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
	h.record(ctx, name, input)
	var out json.RawMessage
	switch name {
	case "slow":
		select {
		case <-h.fastDone:
		case <-time.After(10 * time.Second): // a plan that never calls "fast"
		case <-ctx.Done():
			return nil, ctx.Err()
		}
		time.Sleep(50 * time.Millisecond) // after fast's reply is on its way
		out = json.RawMessage(`"slow"`)
	case "fast":
		out = json.RawMessage(`"fast"`)
	default:
		var err error
		if out, err = h.Host.CallTool(ctx, name, input); err != nil {
			return nil, err
		}
	}
	h.mu.Lock()
	h.answered = append(h.answered, name)
	h.mu.Unlock()
	if name == "fast" {
		h.once.Do(func() { close(h.fastDone) })
	}
	return out, nil
}

func (h *replayHost) Discover(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	h.record(ctx, "discover:"+op, args)
	return h.Host.Discover(ctx, op, args)
}

// byIndex is the host's calls in index order.
func (h *replayHost) byIndex() []indexedCall {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := slices.Clone(h.calls)
	slices.SortFunc(out, func(a, b indexedCall) int { return a.Index - b.Index })
	return out
}

// replayPlan reads everything a plan can observe that replay makes
// repeatable, and calls tools with inputs made of it.
const replayPlan = `import asyncio, random, uuid, time, datetime, secrets
t0, t0ns, d0 = time.time(), time.time_ns(), datetime.datetime.now(datetime.timezone.utc).isoformat()
m0 = time.monotonic()
order = []
async def tagged(name, inp):
    v = await call_tool(name, inp)
    order.append(name)
    return v
servers = await list_servers()
a, b = await asyncio.gather(tagged("slow", {"n": random.random()}), tagged("fast", {"u": str(uuid.uuid4())}))
after_calls = time.time()
race, _ = await asyncio.wait([asyncio.ensure_future(call_tool("echo", {"race": 1})), asyncio.ensure_future(asyncio.sleep(0.001))],
                             return_when=asyncio.FIRST_COMPLETED)
fired = []
async def timer(d):
    await asyncio.sleep(d)
    fired.append(d)
await asyncio.gather(timer(0.03), timer(0.01), timer(0.02))
search = search_tool_docs_sync("contacts", limit=1)
await mcp_crm.find_contacts(query=random.choice(["ada", "bob", "cy", "dee"]))
time.sleep(0.01)
result = {
    "t0": t0, "t0ns": t0ns, "d0": d0, "afterCalls": after_calls, "afterTimers": time.time(), "mono": time.monotonic() - m0,
    "now": datetime.datetime.now().isoformat(), "utcnow": datetime.datetime.utcnow().isoformat(), "today": datetime.date.today().isoformat(),
    "ctime": time.ctime(), "strftime": time.strftime("%Y-%m-%d %H:%M:%S"),
    "random": [random.random(), random.randint(0, 10**9), random.Random().random(), (random.seed(), random.random())[1]], "shuffled": random.sample(range(100), 5),
    "uuid4": str(uuid.uuid4()), "uuid1": str(uuid.uuid1()), "order": order, "fired": fired, "servers": servers,
    "raceWon": [type(f.result()).__name__ for f in race], "isinstance": isinstance(datetime.datetime.now(), datetime.date),
    "token": len(secrets.token_hex(8)), "hash": hash("codecall"), "set": list({"alpha", "beta", "gamma", "delta", "epsilon", "zeta"}),
}
`

// replayOpts is a run under Replay with seed s.
func replayOpts(l presets.Limits, s uint64) vm.Options {
	return vm.Options{RunID: "py-replay", Limits: l, Context: json.RawMessage(`{}`), Replay: &vm.Replay{Seed: s, EpochMs: replayEpochMs}}
}

// replayEpochMs is 2023-11-14T22:13:20Z, far from the test's own clock.
const replayEpochMs = 1_700_000_000_000

func runReplay(t *testing.T, p *Pool, opts vm.Options, src string) (*vm.Result, *replayHost) {
	t.Helper()
	h := newReplayHost()
	res := p.RunPython(context.Background(), src, h, opts)
	b, _ := json.Marshal(res)
	if res.Status != vm.StatusOK {
		t.Fatalf("the plan did not run: %s", b)
	}
	return res, h
}

// TestPythonReplayRepeatable: a plan run twice under the same Replay
// gives the same result and makes the same calls with the same indexes,
// though it reads random numbers, UUIDs, the time and dates, sleeps, and
// gathers calls whose replies come out of order.
func TestPythonReplayRepeatable(t *testing.T) {
	l := limits(t)
	l.Timeout = 20 * time.Second
	p := newPythonPool(t, l, WithSize(2))
	first, h1 := runReplay(t, p, replayOpts(l, 42), replayPlan)
	second, h2 := runReplay(t, p, replayOpts(l, 42), replayPlan)
	if len(first.Warnings) > 0 {
		t.Fatalf("warnings: %v", first.Warnings)
	}
	if string(first.Result) != string(second.Result) {
		t.Fatalf("two runs under the same Replay differ:\n%s\n%s", first.Result, second.Result)
	}
	c1, c2 := h1.byIndex(), h2.byIndex()
	if !slices.Equal(c1, c2) {
		t.Fatalf("two runs made different calls:\n%v\n%v", c1, c2)
	}
	for i, c := range c1 {
		if c.Index != i {
			t.Fatalf("call %d (%s) carries index %d; the calls: %v", i, c.Name, c.Index, c1)
		}
	}
	wantNames := []string{"discover:catalog", "slow", "fast", "echo", "discover:search", "crm.find_contacts"}
	var names []string
	for _, c := range c1 {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, wantNames) {
		t.Fatalf("calls %v, want %v", names, wantNames)
	}
	// The host answers fast before slow (slow waits for it), yet the
	// plan sees slow first (got.Order below).
	if i, j := slices.Index(h1.answered, "fast"), slices.Index(h1.answered, "slow"); i < 0 || j < i {
		t.Fatalf("the host answered in the order %v", h1.answered)
	}
	var got struct {
		T0, AfterCalls, AfterTimers, Mono float64
		T0ns                              int64
		D0, Now, Utcnow, Today            string
		Order                             []string
		Fired                             []float64
		RaceWon                           []string
		Isinstance                        bool
		Token                             int
		UUID4                             string
	}
	if err := json.Unmarshal(first.Result, &got); err != nil {
		t.Fatal(err)
	}
	checks := []struct {
		what string
		ok   bool
	}{
		{"time.time() starts at EpochMs", got.T0 == replayEpochMs/1e3 && got.T0ns == replayEpochMs*1e6},
		{"datetime.now(utc) starts at EpochMs", got.D0 == "2023-11-14T22:13:20+00:00"},
		{"time spent in calls is not seen", got.AfterCalls == got.T0},
		{"the clock moves by the timers' delays (and time.sleep's)", fmt.Sprintf("%.6f", got.AfterTimers-got.T0) == "0.040000" &&
			fmt.Sprintf("%.6f", got.Mono) == "0.040000"},
		{"utcnow and today read the virtual clock", got.Utcnow == "2023-11-14T22:13:20.040000" && got.Today == "2023-11-14"},
		{"replies settle in call order", slices.Equal(got.Order, []string{"slow", "fast"})},
		{"timers fire in due-time order", slices.Equal(got.Fired, []float64{0.01, 0.02, 0.03})},
		{"a call wins a race with a shorter timer", slices.Equal(got.RaceWon, []string{"dict"})},
		{"datetime.now() is still a date", got.Isinstance},
		{"secrets still works", got.Token == 16},
	}
	for _, c := range checks {
		if !c.ok {
			t.Errorf("%s: %s", c.what, first.Result)
		}
	}

	// Another seed draws other random numbers and UUIDs.
	other, _ := runReplay(t, p, replayOpts(l, 43), replayPlan)
	var o struct {
		Random []float64
		UUID4  string
	}
	var f struct {
		Random []float64
		UUID4  string
	}
	_ = json.Unmarshal(other.Result, &o)
	_ = json.Unmarshal(first.Result, &f)
	if slices.Equal(o.Random, f.Random) || o.UUID4 == f.UUID4 {
		t.Errorf("seeds 42 and 43 drew the same values: %v %s", o.Random, o.UUID4)
	}
}

// TestPythonWithoutReplay: without Replay a plan's calls carry no index
// and it reads the real clock and fresh random numbers, as before.
func TestPythonWithoutReplay(t *testing.T) {
	l := limits(t)
	l.Timeout = 20 * time.Second
	p := newPythonPool(t, l, WithSize(2))
	opts := vm.Options{RunID: "py-plain", Limits: l, Context: json.RawMessage(`{}`)}
	before := float64(time.Now().UnixMilli()) / 1e3
	first, h := runReplay(t, p, opts, replayPlan)
	second, _ := runReplay(t, p, opts, replayPlan)
	for _, c := range h.byIndex() {
		if c.Index != -1 {
			t.Fatalf("a call without Replay carries index %d: %v", c.Index, h.byIndex())
		}
	}
	var a, b struct {
		T0     float64
		Random []float64
		UUID4  string
	}
	_ = json.Unmarshal(first.Result, &a)
	_ = json.Unmarshal(second.Result, &b)
	if a.T0 < before-1 || a.T0 > float64(time.Now().UnixMilli())/1e3+1 {
		t.Errorf("time.time() read %f, not the real clock (%f)", a.T0, before)
	}
	if slices.Equal(a.Random, b.Random) || a.UUID4 == b.UUID4 {
		t.Errorf("two runs drew the same random values: %v %s", a.Random, a.UUID4)
	}
}

// TestPythonReplaySettling: under Replay, more calls than maxConcurrency
// settle in call order, a call the plan withdraws holds up none after
// it, a plan polling a call with asyncio.sleep(0) still sees it settle,
// and a timer due after the run's deadline ends the run at once.
func TestPythonReplaySettling(t *testing.T) {
	l := limits(t)
	l.Timeout = 20 * time.Second
	p := newPythonPool(t, l, WithSize(2))
	cases := []struct {
		name, plan, want string
		status           vm.Status
	}{
		{"gather beyond maxConcurrency", `import asyncio
order = []
async def one(i):
    v = await call_tool("echo", {"i": i})
    order.append(v["i"])
result = {"n": len(await asyncio.gather(*[one(i) for i in range(12)])), "order": order}
`, `{"n":12,"order":[0,1,2,3,4,5,6,7,8,9,10,11]}`, vm.StatusOK},
		{"withdrawn call", `import asyncio
t = asyncio.ensure_future(call_tool("sleep", {}))
await asyncio.sleep(0)
t.cancel()
result = await call_tool("echo", {"after": 1})
`, `{"after":1}`, vm.StatusOK},
		{"polling with sleep(0)", `import asyncio
t = asyncio.ensure_future(call_tool("echo", {"x": 1}))
spins = 0
while not t.done():
    spins += 1
    await asyncio.sleep(0)
result = {"spins": spins, "v": t.result()}
`, `{"spins":1001,"v":{"x":1}}`, vm.StatusOK},
		{"timer past the deadline", `import asyncio
await asyncio.sleep(3600)
result = 1
`, "", vm.StatusTimeout},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := newReplayHost()
			begin := time.Now()
			res := p.RunPython(context.Background(), tc.plan, h, replayOpts(l, 7))
			b, _ := json.Marshal(res)
			if res.Status != tc.status || (tc.want != "" && string(res.Result) != tc.want) {
				t.Fatalf("got %s", b)
			}
			if tc.status == vm.StatusTimeout {
				// The cause: the run ended because the timer was due after
				// the deadline, not because the deadline passed.
				if res.Error == nil || !strings.Contains(res.Error.Message, "waiting for a timer due after the run's timeout") {
					t.Fatalf("got %s", b)
				}
				if d := time.Since(begin); d > l.Timeout {
					t.Fatalf("the run took %v", d)
				}
			}
			for i, c := range h.byIndex() {
				if c.Index != i {
					t.Fatalf("call %d carries index %d: %v", i, c.Index, h.byIndex())
				}
			}
		})
	}
}
