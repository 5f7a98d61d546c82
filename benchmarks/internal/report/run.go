package report

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Options says what Run runs and how.
type Options struct {
	// Root is the module's root directory.
	Root string
	// Groups are the groups to run (Suite, or a selection of it).
	Groups []Group
	// Benchtime, when set, replaces every group's own.
	Benchtime string
	// Count is -test.count (1 when zero).
	Count int
	// Short runs each group at its short benchtime, with -test.short.
	Short bool
	// Strict makes every skip a failure, the expected ones included.
	Strict bool
	// Timeout bounds each test binary's run (-test.timeout); 20 minutes
	// when zero.
	Timeout time.Duration
	// Progress receives a line as each step starts and ends; nil for none.
	Progress io.Writer
	// Raw receives the test binaries' own output as it comes; nil for none.
	Raw io.Writer
}

// GroupRun is what one group's run gave.
type GroupRun struct {
	Group     Group
	Benchtime string
	Output    Output
	// Problems make the report fail: a benchmark that failed, skipped
	// for a reason the group does not expect, or did not report; a test
	// binary that could not be built or did not exit cleanly.
	Problems []string
	// Skipped are the expected skips, with their reasons.
	Skipped []Event
	Elapsed time.Duration
}

// Command is the go test command equivalent to this run.
func (g GroupRun) Command() string { return g.Group.Command(g.Benchtime) }

// Report is a run of the suite.
type Report struct {
	Runs  []GroupRun
	Rows  []Row
	Env   Env
	Short bool
	// NotRun names the suite's groups this run left out (-only).
	NotRun []string
}

// Env describes where the report was measured.
type Env struct {
	GoVersion  string
	GOOS       string
	GOARCH     string
	CPU        string
	GOMAXPROCS int
	// LoadAvg is the one-minute load average when the run started ("" when
	// unknown).
	LoadAvg string
	// Commit is the checkout's HEAD, with "+ local changes" when the work
	// tree differs from it ("" outside a git checkout).
	Commit string
	Date   time.Time
}

// Failed reports whether any group had a problem or any figure is outside
// its guard.
func (r *Report) Failed() bool {
	for _, g := range r.Runs {
		if len(g.Problems) > 0 {
			return true
		}
	}
	for _, row := range r.Rows {
		if row.GuardFailed {
			return true
		}
	}
	return false
}

// Run builds each package's test binary once, runs every group, and
// computes the summary. It returns an error only when it cannot start
// (no go command); everything that goes wrong with a benchmark is a
// problem in the report, so the table still shows what did run.
func Run(ctx context.Context, opts Options) (*Report, error) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return nil, fmt.Errorf("the go command is not on PATH: %w", err)
	}
	if opts.Count <= 0 {
		opts.Count = 1
	}
	if opts.Timeout <= 0 {
		opts.Timeout = 20 * time.Minute
	}
	progress := opts.Progress
	if progress == nil {
		progress = io.Discard
	}
	rep := &Report{Short: opts.Short, Env: environment(ctx, goCmd, opts.Root)}
	tmp, err := os.MkdirTemp("", "codecall-bench-")
	if err != nil {
		return nil, fmt.Errorf("a directory for the test binaries: %w", err)
	}
	defer os.RemoveAll(tmp)

	binaries := map[string]string{} // package -> binary, "" when it did not build
	buildErrs := map[string]string{}
	for _, g := range opts.Groups {
		if _, done := binaries[g.Package]; done {
			continue
		}
		bin := filepath.Join(tmp, strings.NewReplacer("/", "_", ".", "_").Replace(g.Package)+".test")
		fmt.Fprintf(progress, "building %s\n", g.Package)
		cmd := exec.CommandContext(ctx, goCmd, "test", "-c", "-o", bin, g.Package)
		cmd.Dir = opts.Root
		if out, err := cmd.CombinedOutput(); err != nil {
			binaries[g.Package] = ""
			buildErrs[g.Package] = fmt.Sprintf("the test binary of %s did not build (%v):\n%s", g.Package, err, tail(out, 20))
			continue
		}
		binaries[g.Package] = bin
	}

	for _, g := range opts.Groups {
		run := GroupRun{Group: g, Benchtime: g.Benchtime}
		if opts.Short {
			run.Benchtime = g.Short
		}
		if opts.Benchtime != "" {
			run.Benchtime = opts.Benchtime
		}
		bin := binaries[g.Package]
		if bin == "" {
			run.Problems = append(run.Problems, buildErrs[g.Package])
			rep.Runs = append(rep.Runs, run)
			continue
		}
		fmt.Fprintf(progress, "running %s: %s\n", g.Name, run.Command())
		start := time.Now()
		run.Output, run.Problems = runBinary(ctx, bin, filepath.Join(opts.Root, g.Package), g.Bench, run.Benchtime, opts)
		run.Elapsed = time.Since(start)
		check(&run, opts)
		fmt.Fprintf(progress, "  %s: %d results in %s, %d problems\n", g.Name, len(run.Output.Results), run.Elapsed.Round(time.Millisecond), len(run.Problems))
		if rep.Env.CPU == "" {
			rep.Env.CPU = run.Output.CPU
		}
		rep.Runs = append(rep.Runs, run)
	}
	ran := map[string]bool{}
	for _, g := range opts.Groups {
		ran[g.Name] = true
	}
	for _, g := range Suite() {
		if !ran[g.Name] {
			rep.NotRun = append(rep.NotRun, g.Name)
		}
	}
	rep.Rows = rep.figures(Figures())
	return rep, nil
}

