// Package tsstrip strips the types from plans written in TypeScript, so
// that package ast can validate and compile them as JavaScript. It is
// ast.ValidateTypeScript's TypeStripper, built on esbuild's transform API
// (pure Go).
//
// It lives apart from package ast so that the sandbox worker, which imports
// ast and is only ever sent JavaScript (ast.Checked.Source), does not link
// esbuild: every plan starts a worker, and every package it links is
// initialised on every plan.
//
// # What esbuild is asked for
//
// The plan is the body of an async function; esbuild reads a module, whose
// top level may not return. Stripper hands it
//
//	async function __codecall_plan() {
//	<script>
//	}
//
// with the loader "ts", target esnext (nothing is lowered: the JavaScript
// keeps the syntax the plan was written in, and no helper is added),
// comments dropped, non-ASCII characters escaped, and an external source
// map. It then checks that the output starts with the line esbuild prints
// for the wrapper and ends with its closing brace, and takes what is
// between as the body; anything else (a helper esbuild added in front, say)
// is refused. A script that closes the function early keeps that shape, and
// is refused by ast, which checks that the body stays inside the wrapper
// it puts around it. esbuild also renames a local that shadows another
// (a nested const x becomes x2); that changes nothing a plan can see but
// the name property of a renamed function or class.
//
// # Positions
//
// The source map ties the JavaScript to the script. It counts lines as ast
// does (LF, CR, CRLF, U+2028, U+2029) and columns in UTF-16 code units;
// Stripper decodes it into byte offsets, with its own small VLQ decoder
// (forty lines; the source-map libraries for Go decode into their own
// lookup structures, and ast needs offsets).
//
// # Bounds
//
// esbuild's parser is recursive and made for trusted input. ast bounds
// what it is handed (see ast.ValidateTypeScript); Stripper adds two bounds
// of its own. It reads scripts of at most MaxBytes: esbuild uses at most
// about 3.5 KB of Go stack per byte of source (measured: "!" and "[" cost
// 3.3 KB, "(" 2.3 KB, "a.b" 1.6 KB per byte), so a script of MaxBytes needs
// at most about 110 MB of the 1 GB a Go stack may grow to, whatever it
// holds; and esbuild's time, which on hostile input grows faster than the
// input, stays within a fraction of a second. And at most half the cores
// strip types at once, so that TypeScript plans cannot take all of them;
// JavaScript plans never wait for TypeScript.
package tsstrip

import (
	"encoding/json"
	"fmt"
	"runtime"
	"strings"

	"github.com/evanw/esbuild/pkg/api"

	"github.com/codecall-go/codecall/ast"
)

// MaxBytes is the size of the largest script Stripper reads as TypeScript.
const MaxBytes = 32 << 10

// Stripper strips types with esbuild. Its zero value is ready to use, from
// any goroutine.
type Stripper struct{}

// Validate validates a plan written in JavaScript or TypeScript: it is
// ast.ValidateTypeScript with a Stripper.
func Validate(script string, r ast.Rules) (*ast.Checked, error) {
	return ast.ValidateTypeScript(script, r, Stripper{})
}

// The wrapper esbuild reads, and the lines it prints for it. The opening
// line is a line of its own, so that esbuild's errors and mappings on the
// script's lines are one line further down; the closing brace is on a
// line of its own, so that a trailing // comment cannot swallow it.
const (
	wrapOpen  = "async function __codecall_plan() {\n"
	wrapClose = "\n}"
	outOpen   = "async function __codecall_plan() {\n"
	outClose  = "}\n"
)

// slots bounds the scripts esbuild reads at once (see the package
// documentation).
var slots = make(chan struct{}, max(1, runtime.GOMAXPROCS(0)/2))

