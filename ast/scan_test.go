package ast

import (
	"errors"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/dop251/goja/parser"

	"github.com/codecall-go/codecall/presets"
)

// bigRules allow scripts up to the absolute maximum size, so that the
// checks after the size limit see huge inputs.
func bigRules() Rules {
	return Rules{
		MaxScriptBytes: maxAbsoluteScriptBytes, MaxNestingDepth: 96,
		AllowLoops: true, AllowConsole: true, Regex: presets.RegexFull,
	}
}

// validateWithin runs Validate and fails the test if it does not return:
// a hang detector, not a performance assertion.
func validateWithin(t *testing.T, script string, r Rules) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := Validate(script, r)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(2 * time.Minute):
		t.Fatalf("Validate did not return for a %d-byte script starting %.40q", len(script), script)
		return nil
	}
}

func wantKind(t *testing.T, name string, err error, kind Kind) {
	t.Helper()
	var ie *IllegalError
	if !errors.As(err, &ie) || ie.Violations[0].Kind != kind {
		t.Errorf("%s: got %T %.200v, want %s", name, err, err, kind)
	}
}

func wantSyntax(t *testing.T, name string, err error) {
	t.Helper()
	var se *SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("%s: got %T %.200v, want *SyntaxError", name, err, err)
	}
}

func TestDeepNestingIsRefusedBeforeParsing(t *testing.T) {
	rep := strings.Repeat
	const n = 100000
	r := bigRules()
	for name, script := range map[string]string{
		"[":                   rep("[", n),
		"[]":                  rep("[", n) + rep("]", n),
		"(":                   rep("(", n),
		"()":                  rep("(", n) + "a" + rep(")", n),
		"{":                   rep("{", n),
		"{}":                  rep("{", n) + rep("}", n),
		"object":              "x = " + rep("{a:", n) + "1" + rep("}", n),
		"template":            rep("`${", n) + rep("}`", n),
		"call":                rep("f(", n) + rep(")", n),
		"member":              "a" + rep("[a", n) + rep("]", n),
		"arrow bodies":        rep("() => (", n) + rep(")", n),
		"mixed":               rep("([{`${", n/5),
		"brackets 1e6":        rep("[", 1000000),
		"parentheses 1e6":     rep("(", 500000) + rep(")", 500000),
		"last line only":      rep("a;\n", 1000) + rep("(", 97) + rep(")", 97),
		"after a regex":       "x = /[/]/; " + rep("(", n),
		"after a block":       "if (a) {}\n/'/; " + rep("(", n),
		"after an object":     "x = {}\n/" + rep("(", n),
		"after a division":    "x = a / 2 / " + rep("(", n),
		"after a comment":     "// '\n" + rep("(", n),
		"after a template":    "x = `'`; " + rep("(", n),
		"after an escape":     `x = '\''; ` + rep("(", n),
		"in an arrow default": rep("(a = ", n) + "1" + rep(") => 1", n),
	} {
		wantKind(t, name, validateWithin(t, script, r), KindTooDeep)
	}
}

func TestChainsAreRefusedBeforeParsing(t *testing.T) {
	rep := strings.Repeat
	const n = 100000
	r := bigRules()
	for name, script := range map[string]string{
		"arrows":         rep("x => ", n) + "x",
		"empty arrows":   rep("() => ", n) + "1",
		"async arrows":   rep("async x => ", n) + "x",
		"ternary chain":  rep("a ? b : ", n) + "c",
		"nested ternary": rep("a ? ", n) + "b" + rep(" : c", n),
		"assignments":    rep("a = ", n) + "1",
		"not":            rep("!", 1000000) + "a",
		"minus":          rep("- ", n) + "a",
		"new":            rep("new ", n) + "X",
		"await":          rep("await ", n) + "x",
		"typeof":         rep("typeof ", n) + "x",
		"exponent":       rep("a ** ", n) + "a",
		"comparison":     rep("a < ", n) + "a",
		"if":             rep("if (a) ", n) + ";",
		"do":             rep("do ", n) + ";",
		"with":           rep("with (a) ", n) + ";",
		"while":          rep("while (a) ", n) + ";",
		"labels":         rep("a: ", n) + ";",
		"distinct labels": func() string {
			var b strings.Builder
			for i := 0; i < 5000; i++ {
				b.WriteString("l")
				b.WriteString(strings.Repeat("x", i%7))
				b.WriteString(": ")
			}
			return b.String() + ";"
		}(),
		"labels in blocks":   rep("{ a: ", 90) + rep("}", 90) + rep("; b: c", 200),
		"ternary of objects": rep("a ? {} : ", n) + "c",
	} {
		wantKind(t, name, validateWithin(t, script, r), KindTooDeep)
	}
}

