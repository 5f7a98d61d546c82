package meta

import (
	"container/list"
	"strconv"
	"strings"
	"sync"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/ast/tsstrip"
)

// The bounds of a planCache. Agents send the same few plans again and
// again (a loop over a list, a retried plan), and those are short; a
// validated plan holds its source, a line index and a compiled program,
// several times the script's size. So only scripts up to
// planCacheMaxScript bytes are remembered, at most planCacheSize of them
// and planCacheBytes of script in all: a client sending distinct plans at
// the preset's script cap cannot make the cache hold more than a few MiB.
const (
	planCacheSize      = 256
	planCacheMaxScript = 16 << 10
	planCacheBytes     = 1 << 20
)

// planCache remembers the plans that passed validation, by script and
// rules, so that a plan sent again is neither parsed, checked nor compiled
// again: validation and compilation are a pure function of the two, and
// an *ast.Checked is immutable once built (its goja.Program is run by
// many runtimes, each run still getting a fresh runtime of its own).
// Refused plans are not remembered: they are answered from a new
// validation every time, with the same violations.
//
// A planCache is safe for concurrent use; the nil *planCache validates
// every time.
type planCache struct {
	mu      sync.Mutex
	entries map[planKey]*list.Element
	order   list.List // front: most recently used; values are *planEntry
	bytes   int       // the remembered scripts' lengths, summed
}

// planKey names a validation: the script's SHA-256 and every rule that
// shapes what Validate accepts or compiles.
type planKey struct {
	scriptSHA string
	rules     string
}

type planEntry struct {
	key     planKey
	checked *ast.Checked
	size    int // the script's length
}

func newPlanCache() *planCache {
	return &planCache{entries: make(map[planKey]*list.Element)}
}

// validate returns script validated under rules: the remembered plan when
// the same script was validated under the same rules before, else a new
// validation (tsstrip.Validate), remembered when it passes. scriptSHA is
// the hex SHA-256 of script.
func (c *planCache) validate(script, scriptSHA string, rules ast.Rules) (*ast.Checked, error) {
	if c == nil || len(script) > planCacheMaxScript {
		return tsstrip.Validate(script, rules)
	}
	key := planKey{scriptSHA: scriptSHA, rules: rulesKey(rules)}
	c.mu.Lock()
	if el, ok := c.entries[key]; ok {
		c.order.MoveToFront(el)
		checked := el.Value.(*planEntry).checked
		c.mu.Unlock()
		return checked, nil
	}
	c.mu.Unlock()
	checked, err := tsstrip.Validate(script, rules)
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.entries[key]; !ok {
		c.entries[key] = c.order.PushFront(&planEntry{key: key, checked: checked, size: len(script)})
		c.bytes += len(script)
		for c.order.Len() > planCacheSize || c.bytes > planCacheBytes {
			oldest := c.order.Back()
			e := oldest.Value.(*planEntry)
			c.order.Remove(oldest)
			delete(c.entries, e.key)
			c.bytes -= e.size
		}
	}
	return checked, nil
}

// rulesKey spells out every field of ast.Rules, so that two rules compare
// equal exactly when they are field for field the same. A field added to
// ast.Rules must be added here (TestRulesKeyCoversRules fails otherwise).
func rulesKey(r ast.Rules) string {
	var b strings.Builder
	b.Grow(64)
	b.WriteString(strconv.FormatInt(r.MaxScriptBytes, 10))
	b.WriteByte('|')
	b.WriteString(strconv.Itoa(r.MaxScriptLines))
	b.WriteByte('|')
	b.WriteString(strconv.Itoa(r.MaxNestingDepth))
	b.WriteByte('|')
	b.WriteString(boolKey(r.AllowLoops))
	b.WriteString(boolKey(r.AllowConsole))
	b.WriteString(boolKey(r.CodeMode))
	b.WriteByte('|')
	b.WriteString(string(r.Regex))
	b.WriteByte('|')
	b.WriteString(string(r.Preset))
	for _, id := range r.BannedIdentifiers {
		// An identifier never holds a NUL, so the list cannot be
		// rebuilt differently from the same bytes.
		b.WriteByte(0)
		b.WriteString(id)
	}
	return b.String()
}

func boolKey(v bool) string {
	if v {
		return "1"
	}
	return "0"
}
