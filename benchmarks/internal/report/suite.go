package report

import (
	"fmt"
	"strings"
)

// Group is one run of one package's test binary: the benchmarks its
// regular expression selects, at its own benchtime. Each group is one
// section's command in BENCHMARKS.md.
type Group struct {
	// Name identifies the group on the command line (-only) and in the table.
	Name string
	// Title says what the group measures.
	Title string
	// Package is the package directory, relative to the module root.
	Package string
	// Bench is the -test.bench regular expression.
	Bench string
	// Benchtime is the -test.benchtime of a full run; Short that of a
	// -short run (enough iterations for the in-run ratios to mean
	// something, few enough for CI).
	Benchtime, Short string
	// Want names the benchmarks the group must report (or skip for one of
	// the MaySkip reasons); one that does not is a failure, so a renamed
	// or lost benchmark cannot leave a hole in the table unnoticed.
	// Entries marked with a trailing " (full)" are only wanted outside
	// -short runs.
	Want []string
	// MaySkip lists substrings of the skip reasons that are expected on
	// some machines (no worker processes, no corpus); any other skip is a
	// failure.
	MaySkip []string
}

// Skip reasons the suite accepts: plans cannot run in worker processes on
// this machine (no user namespaces, no seccomp), and the real-tool corpus
// that lives beside the repository is absent.
var (
	noWorkers = []string{"cannot run with process isolation here", "cannot run in worker processes here", "sandbox workers are not available here"}
	noCorpus  = []string{"corpus not found"}
	// noPython: no python3 3.11+ here, or no sandboxed workers to run it in.
	noPython = append([]string{"Python plans cannot run here", "Python plans need python3"}, noWorkers...)
)

