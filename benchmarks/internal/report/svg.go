package report

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"strings"
)

// Chart is a small chart of a few series over named categories: grouped
// bars, or lines with a point per category. A NaN value is a missing
// point: no bar or point is drawn, and the description says so.
type Chart struct {
	// Title heads the chart and names it to screen readers.
	Title string
	// Note is a line under the title (where the figures come from).
	Note       string
	XLabel     string
	YLabel     string // with its unit: "latency (µs)"
	Unit       string // after each value in labels and descriptions: "µs"
	Categories []string
	Series     []Series
}

// Series is one named set of values, one per category.
type Series struct {
	Name   string
	Values []float64
}

// Layout of every chart, in SVG user units.
const (
	chartWidth   = 720
	chartHeight  = 400
	plotLeft     = 80
	plotRight    = 700
	plotTop      = 90
	plotBottom   = 330
	yTicks       = 5
	barGroupFill = 0.7 // share of a category's width the bars of a group take
	// legendCharWidth is a generous estimate of a character's width at
	// the legend's 12 px, so that entries never overlap.
	legendCharWidth = 7.5
)

// Colours of the series (Okabe–Ito, distinguishable with colour blindness).
var palette = []string{"#0072B2", "#E69F00", "#009E73", "#CC79A7", "#56B4E9", "#D55E00"}

