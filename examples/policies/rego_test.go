package policies_test

import (
	"bytes"
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/format"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"

	"github.com/codecall-go/codecall/internal/mcptest"
)

// policyDir is the example policy set: the directory of this package.
const policyDir = "."

// regoFiles returns the .rego files under dir, sorted.
func regoFiles(dir string) ([]string, error) {
	var files []string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".rego") {
			files = append(files, path)
		}
		return nil
	})
	sort.Strings(files)
	return files, err
}

// regoProblems parses every .rego file under dir as Rego v1, compiles them
// together in strict mode (unused variables and imports are errors) and
// checks that `opa fmt` would leave each file as it is. Every problem starts
// with file:line, so an editor can jump to it.
func regoProblems(dir string) ([]string, error) {
	files, err := regoFiles(dir)
	if err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no .rego files under %s", dir)
	}
	var problems []string
	modules := map[string]*ast.Module{}
	for _, file := range files {
		src, err := os.ReadFile(file)
		if err != nil {
			return nil, err
		}
		mod, err := ast.ParseModuleWithOpts(file, string(src), ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
		if err != nil {
			problems = append(problems, astErrors(err)...)
			continue
		}
		modules[file] = mod
		formatted, err := format.SourceWithOpts(file, src, format.Opts{RegoVersion: ast.RegoV1})
		if err != nil {
			problems = append(problems, astErrors(err)...)
			continue
		}
		if !bytes.Equal(formatted, src) {
			problems = append(problems, fmt.Sprintf("%s:%d: not formatted as `opa fmt` writes it; run `opa fmt -w %s`",
				file, firstDifferentLine(src, formatted), file))
		}
	}
	if len(problems) > 0 {
		return problems, nil
	}
	compiler := ast.NewCompiler().WithStrict(true)
	if compiler.Compile(modules); compiler.Failed() {
		problems = append(problems, astErrors(compiler.Errors)...)
	}
	return problems, nil
}

// astErrors splits an OPA error into one line per error; ast.Error already
// starts with file:line.
func astErrors(err error) []string {
	var errs ast.Errors
	switch e := err.(type) {
	case ast.Errors:
		errs = e
	case *ast.Error:
		errs = ast.Errors{e}
	default:
		return []string{err.Error()}
	}
	lines := make([]string, 0, len(errs))
	for _, e := range errs {
		lines = append(lines, e.Error())
	}
	return lines
}

// firstDifferentLine returns the 1-based number of the first line in which
// a and b differ.
func firstDifferentLine(a, b []byte) int {
	la, lb := strings.Split(string(a), "\n"), strings.Split(string(b), "\n")
	for i := range min(len(la), len(lb)) {
		if la[i] != lb[i] {
			return i + 1
		}
	}
	return min(len(la), len(lb)) + 1
}

// regoRun is the outcome of the Rego unit tests under a directory.
type regoRun struct {
	results []*tester.Result
	// why holds, for each test that did not pass, what went wrong: the
	// failing expression with file:line and its variables, or the error.
	why map[string]string
	// uncovered lists the lines of policy (non-test) files that no test
	// evaluated, as file:line.
	uncovered []string
}

// testName is the name of a Rego test as `opa test` prints it.
func testName(res *tester.Result) string {
	return res.Package + "." + res.Name
}

// failures describes every test that did not pass, one line each, starting
// with the test rule's file:line.
func (r regoRun) failures() []string {
	var out []string
	for _, res := range r.results {
		if res.Pass() {
			continue
		}
		where := ""
		if res.Location != nil {
			where = fmt.Sprintf("%s:%d: ", res.Location.File, res.Location.Row)
		}
		out = append(out, where+testName(res)+": "+r.why[testName(res)])
	}
	return out
}