// Suite is the project's benchmark suite: the groups the report runs, in
// order. The commands BENCHMARKS.md prints above its figures are these
// groups' (Group.Command).
func Suite() []Group {
	return []Group{
		{Name: "floor", Title: "codecall.execute against its floor", Package: "./benchmarks", Bench: "^BenchmarkFloor$",
			Benchtime: "2s", Short: "30x", Want: []string{"BenchmarkFloor/inprocess", "BenchmarkFloor/process"}, MaySkip: noWorkers},
		{Name: "execute", Title: "codecall.execute end to end", Package: "./benchmarks", Bench: "^(BenchmarkExecute|BenchmarkExecuteThroughput)$",
			Benchtime: "2s", Short: "1x", Want: []string{"BenchmarkExecute/trivial", "BenchmarkExecute/10-sequential-calls",
				"BenchmarkExecute/10-parallel-calls", "BenchmarkExecute/direct-10-calls-baseline", "BenchmarkExecuteThroughput"}},
		{Name: "vm", Title: "the runtime alone", Package: "./vm", Bench: "^(BenchmarkRunTrivial|BenchmarkRunTenSequentialCalls|BenchmarkNewRuntime)$",
			Benchtime: "2s", Short: "1x", Want: []string{"BenchmarkRunTrivial/fresh", "BenchmarkRunTrivial/prepared", "BenchmarkRunTenSequentialCalls/fresh", "BenchmarkRunTenSequentialCalls/prepared", "BenchmarkNewRuntime"}},
		{Name: "validate", Title: "plan validation", Package: "./ast", Bench: "^(BenchmarkValidate|BenchmarkValidateJavaScript|BenchmarkValidateTypeScript)$",
			Benchtime: "2s", Short: "1x", Want: []string{"BenchmarkValidate", "BenchmarkValidateJavaScript", "BenchmarkValidateTypeScript"}},
		{Name: "isolation", Title: "process isolation against in process", Package: "./benchmarks", Bench: "^BenchmarkIsolation$",
			Benchtime: "500x", Short: "10x", Want: []string{"BenchmarkIsolation/trivial", "BenchmarkIsolation/10-sequential-calls"}, MaySkip: noWorkers},
		{Name: "throughput", Title: "throughput in worker processes", Package: "./benchmarks", Bench: "^BenchmarkIsolationThroughput$",
			Benchtime: "3s", Short: "20x", Want: []string{"BenchmarkIsolationThroughput/self/one-per-core", "BenchmarkIsolationThroughput/self/burst",
				"BenchmarkIsolationThroughput/codecall-worker/one-per-core", "BenchmarkIsolationThroughput/codecall-worker/burst",
				"BenchmarkIsolationThroughput/self/one-per-core/worker-per-run"}, MaySkip: noWorkers},
		{Name: "spawn", Title: "worker start-up", Package: "./sandbox", Bench: "^BenchmarkSpawn$",
			Benchtime: "200x", Short: "5x", Want: []string{"BenchmarkSpawn"}, MaySkip: noWorkers},
		{Name: "python", Title: "Python plans against JavaScript ones in process isolation", Package: "./benchmarks", Bench: "^BenchmarkPython$",
			Benchtime: "200x", Short: "5x", Want: []string{"BenchmarkPython/trivial", "BenchmarkPython/10-sequential-calls"}, MaySkip: noPython},
		{Name: "python-spawn", Title: "Python worker start-up", Package: "./sandbox", Bench: "^BenchmarkPythonSpawn$",
			Benchtime: "50x", Short: "2x", Want: []string{"BenchmarkPythonSpawn"}, MaySkip: noPython},
		{Name: "callers", Title: "process isolation against concurrent callers", Package: "./benchmarks", Bench: "^BenchmarkCallers$",
			Benchtime: "10x", Short: "1x", Want: []string{"BenchmarkCallers/callers-1", "BenchmarkCallers/callers-8", "BenchmarkCallers/callers-32"}, MaySkip: noWorkers},
		{Name: "burst", Title: "one client's burst, another client's latency", Package: "./benchmarks", Bench: "^BenchmarkBurst$",
			Benchtime: "100x", Short: "1x", Want: []string{"BenchmarkBurst"}, MaySkip: noWorkers},
		{Name: "gateway", Title: "the gateway's extra hop", Package: "./benchmarks", Bench: "^(BenchmarkGatewayOverhead|BenchmarkGatewayPlan20)$",
			Benchtime: "2s", Short: "50x", Want: []string{"BenchmarkGatewayOverhead/stdio", "BenchmarkGatewayOverhead/http", "BenchmarkGatewayPlan20"}},
		{Name: "gate", Title: "policy decisions and the gate", Package: "./benchmarks", Bench: "^(BenchmarkPolicyDecision|BenchmarkDirectCallGate)$",
			Benchtime: "20000x", Short: "500x", Want: []string{"BenchmarkPolicyDecision/builtin", "BenchmarkPolicyDecision/rego",
				"BenchmarkDirectCallGate/interleaved"}},
		{Name: "meta", Title: "meta-tools end to end", Package: "./benchmarks",
			Bench:     "^(BenchmarkMetaHandler|BenchmarkSearchViaMCP|BenchmarkDescribeViaMCP|BenchmarkInvokeViaMCP|BenchmarkListTools)$",
			Benchtime: "1s", Short: "1x", Want: []string{"BenchmarkMetaHandler/search/demo", "BenchmarkMetaHandler/search/corpus",
				"BenchmarkMetaHandler/describe/3-tools", "BenchmarkMetaHandler/invoke", "BenchmarkInvokeViaMCP/invoke",
				"BenchmarkInvokeViaMCP/direct-unwrapped", "BenchmarkListTools/demo", "BenchmarkListTools/corpus"}, MaySkip: noCorpus},
		{Name: "codemode", Title: "Code Mode", Package: "./benchmarks", Bench: "^(BenchmarkCodeModeRun|BenchmarkModuleRoads)$",
			Benchtime: "3000x", Short: "50x", Want: []string{"BenchmarkCodeModeRun/trivial-vs-execute", "BenchmarkCodeModeRun/one-call-vs-execute",
				"BenchmarkModuleRoads/goja-bare", "BenchmarkModuleRoads/linked"}},
		{Name: "search", Title: "search latency and index build", Package: "./search", Bench: "^(BenchmarkScale|BenchmarkSearch1k|BenchmarkSearch10k|BenchmarkBuild1k)$",
			Benchtime: "5x", Short: "1x", Want: []string{"BenchmarkScale/synthetic-1k/search", "BenchmarkScale/synthetic-10k/search",
				"BenchmarkScale/synthetic-50k/search (full)", "BenchmarkScale/synthetic-1k/build", "BenchmarkScale/synthetic-10k/build",
				"BenchmarkScale/synthetic-50k/build (full)", "BenchmarkScale/real-918/search", "BenchmarkScale/real-10k/search",
				"BenchmarkScale/real-10k/build"}, MaySkip: noCorpus},
	}
}

// Command is the go test command equivalent to the group's run, as
// BENCHMARKS.md prints it above the group's figures.
func (g Group) Command(benchtime string) string {
	return fmt.Sprintf("go test %s -run '^$' -bench '%s' -benchtime %s -benchmem -count=1", g.Package, g.Bench, benchtime)
}

