package attacks

import (
	"testing"
	"time"

	"github.com/codecall-go/codecall/presets"
)

// builtinCases attack the built-ins whose output or work grows faster than
// their input (issue 13): each was one native step the interrupt cannot
// reach, holding the server for seconds to minutes and gigabytes, or a
// result far past the caps. Each must now end promptly, within the caps.
var builtinCases = []attackCase{
	// Wall: normalize counts its output against the string cap as it
	// writes it (NFKD expands U+FDFA eighteen times).
	// normalize writes its output segment by segment, checking the cap and
	// the deadline as it goes: a slow build (the race detector) may reach
	// the deadline before the cap, and either ends it.
	{name: "normalize-nfkd", cat: catMemory, isolate: true, preset: presets.Balanced,
		script: `return '\ufdfa'.repeat(16777216).normalize('NFKD').length`, want: rangeError, orWant: timedOut, check: prompt(3 * time.Second)},
	// Wall: the same, secure's caps.
	{name: "normalize-nfkd-secure", cat: catMemory, isolate: true,
		script: `return '\ufdfa'.repeat(4e6).normalize('NFKD').length`, want: rangeError, orWant: timedOut, check: prompt(3 * time.Second)},
	// Wall: encodeURI's output (nine characters a unit) is counted first.
	{name: "encodeURI-expansion", cat: catMemory, isolate: true, preset: presets.Balanced,
		script: `return encodeURI('\u0800'.repeat(1e7)).length`, want: rangeError, check: prompt(3 * time.Second)},
	// Wall: the same for encodeURIComponent.
	{name: "encodeURIComponent-expansion", cat: catMemory, isolate: true,
		script: `return encodeURIComponent('\u00e9'.repeat(4e6)).length`, want: rangeError},
	// Wall: the same for escape (six characters a unit).
	{name: "escape-expansion", cat: catMemory, isolate: true,
		script: `return escape('\u0100'.repeat(4e6)).length`, want: rangeError},
	// Wall: the case mappings count their output first (ß is SS). The
	// count runs under the deadline, which a slow build (the race
	// detector) reaches first: either wall contains it.
	{name: "toUpperCase-expansion", cat: catMemory, isolate: true, preset: presets.Balanced,
		script: `return 'ß'.repeat(1e7).toUpperCase().length`, want: rangeError, orWant: timedOut, check: prompt(3 * time.Second)},
	// Wall: localeCompare collates at most a sixty-fourth of the string
	// cap (it took seconds and gigabytes for two strings at the cap).
	// Balanced's cap is 262144 characters: two strings of 2·10^5 pass every
	// other wall and reach this one.
	{name: "localeCompare-long", cat: catMemory, isolate: true, preset: presets.Balanced,
		script: `return 'é'.repeat(2e5).localeCompare('é'.repeat(2e5))`, want: rangeError,
		check: all(errorSays("String.prototype.localeCompare"), prompt(3*time.Second))},
	// Wall: a long needle in a non-ASCII string is searched in linear
	// time (goja's search is quadratic when its bytes match at odd
	// offsets: hours for these lengths).
	{name: "misaligned-search", cat: catMemory, isolate: true,
		script: `const h = 'ȁ'.repeat(4e6), n = 'Ă'.repeat(2e6); return [h.indexOf(n), h.lastIndexOf(n), h.includes(n), h.split(n).length, h.replace(n, '').length]`,
		want:   ok(`[-1, -1, false, 1, 4000000]`), check: prompt(3 * time.Second)},
	// Wall: replaceAll with millions of matches replaces them as it finds
	// them (goja listed them all first, tens of bytes each).
	{name: "replaceAll-many-matches", cat: catMemory, isolate: true, preset: presets.Balanced,
		script: `return 'x'.repeat(4e6).replaceAll('x', 'yz').length`, want: ok(`8000000`)},
	// Wall: the index keys of a string are capped before they are listed.
	{name: "keys-of-a-string", cat: catMemory, isolate: true,
		script: `return Object.keys('x'.repeat(8e6)).length`, want: rangeError},
	// Wall: the same for a typed array.
	{name: "names-of-a-typed-array", cat: catMemory, isolate: true,
		script: `return Object.getOwnPropertyNames(new Uint8Array(3e7)).length`, want: rangeError},
	// Wall: Object.entries makes its entries in a checkpointed loop the
	// heap watchdog stops.
	{name: "entries-of-an-array", cat: catMemory, isolate: true, limits: smallHeap,
		script: `return Object.entries(new Array(1e6).fill(0)).length`, want: memoryLimit},
	// Wall: a typed array's default sort runs in the sandbox, checkpointed
	// (goja's took seconds for a few million floats). It sorts right when
	// it has the time, and stops at the deadline when a loaded machine (or
	// the race detector) does not give it that time: either way it never
	// runs past the deadline.
	{name: "typed-sort-default", cat: catMemory, isolate: true, limits: short,
		script: `const a = new Float64Array(4e6); a[3] = -1; a.sort(); return a[0]`, want: ok(`-1`), orWant: timedOut, check: prompt(3 * time.Second)},
	// Wall: a native comparator is made a checkpoint.
	{name: "typed-sort-native-comparator", cat: catMemory, isolate: true, limits: short,
		script: `return new Uint8Array(3e7).sort(Math.min).length`, want: timedOut},
	// Wall: a native callback is made a checkpoint.
	{name: "typed-map-native-callback", cat: catMemory, isolate: true, limits: short,
		script: `return new Uint8Array(3e7).map(Math.abs).length`, want: timedOut},
	// Wall: toHex's output (two characters a byte) is held to the string
	// cap.
	{name: "typed-toHex", cat: catMemory, isolate: true,
		script: `return new Uint8Array(3e7).toHex().length`, want: rangeError},
	// Wall: a string's iterator is a checkpoint.
	{name: "set-from-string-loop", cat: catMemory, isolate: true, preset: presets.Balanced, limits: short,
		script: `const s = 'x'.repeat(16e6); for (;;) new Set(s)`, want: timedOut},
	// Wall: Array.from a string holds its values to the element cap.
	{name: "array-from-string", cat: catMemory, isolate: true,
		script: `return Array.from('x'.repeat(8e6)).length`, want: rangeError, orWant: timedOut, check: prompt(3 * time.Second)},
	// Wall: parseFloat of a long string scans for its number instead of
	// running a regular expression over all of it.
	{name: "parseFloat-long", cat: catMemory, isolate: true,
		script: `return parseFloat('1'.repeat(8e6))`, want: ok(`null`), check: prompt(2 * time.Second)},
	// Wall: result export encodes a typed array a slot at a time and only
	// to twice the result budget (it listed eight million keys first).
	{name: "typed-array-result", cat: catOutput, isolate: true,
		script: `return new Float64Array(4e6)`, want: ok(""), check: func(t *testing.T, h *host, r *response) {
			t.Helper()
			resultWithin(256<<10)(t, h, r)
			prompt(2*time.Second)(t, h, r)
		}},
	// Wall: the same in balanced, the audit's case.
	{name: "typed-array-result-balanced", cat: catOutput, isolate: true, preset: presets.Balanced,
		script: `return new Float64Array(1e6)`, want: ok(""), check: func(t *testing.T, h *host, r *response) {
			t.Helper()
			resultWithin(1<<20)(t, h, r)
			prompt(2*time.Second)(t, h, r)
		}},
}

func TestBuiltinBombs(t *testing.T) { runCases(t, builtinCases) }
