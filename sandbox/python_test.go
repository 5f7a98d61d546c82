package sandbox

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/vm"
)

// findTestPython finds python3 (3.11+) or skips the test, saying why.
func findTestPython(t testing.TB) *Python {
	t.Helper()
	switch os.Getenv("CODECALLTEST_PYTHON") {
	case "0":
		t.Skip("CODECALLTEST_PYTHON=0: Python plan tests skipped")
	}
	py, err := FindPython(context.Background(), "")
	if err != nil {
		if os.Getenv("CODECALLTEST_PYTHON") == "1" {
			t.Fatalf("CODECALLTEST_PYTHON=1 and no usable python3: %v", err)
		}
		t.Skipf("Python plans need python3 3.11 or later, and none is usable here (CODECALLTEST_PYTHON=1 makes this fail): %v", err)
	}
	return py
}

// newPythonPool starts a pool of Python workers under l, or skips.
func newPythonPool(t testing.TB, l presets.Limits, opts ...Option) *Pool {
	t.Helper()
	py := findTestPython(t)
	return newTestPool(t, append([]Option{WithPython(py), WithLimits(l), WithSize(1)}, opts...)...)
}

// pythonHost answers a Python plan's calls and discovery: two apps, crm
// and billing, and a tool that fails.
func pythonHost() *mcptest.Host {
	h := newTestHost()
	call := h.Call
	h.Call = func(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
		switch name {
		case "crm.find_contacts":
			return json.RawMessage(`[{"name":"Ada","vip":true},{"name":"Bob","vip":false}]`), nil
		case "billing.invoices":
			return json.RawMessage(`{"open":2}`), nil
		case "crm.denied":
			return nil, &toolerr.Error{Code: toolerr.AccessDenied, Tool: name, Message: "policy says no", Hint: "ask an operator"}
		}
		return call(ctx, name, input)
	}
	h.Discovery = func(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
		switch op {
		case vm.DiscoverCatalog:
			return json.RawMessage(`[{"name":"crm.find_contacts","appId":"crm","description":"Find contacts."},` +
				`{"name":"crm.denied","appId":"crm","description":"Denied."},{"name":"billing.invoices","appId":"billing","description":"Invoices."}]`), nil
		case vm.DiscoverSearch:
			return json.RawMessage(`[{"name":"crm.find_contacts","score":1}]`), nil
		}
		return nil, &toolerr.Error{Code: toolerr.Validation, Message: "unknown op " + op}
	}
	return h
}

func runPython(t testing.TB, p *Pool, h vm.Host, l presets.Limits, src string) *vm.Result {
	t.Helper()
	return p.RunPython(context.Background(), src, h, vm.Options{RunID: "py", Limits: l, Context: json.RawMessage(`{"user":"ada"}`)})
}

func TestPythonPlanSmoke(t *testing.T) {
	l := limits(t)
	p := newPythonPool(t, l)
	res := runPython(t, p, pythonHost(), l, `
import asyncio
print("hello", codecall_context["user"])
contacts, inv = await asyncio.gather(mcp_crm.find_contacts(query="a"), call_tool("billing.invoices", {}))
result = {"vip": [c["name"] for c in contacts if c["vip"]], "open": inv["open"]}
`)
	b, _ := json.Marshal(res)
	if res.Status != vm.StatusOK || string(res.Result) != `{"vip":["Ada"],"open":2}` {
		t.Fatalf("got %s", b)
	}
	if len(res.Logs) != 1 || !strings.Contains(res.Logs[0].Message, "hello ada") {
		t.Fatalf("logs %s", b)
	}
	t.Logf("%s conf %+v", b, p.Confinement())
}

// TestPythonWorkerConfined: a Python worker reports the confinement the
// Go side applied before it became Python, and the server finds it on
// the interpreter's threads in /proc.
func TestPythonWorkerConfined(t *testing.T) {
	p := newPythonPool(t, limits(t))
	c := p.Confinement()
	if !c.PythonView || c.EmptyRoot || !c.NoNewPrivs || !c.Seccomp || !c.CapabilitiesDropped || c.CheckedThreads < 1 {
		t.Fatalf("confinement %+v", c)
	}
	for _, ns := range []string{"user", "pid", "net", "mnt"} {
		if !contains(c.Namespaces, ns) {
			t.Errorf("no %s namespace of its own: %v", ns, c.Namespaces)
		}
	}
	if landlockABI() > 0 && !c.Landlock {
		t.Errorf("the kernel has Landlock (ABI %d) and the Python worker has no domain", landlockABI())
	}
	if c.AddressSpaceBytes != limits(t).MemoryBytes+pythonAddressReserve || c.OpenFiles != pythonOpenFiles {
		t.Errorf("rlimits %+v", c)
	}
	if !strings.Contains(c.String(), "read-only view of the interpreter") {
		t.Errorf("String: %s", c)
	}
}

