package sandbox

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/vm"
)

// TestPythonAttacks runs hostile Python plans in Python workers: each is
// contained by the kernel or the server, ends with the status that says
// what happened, and the pool goes on serving plans.
func TestPythonAttacks(t *testing.T) {
	l := limits(t)
	l.Timeout = 1500 * time.Millisecond
	l.MemoryBytes = 64 << 20
	p := newPythonPool(t, l, WithSize(2), WithMaxWorkers(4))
	// Every case but the CPU bombs runs under a long timeout: a plan that
	// must end by another cause (a memory cap, an error, its own end) still
	// does on a loaded machine, where Python's start alone may take
	// seconds. The CPU bombs end at the short deadline, their cause.
	lSlow := l
	lSlow.Timeout = 15 * time.Second
	slow := newPythonPool(t, lSlow, WithSize(2), WithMaxWorkers(4))
	py := p.Python()
	stdlibFile := py.Dirs[0] + "/os.py"

	type check func(t *testing.T, res *vm.Result)
	status := func(want vm.Status, contains ...string) check {
		return func(t *testing.T, res *vm.Result) {
			t.Helper()
			b, _ := json.Marshal(res)
			if res.Status != want {
				t.Fatalf("status %s, want %s: %s", res.Status, want, b)
			}
			for _, c := range contains {
				if !strings.Contains(string(b), c) {
					t.Errorf("result lacks %q: %s", c, b)
				}
			}
		}
	}
	cases := []struct {
		name, plan string
		check      check
	}{
		{"socket connect", `import socket
s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.connect(("1.1.1.1", 80))`, status(vm.StatusRuntimeError, "PermissionError", "Operation not permitted")},
		{"unix socket", `import socket
socket.socket(socket.AF_UNIX, socket.SOCK_STREAM).connect("/tmp/x")`, status(vm.StatusRuntimeError, "PermissionError")},
		{"subprocess", `import subprocess
result = subprocess.run(["/bin/sh", "-c", "id"], capture_output=True).stdout`, status(vm.StatusRuntimeError, `"source":"script"`)},
		{"fork bomb", `import os
while True:
    os.fork()`, status(vm.StatusRuntimeError, "PermissionError")},
		{"ctypes syscalls", `import ctypes
libc = ctypes.CDLL(None, use_errno=True)
result = {"socket": libc.socket(2, 1, 0), "unshare": libc.unshare(0x10000000), "ptrace": libc.ptrace(16, 1, 0, 0), "mount": libc.mount(b"x", b"/tmp", b"tmpfs", 0, None)}`,
			status(vm.StatusOK, `"socket":-1`, `"unshare":-1`, `"ptrace":-1`, `"mount":-1`)},
		{"ctypes crash", `import ctypes
ctypes.string_at(1)`, status(vm.StatusLimitExceeded, `"limit":"worker"`)},
		{"read host files", `import os
out = {}
for path in ["/etc/passwd", "/proc/1/environ", "/proc/self/environ", "/root/.ssh/id_rsa", "/etc/hostname"]:
    try:
        open(path).read()
        out[path] = "READ"
    except OSError as e:
        out[path] = type(e).__name__
try:
    out["/"] = os.listdir("/")
except OSError as e:
    out["/"] = type(e).__name__
result = out`, func(t *testing.T, res *vm.Result) {
			status(vm.StatusOK)(t, res)
			if strings.Contains(string(res.Result), "READ") || !strings.Contains(string(res.Result), `"/":"PermissionError"`) {
				t.Errorf("host files: %s", res.Result)
			}
		}},
		{"write outside scratch", fmt.Sprintf(`out = {}
for path in ["/evil", "/usr/evil", %q]:
    try:
        open(path, "a").write("x")
        out[path] = "WROTE"
    except OSError as e:
        out[path] = type(e).__name__
open("/tmp/scratch.txt", "w").write("ok")
out["scratch"] = open("/tmp/scratch.txt").read()
result = out`, stdlibFile), func(t *testing.T, res *vm.Result) {
			status(vm.StatusOK)(t, res)
			if strings.Contains(string(res.Result), "WROTE") || !strings.Contains(string(res.Result), `"scratch":"ok"`) {
				t.Errorf("writes: %s", res.Result)
			}
		}},
		{"fill the scratch", `data = b"x" * (1 << 20)
with open("/tmp/big", "wb") as f:
    for i in range(64):
        f.write(data)`, status(vm.StatusRuntimeError, "OSError")},
		{"exec a shell", `import os
os.execv("/bin/sh", ["sh", "-c", "id"])`, status(vm.StatusRuntimeError, "FileNotFoundError")},
		{"exec python again", `import os, sys
os.execv(sys.executable, [sys.executable, "-c", "print('escaped')"])`, status(vm.StatusLimitExceeded, `"limit":"worker"`)},
		{"memory bomb", `blocks = []
while True:
    blocks.append(bytearray(16 << 20))`, status(vm.StatusLimitExceeded, `"limit":"memoryBytes"`)},
		{"one huge allocation", `x = "a" * (1 << 31)`, status(vm.StatusLimitExceeded, `"limit":"memoryBytes"`)},
		{"cpu bomb", `while True:
    pass`, status(vm.StatusTimeout, "timeout")},
		{"cpu bomb that catches the deadline", `while True:
    try:
        while True:
            pass
    except BaseException:
        pass`, status(vm.StatusTimeout)},
		{"cpu bomb in C", `x = 7 ** (10 ** 9)`, status(vm.StatusTimeout)},
		{"huge output", `for i in range(100000):
    print("x" * 100)
result = "done"`, status(vm.StatusOK, "logs_truncated", `"result":"done"`)},
		{"raw output on stdout", `import sys
sys.__stdout__.write("not a frame" * 1000)
sys.__stdout__.flush()`, status(vm.StatusLimitExceeded, `"limit":"worker"`, "broke the bridge protocol")},
		{"replace call_tool", `async def call_tool(name, input):
    return {"forged": True}
result = await call_tool("crm.denied", {})`, func(t *testing.T, res *vm.Result) {
			// The plan fools only itself: no call reached the host.
			status(vm.StatusOK, `"forged":true`)(t, res)
			if len(res.ToolTrace) != 0 {
				t.Errorf("a replaced call_tool reached the host: %+v", res.ToolTrace)
			}
		}},
		{"bootstrap internals call a denied tool", `import __main__
__main__._send({"t": "call", "id": 9999, "name": "crm.denied", "input": {}})
r = await call_tool("crm.denied", {})`, status(vm.StatusToolError, "ACCESS_DENIED")},
		{"forged result claims a call", `import __main__, os
__main__._send({"t": "result", "result": {"status": "ok", "result": 1, "runId": "py", "metrics": {"durationMs": 1, "toolCalls": 1},
    "toolTrace": [{"toolName": "crm.denied", "ok": True, "durationMs": 1}]}})
os._exit(0)`, status(vm.StatusLimitExceeded, "claims tool calls the server did not serve")},
		{"forged oversized frame", `import os
os.write(1, b"\xff\xff\xff\xff" + b"x" * 64)`, status(vm.StatusLimitExceeded, `"limit":"worker"`)},
		{"sys.exit", `import sys
sys.exit(3)`, status(vm.StatusRuntimeError, "SystemExit")},
		{"too many tool calls", `for i in range(200):
    await call_tool("echo", {"i": i})`, status(vm.StatusLimitExceeded, `"limit":"maxToolCalls"`)},
		{"more calls at once than maxConcurrency", `import asyncio
rs = await asyncio.gather(*[call_tool("echo", {"i": i}) for i in range(40)])
result = sum(r["i"] for r in rs)`, status(vm.StatusOK, `"result":780`)},
		{"huge result", `result = ["x" * 1000] * 10000`, status(vm.StatusOK, `"truncated":true`, "result_truncated")},
		{"result not JSON", `result = {1, 2}`, status(vm.StatusRuntimeError, "not JSON-serialisable")},
		{"lone surrogate", `result = {"s": "\ud800", "e": "\u00e9"}`, status(vm.StatusOK, `"s":"?"`, `"e":"é"`)},
		{"deep recursion", `def f(n):
    return f(n + 1)
f(0)`, status(vm.StatusLimitExceeded, `"limit":"maxStackDepth"`)},
	}
	h := pythonHost()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			pool, lim := slow, lSlow
			if strings.HasPrefix(c.name, "cpu bomb") {
				pool, lim = p, l
			}
			res := runPython(t, pool, h, lim, c.plan)
			c.check(t, res)
			// The pool still serves.
			ok := runPython(t, pool, h, lim, `result = await mcp_crm.find_contacts()`)
			if ok.Status != vm.StatusOK {
				t.Fatalf("after the attack, a plain plan ended %s: %+v", ok.Status, ok.Error)
			}
		})
	}
}
