package report

import (
	"bytes"
	"math"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestSuiteConsistent checks that the summary's figures can only come
// from benchmarks the suite runs and insists on: a figure whose benchmark
// is not wanted would go missing without failing the run.
func TestSuiteConsistent(t *testing.T) {
	groups := map[string]Group{}
	for _, g := range Suite() {
		if _, dup := groups[g.Name]; dup {
			t.Errorf("group %q twice", g.Name)
		}
		groups[g.Name] = g
		re, err := regexp.Compile(g.Bench)
		if err != nil {
			t.Errorf("group %s: %v", g.Name, err)
			continue
		}
		for _, w := range g.wanted(false) {
			if top, _, _ := strings.Cut(w, "/"); !re.MatchString(top) {
				t.Errorf("group %s wants %s, which its -bench %q does not select", g.Name, w, g.Bench)
			}
		}
		if g.Benchtime == "" || g.Short == "" || !strings.HasPrefix(g.Package, "./") {
			t.Errorf("group %s: benchtime %q, short %q, package %q", g.Name, g.Benchtime, g.Short, g.Package)
		}
	}
	for _, f := range Figures() {
		for _, ref := range []Ref{f.Num, f.Den} {
			if ref == (Ref{}) {
				continue
			}
			g, ok := groups[ref.Group]
			if !ok {
				t.Errorf("figure %q: no group %q", f.Label, ref.Group)
				continue
			}
			if !containsString(g.wanted(false), ref.Bench) {
				t.Errorf("figure %q: group %s does not want %s", f.Label, ref.Group, ref.Bench)
			}
		}
		if f.Guard.set() && f.Goal.set() && f.Guard.Min == f.Goal.Min && !f.Guard.holds(f.Goal.Value) {
			t.Errorf("figure %q: its guard %s excludes its own goal %s", f.Label, f.Guard, f.Goal)
		}
	}
}

func TestCheck(t *testing.T) {
	g := Group{Name: "g", Bench: "^BenchmarkA$", Want: []string{"BenchmarkA/x", "BenchmarkA/y", "BenchmarkA/big (full)"},
		MaySkip: []string{"corpus not found"}}
	for _, tc := range []struct {
		name     string
		out      Output
		short    bool
		strict   bool
		problems []string // substrings, one per problem
		skipped  int
	}{
		{name: "all there", out: Output{Passed: true, Results: []Result{{Name: "BenchmarkA/x"}, {Name: "BenchmarkA/y"}, {Name: "BenchmarkA/big"}}}},
		{name: "the full-only one is not wanted in -short runs", short: true,
			out: Output{Passed: true, Results: []Result{{Name: "BenchmarkA/x"}, {Name: "BenchmarkA/y"}}}},
		{name: "missing", out: Output{Passed: true, Results: []Result{{Name: "BenchmarkA/x"}}},
			problems: []string{"BenchmarkA/y reported no result", "BenchmarkA/big reported no result"}},
		{name: "an expected skip", skipped: 1, out: Output{Passed: true, Results: []Result{{Name: "BenchmarkA/x"}, {Name: "BenchmarkA/big"}},
			Skips: []Event{{Name: "BenchmarkA/y", Output: "x_test.go:1: corpus not found at ../corpus"}}}},
		{name: "an expected skip, strict", strict: true, out: Output{Passed: true, Results: []Result{{Name: "BenchmarkA/x"}, {Name: "BenchmarkA/big"}},
			Skips: []Event{{Name: "BenchmarkA/y", Output: "x_test.go:1: corpus not found at ../corpus"}}},
			problems: []string{"BenchmarkA/y skipped (a benchmark that cannot run is a failing test)"}},
		{name: "an unexpected skip of the parent", out: Output{Passed: true, Skips: []Event{{Name: "BenchmarkA", Output: "x_test.go:1: flaky"}}},
			problems: []string{"BenchmarkA skipped"}},
		{name: "a failure", out: Output{Results: []Result{{Name: "BenchmarkA/x"}, {Name: "BenchmarkA/big"}},
			Failures: []Event{{Name: "BenchmarkA/y", Output: "x_test.go:9: APPROVAL_REQUIRED"}}},
			problems: []string{"BenchmarkA/y failed:\n    x_test.go:9: APPROVAL_REQUIRED", "BenchmarkA/y reported no result"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := GroupRun{Group: g, Output: tc.out}
			check(&run, Options{Short: tc.short, Strict: tc.strict})
			if len(run.Problems) != len(tc.problems) {
				t.Fatalf("problems %q, want %d like %q", run.Problems, len(tc.problems), tc.problems)
			}
			for i, want := range tc.problems {
				if !strings.Contains(run.Problems[i], want) {
					t.Errorf("problem %d: %q, want it to contain %q", i, run.Problems[i], want)
				}
			}
			if len(run.Skipped) != tc.skipped {
				t.Errorf("skipped %v, want %d", run.Skipped, tc.skipped)
			}
		})
	}
}

func TestFigures(t *testing.T) {
	rep := &Report{Runs: []GroupRun{
		{Group: Group{Name: "a"}, Output: Output{Results: []Result{
			{Name: "BenchmarkR", Metrics: map[string]float64{"x/y": 3}},
			{Name: "BenchmarkR", Metrics: map[string]float64{"x/y": 5}},
			{Name: "BenchmarkR", Metrics: map[string]float64{"x/y": 4}},
			{Name: "BenchmarkN", Metrics: map[string]float64{"p50-µs": 300}},
			{Name: "BenchmarkD", Metrics: map[string]float64{"p50-µs": 100}},
		}, Skips: []Event{{Name: "BenchmarkS", Output: "s_test.go:3: corpus not found\nmore"}}}},
	}}
	rows := rep.figures([]Figure{
		{Label: "ratio in one loop", Num: Ref{"a", "BenchmarkR", "x/y"}, Unit: "×", Goal: Bound{Value: 2}, Guard: Bound{Value: 10}},
		{Label: "ratio of two", Num: Ref{"a", "BenchmarkN", "p50-µs"}, Den: Ref{"a", "BenchmarkD", "p50-µs"}, Unit: "×", Guard: Bound{Value: 2.5}},
		{Label: "skipped", Num: Ref{"a", "BenchmarkS", "p50-µs"}},
		{Label: "no such metric", Num: Ref{"a", "BenchmarkD", "p95-µs"}},
		{Label: "group not run", Num: Ref{"b", "BenchmarkB", "p50-µs"}},
		{Label: "throughput", Num: Ref{"a", "BenchmarkN", "p50-µs"}, Goal: Bound{Value: 500, Min: true}},
	})
	want := []struct {
		value          float64
		missing        string
		met, guardFail bool
	}{
		{4, "", false, false},
		{3, "", true, true},
		{0, "skipped: s_test.go:3: corpus not found", false, false},
		{0, "BenchmarkD did not report p95-µs", false, false},
		{0, "not run (-only)", false, false},
		{300, "", false, false},
	}
	for i, w := range want {
		r := rows[i]
		if r.Value != w.value || r.Missing != w.missing || r.GoalMet != w.met || r.GuardFailed != w.guardFail {
			t.Errorf("%s: value %v, missing %q, met %v, guard failed %v; want %+v", r.Figure.Label, r.Value, r.Missing, r.GoalMet, r.GuardFailed, w)
		}
	}
	if got := rows[0].measured(); got != "4× (3–5)" {
		t.Errorf("measured %q, want the median and the range of the rounds", got)
	}
	rep.Rows = rows
	if !rep.Failed() {
		t.Error("a figure outside its guard does not fail the report")
	}
	var text bytes.Buffer
	if err := rep.WriteText(&text); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(text.String(), `"ratio of two" is 3×, outside its regression guard ≤ 2.5`) {
		t.Errorf("the text does not name the guard that failed:\n%s", text.String())
	}
}

func TestFormatValue(t *testing.T) {
	for _, tc := range []struct {
		v    float64
		want string
	}{{0, "0"}, {0.125, "0.125"}, {1, "1"}, {1.234, "1.23"}, {12.34, "12.3"}, {123.4, "123"}, {999.6, "1,000"},
		{1234.5, "1,235"}, {1234567, "1,234,567"}, {-2500, "-2,500"}, {math.NaN(), "NaN"}} {
		if got := formatValue(tc.v); got != tc.want {
			t.Errorf("formatValue(%v) = %q, want %q", tc.v, got, tc.want)
		}
	}
	for _, tc := range []struct {
		v          float64
		unit, want string
	}{{850, "ns/op", "850 ns/op"}, {4308735, "ns/op", "4.31 ms/op"}, {2.5e9, "ns/op", "2.5 s/op"}, {9069, "allocs/op", "9,069 allocs/op"}} {
		if got := formatMetric(tc.v, tc.unit); got != tc.want {
			t.Errorf("formatMetric(%v, %q) = %q, want %q", tc.v, tc.unit, got, tc.want)
		}
	}
}

func TestMarkdownBlock(t *testing.T) {
	rep := &Report{Env: Env{GoVersion: "go1.26.8", GOOS: "linux", GOARCH: "amd64", GOMAXPROCS: 2, Commit: "abc123",
		Date: time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)},
		Rows: []Row{{Figure: Figure{Label: "trivial ÷ floor", Num: Ref{Group: "floor"}, Unit: "×", Goal: Bound{Value: 4}}, Values: []float64{16}, Value: 16}}}
	block := rep.Markdown([]ChartFile{{Path: "docs/bench/execute-floor.svg", Chart: Chart{Title: "Execute against its floor"}}})
	for _, want := range []string{"`go run ./benchmarks/cmd/report`", "commit abc123", "| trivial ÷ floor | 16× | ≤ 4×, not met | `floor` |",
		"![Execute against its floor](docs/bench/execute-floor.svg)"} {
		if !strings.Contains(block, want) {
			t.Errorf("the block lacks %q:\n%s", want, block)
		}
	}
	doc := []byte("# Benchmarks\n\nintro\n\n" + BeginMarker + "\nold figures\n" + EndMarker + "\n\n## tools/list size\n")
	got, err := ReplaceBlock(doc, block)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# Benchmarks\n\nintro\n\n" + block + "\n\n## tools/list size\n"; string(got) != want {
		t.Errorf("replaced:\n%s\nwant:\n%s", got, want)
	}
	// Twice gives the same document.
	again, err := ReplaceBlock(got, block)
	if err != nil || !bytes.Equal(again, got) {
		t.Errorf("replacing again changed the document (%v)", err)
	}
	if _, err := ReplaceBlock([]byte("# Benchmarks\n"), block); err == nil || !strings.Contains(err.Error(), "no block between the report's markers") {
		t.Errorf("a document without markers: %v", err)
	}
}

func TestSelect(t *testing.T) {
	groups, err := Select(Suite(), "^(floor|search)$")
	if err != nil || len(groups) != 2 || groups[0].Name != "floor" || groups[1].Name != "search" {
		t.Fatalf("%v %v", groups, err)
	}
	// A benchmark's name selects its group.
	if groups, err := Select(Suite(), "BenchmarkCallers"); err != nil || len(groups) != 1 || groups[0].Name != "callers" {
		t.Fatalf("%v %v", groups, err)
	}
	if _, err := Select(Suite(), "nothing-like-this"); err == nil || !strings.Contains(err.Error(), "matches no group") {
		t.Errorf("%v", err)
	}
	if _, err := Select(Suite(), "("); err == nil || !strings.Contains(err.Error(), "not a regular expression") {
		t.Errorf("%v", err)
	}
}