var options = api.TransformOptions{
	Loader:         api.LoaderTS,
	Target:         api.ESNext,
	Platform:       api.PlatformNeutral,
	Sourcefile:     "plan.ts",
	Sourcemap:      api.SourceMapExternal,
	SourcesContent: api.SourcesContentExclude,
	LegalComments:  api.LegalCommentsNone,
	Charset:        api.CharsetASCII,
	TreeShaking:    api.TreeShakingFalse,
	LogLevel:       api.LogLevelSilent,
	// Class fields are defined, as in JavaScript, not assigned in the
	// constructor.
	TsconfigRaw: `{"compilerOptions":{"useDefineForClassFields":true}}`,
}

// StripTypes implements ast.TypeStripper.
func (Stripper) StripTypes(script string) (*ast.Stripped, error) {
	if len(script) > MaxBytes {
		return nil, &ast.StripError{Offset: -1,
			Message: fmt.Sprintf("it is %d bytes, and TypeScript is read in scripts of at most %d", len(script), MaxBytes)}
	}
	slots <- struct{}{}
	defer func() { <-slots }()

	input := wrapOpen + script + wrapClose
	res := api.Transform(input, options)
	if len(res.Errors) > 0 {
		return nil, stripError(res.Errors[0], input, len(script))
	}
	code := string(res.Code)
	body, ok := strings.CutPrefix(code, outOpen)
	if ok {
		body, ok = strings.CutSuffix(body, outClose)
	}
	if !ok {
		return nil, &ast.StripError{Offset: -1,
			Message: "stripping its types did not give the body of one function (it may close the function it runs in)"}
	}
	maps, err := decodeMappings(res.Map, input, len(wrapOpen), code, len(outOpen), len(script), len(body))
	if err != nil {
		return nil, &ast.StripError{Offset: -1, Message: "the source map of its JavaScript cannot be read: " + err.Error()}
	}
	return &ast.Stripped{JavaScript: body, Mappings: maps}, nil
}

// stripError locates esbuild's message in the script. esbuild counts lines
// from 1 and columns in bytes from 0.
func stripError(m api.Message, input string, scriptLen int) *ast.StripError {
	se := &ast.StripError{Message: m.Text, Offset: -1}
	if m.Location == nil {
		return se
	}
	starts := lineStarts(input)
	line := m.Location.Line - 1
	if line < 0 || line >= len(starts) {
		se.Offset = scriptLen
		return se
	}
	se.Offset = max(0, min(starts[line]+m.Location.Column-len(wrapOpen), scriptLen))
	return se
}

// lineStarts returns the byte offset of each line of s. Lines end at LF,
// CR, CRLF, U+2028 and U+2029, as they do for esbuild and for ast.
func lineStarts(s string) []int {
	starts := []int{0}
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == '\n':
			starts = append(starts, i+1)
		case c == '\r':
			if i+1 < len(s) && s[i+1] == '\n' {
				i++
			}
			starts = append(starts, i+1)
		case c == 0xE2 && i+2 < len(s) && s[i+1] == 0x80 && (s[i+2] == 0xA8 || s[i+2] == 0xA9):
			i += 2
			starts = append(starts, i+1)
		}
	}
	return starts
}

// sourceMap is the part of a version 3 source map that Stripper reads.
type sourceMap struct {
	Version  int      `json:"version"`
	Sources  []string `json:"sources"`
	Mappings string   `json:"mappings"`
}

