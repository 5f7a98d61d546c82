package benchmarks

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
)

// fakeSession is an MCP session as far as CodeCall can tell: a request
// handled with it in its context comes from session id.
type fakeSession struct{ id string }

func (s fakeSession) Initialize()                                         {}
func (s fakeSession) Initialized() bool                                   { return false } // no notifications
func (s fakeSession) NotificationChannel() chan<- mcp.JSONRPCNotification { return nil }
func (s fakeSession) SessionID() string                                   { return s.id }

// burstServer serves plans in worker processes with the default pool
// (2 warm, 8 at most, so 4 running and 16 waiting per session). Its tools:
// bench.sleep waits ms milliseconds, or until release is closed when ms
// is 0; bench.probe says how many plans wait for a worker.
func burstServer(tb testing.TB, release <-chan struct{}, mut func(*presets.Config)) (*server.MCPServer, *middleware.CodeCall) {
	srv := server.NewMCPServer("bench", "1", server.WithToolCapabilities(true))
	ro := []mcp.ToolOption{mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true), mcp.WithOpenWorldHintAnnotation(false)}
	srv.AddTool(mcp.NewTool("bench.sleep", append(ro, mcp.WithNumber("ms"))...),
		func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			var wait <-chan time.Time
			if ms := req.GetFloat("ms", 0); ms > 0 {
				wait = time.After(time.Duration(ms) * time.Millisecond)
			}
			select {
			case <-wait:
			case <-release:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			return mcp.NewToolResultText(`{"ok":true}`), nil
		})
	var cc *middleware.CodeCall
	srv.AddTool(mcp.NewTool("bench.probe", ro...), func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		return mcp.NewToolResultText(fmt.Sprintf(`{"queued":%d}`, cc.Isolation().Pool.Queued)), nil
	})
	cfg := presets.Default()
	cfg.VM.Isolation = presets.IsolationProcess
	if mut != nil {
		mut(&cfg)
	}
	var err error
	cc, err = middleware.Wrap(srv, middleware.WithConfig(cfg), middleware.WithLogger(quiet))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { cc.Close() })
	if iso := cc.Isolation(); iso.Effective != presets.IsolationProcess {
		tb.Skipf("plans cannot run in worker processes here: %s", iso.Fallback)
	}
	return srv, cc
}