// runBinary runs one group's benchmarks and parses their output.
func runBinary(ctx context.Context, bin, dir, bench, benchtime string, opts Options) (Output, []string) {
	args := []string{"-test.run", "^$", "-test.bench", bench, "-test.benchtime", benchtime,
		"-test.count", strconv.Itoa(opts.Count), "-test.benchmem", "-test.v", "-test.timeout", opts.Timeout.String()}
	if opts.Short {
		args = append(args, "-test.short")
	}
	var stdout, stderr bytes.Buffer
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = dir
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if opts.Raw != nil {
		cmd.Stdout, cmd.Stderr = io.MultiWriter(&stdout, opts.Raw), io.MultiWriter(&stderr, opts.Raw)
	}
	runErr := cmd.Run()
	var problems []string
	out, err := Parse(bytes.NewReader(stdout.Bytes()))
	if err != nil {
		problems = append(problems, fmt.Sprintf("its output could not be read: %v", err))
	}
	if runErr != nil {
		var exit *exec.ExitError
		what := runErr.Error()
		if errors.As(runErr, &exit) {
			what = "the test binary exited with " + exit.ProcessState.String()
		}
		problems = append(problems, fmt.Sprintf("%s; its last lines:\n%s", what, tail(append(stdout.Bytes(), stderr.Bytes()...), 15)))
	} else if !out.Passed {
		problems = append(problems, "the test binary exited without printing PASS")
	}
	return out, problems
}

// check turns the output's failures, skips and missing benchmarks into
// problems.
func check(run *GroupRun, opts Options) {
	g := run.Group
	for _, f := range run.Output.Failures {
		run.Problems = append(run.Problems, fmt.Sprintf("%s failed:\n%s", f.Name, indent(f.Output)))
	}
	for _, s := range run.Output.Skips {
		if !opts.Strict && g.allowedSkip(s.Output) {
			run.Skipped = append(run.Skipped, s)
			continue
		}
		run.Problems = append(run.Problems, fmt.Sprintf("%s skipped (a benchmark that cannot run is a failing test):\n%s", s.Name, indent(s.Output)))
	}
	for _, w := range g.wanted(opts.Short) {
		if len(run.results(w)) > 0 || run.skipOf(w) != nil {
			continue
		}
		run.Problems = append(run.Problems, fmt.Sprintf("%s reported no result (renamed, or stopped before it measured?)", w))
	}
	if len(run.Output.Results) == 0 && len(run.Output.Skips) == 0 && len(run.Problems) == 0 {
		run.Problems = append(run.Problems, fmt.Sprintf("-bench %q matched no benchmark", g.Bench))
	}
}

// results returns the results of the benchmark named name, one per count.
func (g GroupRun) results(name string) []Result {
	var out []Result
	for _, r := range g.Output.Results {
		if r.Name == name {
			out = append(out, r)
		}
	}
	return out
}

// skipOf returns the skip that covers the benchmark named name: its own,
// or its parent's.
func (g GroupRun) skipOf(name string) *Event {
	for i, s := range g.Output.Skips {
		if s.Name == name || strings.HasPrefix(name, s.Name+"/") {
			return &g.Output.Skips[i]
		}
	}
	return nil
}