// yMax returns the top of the value axis: the largest value rounded up to
// 1, 2, 2.5 or 5 times a power of ten, so the tick labels are round.
func (c Chart) yMax() float64 {
	top := 0.0
	for _, s := range c.Series {
		for _, v := range s.Values {
			if !math.IsNaN(v) && v > top {
				top = v
			}
		}
	}
	if top <= 0 {
		return 1
	}
	mag := math.Pow(10, math.Floor(math.Log10(top)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if top <= m*mag*(1+1e-9) {
			return m * mag
		}
	}
	return 10 * mag
}

// y maps a value to its vertical position.
func (c Chart) y(v float64) float64 {
	return plotBottom - v/c.yMax()*(plotBottom-plotTop)
}

// slot returns the horizontal centre of category i and the width of its slot.
func (c Chart) slot(i int) (centre, width float64) {
	width = float64(plotRight-plotLeft) / float64(max(len(c.Categories), 1))
	return plotLeft + width*(float64(i)+0.5), width
}

// BarsSVG draws the chart as grouped vertical bars, each labelled with
// its value.
func (c Chart) BarsSVG() ([]byte, error) {
	return c.svg(func(b *svgBuilder) {
		n := max(len(c.Series), 1)
		for i := range c.Categories {
			centre, width := c.slot(i)
			barW := width * barGroupFill / float64(n)
			left := centre - width*barGroupFill/2
			for k, s := range c.Series {
				v := s.value(i)
				if math.IsNaN(v) {
					continue
				}
				x, top := left+float64(k)*barW, c.y(v)
				b.open("rect", "x", num(x), "y", num(top), "width", num(barW*0.92), "height", num(plotBottom-top),
					"fill", palette[k%len(palette)], "data-series", s.Name, "data-category", c.Categories[i], "data-value", num(v))
				b.elem("title", fmt.Sprintf("%s, %s: %s", s.Name, c.Categories[i], c.value(v)))
				b.close("rect")
				b.text(x+barW*0.46, top-4, "middle", 11, c.value(v))
			}
		}
	})
}

// LinesSVG draws the chart as one line per series, a marked point per
// category, each labelled with its value.
func (c Chart) LinesSVG() ([]byte, error) {
	return c.svg(func(b *svgBuilder) {
		for k, s := range c.Series {
			colour := palette[k%len(palette)]
			var pts []string
			for i := range c.Categories {
				if v := s.value(i); !math.IsNaN(v) {
					x, _ := c.slot(i)
					pts = append(pts, num(x)+","+num(c.y(v)))
				}
			}
			if len(pts) > 1 {
				b.empty("polyline", "points", strings.Join(pts, " "), "fill", "none", "stroke", colour, "stroke-width", "2")
			}
			for i := range c.Categories {
				v := s.value(i)
				if math.IsNaN(v) {
					continue
				}
				x, _ := c.slot(i)
				b.open("circle", "cx", num(x), "cy", num(c.y(v)), "r", "4", "fill", colour,
					"data-series", s.Name, "data-category", c.Categories[i], "data-value", num(v))
				b.elem("title", fmt.Sprintf("%s, %s: %s", s.Name, c.Categories[i], c.value(v)))
				b.close("circle")
				// The label of the highest point of a category goes above
				// it, the others' below, so that labels do not overlap.
				dy := -8.0
				if !c.highest(k, i) {
					dy = 16
				}
				b.text(x+6, c.y(v)+dy, "start", 11, c.value(v))
			}
		}
	})
}

// highest reports whether series k has the highest value of category i
// (the first of equal ones).
func (c Chart) highest(k, i int) bool {
	v := c.Series[k].value(i)
	for j, s := range c.Series {
		if o := s.value(i); j != k && !math.IsNaN(o) && (o > v || o == v && j < k) {
			return false
		}
	}
	return true
}

// value prints a value with the chart's unit.
func (c Chart) value(v float64) string {
	if c.Unit == "" {
		return formatValue(v)
	}
	return formatValue(v) + " " + c.Unit
}

// value returns the series' value for category i, NaN when it has none.
func (s Series) value(i int) float64 {
	if i < len(s.Values) {
		return s.Values[i]
	}
	return math.NaN()
}

// Description is the chart's data as a sentence per series, for screen
// readers (the SVG's desc) and for anyone reading the source.
func (c Chart) Description() string {
	var parts []string
	for _, s := range c.Series {
		var vals []string
		for i, cat := range c.Categories {
			v := s.value(i)
			if math.IsNaN(v) {
				vals = append(vals, cat+" not measured")
			} else {
				vals = append(vals, cat+" "+c.value(v))
			}
		}
		parts = append(parts, s.Name+": "+strings.Join(vals, ", ")+".")
	}
	return strings.Join(parts, " ")
}

// svg writes the parts every chart has (title, description, axes, ticks,
// legend) around what plot draws.
func (c Chart) svg(plot func(*svgBuilder)) ([]byte, error) {
	if len(c.Categories) == 0 || len(c.Series) == 0 {
		return nil, fmt.Errorf("chart %q: nothing to draw (%d categories, %d series)", c.Title, len(c.Categories), len(c.Series))
	}
	for _, s := range c.Series {
		for _, v := range s.Values {
			if v < 0 || math.IsInf(v, 0) {
				return nil, fmt.Errorf("chart %q: series %q has the value %v; charts draw finite values from zero up", c.Title, s.Name, v)
			}
		}
	}
	b := &svgBuilder{}
	b.buf.WriteString(xml.Header)
	b.open("svg", "xmlns", "http://www.w3.org/2000/svg", "width", fmt.Sprint(chartWidth), "height", fmt.Sprint(chartHeight),
		"viewBox", fmt.Sprintf("0 0 %d %d", chartWidth, chartHeight), "role", "img", "aria-labelledby", "title desc",
		"font-family", "system-ui, -apple-system, 'Segoe UI', Helvetica, Arial, sans-serif")
	b.elem("title", c.Title, "id", "title")
	b.elem("desc", strings.TrimSpace(c.Note+" "+c.Description()), "id", "desc")
	b.empty("rect", "x", "0", "y", "0", "width", fmt.Sprint(chartWidth), "height", fmt.Sprint(chartHeight), "fill", "#ffffff")
	b.textStyled(chartWidth/2, 24, "middle", 16, "bold", c.Title)
	if c.Note != "" {
		b.text(chartWidth/2, 42, "middle", 11, c.Note)
	}
	// Legend, one entry per series, left to right, on a second row when
	// the first is full.
	x, y := float64(plotLeft), 56.0
	for k, s := range c.Series {
		w := 17 + legendCharWidth*float64(len([]rune(s.Name)))
		if x > plotLeft && x+w > plotRight {
			x, y = plotLeft, y+17
		}
		b.empty("rect", "x", num(x), "y", num(y), "width", "12", "height", "12", "fill", palette[k%len(palette)])
		b.text(x+17, y+10, "start", 12, s.Name)
		x += w + 24
	}
	// Value axis: gridlines and ticks.
	top := c.yMax()
	for i := 0; i <= yTicks; i++ {
		v := top * float64(i) / yTicks
		y := c.y(v)
		b.empty("line", "x1", num(plotLeft), "y1", num(y), "x2", num(plotRight), "y2", num(y), "stroke", "#dddddd", "stroke-width", "1")
		b.text(plotLeft-6, y+4, "end", 11, formatValue(v))
	}
	b.empty("line", "x1", num(plotLeft), "y1", num(plotTop), "x2", num(plotLeft), "y2", num(plotBottom), "stroke", "#333333")
	b.empty("line", "x1", num(plotLeft), "y1", num(plotBottom), "x2", num(plotRight), "y2", num(plotBottom), "stroke", "#333333")
	// Category axis.
	for i, cat := range c.Categories {
		centre, _ := c.slot(i)
		b.text(centre, plotBottom+18, "middle", 12, cat)
	}
	b.text((plotLeft+plotRight)/2, plotBottom+48, "middle", 13, c.XLabel)
	mid := (plotTop + plotBottom) / 2.0
	b.open("text", "x", "18", "y", num(mid), "text-anchor", "middle", "font-size", "13",
		"transform", fmt.Sprintf("rotate(-90 18 %s)", num(mid)))
	b.chars(c.YLabel)
	b.close("text")
	plot(b)
	b.close("svg")
	return b.buf.Bytes(), nil
}

// svgBuilder writes elements with escaped attribute values and text,
// indented one level per element.
type svgBuilder struct {
	buf   bytes.Buffer
	depth int
}

func (b *svgBuilder) tag(name string, attrs []string, end string) {
	b.buf.WriteString(strings.Repeat("  ", b.depth))
	b.buf.WriteString("<" + name)
	for i := 0; i+1 < len(attrs); i += 2 {
		b.buf.WriteString(" " + attrs[i] + `="`)
		_ = xml.EscapeText(&b.buf, []byte(attrs[i+1])) // a bytes.Buffer does not fail
		b.buf.WriteString(`"`)
	}
	b.buf.WriteString(end)
}

func (b *svgBuilder) open(name string, attrs ...string) {
	b.tag(name, attrs, ">\n")
	b.depth++
}

func (b *svgBuilder) close(name string) {
	b.depth--
	b.buf.WriteString(strings.Repeat("  ", b.depth) + "</" + name + ">\n")
}

func (b *svgBuilder) empty(name string, attrs ...string) { b.tag(name, attrs, "/>\n") }

// elem writes an element holding text only.
func (b *svgBuilder) elem(name, text string, attrs ...string) {
	b.tag(name, attrs, ">")
	_ = xml.EscapeText(&b.buf, []byte(text))
	b.buf.WriteString("</" + name + ">\n")
}

// chars writes text inside the element just opened.
func (b *svgBuilder) chars(text string) {
	b.buf.WriteString(strings.Repeat("  ", b.depth))
	_ = xml.EscapeText(&b.buf, []byte(text))
	b.buf.WriteString("\n")
}

func (b *svgBuilder) text(x, y float64, anchor string, size int, s string) {
	b.textStyled(x, y, anchor, size, "normal", s)
}

func (b *svgBuilder) textStyled(x, y float64, anchor string, size int, weight, s string) {
	b.elem("text", s, "x", num(x), "y", num(y), "text-anchor", anchor, "font-size", fmt.Sprint(size),
		"font-weight", weight, "fill", "#222222")
}

// num prints a coordinate with at most two decimals.
func num(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	if s == "-0" || s == "" {
		return "0"
	}
	return s
}
