package report

import (
	"bytes"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"
)

// node is any XML element, for reading the charts back.
type node struct {
	XMLName  xml.Name
	Attrs    []xml.Attr `xml:",any,attr"`
	Children []node     `xml:",any"`
	Text     string     `xml:",chardata"`
}

func (n node) attr(name string) string {
	for _, a := range n.Attrs {
		if a.Name.Local == name {
			return a.Value
		}
	}
	return ""
}

// find returns every element named name, depth first.
func (n node) find(name string) []node {
	var out []node
	if n.XMLName.Local == name {
		out = append(out, n)
	}
	for _, c := range n.Children {
		out = append(out, c.find(name)...)
	}
	return out
}

// parseSVG checks that svg is well-formed XML, token by token in strict
// mode, and returns its tree.
func parseSVG(t *testing.T, svg []byte) node {
	t.Helper()
	d := xml.NewDecoder(bytes.NewReader(svg))
	d.Strict = true
	for {
		_, err := d.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v\n%s", err, svg)
		}
	}
	var root node
	if err := xml.Unmarshal(svg, &root); err != nil {
		t.Fatal(err)
	}
	if root.XMLName.Local != "svg" || root.XMLName.Space != "http://www.w3.org/2000/svg" {
		t.Fatalf("root element %v, want svg in the SVG namespace", root.XMLName)
	}
	return root
}

func attrFloat(t *testing.T, n node, name string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(n.attr(name), 64)
	if err != nil {
		t.Fatalf("attribute %s of %v: %v", name, n.XMLName.Local, err)
	}
	return v
}

// marks returns the data marks (bars or points) of a chart by series and
// category.
func marks(root node, element string) map[[2]string]node {
	out := map[[2]string]node{}
	for _, n := range root.find(element) {
		if s := n.attr("data-series"); s != "" {
			out[[2]string{s, n.attr("data-category")}] = n
		}
	}
	return out
}

func near(a, b float64) bool { return math.Abs(a-b) < 0.01 }

var testChart = Chart{
	Title:      `Latency <p50> & "friends"`,
	Note:       "measured somewhere",
	XLabel:     "plan",
	YLabel:     "latency (µs)",
	Unit:       "µs",
	Categories: []string{"trivial", "ten calls", "missing"},
	Series: []Series{
		{Name: "floor", Values: []float64{20, 150, math.NaN()}},
		{Name: "execute", Values: []float64{400, 1800, math.NaN()}},
	},
}

func TestBarsSVG(t *testing.T) {
	svg, err := testChart.BarsSVG()
	if err != nil {
		t.Fatal(err)
	}
	root := parseSVG(t, svg)
	checkAccessible(t, root, testChart)

	// 1,800 is the largest value: the axis goes to 2,000.
	if got := testChart.yMax(); got != 2000 {
		t.Fatalf("yMax %v, want 2000", got)
	}
	bars := marks(root, "rect")
	if len(bars) != 4 {
		t.Fatalf("%d bars, want 4 (the missing category has none)", len(bars))
	}
	plotHeight := float64(plotBottom - plotTop)
	for _, tc := range []struct {
		series, category string
		value            float64
	}{{"floor", "trivial", 20}, {"execute", "trivial", 400}, {"floor", "ten calls", 150}, {"execute", "ten calls", 1800}} {
		bar := bars[[2]string{tc.series, tc.category}]
		height, y := attrFloat(t, bar, "height"), attrFloat(t, bar, "y")
		if want := tc.value / 2000 * plotHeight; !near(height, want) {
			t.Errorf("%s/%s: height %v, want %v", tc.series, tc.category, height, want)
		}
		if !near(y+height, plotBottom) {
			t.Errorf("%s/%s: the bar ends at %v, not on the axis at %d", tc.series, tc.category, y+height, plotBottom)
		}
		if attrFloat(t, bar, "data-value") != tc.value {
			t.Errorf("%s/%s: data-value %s", tc.series, tc.category, bar.attr("data-value"))
		}
	}
	// Bars sit in their category's slot, series in order.
	for i, cat := range []string{"trivial", "ten calls"} {
		centre, width := testChart.slot(i)
		floorX := attrFloat(t, bars[[2]string{"floor", cat}], "x")
		execX := attrFloat(t, bars[[2]string{"execute", cat}], "x")
		if !(centre-width/2 < floorX && floorX < execX && execX < centre+width/2) {
			t.Errorf("%s: bars at %v and %v, outside their slot %v±%v or out of order", cat, floorX, execX, centre, width/2)
		}
	}
	// Every bar is labelled with its value and unit.
	var labels []string
	for _, txt := range root.find("text") {
		labels = append(labels, txt.Text)
	}
	for _, want := range []string{"20 µs", "400 µs", "150 µs", "1,800 µs", "2,000", "trivial", "plan"} {
		if !containsString(labels, want) {
			t.Errorf("no text %q among %q", want, labels)
		}
	}
}