func TestLongFlatScriptsAreFine(t *testing.T) {
	rep := strings.Repeat
	r := bigRules()
	for name, script := range map[string]string{
		"statements":             rep("a = 1;\n", 20000),
		"calls":                  rep("f(1, [2], {a: 3});\n", 10000),
		"sequential ifs":         rep("if (a) { b() }\n", 10000),
		"else-if chain":          "if (a) b();" + rep(" else if (a) b();", 300),
		"ternary per line":       rep("x = a ? b : c\n", 10000),
		"comma list":             "f(" + rep("a, ", 50000) + "a)",
		"brackets in a string":   "return '" + rep("(", 1000000) + "'",
		"brackets in a template": "return `" + rep("([{", 300000) + "`",
		"brackets in a comment":  "/*" + rep("(", 100000) + "*/ return 1",
		"brackets in a regex":    "return /[" + rep("(", 100000) + "]/",
	} {
		t.Run(name, func(t *testing.T) {
			if err := validateWithin(t, script, r); err != nil {
				t.Errorf("%.300v", err)
			}
		})
	}
}

func TestClosersInLiteralsDoNotReduceDepth(t *testing.T) {
	rep := strings.Repeat
	r := presetRules(t, EX) // nesting 96, regex allowed
	for name, item := range map[string]string{
		"string":         `")", `,
		"single quoted":  `')', `,
		"escaped quote":  `'\')', `,
		"template":       "`)`, ",
		"comment":        "/* ) */ ",
		"line comment":   "// )\n",
		"regex":          `/\)/, `,
		"regex class":    `/[)]/, `,
		"regex slash":    `/[/)]/, `,
		"quote in regex": `/'\)/, `,
		// A substitution is a level of its own: 48 arrays and 48
		// substitutions make 96.
		"substitution": "`${')' + ",
	} {
		levels, closer := 97, "]"
		if name == "substitution" {
			levels, closer = 49, "}`]"
		}
		script := "return " + rep("["+item, levels) + "1" + rep(closer, levels)
		wantKind(t, name, validateWithin(t, script, r), KindTooDeep)
		ok := "return " + rep("["+item, levels-1) + "1" + rep(closer, levels-1)
		if err := validateWithin(t, ok, r); err != nil {
			t.Errorf("%s at the limit: %.300v", name, err)
		}
	}
}

func TestHiddenCodeAfterSyntaxErrors(t *testing.T) {
	// After a syntax error goja's parser skips to the next statement
	// keyword and lexes template text and regex bodies as code. The
	// skeleton parse blanks literals, so deep or exponential code hidden
	// in them is never parsed: these must be quick syntax errors.
	rep := strings.Repeat
	r := bigRules()
	for name, script := range map[string]string{
		"template":       "x = = `if " + rep("(", 1000000) + "`",
		"string":         "x = = 'if " + rep("(", 1000000) + "'",
		"regex":          "x = = /if" + rep("(", 1000000) + "/",
		"comment":        "x = = /* if " + rep("(", 1000000) + " */",
		"arrow params":   "x = = `if (1) " + rep("(a=", 40) + "a" + rep(")=>a", 40) + "`",
		"unclosed regex": "x = class {} / " + rep("(", 1000000),
		"misread regex":  "x = a\n++/(/.lastIndex; " + rep("(", 90) + rep(")", 90),
	} {
		wantSyntax(t, name, validateWithin(t, script, r))
	}
	// Where the pre-scan reads as code what goja reads as a literal, it
	// counts the brackets there: refused, conservatively.
	misread := "x = a\n++/'/.lastIndex; '" + rep("(", 1000) + "'"
	if err := validateWithin(t, misread, r); err == nil {
		t.Error("misread division: accepted")
	}
}