// runRegoTests loads the .rego and data files under dir as `opa test` does
// and runs every test_ rule with coverage. A built-in error (a type error in
// a call, a bad time zone) is reported as the test's error rather than
// passing unnoticed as an undefined expression. When a test fails, the tests run again with tracing (which OPA
// cannot combine with coverage) to find the expression that failed.
func runRegoTests(ctx context.Context, dir string) (regoRun, error) {
	modules, store, err := tester.Load([]string{dir}, nil)
	if err != nil {
		return regoRun{}, fmt.Errorf("loading %s: %w", dir, err)
	}
	newRunner := func() *tester.Runner {
		return tester.NewRunner().
			SetStore(store).
			SetCompiler(ast.NewCompiler().WithStrict(true)).
			RaiseBuiltinErrors(true)
	}
	coverage := cover.New()
	ch, err := newRunner().SetCoverageQueryTracer(coverage).SetCoverageRuns([]cover.Kind{}).Run(ctx, modules)
	if err != nil {
		return regoRun{}, fmt.Errorf("compiling %s: %w", dir, err)
	}
	run := regoRun{why: map[string]string{}}
	failed := false
	for res := range ch {
		run.results = append(run.results, res)
		switch {
		case res.Error != nil:
			run.why[testName(res)] = "error: " + res.Error.Error()
		case res.Skip:
			run.why[testName(res)] = "skipped: todo_test_ rules count as unfinished"
		case res.Fail:
			run.why[testName(res)] = "failed"
			failed = true
		}
	}
	if failed {
		traced, err := newRunner().EnableTracing(true).Run(ctx, modules)
		if err != nil {
			return regoRun{}, fmt.Errorf("compiling %s: %w", dir, err)
		}
		for res := range traced {
			if res.Fail && res.Error == nil {
				run.why[testName(res)] = "failed at " + failedExpression(res.Trace)
			}
		}
	}
	for file, fr := range coverage.Report(modules).Files {
		if strings.HasSuffix(file, "_test.rego") {
			continue
		}
		for _, rng := range fr.NotCovered {
			for row := rng.Start.Row; row <= rng.End.Row; row++ {
				run.uncovered = append(run.uncovered, fmt.Sprintf("%s:%d", file, row))
			}
		}
	}
	slices.Sort(run.uncovered)
	return run, nil
}

// failedExpression finds the last expression that failed in a test's trace,
// as `opa test` does, and shows it with the values of its variables.
func failedExpression(trace []*topdown.Event) string {
	for _, e := range slices.Backward(trace) {
		if e.Op != topdown.FailOp || e.Location == nil || e.QueryID == 0 {
			continue
		}
		if expr, ok := e.Node.(*ast.Expr); ok {
			if _, every := expr.Terms.(*ast.Every); every {
				continue // the failing expression inside the body comes earlier
			}
		}
		var buf bytes.Buffer
		if err := topdown.PrettyEvent(&buf, e, topdown.PrettyEventOpts{PrettyVars: true}); err != nil {
			return fmt.Sprintf("%s:%d", e.Location.File, e.Location.Row)
		}
		return fmt.Sprintf("%s:%d:\n%s", e.Location.File, e.Location.Row, strings.TrimRight(buf.String(), "\n"))
	}
	return "an unknown expression"
}

