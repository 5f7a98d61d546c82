package report

import (
	"reflect"
	"strings"
	"testing"
)

// Captured output of test binaries run with -test.v (as the report runs
// them) and of plain go test -bench (as people paste it).
const (
	verboseOutput = `goos: linux
goarch: amd64
pkg: github.com/codecall-go/codecall/benchmarks
cpu: Intel(R) Xeon(R) Processor
BenchmarkFloor
BenchmarkFloor/inprocess
BenchmarkFloor/inprocess-2         	     100	   4308735 ns/op	       136.0 call-µs	         6.491 call/direct	       209.4 direct10-µs	  579843 B/op	    9069 allocs/op
BenchmarkFloor/process
    execute_test.go:45: plans cannot run with process isolation here: user namespaces are disabled
--- SKIP: BenchmarkFloor/process
BenchmarkCallers
BenchmarkCallers/callers-1
BenchmarkCallers/callers-1-2         	       3	   5242300 ns/op	         5.311 p50-ms	         0 refused
BenchmarkScale
BenchmarkScale/real-918/search
    bench_test.go:291: real-tool corpus not found at ../../shared/corpus (set CODECALLTEST_CORPUS_DIR to its directory): stat: no such file
    bench_test.go:291: second line
--- SKIP: BenchmarkScale/real-918/search
BenchmarkGatewayOverhead
BenchmarkGatewayOverhead/stdio
    gateway_test.go:99: up.get_record: APPROVAL_REQUIRED
--- FAIL: BenchmarkGatewayOverhead/stdio
--- FAIL: BenchmarkGatewayOverhead
BenchmarkSearch1k
BenchmarkSearch1k-2   	       1	       164 ns/op	       163.0 p50-µs
PASS
`
	plainOutput = `goos: linux
goarch: amd64
pkg: skipb
cpu: Intel(R) Xeon(R) Processor
BenchmarkA/y-2 	       1	      1670 ns/op	         1.500 p50-µs
--- FAIL: BenchmarkB
    s_test.go:4: broken
    s_test.go:5: still broken
BenchmarkC-2   	       1	       179.0 ns/op
--- BENCH: BenchmarkC-2
    s_test.go:5: hello
FAIL
`
)

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		name     string
		input    string
		results  []Result
		skips    []Event
		failures []Event
		passed   bool
		cpu      string
	}{
		{
			name:  "verbose",
			input: verboseOutput,
			results: []Result{
				{Name: "BenchmarkFloor/inprocess", Iterations: 100, Metrics: map[string]float64{"ns/op": 4308735, "call-µs": 136,
					"call/direct": 6.491, "direct10-µs": 209.4, "B/op": 579843, "allocs/op": 9069}},
				// The sub-benchmark's own name ends in -1: only the -2 of GOMAXPROCS goes.
				{Name: "BenchmarkCallers/callers-1", Iterations: 3, Metrics: map[string]float64{"ns/op": 5242300, "p50-ms": 5.311, "refused": 0}},
				{Name: "BenchmarkSearch1k", Iterations: 1, Metrics: map[string]float64{"ns/op": 164, "p50-µs": 163}},
			},
			skips: []Event{
				{Name: "BenchmarkFloor/process", Output: "execute_test.go:45: plans cannot run with process isolation here: user namespaces are disabled"},
				{Name: "BenchmarkScale/real-918/search", Output: "bench_test.go:291: real-tool corpus not found at ../../shared/corpus (set CODECALLTEST_CORPUS_DIR to its directory): stat: no such file\nbench_test.go:291: second line"},
			},
			failures: []Event{
				{Name: "BenchmarkGatewayOverhead/stdio", Output: "gateway_test.go:99: up.get_record: APPROVAL_REQUIRED"},
				{Name: "BenchmarkGatewayOverhead", Output: ""},
			},
			passed: true,
			cpu:    "Intel(R) Xeon(R) Processor",
		},
		{
			name:  "plain go test -bench",
			input: plainOutput,
			results: []Result{
				{Name: "BenchmarkA/y", Iterations: 1, Metrics: map[string]float64{"ns/op": 1670, "p50-µs": 1.5}},
				{Name: "BenchmarkC", Iterations: 1, Metrics: map[string]float64{"ns/op": 179}},
			},
			// Without -test.v a failure's messages follow its line.
			failures: []Event{{Name: "BenchmarkB", Output: "s_test.go:4: broken\ns_test.go:5: still broken"}},
			cpu:      "Intel(R) Xeon(R) Processor",
		},
		{
			name:     "a panic",
			input:    "BenchmarkX\npanic: runtime error: index out of range [3] with length 3\n\ngoroutine 1 [running]:\n",
			failures: []Event{{Name: "BenchmarkX", Output: "panic: runtime error: index out of range [3] with length 3"}},
		},
		{name: "nothing", input: ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, err := Parse(strings.NewReader(tc.input))
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(out.Results, tc.results) {
				t.Errorf("results:\n got %+v\nwant %+v", out.Results, tc.results)
			}
			if !reflect.DeepEqual(out.Skips, tc.skips) {
				t.Errorf("skips:\n got %+v\nwant %+v", out.Skips, tc.skips)
			}
			if !reflect.DeepEqual(out.Failures, tc.failures) {
				t.Errorf("failures:\n got %+v\nwant %+v", out.Failures, tc.failures)
			}
			if out.Passed != tc.passed || out.CPU != tc.cpu {
				t.Errorf("passed %v, cpu %q; want %v, %q", out.Passed, out.CPU, tc.passed, tc.cpu)
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct{ name, input, want string }{
		{"odd fields", "BenchmarkA-2 \t 10\t 100 ns/op\t 5\n", "line 1: want value-unit pairs"},
		{"not a number", "goos: linux\nBenchmarkA-2 \t 10\t fast ns/op\n", `line 2: value "fast" of ns/op is not a number`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(strings.NewReader(tc.input))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestTrimProcs(t *testing.T) {
	for _, tc := range []struct{ name, started, want string }{
		{"BenchmarkA-2", "BenchmarkA", "BenchmarkA"},
		{"BenchmarkA/callers-32-16", "BenchmarkA/callers-32", "BenchmarkA/callers-32"},
		{"BenchmarkA/callers-32", "BenchmarkA/callers-32", "BenchmarkA/callers-32"}, // GOMAXPROCS 1: no suffix
		{"BenchmarkA/x-2", "", "BenchmarkA/x"},
		{"BenchmarkB-2", "BenchmarkA", "BenchmarkB"},
	} {
		if got := trimProcs(tc.name, tc.started); got != tc.want {
			t.Errorf("trimProcs(%q, %q) = %q, want %q", tc.name, tc.started, got, tc.want)
		}
	}
}
