package vm

import (
	"context"
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

// compile builds a Checked the way package ast does: the script is the
// body of an async function and the program evaluates to that function.
func compile(tb testing.TB, script string) *ast.Checked {
	tb.Helper()
	p, err := goja.Compile("plan.js", "(async function(){"+script+"\n})", true)
	if err != nil {
		tb.Fatalf("compile %q: %v", script, err)
	}
	return &ast.Checked{Program: p}
}

// limits returns a preset's limits; tests start from balanced unless they
// test a preset.
func limits(tb testing.TB, name presets.Name) presets.Limits {
	tb.Helper()
	l, ok := presets.LimitsFor(name)
	if !ok {
		tb.Fatalf("no preset %s", name)
	}
	return l
}

// runScript runs script on the balanced preset with the given changes.
func runScript(tb testing.TB, h Host, script string, change ...func(*presets.Limits)) *Result {
	tb.Helper()
	l := limits(tb, presets.Balanced)
	for _, c := range change {
		c(&l)
	}
	if h == nil {
		h = &mcptest.Host{}
	}
	return Run(context.Background(), compile(tb, script), h, Options{RunID: "test", Limits: l})
}

// describe renders a result for failure messages.
func describe(res *Result) string {
	b, _ := json.Marshal(res)
	return string(b)
}

func policyErr(code toolerr.Code, msg string) error {
	return &toolerr.Error{Code: code, Message: msg}
}

// settleGoroutines waits until the goroutine count is back to at most
// base; regexp2's shared timeout clock may outlive a run by a second.
func settleGoroutines(tb testing.TB, base int) {
	tb.Helper()
	deadline := time.Now().Add(3 * time.Second)
	for runtime.NumGoroutine() > base {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<16)
			n := runtime.Stack(buf, true)
			tb.Fatalf("goroutines: %d, want at most %d\n%s", runtime.NumGoroutine(), base, buf[:n])
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// noLeaks reports Go-internal details in a result.
func noLeaks(tb testing.TB, res *Result) {
	tb.Helper()
	s := describe(res)
	for _, bad := range []string{"goroutine ", ".go:", "/secret/", "github.com/", "runtime.", "panic"} {
		if strings.Contains(s, bad) {
			tb.Errorf("result leaks %q: %s", bad, s)
		}
	}
}

// compileRaw compiles a program as it is, without the plan wrapper.
func compileRaw(tb testing.TB, src string) *ast.Checked {
	tb.Helper()
	p, err := goja.Compile("raw.js", src, true)
	if err != nil {
		tb.Fatal(err)
	}
	return &ast.Checked{Program: p}
}