// wanted returns the benchmarks the group must report in this run.
func (g Group) wanted(short bool) []string {
	var out []string
	for _, w := range g.Want {
		name, fullOnly := strings.CutSuffix(w, " (full)")
		if fullOnly && short {
			continue
		}
		out = append(out, name)
	}
	return out
}

// allowedSkip reports whether reason is one the group expects.
func (g Group) allowedSkip(reason string) bool {
	for _, s := range g.MaySkip {
		if strings.Contains(reason, s) {
			return true
		}
	}
	return false
}

// Ref names one metric of one benchmark of one group.
type Ref struct {
	Group, Bench, Metric string
}

func (r Ref) String() string { return r.Bench + " " + r.Metric }

// Bound is a goal or a guard on a figure: at most (Max) or at least its
// Value. A zero Bound bounds nothing.
type Bound struct {
	Value float64
	Min   bool // at least Value, instead of at most
	// Text, when set, is how the bound is printed ("none" for a count
	// that should be zero, bounded by 0.5).
	Text string
}

// set reports whether the bound bounds anything.
func (b Bound) set() bool { return b.Value != 0 }

// holds reports whether v is within the bound.
func (b Bound) holds(v float64) bool {
	if !b.set() {
		return true
	}
	if b.Min {
		return v >= b.Value
	}
	return v <= b.Value
}

func (b Bound) String() string {
	if !b.set() {
		return ""
	}
	if b.Text != "" {
		return b.Text
	}
	if b.Min {
		return "≥ " + formatValue(b.Value)
	}
	return "≤ " + formatValue(b.Value)
}

// Figure is one row of the summary: a metric, or the ratio of two
// metrics measured in the same run, with the performance goal it is
// judged by and the guard a run must pass.
type Figure struct {
	Label string
	// Num is the figure; when Den is set, the figure is Num / Den.
	Num, Den Ref
	Unit     string
	// Goal is the target of the performance issue or of DESIGN.md: shown,
	// never enforced (a figure may be far from its goal today).
	Goal Bound
	// Guard is the regression guard: a run whose figure is outside it
	// fails. Guards are set only on ratios measured in one loop, where a
	// goal is stated, and far enough from today's figures that a loaded
	// machine does not trip them.
	Guard Bound
}