func TestArrowParameterNesting(t *testing.T) {
	// goja parses a parenthesised group, sees =>, and parses it again as
	// parameters: nested parameter lists cost 2^depth.
	r := bigRules()
	nest := func(k int) string {
		return strings.Repeat("(a = ", k) + "1" + strings.Repeat(") => a", k)
	}
	if err := validateWithin(t, "return "+nest(maxArrowParamNesting), r); err != nil {
		t.Errorf("depth %d: %v", maxArrowParamNesting, err)
	}
	wantKind(t, "depth+1", validateWithin(t, "return "+nest(maxArrowParamNesting+1), r), KindTooDeep)
	wantKind(t, "depth 40", validateWithin(t, "return "+nest(40), r), KindTooDeep)
	// Arrows in bodies are not in parameter lists.
	body := strings.Repeat("(a) => ", 50) + "1"
	if err := validateWithin(t, "return "+body, r); err != nil {
		t.Errorf("arrows in bodies: %v", err)
	}
	// Destructuring defaults count as parameter lists too.
	wantKind(t, "destructuring", validateWithin(t, "return "+strings.Repeat("({a = ", 6)+"1"+strings.Repeat("}) => a", 6), r), KindTooDeep)
}

func TestStackBudget(t *testing.T) {
	// A script of nothing but brackets, each closed at once, has no depth
	// but could still make goja's parser use more stack than is safe if
	// the pre-scan were wrong about it: the budget refuses it.
	script := strings.Repeat("f();", 50000)
	wantKind(t, "brackets", validateWithin(t, script, bigRules()), KindScriptTooLarge)
}

func TestUnexpectedCharactersStopEarly(t *testing.T) {
	for _, script := range []string{strings.Repeat("@", 1000000), "a #", "a \x01 b"} {
		wantSyntax(t, script[:3], validateWithin(t, script, bigRules()))
	}
}

func TestSkeleton(t *testing.T) {
	for _, script := range []string{
		`const a = 'x(y)z\'q\\', b = "a\"b{" // c(d
const t = ` + "`a${'b'}c\\`d(e)${`f${'g'}`}`" + `;
/* (block
 comment) */ const r = /[/(]\/x(y)/gi;
const u = '\u{1F600} \x41 \101 \
next line';
return a + b + t + r + u`,
		"const s = '\u2028'; /* comment with \u2028 line separator */\nreturn s",
		"return `line1\r\nline2 (${1})`",
	} {
		lines := newLineIndex(script)
		sc := prescan(script, lines, 96)
		if sc.problem != nil {
			t.Fatalf("prescan(%q): %+v", script, sc.problem)
		}
		program := wrapPrefix + script + wrapSuffix
		skeleton := buildSkeleton(program, sc.regions)
		if len(skeleton) != len(program) {
			t.Fatalf("skeleton length %d, program %d", len(skeleton), len(program))
		}
		if newLineIndex(skeleton).lines() != newLineIndex(program).lines() {
			t.Errorf("skeleton of %q has other lines:\n%s", script, skeleton)
		}
		for _, rg := range sc.regions {
			inside := skeleton[len(wrapPrefix)+rg.start : len(wrapPrefix)+rg.end]
			// Braces of \u{...} escapes stay, balanced.
			inside = regexp.MustCompile(`\\u\{[0-9a-fA-F]*\}`).ReplaceAllString(inside, "")
			if strings.ContainsAny(inside, "()[]{}'\"`/*$") {
				t.Errorf("region %q of the skeleton keeps punctuation", inside)
			}
		}
		if _, err := parser.ParseFile(nil, "", skeleton, 0, parser.WithDisableSourceMaps); err != nil {
			t.Errorf("skeleton does not parse: %v\n%s", err, skeleton)
		}
		if _, err := Validate(script, bigRules()); err != nil {
			t.Errorf("Validate(%q): %v", script, err)
		}
	}
}

func TestLiteralComparisonFailsClosed(t *testing.T) {
	// goja reads the / after a prefix ++ on a new line as a regular
	// expression; the pre-scan, like most tokenizers, as a division. The
	// disagreement is caught and the script refused rather than parsed
	// with an unchecked region.
	_, err := Validate("let a = 1\n++/x/.lastIndex", bigRules())
	var se *SyntaxError
	if !errors.As(err, &se) || !strings.Contains(se.Message, "unambiguously") || se.Location != (Location{2, 3}) {
		t.Fatalf("got %T %v", err, err)
	}
}
