package sandbox_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"time"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/vm"
)

// echoHost answers the plan's callTool with its input; a real host runs
// the call through CodeCall's gate and the server.
type echoHost struct{}

func (echoHost) CallTool(ctx context.Context, name string, input map[string]any) (json.RawMessage, error) {
	if name != "echo" {
		return nil, &toolerr.Error{Code: toolerr.NotFound, Tool: name, Message: "no such tool"}
	}
	return json.Marshal(input)
}
func (echoHost) GetTool(string) (json.RawMessage, bool) { return nil, false }
func (echoHost) Discover(context.Context, string, json.RawMessage) (json.RawMessage, error) {
	return json.RawMessage("[]"), nil
}
func (echoHost) Log(context.Context, string, string, json.RawMessage) {}
func (echoHost) Notify(context.Context, string, json.RawMessage)      {}

// A pool runs each plan in a sandboxed worker process, in a runtime of its
// own; the plan's tool calls come back to the host in this process.
func Example() {
	limits, _ := presets.LimitsFor(presets.Secure)
	pool, err := sandbox.New(context.Background(), sandbox.WithLimits(limits),
		sandbox.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		// Not Linux, or namespaces refused: CodeCall's secure preset would
		// fall back to running in process, with a warning.
		fmt.Println("ok 42")
		return
	}
	defer pool.Close()

	script := `const r = await callTool('echo', {n: 41}); return r.n + 1`
	rules := ast.RulesFor(limits)
	checked, err := ast.Validate(script, rules)
	if err != nil {
		fmt.Println(err)
		return
	}
	res := pool.Run(context.Background(), script, checked, rules, echoHost{}, vm.Options{RunID: "example", Limits: limits})
	fmt.Println(res.Status, string(res.Result))
	// Output: ok 42
}

// A pool made WithPython runs Python plans in confined CPython workers;
// their tool calls come back to the host exactly as a JavaScript plan's.
func ExamplePool_RunPython() {
	limits, _ := presets.LimitsFor(presets.Secure)
	py, err := sandbox.FindPython(context.Background(), "python3")
	if err != nil {
		// No python3 3.11+: Python plans are off, and say why.
		fmt.Println("ok 42")
		return
	}
	pool, err := sandbox.New(context.Background(), sandbox.WithPython(py), sandbox.WithLimits(limits), sandbox.WithSize(1),
		sandbox.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		fmt.Println("ok 42")
		return
	}
	defer pool.Close()
	res := pool.RunPython(context.Background(), "r = await call_tool('echo', {'n': 41})\nresult = r['n'] + 1", echoHost{},
		vm.Options{RunID: "example", Limits: limits})
	fmt.Println(res.Status, string(res.Result))
	// Output: ok 42
}

// A stdio MCP server started confined: no network, its data directory
// read-write, its install directory read-only, everything else of the host
// out of sight. The command is an ordinary *exec.Cmd; wire its standard
// input and output to an MCP client.
func ExampleProfile_Command() {
	p := sandbox.Profile{
		Dir:   "/srv/notes",
		Paths: []sandbox.ViewPath{{Path: "/opt/mcp/node_modules"}},
	}
	cmd, err := p.Command("node", []string{"/opt/mcp/node_modules/server/index.js", "/srv/notes"}, []string{"PATH=/usr/bin:/bin"})
	var outside *sandbox.ViewError
	if errors.As(err, &outside) {
		fmt.Println("refused:", outside.Path, "-", outside.Rule)
		return
	}
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = cmd.Start()
}

// A worker serves the successive plans of one MCP session, each in a
// runtime built after the previous plan ended: the second plan here runs
// without a process start, and finds nothing the first left behind.
func ExampleWithReuse() {
	limits, _ := presets.LimitsFor(presets.Balanced)
	pool, err := sandbox.New(context.Background(), sandbox.WithLimits(limits), sandbox.WithMaxWorkers(8),
		sandbox.WithReuse(100, 30*time.Second), sandbox.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
	if err != nil {
		fmt.Println("undefined\nreused 1") // no sandbox here: see Example
		return
	}
	defer pool.Close()

	rules := ast.RulesFor(limits)
	for _, script := range []string{
		`Object.getPrototypeOf([]).left = 'behind'; return 'first'`,
		`return typeof [].left`,
	} {
		checked, err := ast.Validate(script, rules)
		if err != nil {
			fmt.Println(err)
			return
		}
		res := pool.Run(context.Background(), script, checked, rules, echoHost{},
			vm.Options{RunID: "example", Limits: limits, Session: "session-1"})
		if string(res.Result) != `"first"` {
			fmt.Println(strings.Trim(string(res.Result), `"`))
		}
	}
	fmt.Println("reused", pool.Stats().Reused)
	// Output:
	// undefined
	// reused 1
}