// TestRegoFilesCompile fails, naming file:line, when a .rego file does not
// parse, does not compile in strict mode or is not formatted.
func TestRegoFilesCompile(t *testing.T) {
	problems, err := regoProblems(policyDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestRegoUnitTests runs the *_test.rego rules through OPA's tester, one Go
// subtest per Rego test, and requires every line of the policy to be
// evaluated by some test.
func TestRegoUnitTests(t *testing.T) {
	run, err := runRegoTests(t.Context(), policyDir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.results) == 0 {
		t.Fatal("no test_ rules found in *_test.rego")
	}
	for _, res := range run.results {
		t.Run(testName(res), func(t *testing.T) {
			if !res.Pass() {
				where := ""
				if res.Location != nil {
					where = fmt.Sprintf("%s:%d: ", res.Location.File, res.Location.Row)
				}
				t.Error(where + run.why[testName(res)])
			}
		})
	}
	for _, line := range run.uncovered {
		t.Errorf("%s: no Rego test evaluates this line", line)
	}
}

func TestRegoProblemsNameFileAndLine(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		want  string
	}{
		{
			name:  "syntax error",
			files: map[string]string{"broken.rego": "package codecall\n\nallow if {\n\tinput.x ==\n}\n"},
			want:  "broken.rego:5:",
		},
		{
			name:  "Rego v0 syntax",
			files: map[string]string{"old.rego": "package codecall\n\nallow {\n\tinput.x == 1\n}\n"},
			want:  "old.rego:3:",
		},
		{
			name:  "unsafe variable",
			files: map[string]string{"unsafe.rego": "package codecall\n\nallow if {\n\tx > 1\n}\n"},
			want:  "unsafe.rego:4:",
		},
		{
			name:  "unused variable in strict mode",
			files: map[string]string{"strict.rego": "package codecall\n\nallow if {\n\tx := input.y\n\tinput.z == 1\n}\n"},
			want:  "strict.rego:4:",
		},
		{
			name:  "not formatted",
			files: map[string]string{"ugly.rego": "package codecall\n\nallow if {\n    input.x == 1\n}\n"},
			want:  "ugly.rego:4: not formatted",
		},
		{
			name: "error across files",
			files: map[string]string{
				"a.rego": "package codecall\n\ndouble(x) := x * 2\n",
				"b.rego": "package codecall\n\ny := double(1, 2)\n",
			},
			want: "b.rego:3:",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := mcptest.WritePolicies(t, tt.files)
			problems, err := regoProblems(dir)
			if err != nil {
				t.Fatal(err)
			}
			joined := strings.Join(problems, "\n")
			if !strings.Contains(joined, tt.want) {
				t.Errorf("problems do not mention %q:\n%s", tt.want, joined)
			}
		})
	}
}

func TestRegoProblemsWithoutFiles(t *testing.T) {
	if _, err := regoProblems(t.TempDir()); err == nil {
		t.Error("an empty directory passed the check")
	}
}

// TestRegoTestFailuresAreReported proves that runRegoTests reports a failing
// test with the expression that failed, a test whose built-in call fails
// with that error, and an uncovered policy line.
func TestRegoTestFailuresAreReported(t *testing.T) {
	dir := mcptest.WritePolicies(t, map[string]string{
		"p.rego": "package p\n\nlimit := 10\n\nbig if input.n > limit\n\nunused if input.n < 0\n",
		"p_test.rego": "package p_test\n\nimport data.p\n\n" +
			"test_passes if p.big with input as {\"n\": 11}\n\n" +
			"test_fails if p.big with input as {\"n\": 1}\n\n" +
			"test_errors if {\n\tzero := count([])\n\t1 / zero > 0\n}\n",
	})
	run, err := runRegoTests(t.Context(), dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.results) != 3 {
		t.Fatalf("got %d results, want 3", len(run.results))
	}
	failed := strings.Join(run.failures(), "\n")
	for _, want := range []string{"p_test.test_fails: failed at ", "p_test.rego:7:\n", "undefined", "p_test.test_errors: error: ", "divide by zero"} {
		if !strings.Contains(failed, want) {
			t.Errorf("failures do not mention %q:\n%s", want, failed)
		}
	}
	if strings.Contains(failed, "test_passes") {
		t.Errorf("a passing test is reported as failed:\n%s", failed)
	}
	if !slices.Contains(run.uncovered, filepath.Join(dir, "p.rego")+":7") {
		t.Errorf("uncovered lines %v do not include p.rego:7", run.uncovered)
	}
}

func TestRegoTestsLoadErrorNamesFile(t *testing.T) {
	dir := mcptest.WritePolicies(t, map[string]string{"bad.rego": "package p\n\nx := {\n"})
	_, err := runRegoTests(t.Context(), dir)
	if err == nil || !strings.Contains(err.Error(), "bad.rego:") {
		t.Errorf("error %v does not name bad.rego", err)
	}
}