func TestLinesSVG(t *testing.T) {
	c := Chart{Title: "Search", XLabel: "tools", YLabel: "latency (µs)", Unit: "µs", Categories: []string{"1k", "10k", "50k"},
		Series: []Series{{Name: "p50", Values: []float64{100, 250, math.NaN()}}, {Name: "p95", Values: []float64{300, 700, 900}}}}
	svg, err := c.LinesSVG()
	if err != nil {
		t.Fatal(err)
	}
	root := parseSVG(t, svg)
	checkAccessible(t, root, c)
	if c.yMax() != 1000 {
		t.Fatalf("yMax %v, want 1000", c.yMax())
	}
	points := marks(root, "circle")
	if len(points) != 5 {
		t.Fatalf("%d points, want 5 (p50 at 50k is missing)", len(points))
	}
	for _, tc := range []struct {
		series string
		cat    int
		value  float64
	}{{"p50", 0, 100}, {"p50", 1, 250}, {"p95", 0, 300}, {"p95", 2, 900}} {
		p := points[[2]string{tc.series, c.Categories[tc.cat]}]
		centre, _ := c.slot(tc.cat)
		if cx := attrFloat(t, p, "cx"); !near(cx, centre) {
			t.Errorf("%s at %s: cx %v, want %v", tc.series, c.Categories[tc.cat], cx, centre)
		}
		if cy, want := attrFloat(t, p, "cy"), plotBottom-tc.value/1000*(plotBottom-plotTop); !near(cy, want) {
			t.Errorf("%s at %s: cy %v, want %v", tc.series, c.Categories[tc.cat], cy, want)
		}
	}
	lines := root.find("polyline")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2", len(lines))
	}
	if n := len(strings.Fields(lines[0].attr("points"))); n != 2 {
		t.Errorf("the p50 line has %d points, want 2", n)
	}
}

// checkAccessible checks that the chart names itself and describes its
// data to a screen reader.
func checkAccessible(t *testing.T, root node, c Chart) {
	t.Helper()
	if root.attr("role") != "img" || root.attr("aria-labelledby") != "title desc" {
		t.Errorf("role %q, aria-labelledby %q", root.attr("role"), root.attr("aria-labelledby"))
	}
	var title, desc string
	for _, ch := range root.Children {
		switch ch.XMLName.Local {
		case "title":
			title = ch.Text
		case "desc":
			desc = ch.Text
		}
	}
	if title != c.Title {
		t.Errorf("title %q, want %q", title, c.Title)
	}
	for _, s := range c.Series {
		if !strings.Contains(desc, s.Name+": ") {
			t.Errorf("the description does not give series %q: %q", s.Name, desc)
		}
	}
	if !strings.Contains(desc, "not measured") {
		t.Errorf("the description does not say a value is missing: %q", desc)
	}
	var texts []string
	for _, txt := range root.find("text") {
		texts = append(texts, strings.TrimSpace(txt.Text))
	}
	for _, want := range []string{c.XLabel, c.YLabel} {
		if !containsString(texts, want) {
			t.Errorf("no axis label %q among %q", want, texts)
		}
	}
}

func containsString(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestChartErrors(t *testing.T) {
	for _, tc := range []struct {
		name  string
		chart Chart
		want  string
	}{
		{"no categories", Chart{Title: "x", Series: []Series{{Name: "a"}}}, "nothing to draw"},
		{"negative", Chart{Title: "x", Categories: []string{"a"}, Series: []Series{{Name: "s", Values: []float64{-1}}}}, `series "s" has the value -1`},
		{"infinite", Chart{Title: "x", Categories: []string{"a"}, Series: []Series{{Name: "s", Values: []float64{math.Inf(1)}}}}, "finite values"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := tc.chart.BarsSVG(); err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestYMax(t *testing.T) {
	for _, tc := range []struct{ top, want float64 }{{0, 1}, {1, 1}, {1.2, 2}, {2, 2}, {2.2, 2.5}, {3, 5}, {7, 10}, {42, 50}, {180, 200}, {14897, 20000}, {0.03, 0.05}} {
		c := Chart{Series: []Series{{Values: []float64{tc.top, math.NaN()}}}}
		if got := c.yMax(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("yMax for %v = %v, want %v", tc.top, got, tc.want)
		}
	}
}