// decodeMappings turns esbuild's source map into ast.Mappings: byte offsets
// of the body (output less the outSkip bytes of the wrapper's first line)
// tied to byte offsets of the script (input less its inSkip bytes).
// Mappings into the wrapper are dropped; mappings past the end of the
// script (the wrapper's closing brace) are clamped to it.
func decodeMappings(raw []byte, input string, inSkip int, output string, outSkip, scriptLen, bodyLen int) ([]ast.Mapping, error) {
	var sm sourceMap
	if err := json.Unmarshal(raw, &sm); err != nil {
		return nil, err
	}
	if sm.Version != 3 || len(sm.Sources) != 1 {
		return nil, fmt.Errorf("version %d with %d sources, not version 3 with one", sm.Version, len(sm.Sources))
	}
	in, out := newColumns(input), newColumns(output)
	var maps []ast.Mapping
	var genLine, genCol, src, srcLine, srcCol, name int
	m := sm.Mappings
	for i := 0; i < len(m); {
		switch m[i] {
		case ';':
			genLine++
			genCol = 0
			i++
			continue
		case ',':
			i++
			continue
		}
		var f [5]int
		n := 0
		for i < len(m) && m[i] != ',' && m[i] != ';' {
			if n == len(f) {
				return nil, fmt.Errorf("a segment at %d has more than %d fields", i, len(f))
			}
			v, next, err := vlq(m, i)
			if err != nil {
				return nil, err
			}
			f[n], i = v, next
			n++
		}
		genCol += f[0]
		switch n {
		case 1:
			continue // generated code tied to no source
		case 4, 5:
			src, srcLine, srcCol, name = src+f[1], srcLine+f[2], srcCol+f[3], name+f[4]
		default:
			return nil, fmt.Errorf("a segment has %d fields", n)
		}
		if src != 0 {
			continue
		}
		js, ok1 := out.offset(genLine, genCol)
		ts, ok2 := in.offset(srcLine, srcCol)
		if !ok1 || !ok2 {
			return nil, fmt.Errorf("a mapping points outside the code: %d:%d to %d:%d", genLine, genCol, srcLine, srcCol)
		}
		js, ts = js-outSkip, ts-inSkip
		if js < 0 || js > bodyLen || ts < 0 {
			continue
		}
		maps = append(maps, ast.Mapping{JavaScript: js, Script: min(ts, scriptLen)})
	}
	return maps, nil
}

// columns converts source-map positions (0-based line, 0-based column in
// UTF-16 code units) of a text to byte offsets.
type columns struct {
	s      string
	starts []int
	// units caches, for each line with non-ASCII characters, the byte
	// offset in the line of every UTF-16 code unit, and then of its end;
	// an ASCII line has an empty slice.
	units [][]int
}

func newColumns(s string) *columns {
	starts := lineStarts(s)
	return &columns{s: s, starts: starts, units: make([][]int, len(starts))}
}

// offset returns the byte offset of a position; a column past the end of
// its line is the end of the line.
func (c *columns) offset(line, col int) (int, bool) {
	if line < 0 || line >= len(c.starts) || col < 0 {
		return 0, false
	}
	start, end := c.starts[line], len(c.s)
	if line+1 < len(c.starts) {
		end = c.starts[line+1]
	}
	text := c.s[start:end]
	u := c.units[line]
	if u == nil {
		u = []int{}
		for i := 0; i < len(text); i++ {
			if text[i] >= 0x80 {
				for j, r := range text {
					u = append(u, j)
					if r > 0xFFFF {
						u = append(u, j) // the second half of a surrogate pair
					}
				}
				u = append(u, len(text))
				break
			}
		}
		c.units[line] = u
	}
	if len(u) == 0 {
		return start + min(col, len(text)), true
	}
	return start + u[min(col, len(u)-1)], true
}

const base64Digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"

// vlq decodes the base64 VLQ number at s[i:]: five bits a digit, least
// significant first, the sixth bit set on every digit but the last, and
// the sign in the lowest bit of the result.
func vlq(s string, i int) (v, next int, err error) {
	var u uint64
	for shift := 0; ; shift += 5 {
		if i >= len(s) {
			return 0, 0, fmt.Errorf("a number is cut off at %d", i)
		}
		d := strings.IndexByte(base64Digits, s[i])
		if d < 0 {
			return 0, 0, fmt.Errorf("%q at %d is not a base64 digit", s[i], i)
		}
		if shift > 30 {
			return 0, 0, fmt.Errorf("a number at %d is too large", i)
		}
		i++
		u |= uint64(d&31) << shift
		if d&32 == 0 {
			break
		}
	}
	v = int(u >> 1)
	if u&1 != 0 {
		v = -v
	}
	return v, i, nil
}