// executeAs sends msg as session and returns the plan's status, its
// error's limit and retryable flag, and its result.
func executeAs(tb testing.TB, srv *server.MCPServer, session string, msg []byte) (status, limit string, retryable bool, result json.RawMessage) {
	resp, ok := srv.HandleMessage(srv.WithContext(context.Background(), fakeSession{session}), msg).(mcp.JSONRPCResponse)
	if !ok {
		tb.Errorf("not a result: %+v", resp)
		return "", "", false, nil
	}
	tc, _ := mcp.AsTextContent(resp.Result.(*mcp.CallToolResult).Content[0])
	var out struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Limit     string `json:"limit"`
			Retryable bool   `json:"retryable"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(tc.Text), &out); err != nil {
		tb.Errorf("%v: %s", err, tc.Text)
	}
	if out.Error != nil {
		limit, retryable = out.Error.Limit, out.Error.Retryable
	}
	return out.Status, limit, retryable, out.Result
}

// TestBurstKeepsOtherSessionsServed floods the default pool from session
// a with 32 plans that hold their workers, and checks the causes, not the
// timing: 4 of a's plans run and 16 wait (its limits, derived from
// maxWorkers 8), the other 12 are refused at once as retryable
// concurrency limits, and every trivial plan of session b runs while a's
// 16 are still waiting.
func TestBurstKeepsOtherSessionsServed(t *testing.T) {
	release := make(chan struct{})
	var once sync.Once
	letGo := func() { once.Do(func() { close(release) }) }
	defer letGo()
	srv, cc := burstServer(t, release, func(c *presets.Config) {
		c.VM.Timeout = 2 * time.Minute            // a's plans end when the test lets them
		c.Sandbox.QueueTimeout = 10 * time.Minute // and wait for as long as it takes
	})
	hold := toolCall(t, "codecall.execute", plan(`await callTool("bench.sleep", {}); return 1`))
	probe := toolCall(t, "codecall.execute", plan(`return (await callTool("bench.probe", {})).queued`))

	const burst = 32
	type outcome struct {
		status, limit string
		retryable     bool
	}
	outcomes := make(chan outcome, burst)
	for range burst {
		go func() {
			st, limit, retry, _ := executeAs(t, srv, "a", hold)
			outcomes <- outcome{st, limit, retry}
		}()
	}
	for range burst - 4 - 16 {
		if o := <-outcomes; o.status != "limit_exceeded" || o.limit != sandbox.LimitConcurrency || !o.retryable {
			t.Fatalf("a plan of the burst: %+v, want a retryable limit_exceeded, limit concurrency", o)
		}
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if p := cc.Isolation().Pool; p.Running == 4 && p.Queued == 16 {
			break
		} else if time.Now().After(deadline) {
			t.Fatalf("the burst did not settle at 4 running and 16 waiting: %+v", p)
		}
	}
	for i := range 5 {
		st, _, _, res := executeAs(t, srv, "b", probe)
		if st != "ok" || string(res) != "16" {
			t.Fatalf("b's plan %d: %s, saw %s of a's plans waiting; want ok while all 16 wait", i, st, res)
		}
	}
	letGo()
	for range 4 + 16 {
		if o := <-outcomes; o.status != "ok" {
			t.Errorf("a's admitted plan: %+v", o)
		}
	}
	if r := cc.Isolation().Pool.Refusals; r[sandbox.RefusedQueueFull] != burst-4-16 {
		t.Errorf("refusals %v", r)
	}
}

// BenchmarkBurst measures how long session b's trivial plans take, first
// with the server idle, then while session a keeps 32 slow plans (1 s in a
// tool call each) in flight against the default pool, resending each as
// soon as it ends (after 50 ms when it was refused, so that the flood's
// own CPU use does not decide the figure on a small machine). b's plans
// are paced alike in both phases: each starts once the pool has its warm
// workers back, or after 200 ms. It reports both phases' p50 and p95 and
// the ratio of the p95s, which the fair queue keeps within a small factor:
// a's runs beyond its 4 running wait in its own queue, and a free worker
// goes to b, which has nothing running, first.
func BenchmarkBurst(b *testing.B) {
	srv, cc := burstServer(b, nil, nil)
	trivial := toolCall(b, "codecall.execute", plan("return 1"))
	slow := toolCall(b, "codecall.execute", plan(`await callTool("bench.sleep", {ms: 1000}); return 1`))
	pace := func() {
		for deadline := time.Now().Add(200 * time.Millisecond); time.Now().Before(deadline); time.Sleep(200 * time.Microsecond) {
			if p := cc.Isolation().Pool; p.Warm >= 2 {
				return
			}
		}
	}
	sample := func() time.Duration {
		pace()
		t0 := time.Now()
		if st, limit, _, _ := executeAs(b, srv, "b", trivial); st != "ok" {
			b.Fatalf("b's plan: %s %s", st, limit)
		}
		return time.Since(t0)
	}
	sample()
	var idle []time.Duration
	b.ResetTimer()
	for b.Loop() {
		idle = append(idle, sample())
	}
	b.StopTimer()

	ctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var aOK, aRefused, aOther atomic.Int64
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				switch st, limit, _, _ := executeAs(b, srv, "a", slow); {
				case st == "ok":
					aOK.Add(1)
				case st == "limit_exceeded" && limit == sandbox.LimitConcurrency:
					aRefused.Add(1)
					time.Sleep(50 * time.Millisecond)
				default:
					aOther.Add(1)
				}
			}
		}()
	}
	for deadline := time.Now().Add(time.Minute); ; time.Sleep(time.Millisecond) {
		if p := cc.Isolation().Pool; p.Running >= 4 && p.Queued >= 8 {
			break
		} else if time.Now().After(deadline) {
			b.Fatalf("the burst did not build up: %+v", p)
		}
	}
	n := min(max(len(idle), 20), 200)
	var burst []time.Duration
	var queued int64
	for range n {
		queued += cc.Isolation().Pool.Queued
		burst = append(burst, sample())
	}
	stop()
	wg.Wait()

	pIdle, pBurst := percentiles(idle), percentiles(burst)
	b.ReportMetric(pIdle[0]/1000, "idle-p50-ms")
	b.ReportMetric(pIdle[1]/1000, "idle-p95-ms")
	b.ReportMetric(pBurst[0]/1000, "burst-p50-ms")
	b.ReportMetric(pBurst[1]/1000, "burst-p95-ms")
	b.ReportMetric(pBurst[1]/pIdle[1], "p95-ratio")
	b.ReportMetric(float64(queued)/float64(n), "a-queued")
	b.ReportMetric(float64(aOK.Load()), "a-ok")
	b.ReportMetric(float64(aRefused.Load()), "a-refused")
	if aOther.Load() > 0 {
		b.Errorf("%d of a's plans ended otherwise than ok or refused", aOther.Load())
	}
}
