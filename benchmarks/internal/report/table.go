package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
)

// formatValue prints v with three significant digits and thousands
// separators: 0.125, 1.23, 12.3, 123, 1,234, 12,345.
func formatValue(v float64) string {
	switch {
	case math.IsNaN(v) || math.IsInf(v, 0):
		return strconv.FormatFloat(v, 'f', -1, 64)
	case v == 0:
		return "0"
	case math.Abs(v) >= 999.5: // rounds to four digits
		return thousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	}
	decimals := max(0, 2-int(math.Floor(math.Log10(math.Abs(v)))))
	s := strconv.FormatFloat(v, 'f', decimals, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// thousands puts commas between groups of three digits of an integer.
func thousands(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// formatMetric prints a value with its unit; times per op are scaled to
// the unit that reads best.
func formatMetric(v float64, unit string) string {
	if unit == "ns/op" {
		switch {
		case v >= 1e9:
			return formatValue(v/1e9) + " s/op"
		case v >= 1e6:
			return formatValue(v/1e6) + " ms/op"
		case v >= 1e3:
			return formatValue(v/1e3) + " µs/op"
		}
		return formatValue(v) + " ns/op"
	}
	return formatValue(v) + " " + unit
}

// withUnit prints a summary figure: "12.3×", "456 µs", "3".
func withUnit(v float64, unit string) string {
	switch unit {
	case "":
		return formatValue(v)
	case "×":
		return formatValue(v) + "×"
	}
	return formatValue(v) + " " + unit
}

// measured prints a row's value, with the range of the rounds when there
// were several.
func (row Row) measured() string {
	if row.Missing != "" {
		return "—"
	}
	s := withUnit(row.Value, row.Figure.Unit)
	if len(row.Values) > 1 {
		s += fmt.Sprintf(" (%s–%s)", formatValue(slices.Min(row.Values)), formatValue(slices.Max(row.Values)))
	}
	return s
}

// goal prints a row's goal and whether it is met.
func (row Row) goal() string {
	g := row.Figure.Goal
	if !g.set() {
		return ""
	}
	s := g.String()
	if g.Text == "" {
		s = "≤ " + withUnit(g.Value, row.Figure.Unit)
		if g.Min {
			s = "≥ " + withUnit(g.Value, row.Figure.Unit)
		}
	}
	if row.Missing != "" {
		return s
	}
	if row.GoalMet {
		return s + ", met"
	}
	return s + ", not met"
}

// WriteText prints the report: every group's results with the command
// that produced them, the summary of in-run ratios, then the skips and
// the problems.
func (r *Report) WriteText(w io.Writer) error {
	ew := &errWriter{w: w}
	fmt.Fprintf(ew, "CodeCall benchmark report (%s)\n", r.Env.describe())
	for _, g := range r.Runs {
		fmt.Fprintf(ew, "\n== %s (%s)\n   %s\n", g.Group.Title, g.Group.Name, g.Command())
		tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
		for _, res := range g.Output.Results {
			fmt.Fprintf(tw, "   %s\t%d\t%s\n", res.Name, res.Iterations, strings.Join(metricList(res), "\t"))
		}
		for _, s := range g.Skipped {
			fmt.Fprintf(tw, "   %s\tskipped: %s\n", s.Name, firstLine(s.Output))
		}
		tw.Flush()
	}
	fmt.Fprintf(ew, "\n== In-run ratios and figures against their goals\n")
	tw := tabwriter.NewWriter(ew, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "   figure\tmeasured\tgoal\tguard\n")
	for _, row := range r.Rows {
		measured := row.measured()
		if row.Missing != "" {
			measured = "— (" + row.Missing + ")"
		}
		guard := row.Figure.Guard.String()
		if row.GuardFailed {
			guard += " FAILED"
		}
		fmt.Fprintf(tw, "   %s\t%s\t%s\t%s\n", row.Figure.Label, measured, row.goal(), guard)
	}
	tw.Flush()
	if len(r.NotRun) > 0 {
		fmt.Fprintf(ew, "\nNot run (-only): %s\n", strings.Join(r.NotRun, ", "))
	}
	var problems []string
	for _, g := range r.Runs {
		for _, p := range g.Problems {
			problems = append(problems, fmt.Sprintf("%s: %s", g.Group.Name, p))
		}
	}
	for _, row := range r.Rows {
		if row.GuardFailed {
			problems = append(problems, fmt.Sprintf("%q is %s, outside its regression guard %s", row.Figure.Label, row.measured(), row.Figure.Guard))
		}
	}
	if len(problems) > 0 {
		fmt.Fprintf(ew, "\n== FAILED: %d problems\n", len(problems))
		for _, p := range problems {
			fmt.Fprintf(ew, "- %s\n", p)
		}
	} else {
		fmt.Fprintf(ew, "\nok: every benchmark ran, every guard holds\n")
	}
	return ew.err
}

// metricList prints a result's values: time, memory and allocations
// first, then the custom metrics in name order.
func metricList(res Result) []string {
	var out []string
	for _, u := range []string{"ns/op", "B/op", "allocs/op"} {
		if v, ok := res.Metrics[u]; ok {
			out = append(out, formatMetric(v, u))
		}
	}
	var custom []string
	for u := range res.Metrics {
		if u != "ns/op" && u != "B/op" && u != "allocs/op" {
			custom = append(custom, u)
		}
	}
	slices.Sort(custom)
	for _, u := range custom {
		out = append(out, formatMetric(res.Metrics[u], u))
	}
	return out
}

func (e Env) describe() string {
	parts := []string{e.Date.Format("2006-01-02 15:04 MST")}
	if e.Commit != "" {
		parts = append(parts, "commit "+e.Commit)
	}
	parts = append(parts, e.GoVersion, e.GOOS+"/"+e.GOARCH, fmt.Sprintf("GOMAXPROCS %d", e.GOMAXPROCS))
	if e.CPU != "" {
		parts = append(parts, e.CPU)
	}
	if e.LoadAvg != "" {
		parts = append(parts, "load average "+e.LoadAvg+" at the start")
	}
	return strings.Join(parts, ", ")
}

// Markers delimit the part of BENCHMARKS.md the report writes.
const (
	BeginMarker = "<!-- report:begin (written by go run ./benchmarks/cmd/report; edit the command, not this block) -->"
	EndMarker   = "<!-- report:end -->"
)

// Markdown returns the generated block of BENCHMARKS.md: where and how it
// was measured, the summary table, and the charts (paths relative to the
// file), between the markers.
func (r *Report) Markdown(charts []ChartFile) string {
	var b strings.Builder
	b.WriteString(BeginMarker + "\n\n")
	mode := ""
	if r.Short {
		mode = " -short"
	}
	fmt.Fprintf(&b, "Measured by `go run ./benchmarks/cmd/report%s` on %s.\n\n", mode, r.Env.describe())
	b.WriteString("| figure | measured | goal | command (group) |\n| --- | --- | --- | --- |\n")
	for _, row := range r.Rows {
		measured := row.measured()
		if row.Missing != "" {
			measured = "— (" + row.Missing + ")"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | `%s` |\n", row.Figure.Label, measured, row.goal(), row.Figure.Num.Group)
	}
	b.WriteString("\n")
	for _, c := range charts {
		fmt.Fprintf(&b, "![%s](%s)\n\n", c.Chart.Title, c.Path)
	}
	b.WriteString(EndMarker)
	return b.String()
}

// ReplaceBlock puts block in place of the marked block of doc.
func ReplaceBlock(doc []byte, block string) ([]byte, error) {
	begin := bytes.Index(doc, []byte(BeginMarker))
	end := bytes.Index(doc, []byte(EndMarker))
	if begin < 0 || end < begin {
		return nil, errors.New("the document has no block between the report's markers (" + BeginMarker + " … " + EndMarker + ")")
	}
	var out bytes.Buffer
	out.Write(doc[:begin])
	out.WriteString(block)
	out.Write(doc[end+len(EndMarker):])
	return out.Bytes(), nil
}

// errWriter keeps the first write error, so printing need not check each.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) Write(p []byte) (int, error) {
	if e.err != nil {
		return len(p), nil
	}
	n, err := e.w.Write(p)
	e.err = err
	return n, err
}