// Figures is the summary table, in order.
func Figures() []Figure {
	fl := func(sub, metric string) Ref { return Ref{"floor", "BenchmarkFloor/" + sub, metric} }
	return []Figure{
		{Label: "trivial plan ÷ floor (bare goja run + one tools/call), in process", Num: fl("inprocess", "trivial/floor"), Unit: "×",
			Goal: Bound{Value: 4}, Guard: Bound{Value: 80}},
		{Label: "10-call plan ÷ ten direct tools/call, in process", Num: fl("inprocess", "ten/direct"), Unit: "×",
			Goal: Bound{Value: 1.5}, Guard: Bound{Value: 60}},
		{Label: "one callTool in a plan ÷ one direct tools/call, in process", Num: fl("inprocess", "call/direct"), Unit: "×",
			Goal: Bound{Value: 2}, Guard: Bound{Value: 50}},
		{Label: "trivial plan, in process (floor loop)", Num: fl("inprocess", "execute-trivial-µs"), Unit: "µs"},
		{Label: "floor of a trivial plan", Num: fl("inprocess", "floor-trivial-µs"), Unit: "µs"},
		{Label: "trivial plan ÷ floor, worker processes back to back", Num: fl("process", "trivial/floor"), Unit: "×"},
		{Label: "10-call plan ÷ ten direct tools/call, worker processes", Num: fl("process", "ten/direct"), Unit: "×"},
		{Label: "trivial plan, worker process (warm pool) − in process, p50", Num: Ref{"isolation", "BenchmarkIsolation/trivial", "p50-diff-µs"},
			Unit: "µs", Goal: Bound{Value: 2000}},
		{Label: "trivial plan, worker process ÷ in process, p50", Num: Ref{"isolation", "BenchmarkIsolation/trivial", "p50-ratio"}, Unit: "×"},
		{Label: "throughput, trivial plans in process, both cores", Num: Ref{"execute", "BenchmarkExecuteThroughput", "runs/s"}, Unit: "runs/s"},
		{Label: "throughput, worker processes (the server's binary), one caller per core",
			Num: Ref{"throughput", "BenchmarkIsolationThroughput/self/one-per-core", "runs/s"}, Unit: "runs/s", Goal: Bound{Value: 500, Min: true}},
		{Label: "throughput, worker processes (codecall-worker), one caller per core",
			Num: Ref{"throughput", "BenchmarkIsolationThroughput/codecall-worker/one-per-core", "runs/s"}, Unit: "runs/s", Goal: Bound{Value: 500, Min: true}},
		{Label: "throughput, worker processes, a worker per run (sandbox.reuseRuns: 1, or runs without a session)",
			Num: Ref{"throughput", "BenchmarkIsolationThroughput/self/one-per-core/worker-per-run", "runs/s"}, Unit: "runs/s"},
		{Label: "throughput, in process ÷ worker processes (the server's binary)", Num: Ref{"execute", "BenchmarkExecuteThroughput", "runs/s"},
			Den: Ref{"throughput", "BenchmarkIsolationThroughput/self/one-per-core", "runs/s"}, Unit: "×"},
		{Label: "32 concurrent callers, worker processes, p95", Num: Ref{"callers", "BenchmarkCallers/callers-32", "p95-ms"}, Unit: "ms",
			Goal: Bound{Value: 1000}},
		{Label: "32 concurrent callers, plans refused", Num: Ref{"callers", "BenchmarkCallers/callers-32", "refused"}, Unit: "",
			Goal: Bound{Value: 0.5, Text: "none"}},
		{Label: "another session's p95 under one session's burst ÷ idle", Num: Ref{"burst", "BenchmarkBurst", "p95-ratio"}, Unit: "×"},
		{Label: "gateway ÷ direct call to the same upstream, stdio, p50", Num: Ref{"gateway", "BenchmarkGatewayOverhead/stdio", "p50-ratio"},
			Unit: "×", Goal: Bound{Value: 1.3}, Guard: Bound{Value: 6}},
		{Label: "gateway ÷ direct call to the same upstream, HTTP, p50", Num: Ref{"gateway", "BenchmarkGatewayOverhead/http", "p50-ratio"},
			Unit: "×", Goal: Bound{Value: 1.3}, Guard: Bound{Value: 6}},
		{Label: "bare mcp-go proxy (the floor of an mcp-go gateway) ÷ direct call, stdio, p50", Num: Ref{"gateway", "BenchmarkGatewayOverhead/stdio", "floor-p50-ratio"}, Unit: "×"},
		{Label: "bare mcp-go proxy (the floor of an mcp-go gateway) ÷ direct call, HTTP, p50", Num: Ref{"gateway", "BenchmarkGatewayOverhead/http", "floor-p50-ratio"}, Unit: "×"},
		{Label: "gateway ÷ bare mcp-go proxy, stdio, p50", Num: Ref{"gateway", "BenchmarkGatewayOverhead/stdio", "vs-floor-p50"}, Unit: "×"},
		{Label: "gateway ÷ bare mcp-go proxy, HTTP, p50", Num: Ref{"gateway", "BenchmarkGatewayOverhead/http", "vs-floor-p50"}, Unit: "×"},
		{Label: "direct tools/call, wrapped (built-in policy) ÷ unwrapped, p50", Num: Ref{"gate", "BenchmarkDirectCallGate/interleaved", "builtin/unwrapped"}, Unit: "×"},
		{Label: "direct tools/call, wrapped (Rego policy) ÷ unwrapped, p50", Num: Ref{"gate", "BenchmarkDirectCallGate/interleaved", "rego/unwrapped"}, Unit: "×"},
		{Label: "trivial codemode.run ÷ trivial codecall.execute", Num: Ref{"codemode", "BenchmarkCodeModeRun/trivial-vs-execute", "run/execute"},
			Unit: "×", Goal: Bound{Value: 1.3}, Guard: Bound{Value: 3}},
		{Label: "search p50, 1,000 synthetic tools", Num: Ref{"search", "BenchmarkScale/synthetic-1k/search", "p50-µs"}, Unit: "µs", Goal: Bound{Value: 1000}},
		{Label: "search p50, 10,000 synthetic tools ÷ 1,000", Num: Ref{"search", "BenchmarkScale/synthetic-10k/search", "p50-µs"},
			Den: Ref{"search", "BenchmarkScale/synthetic-1k/search", "p50-µs"}, Unit: "×"},
		{Label: "search p50, 50,000 synthetic tools ÷ 1,000", Num: Ref{"search", "BenchmarkScale/synthetic-50k/search", "p50-µs"},
			Den: Ref{"search", "BenchmarkScale/synthetic-1k/search", "p50-µs"}, Unit: "×"},
		{Label: "search p50, real corpus replicated to 10,000 tools", Num: Ref{"search", "BenchmarkScale/real-10k/search", "p50-µs"}, Unit: "µs",
			Goal: Bound{Value: 3000}},
	}
}