// TestPythonDiscoveryHelpers: the async discovery helpers and their
// synchronous variants answer alike, also while calls are in flight.
func TestPythonDiscoveryHelpers(t *testing.T) {
	l := limits(t)
	p := newPythonPool(t, l)
	res := runPython(t, p, pythonHost(), l, `import asyncio
pending = asyncio.ensure_future(asyncio.gather(call_tool("echo", {"a": 1}), call_tool("echo", {"b": 2})))
await asyncio.sleep(0)
sync = {"servers": list_servers_sync(), "tools": [t["alias"] for t in list_tools_sync("crm")], "discovered": list(discovered_servers()),
        "meta": list_loaded_server_metadata(), "search": search_tool_docs_sync("contacts", limit=1)}
echoed = await pending
result = {"sync": sync, "async": {"servers": await list_servers(), "tools": [t["alias"] for t in await list_tools("crm")],
          "server": await describe_server("billing"), "summary": await capability_summary(),
          "search": await search_tool_docs("contacts", limit=1)}, "echoed": echoed}
`)
	b, _ := json.Marshal(res)
	if res.Status != vm.StatusOK {
		t.Fatalf("%s", b)
	}
	var got struct {
		Sync struct {
			Servers, Tools, Discovered []string
			Meta                       []map[string]any
			Search                     []map[string]any
		}
		Async struct {
			Servers, Tools []string
			Server         map[string]any
			Summary        string
			Search         []map[string]any
		}
		Echoed []map[string]int
	}
	if err := json.Unmarshal(res.Result, &got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Sync.Servers, ",") != "billing,crm" || strings.Join(got.Async.Servers, ",") != "billing,crm" ||
		strings.Join(got.Sync.Discovered, ",") != "billing,crm" || strings.Join(got.Sync.Tools, ",") != "find_contacts,denied" ||
		strings.Join(got.Async.Tools, ",") != "find_contacts,denied" || len(got.Sync.Meta) != 2 || got.Async.Server["toolCount"] != 1.0 ||
		!strings.Contains(got.Async.Summary, "2 servers, 3 tools") || len(got.Sync.Search) != 1 || len(got.Async.Search) != 1 ||
		len(got.Echoed) != 2 || got.Echoed[1]["b"] != 2 {
		t.Errorf("helpers: %s", res.Result)
	}
}

// TestPythonStopKeepsLogs: when the request ends while a Python plan
// waits for a timer (with or without Replay), the bootstrap stops the plan
// and sends its result with the logs so far; a worker killed after
// stopGrace would lose them. (A plan waiting for a call already ends
// with that call's cancelled reply.)
func TestPythonStopKeepsLogs(t *testing.T) {
	l := limits(t)
	l.Timeout = 20 * time.Second
	p := newPythonPool(t, l, WithSize(2))
	plan := `import asyncio
await call_tool("echo", {})
print("before")
await asyncio.sleep(10)
result = "never"`
	for _, replay := range []*vm.Replay{nil, {Seed: 3, EpochMs: 1_700_000_000_000}} {
		t.Run(fmt.Sprintf("replay=%v", replay != nil), func(t *testing.T) {
			h := pythonHost()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			call := h.Call
			h.Call = func(cctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
				// The reply is on its way before the request ends.
				time.AfterFunc(200*time.Millisecond, cancel)
				return call(cctx, name, input)
			}
			res := p.RunPython(ctx, plan, h, vm.Options{RunID: "py-stop", Limits: l, Context: json.RawMessage(`{}`), Replay: replay})
			b, _ := json.Marshal(res)
			if res.Status != vm.StatusCancelled || len(res.Logs) != 1 || res.Logs[0].Message != "before" {
				t.Fatalf("got %s", b)
			}
		})
	}
}
