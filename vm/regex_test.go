package vm

import (
	"context"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

var regexTimeout = want{status: StatusLimitExceeded, limit: LimitRegexTime}

// TestCatastrophicRegex runs backtracking patterns that take exponential
// time: they must end the run within the regex time limit (plus regexp2's
// clock granularity), not stall it.
func TestCatastrophicRegex(t *testing.T) {
	evil := `'a'.repeat(40) + 'b'`
	cases := []hardeningCase{
		// RE2-compatible patterns matched from the start run in linear time.
		{name: "(a+)+$ from the start", script: `return /(a+)+$/.test(` + evil + `)`, want: okWith(`false`)},
		{name: "(x+x+)+y from the start", script: `return /(x+x+)+y/.test('x'.repeat(40))`, want: okWith(`false`)},
		// goja would use regexp2 here: lastIndex > 0.
		{name: "(a+)+$ global at lastIndex 1", script: `const r = /(a+)+$/g; r.lastIndex = 1; return r.test(` + evil + `)`, want: regexTimeout},
		{name: "(x+x+)+y sticky", script: `const r = /(x+x+)+y/y; r.lastIndex = 1; return r.exec('x'.repeat(40))`, want: regexTimeout},
		{name: "lookahead", script: `return /^(?=a)(a+)+$/.test(` + evil + `)`, want: regexTimeout},
		{name: "backreference", script: `return /^(a+)+\1$/.test(` + evil + `)`, want: regexTimeout},
		{name: "replace global", script: `return (` + evil + `).replace(/(a|aa)+$/g, '')`, want: want{oneOf: []Status{StatusLimitExceeded, StatusOK}}},
		{name: "split", script: `return (` + evil + `).split(/(a+)+$/)`, want: regexTimeout},
		{name: "matchAll", script: `return [...(` + evil + `).matchAll(/(?=.)(a+)+$/g)]`, want: regexTimeout},
		{name: "match with string pattern", script: `return (` + evil + `).match('(?=a)(a+)+$')`, want: regexTimeout},
		{name: "new RegExp", script: `return new RegExp('^(a|a)+$').test(` + evil + `)`, want: want{oneOf: []Status{StatusLimitExceeded, StatusOK}}},
		{name: "caught timeout still ends the run", script: `try { /^(?=a)(a+)+$/.test(` + evil + `) } catch (e) { return 'caught' }`, want: regexTimeout},
		{name: "non-ASCII input", script: `return /^(?=é)(é+)+$/.test('é'.repeat(40) + 'b')`, want: regexTimeout},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			res := c.run(t)
			checkWant(t, res, c.want)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestRegexSemantics checks that the sandbox's matcher behaves like goja's.
func TestRegexSemantics(t *testing.T) {
	cases := []hardeningCase{
		{name: "exec", script: `const m = /a(b)?(c)?/.exec('xab'); return [m[0], m[1], m[2], m.index, m.input, m.groups]`, want: okWith(`["ab","b",null,1,"xab",null]`)},
		{name: "named groups", script: `return '2024-01'.match(/(?<y>\d+)-(?<m>\d+)/).groups`, want: okWith(`{"y":"2024","m":"01"}`)},
		{name: "global match", script: `return 'a1b22c333'.match(/\d+/g)`, want: okWith(`["1","22","333"]`)},
		{name: "global exec loop", script: `const r = /o/g; const out = []; let m; while ((m = r.exec('foo boo'))) out.push(m.index); return [out, r.lastIndex]`, want: okWith(`[[1,2,5,6],0]`)},
		{name: "sticky", script: `const r = /a/y; r.lastIndex = 1; return [r.test('ba'), r.lastIndex, r.test('ba'), r.lastIndex]`, want: okWith(`[true,2,false,0]`)},
		{name: "ignoreCase multiline dotAll", script: `return [/^b$/im.test('a\nB'), /a.b/s.test('a\nb'), /a.b/.test('a\nb')]`, want: okWith(`[true,true,false]`)},
		{name: "unicode", script: `return ['😀x'.match(/./u)[0], '😀x'.match(/./)[0].length, /\u{1F600}/u.test('😀'), '😀😀'.replace(/😀/gu, 'y')]`, want: okWith(`["😀",1,true,"yy"]`)},
		{name: "lastIndex in unicode", script: `const r = /x/gu; r.lastIndex = 2; return [r.exec('😀x').index, r.lastIndex]`, want: okWith(`[2,3]`)},
		{name: "replace callbacks", script: `return 'a-b-c'.replace(/(\w)-/g, (m, p1, off) => p1.toUpperCase() + off)`, want: okWith(`"A0B2c"`)},
		{name: "replace named", script: `return 'john smith'.replace(/(?<f>\w+) (?<l>\w+)/, '$<l>, $<f>')`, want: okWith(`"smith, john"`)},
		{name: "split", script: `return ['a1b2c'.split(/\d/), 'a, b ,c'.split(/\s*,\s*/), 'abc'.split(''), 'a1b'.split(/(\d)/)]`, want: okWith(`[["a","b","c"],["a","b","c"],["a","b","c"],["a","1","b"]]`)},
		{name: "search", script: `return ['abc'.search(/c/), 'abc'.search('b'), 'abc'.search(/z/)]`, want: okWith(`[2,1,-1]`)},
		{name: "matchAll", script: `return [...'a1b2'.matchAll(/[a-z](\d)/g)].map(m => m[1] + '@' + m.index)`, want: okWith(`["1@0","2@2"]`)},
		{name: "test with lookbehind", script: `return [/(?<=\$)\d+/.exec('cost $42')[0], /\b(\w)\1/.test('aa'), 'aXbX'.replaceAll(/x/gi, '-')]`, want: okWith(`["42",true,"a-b-"]`)},
		{name: "empty matches advance", script: `return ['abc'.replace(/x*/g, '-'), 'ab'.match(/(?:)/g).length]`, want: okWith(`["-a-b-c-",3]`)},
		{name: "toString and flags", script: `const r = new RegExp('a.b', 'gi'); return [String(r), r.flags, r.source, r.global, String(/a\/b/y)]`, want: okWith(`["/a.b/gi","gi","a.b",true,"/a\\/b/y"]`)},
		{name: "RegExp copy", script: `const r = new RegExp(/a/g, 'i'); return [r.flags, r.test('A')]`, want: okWith(`["i",true]`)},
		{name: "subclasses are refused", script: `class R extends RegExp {}; return 'a-b'.split(new R('-'))`, want: typeErr},
		{name: "exec on non-regexp", script: `return RegExp.prototype.exec.call({}, 'a')`, want: typeErr},
		{name: "custom exec on plain object", script: `return RegExp.prototype.test.call({exec: () => ({})}, 'a')`, want: okWith(`true`)},
		{name: "own exec refused", script: `const r = /a/; Object.defineProperty(r, 'exec', {value: 1}); return 'a'.replace(r, 'b')`, want: typeErr},
		{name: "own constructor refused", script: `const r = /a/; r.constructor = function(){}; return 'a'.split(r)`, want: typeErr},
		{name: "changed prototype refused", script: `const r = /a/; Object.setPrototypeOf(r, {}); return RegExp.prototype[Symbol.replace].call(r, 'a', 'b')`, want: typeErr},
		{name: "exec locked", script: `RegExp.prototype.exec = function() { return null }; return 1`, want: typeErr},
		{name: "exec undeletable", script: `delete RegExp.prototype.exec; return 1`, want: typeErr},
		{name: "constructor locked", script: `RegExp.prototype.constructor = Object; return 1`, want: typeErr},
		{name: "species locked", script: `Object.defineProperty(RegExp, Symbol.species, {value: Object}); return 1`, want: typeErr},
		{name: "no compile", script: `return typeof /a/.compile`, want: okWith(`"undefined"`)},
		{name: "huge pattern", script: `return new RegExp('a'.repeat(1e5)).test('a')`, want: tooBig},
		{name: "deep pattern", script: `return new RegExp('('.repeat(1000) + ')'.repeat(1000)).test('')`, want: tooBig},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { checkWant(t, c.run(t), c.want) })
	}
}

// TestRegexModes checks the preset's regex rule at run time.
func TestRegexModes(t *testing.T) {
	cases := []hardeningCase{
		{name: "none: RegExp", preset: presets.LockedDown, script: `return RegExp('a')`, want: regexBad},
		{name: "none: new RegExp", preset: presets.LockedDown, script: `return new RegExp('a').test('a')`, want: regexBad},
		{name: "none: match string", preset: presets.LockedDown, script: `return 'abc'.match('b')`, want: regexBad},
		{name: "none: matchAll string", preset: presets.LockedDown, script: `return [...'abc'.matchAll('b')]`, want: regexBad},
		{name: "none: search string", preset: presets.LockedDown, script: `return 'abc'.search('b')`, want: regexBad},
		{name: "none: caught", preset: presets.LockedDown, script: `try { 'abc'.search('b') } catch (e) {} return 1`, want: regexBad},
		{name: "none: string replace and split", preset: presets.LockedDown, script: `return ['abc'.replace('b', 'x'), 'a,b'.split(','), 'aa'.replaceAll('a', 'b')]`, want: okWith(`["axc",["a","b"],"bb"]`)},
		{name: "literal: RE2 pattern", preset: presets.Secure, script: `return [new RegExp('a+', 'g').test('aa'), 'abc'.match('b')[0]]`, want: okWith(`[true,"b"]`)},
		{name: "literal: lookahead", preset: presets.Secure, script: `return new RegExp('a(?=b)')`, want: regexBad},
		{name: "literal: backreference", preset: presets.Secure, script: `return 'aa'.match('(a)\\1')`, want: regexBad},
		{name: "literal: lookbehind via search", preset: presets.Secure, script: `return 'ab'.search('(?<=a)b')`, want: regexBad},
		{name: "literal: catastrophic fallback is bounded", preset: presets.Secure, change: shortTimeout(500 * time.Millisecond),
			script: `const r = /(a+)+$/g; r.lastIndex = 1; return r.test('a'.repeat(40) + 'b')`,
			want:   want{oneOf: []Status{StatusLimitExceeded, StatusTimeout}}},
		{name: "full: lookahead allowed", script: `return new RegExp('a(?=b)').test('ab')`, want: okWith(`true`)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			start := time.Now()
			checkWant(t, c.run(t), c.want)
			if d := time.Since(start); d > 2*time.Second {
				t.Errorf("took %v", d)
			}
		})
	}
}

// TestLazyRegExp runs plans without regex literals, for which the RegExp
// machinery is hardened on first use: through the RegExp global or a
// string pattern.
func TestLazyRegExp(t *testing.T) {
	cases := []hardeningCase{
		{name: "RegExp global", script: `const r = new RegExp('(a+)+$', 'g'); r.lastIndex = 1; return r.test('a'.repeat(40) + 'b')`, want: regexTimeout},
		{name: "string pattern", script: `return ('a'.repeat(40) + 'b').match('(?=a)(a+)+$')`, want: regexTimeout},
		{name: "string pattern then methods", script: `const m = 'a1b2'.match('\\d'); return [m[0], 'x-y'.split(new RegExp('-')), /* no literal */ typeof RegExp.prototype.compile]`, want: okWith(`["1",["x","y"],"undefined"]`)},
		{name: "none: RegExp", preset: presets.LockedDown, script: `return RegExp('a')`, want: regexBad},
		{name: "none: string pattern", preset: presets.LockedDown, script: `return 'abc'.search('b')`, want: regexBad},
		{name: "literal: lookahead", preset: presets.Secure, script: `return new RegExp('a(?=b)')`, want: regexBad},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			preset := c.preset
			if preset == "" {
				preset = presets.Balanced
			}
			r := newRun(context.Background(), compile(t, c.script), &mcptest.Host{}, Options{RunID: "lazy", Limits: limits(t, preset)})
			r.lazyRegExp = true
			r.execute()
			if r.regex == nil {
				t.Fatal("no regex engine")
			}
			checkWant(t, r.finish(), c.want)
		})
	}
}
