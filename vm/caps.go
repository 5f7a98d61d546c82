package vm

import (
	"time"

	"github.com/codecall-go/codecall/presets"
)

// Fallbacks for limits a caller left at zero. Presets always set them; the
// fallbacks keep a zero Limits value from meaning "unlimited".
const (
	defaultTimeout     = 5 * time.Second
	defaultMemoryBytes = 256 << 20
	defaultStackDepth  = 256
	defaultLogBytes    = 64 << 10
	defaultResultBytes = 256 << 10
)

// Fixed caps that do not scale with a preset.
const (
	// maxJSONDepth bounds how deeply nested a value JSON.parse, JSON.stringify,
	// the bridge and the result export accept. goja's own JSON code recurses
	// on the Go stack once per level, and a Go stack overflow is fatal.
	maxJSONDepth = 512
	// maxJoinDepth bounds Array.prototype.join/toString recursion through
	// nested arrays, which also recurses on the Go stack.
	maxJoinDepth = 256
	// maxFlatDepth bounds Array.prototype.flat's depth argument.
	maxFlatDepth = 256
	// maxBindDepth and maxProxyDepth bound chains of bound functions and of
	// proxies, whose calls and traps recurse on the Go stack.
	maxBindDepth  = 512
	maxProxyDepth = 512
	// maxConcurrency caps MaxConcurrency, whatever the configuration says.
	maxConcurrency = 1024
	// maxHostMessages caps mcpLog and mcpNotify calls of one run.
	maxHostMessages = 50
	// maxNameBytes caps tool, event and level names.
	maxNameBytes = 256
	// maxErrorMessageBytes caps messages copied into a Result.
	maxErrorMessageBytes = 4 << 10
	// maxToolInputEcho caps the toolInput echoed in a tool_error.
	maxToolInputEcho = 16 << 10
	// maxRegexSourceBytes and maxRegexNesting bound patterns built at run
	// time; the regex compilers recurse per nesting level.
	maxRegexSourceBytes = 32 << 10
	maxRegexNesting     = 64
	// checkpointEvery is how many steps a long Go loop makes between checks
	// of the stop flag.
	checkpointEvery = 256
)

// caps are the sizes the guarded built-ins enforce, derived from a preset's
// memory budget so that no single native call can allocate more than a
// fraction of it before the heap watchdog gets a chance to act.
type caps struct {
	timeout     time.Duration
	concurrency int   // tool calls in flight at once, at least 1
	memoryBytes int64 // 0 disables the heap watchdog
	stackDepth  int
	logBytes    int64
	resultBytes int64

	// elements is the longest array or array-like a native built-in may
	// walk or allocate: 1/32 of the budget at 16 bytes per element.
	elements int64
	// stringUnits is the longest string a guarded built-in may build, in
	// UTF-16 code units of up to 2 bytes each: at most 1/8 of the budget.
	stringUnits int64
	// bufferBytes is the largest ArrayBuffer or typed array: 1/4 of the budget.
	bufferBytes int64
	// urlUnits is the longest string a URL is parsed from and the most a
	// URLSearchParams list holds, in bytes of UTF-8: 1/4 of stringUnits,
	// so a serialisation, which writes each byte as at most three
	// characters, stays within stringUnits.
	urlUnits int64
	// indexKeys is the most index keys of a string, a String object or a
	// typed array a built-in may list: 1/4 of elements, since each key is
	// a new string of 40 to 50 bytes where an element costs 16.
	indexKeys int64
	// collateUnits is the most characters String.prototype.localeCompare
	// collates in one call, both strings together: 1/64 of stringUnits.
	// goja decomposes and collates in one native step, at about 75 bytes
	// and a quarter of a microsecond per character.
	collateUnits int64
}

func capsFor(l presets.Limits) caps {
	c := caps{
		timeout:     l.Timeout,
		concurrency: min(max(l.MaxConcurrency, 1), maxConcurrency),
		memoryBytes: l.MemoryBytes,
		stackDepth:  l.MaxStackDepth,
		logBytes:    l.MaxLogBytes,
		resultBytes: l.MaxResultBytes,
	}
	if c.timeout <= 0 {
		c.timeout = defaultTimeout
	}
	if c.stackDepth <= 0 {
		c.stackDepth = defaultStackDepth
	}
	if c.logBytes <= 0 {
		c.logBytes = defaultLogBytes
	}
	if c.resultBytes <= 0 {
		c.resultBytes = defaultResultBytes
	}
	budget := c.memoryBytes
	if budget <= 0 {
		budget = defaultMemoryBytes
		c.memoryBytes = 0
	}
	c.elements = max(budget/32, 1<<16)
	c.stringUnits = max(budget/16, 1<<16)
	c.bufferBytes = max(budget/4, 1<<16)
	c.urlUnits = c.stringUnits / 4
	c.indexKeys = c.elements / 4
	c.collateUnits = max(c.stringUnits/64, 1<<14)
	return c
}
