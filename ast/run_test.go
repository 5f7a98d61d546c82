package ast

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/presets"
)

// runPlan runs a checked plan the way package vm does: the program
// evaluates to the async function, which is called without arguments.
func runPlan(t *testing.T, c *Checked) goja.Value {
	t.Helper()
	rt := goja.New()
	fnv, err := rt.RunProgram(c.Program)
	if err != nil {
		t.Fatalf("running the program: %v", err)
	}
	fn, ok := goja.AssertFunction(fnv)
	if !ok {
		t.Fatalf("the program evaluates to %v, not a function", fnv)
	}
	res, err := fn(goja.Undefined())
	if err != nil {
		t.Fatalf("calling the plan: %v", err)
	}
	p, ok := res.Export().(*goja.Promise)
	if !ok {
		t.Fatalf("the plan returned %v, not a promise", res)
	}
	if p.State() != goja.PromiseStateFulfilled {
		t.Fatalf("the plan's promise is %v: %v", p.State(), p.Result())
	}
	return p.Result()
}

func TestValidateRunsPlan(t *testing.T) {
	r, _ := RulesForPreset(presets.Secure)
	for src, want := range map[string]int64{
		"return 1 + 2": 3,
		"const x = await Promise.resolve(3); return x * 2":       6,
		"async function main(){ return 7 }\nreturn main();":      7,
		"// a comment on the last line\nreturn 4 // and another": 4,
	} {
		c, err := Validate(src, r)
		if err != nil {
			t.Fatalf("Validate(%q): %v", src, err)
		}
		if got := runPlan(t, c).ToInteger(); got != want {
			t.Errorf("%q returned %d, want %d", src, got, want)
		}
	}
}

var stackPosition = regexp.MustCompile(`plan\.js:(\d+):(\d+)`)

// rejectionPosition runs a plan that rejects and returns the program
// position goja records in the error's stack.
func rejectionPosition(t *testing.T, c *Checked) (line, col int) {
	t.Helper()
	rt := goja.New()
	fnv, err := rt.RunProgram(c.Program)
	if err != nil {
		t.Fatal(err)
	}
	fn, _ := goja.AssertFunction(fnv)
	res, err := fn(goja.Undefined())
	if err != nil {
		t.Fatal(err)
	}
	p := res.Export().(*goja.Promise)
	if p.State() != goja.PromiseStateRejected {
		t.Fatalf("the plan did not reject: %v", p.Result())
	}
	stack := p.Result().ToObject(rt).Get("stack").String()
	m := stackPosition.FindStringSubmatch(stack)
	if m == nil {
		t.Fatalf("no position in %q", stack)
	}
	line, _ = strconv.Atoi(m[1])
	col, _ = strconv.Atoi(m[2])
	return line, col
}
