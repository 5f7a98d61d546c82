// Package report runs CodeCall's benchmark suite, reads what `go test
// -bench` prints, and turns it into a table of figures and in-run ratios,
// SVG charts, and the generated part of BENCHMARKS.md. The command is
// benchmarks/cmd/report; this package holds its parts so that each is
// tested on its own (the parser on captured output, the charts as XML).
package report

import (
	"bufio"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
)

// Result is one line of benchmark output: a benchmark's name (without the
// -GOMAXPROCS suffix), its iteration count, and every value it reported,
// keyed by unit: ns/op, B/op and allocs/op, and the custom metrics of
// b.ReportMetric ("p50-µs", "trivial/floor", ...).
type Result struct {
	Name       string
	Iterations int
	Metrics    map[string]float64
}

// Event is a benchmark that was skipped or failed, with the lines it
// logged before (the reason, or the failure's messages).
type Event struct {
	Name   string
	Output string
}

// Output is what one run of a test binary printed.
type Output struct {
	Results  []Result
	Skips    []Event
	Failures []Event
	// Passed is true when the binary printed its final PASS.
	Passed bool
	// CPU is the processor the binary reported ("cpu:" line).
	CPU string
}

var (
	// A result line: name, iterations, then value-unit pairs.
	resultLine = regexp.MustCompile(`^(Benchmark\S*)\s+(\d+)\s+(.*)$`)
	// The line -test.v prints when a benchmark starts: its name alone.
	startLine = regexp.MustCompile(`^(Benchmark\S*)\s*$`)
	// "--- SKIP: name" and "--- FAIL: name", with a duration for tests.
	verdictLine = regexp.MustCompile(`^\s*--- (SKIP|FAIL|BENCH): (\S+)`)
	procsSuffix = regexp.MustCompile(`-\d+$`)
)

// Parse reads the standard output of `go test -bench` (or of a test
// binary run with -test.bench). It is meant for -test.v output, where the
// line naming a benchmark when it starts tells its name from the
// -GOMAXPROCS suffix of its result line; without it, one trailing -N is
// taken for that suffix. Lines it does not know (log output, PASS, ok)
// are skipped; a result line it cannot read is an error naming its line.
func Parse(r io.Reader) (Output, error) {
	var out Output
	var started string // the benchmark -test.v said started last
	var logged []string
	// after points at the event of the last verdict line when no lines
	// came before it: without -test.v, a failure's messages follow it.
	var after *Event
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64*1024), 4*1024*1024)
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		indented := strings.HasPrefix(line, "    ") || strings.HasPrefix(line, "\t")
		if !indented {
			after = nil
		}
		switch {
		case line == "PASS":
			out.Passed = true
		case strings.HasPrefix(line, "cpu: "):
			out.CPU = strings.TrimPrefix(line, "cpu: ")
		case indented && after != nil:
			after.Output = strings.TrimPrefix(after.Output+"\n"+strings.TrimSpace(line), "\n")
		case indented:
			logged = append(logged, strings.TrimSpace(line))
		case verdictLine.MatchString(line):
			m := verdictLine.FindStringSubmatch(line)
			ev := Event{Name: verdictName(m[2], started), Output: strings.Join(logged, "\n")}
			var list *[]Event
			switch m[1] {
			case "SKIP":
				list = &out.Skips
			case "FAIL":
				list = &out.Failures
			}
			if list != nil {
				*list = append(*list, ev)
				if len(logged) == 0 {
					after = &(*list)[len(*list)-1]
				}
			}
			logged = nil
		case startLine.MatchString(line):
			started = startLine.FindStringSubmatch(line)[1]
			logged = nil
		case resultLine.MatchString(line):
			m := resultLine.FindStringSubmatch(line)
			res, err := parseResult(m[1], m[2], m[3], started)
			if err != nil {
				return out, fmt.Errorf("line %d: %w: %q", n, err, line)
			}
			out.Results = append(out.Results, res)
			logged = nil
		case strings.HasPrefix(line, "panic: "):
			name := started
			if name == "" {
				name = "(test binary)"
			}
			out.Failures = append(out.Failures, Event{Name: name, Output: line})
		}
	}
	if err := sc.Err(); err != nil {
		return out, fmt.Errorf("reading benchmark output: %w", err)
	}
	return out, nil
}

// parseResult reads the fields of one result line.
func parseResult(name, iterations, rest, started string) (Result, error) {
	n, err := strconv.Atoi(iterations)
	if err != nil {
		return Result{}, fmt.Errorf("iteration count %q: %w", iterations, err)
	}
	fields := strings.Fields(rest)
	if len(fields) == 0 || len(fields)%2 != 0 {
		return Result{}, fmt.Errorf("want value-unit pairs after the iteration count, got %d fields", len(fields))
	}
	res := Result{Name: trimProcs(name, started), Iterations: n, Metrics: make(map[string]float64, len(fields)/2)}
	for i := 0; i < len(fields); i += 2 {
		v, err := strconv.ParseFloat(fields[i], 64)
		if err != nil {
			return Result{}, fmt.Errorf("value %q of %s is not a number", fields[i], fields[i+1])
		}
		res.Metrics[fields[i+1]] = v
	}
	return res, nil
}

// trimProcs removes the -GOMAXPROCS suffix from the name on a result
// line: the part after the name -test.v printed when the benchmark
// started, or else one trailing -N.
func trimProcs(name, started string) string {
	if started != "" && (name == started || strings.HasPrefix(name, started+"-") && isDigits(name[len(started)+1:])) {
		return started
	}
	return procsSuffix.ReplaceAllString(name, "")
}

// verdictName is the benchmark a "--- SKIP/FAIL/BENCH:" line names. Those
// lines carry the -GOMAXPROCS suffix only in some cases (--- BENCH), so a
// suffix is removed only when it follows the started benchmark's name.
func verdictName(name, started string) string {
	if started != "" && strings.HasPrefix(name, started+"-") && isDigits(name[len(started)+1:]) {
		return started
	}
	return name
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return true
}
