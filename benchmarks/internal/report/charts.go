package report

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
)

// ChartDir is where the charts are written, relative to the output
// directory (the repository root by default, next to BENCHMARKS.md).
const ChartDir = "docs/bench"

// ChartFile is a chart and the slash-separated path, relative to the
// output directory, it is written to.
type ChartFile struct {
	Path  string
	Chart Chart
	Lines bool // lines rather than bars
}

// Charts returns the charts the report draws from its figures. A chart
// whose every value is missing (its benchmarks were skipped or not run)
// is left out.
func (r *Report) Charts() []ChartFile {
	get := func(group, bench, metric string) float64 {
		if v, ok := r.Value(Ref{group, bench, metric}); ok {
			return v
		}
		return math.NaN()
	}
	floor := func(sub, metric string) float64 { return get("floor", "BenchmarkFloor/"+sub, metric) }
	note := fmt.Sprintf("Measured by go run ./benchmarks/cmd/report, %s, %s, GOMAXPROCS %d", r.Env.Date.Format("2006-01-02"), r.Env.GoVersion, r.Env.GOMAXPROCS)
	if r.Env.Commit != "" {
		note += ", commit " + r.Env.Commit
	}

	sizes := []string{"1k", "10k", "50k"}
	search := func(metric, kind string) []float64 {
		out := make([]float64, len(sizes))
		for i, s := range sizes {
			out[i] = get("search", "BenchmarkScale/synthetic-"+s+"/"+kind, metric)
		}
		return out
	}
	heap := search("B/tool", "build")
	for i := range heap {
		heap[i] /= 1000 // KB per tool
	}
	callerCounts := []string{"1", "2", "4", "8", "16", "32"}
	callers := func(metric string) []float64 {
		out := make([]float64, len(callerCounts))
		for i, n := range callerCounts {
			out[i] = get("callers", "BenchmarkCallers/callers-"+n, metric)
		}
		return out
	}

	all := []ChartFile{
		{Path: ChartDir + "/execute-floor.svg", Chart: Chart{
			Title:      "codecall.execute against its floor (p50, one loop, rounds interleaved)",
			Note:       note,
			XLabel:     "plan",
			YLabel:     "latency per plan (µs)",
			Unit:       "µs",
			Categories: []string{"trivial plan (return 1)", "10 sequential callTool"},
			Series: []Series{
				{Name: "floor: bare goja + tools/call", Values: []float64{floor("inprocess", "floor-trivial-µs"), floor("inprocess", "direct10-µs")}},
				{Name: "codecall.execute, in process", Values: []float64{floor("inprocess", "execute-trivial-µs"), floor("inprocess", "execute10-µs")}},
				{Name: "codecall.execute, worker process", Values: []float64{floor("process", "execute-trivial-µs"), floor("process", "execute10-µs")}},
			},
		}},
		{Path: ChartDir + "/search-latency.svg", Lines: true, Chart: Chart{
			Title:      "Search latency against catalog size (synthetic tools)",
			Note:       note,
			XLabel:     "tools in the catalog",
			YLabel:     "latency per search (µs)",
			Unit:       "µs",
			Categories: []string{"1,000", "10,000", "50,000"},
			Series:     []Series{{Name: "p50", Values: search("p50-µs", "search")}, {Name: "p95", Values: search("p95-µs", "search")}},
		}},
		{Path: ChartDir + "/search-memory.svg", Chart: Chart{
			Title:      "Search index memory against catalog size (synthetic tools)",
			Note:       note,
			XLabel:     "tools in the catalog",
			YLabel:     "heap the index adds per tool (KB)",
			Unit:       "KB",
			Categories: []string{"1,000", "10,000", "50,000"},
			Series:     []Series{{Name: "heap in use per tool, after GC", Values: heap}},
		}},
		{Path: ChartDir + "/process-callers.svg", Lines: true, Chart: Chart{
			Title:      "Process isolation: trivial plan latency against concurrent callers",
			Note:       note,
			XLabel:     "callers sending one plan each at once (default pool: 2 warm, at most 8 workers)",
			YLabel:     "latency per plan (ms)",
			Unit:       "ms",
			Categories: callerCounts,
			Series:     []Series{{Name: "p50", Values: callers("p50-ms")}, {Name: "p95", Values: callers("p95-ms")}},
		}},
	}
	var out []ChartFile
	for _, cf := range all {
		if cf.Chart.hasValues() {
			out = append(out, cf)
		}
	}
	return out
}

// hasValues reports whether any series has a value.
func (c Chart) hasValues() bool {
	for _, s := range c.Series {
		for _, v := range s.Values {
			if !math.IsNaN(v) {
				return true
			}
		}
	}
	return false
}

// SVG draws the chart file's chart.
func (cf ChartFile) SVG() ([]byte, error) {
	if cf.Lines {
		return cf.Chart.LinesSVG()
	}
	return cf.Chart.BarsSVG()
}

// WriteCharts writes the charts under dir.
func WriteCharts(dir string, charts []ChartFile) error {
	for _, cf := range charts {
		svg, err := cf.SVG()
		if err != nil {
			return err
		}
		path := filepath.Join(dir, filepath.FromSlash(cf.Path))
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			return fmt.Errorf("writing chart %s: %w", path, err)
		}
		if err := os.WriteFile(path, svg, 0o644); err != nil {
			return fmt.Errorf("writing chart %s: %w", path, err)
		}
	}
	return nil
}