// Row is one figure of the summary as measured.
type Row struct {
	Figure Figure
	// Values has one value per -count round; Value is their median.
	Values []float64
	Value  float64
	// Missing says why there is no value ("" when there is one).
	Missing string
	// GoalMet and GuardFailed judge Value (false when Missing).
	GoalMet, GuardFailed bool
}

// figures computes the summary rows from the runs.
func (r *Report) figures(figs []Figure) []Row {
	rows := make([]Row, 0, len(figs))
	for _, f := range figs {
		row := Row{Figure: f}
		num, why := r.values(f.Num)
		if why == "" && f.Den.Bench != "" {
			var den []float64
			den, why = r.values(f.Den)
			if why == "" {
				n := min(len(num), len(den))
				ratios := make([]float64, n)
				for i := range n {
					ratios[i] = num[i] / den[i]
				}
				num = ratios
			}
		}
		if why != "" {
			row.Missing = why
		} else {
			row.Values = num
			row.Value = medianOf(num)
			row.GoalMet = f.Goal.holds(row.Value)
			row.GuardFailed = !f.Guard.holds(row.Value)
		}
		rows = append(rows, row)
	}
	return rows
}

// values returns a metric's values, one per count, or why there are none.
func (r *Report) values(ref Ref) ([]float64, string) {
	for _, g := range r.Runs {
		if g.Group.Name != ref.Group {
			continue
		}
		var vs []float64
		for _, res := range g.results(ref.Bench) {
			if v, ok := res.Metrics[ref.Metric]; ok {
				vs = append(vs, v)
			}
		}
		if len(vs) > 0 {
			return vs, ""
		}
		if s := g.skipOf(ref.Bench); s != nil {
			return nil, "skipped: " + firstLine(s.Output)
		}
		for _, w := range g.Group.Want {
			if name, full := strings.CutSuffix(w, " (full)"); full && name == ref.Bench && r.Short {
				return nil, "not measured in -short runs"
			}
		}
		if len(g.results(ref.Bench)) > 0 {
			return nil, fmt.Sprintf("%s did not report %s", ref.Bench, ref.Metric)
		}
		return nil, "no result (see the problems below)"
	}
	return nil, "not run (-only)"
}

// Value returns the median of a benchmark's metric in this report.
func (r *Report) Value(ref Ref) (float64, bool) {
	vs, why := r.values(ref)
	if why != "" {
		return 0, false
	}
	return medianOf(vs), true
}

func medianOf(vs []float64) float64 {
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// environment describes the machine and the checkout.
func environment(ctx context.Context, goCmd, root string) Env {
	env := Env{GOOS: runtime.GOOS, GOARCH: runtime.GOARCH, GOMAXPROCS: runtime.GOMAXPROCS(0), Date: time.Now().UTC()}
	if out, err := exec.CommandContext(ctx, goCmd, "env", "GOVERSION").Output(); err == nil {
		env.GoVersion = strings.TrimSpace(string(out))
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 0 {
			env.LoadAvg = f[0]
		}
	}
	git := func(args ...string) string {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			return ""
		}
		return strings.TrimSpace(string(out))
	}
	if env.Commit = git("rev-parse", "--short=12", "HEAD"); env.Commit != "" && git("status", "--porcelain", "--untracked-files=no") != "" {
		env.Commit += " + local changes"
	}
	return env
}

// Select returns the suite's groups whose name, or one of whose wanted
// benchmarks, matches only; all of them when only is empty.
func Select(groups []Group, only string) ([]Group, error) {
	if only == "" {
		return groups, nil
	}
	re, err := regexp.Compile(only)
	if err != nil {
		return nil, fmt.Errorf("-only %q is not a regular expression: %w", only, err)
	}
	var out []Group
	for _, g := range groups {
		if re.MatchString(g.Name) || slices.ContainsFunc(g.Want, re.MatchString) {
			out = append(out, g)
		}
	}
	if len(out) == 0 {
		names := make([]string, len(groups))
		for i, g := range groups {
			names[i] = g.Name
		}
		return nil, fmt.Errorf("-only %q matches no group of the suite (groups: %s)", only, strings.Join(names, ", "))
	}
	return out, nil
}

func tail(b []byte, lines int) string {
	ls := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(ls) > lines {
		ls = ls[len(ls)-lines:]
	}
	return indent(strings.Join(ls, "\n"))
}

func indent(s string) string {
	if s == "" {
		return "    (no output)"
	}
	return "    " + strings.ReplaceAll(s, "\n", "\n    ")
}

func firstLine(s string) string {
	line, _, _ := strings.Cut(s, "\n")
	return line
}
