package meta

import (
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
)

func TestPlanCache(t *testing.T) {
	secure, _ := ast.RulesForPreset(presets.Secure)
	loops := secure
	loops.AllowLoops = true
	banned := secure
	banned.BannedIdentifiers = append([]string{"fetchy"}, secure.BannedIdentifiers...)

	const ok = "return 1"
	tests := []struct {
		name      string
		first     ast.Rules
		second    ast.Rules
		script    string
		same      bool // the second validation returns the first's plan
		wantError bool
	}{
		{name: "same script, same rules", first: secure, second: secure, script: ok, same: true},
		{name: "other loop rule", first: secure, second: loops, script: ok},
		{name: "other banned identifiers", first: secure, second: banned, script: ok},
		{name: "refused plans are validated again", first: secure, second: secure, script: "return eval('1')", wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := newPlanCache()
			sha := sha256Hex(tt.script)
			a, errA := c.validate(tt.script, sha, tt.first)
			b, errB := c.validate(tt.script, sha, tt.second)
			if tt.wantError {
				var ill *ast.IllegalError
				if !errors.As(errA, &ill) || !errors.As(errB, &ill) {
					t.Fatalf("want an IllegalError from both validations, got %v and %v", errA, errB)
				}
				if len(c.entries) != 0 {
					t.Fatalf("a refused plan was remembered: %d entries", len(c.entries))
				}
				return
			}
			if errA != nil || errB != nil {
				t.Fatalf("validate: %v, %v", errA, errB)
			}
			if (a == b) != tt.same {
				t.Fatalf("second validation returned the first's plan: %v, want %v", a == b, tt.same)
			}
		})
	}
}

// TestPlanCacheRefusesUnderStricterRules is the safety property: a plan
// accepted under loose rules is refused under strict ones, whatever was
// validated before.
func TestPlanCacheRefusesUnderStricterRules(t *testing.T) {
	secure, _ := ast.RulesForPreset(presets.Secure)
	loose := secure
	loose.AllowLoops = true
	strict := secure
	strict.AllowLoops = false
	c := newPlanCache()
	script := "let n = 0; for (let i = 0; i < 3; i++) n += i; return n"
	sha := sha256Hex(script)
	if _, err := c.validate(script, sha, loose); err != nil {
		t.Fatalf("loops allowed: %v", err)
	}
	if _, err := c.validate(script, sha, strict); err == nil {
		t.Fatal("a loop passed validation under rules without loops after passing under rules with them")
	}
}

func TestPlanCacheEvicts(t *testing.T) {
	rules, _ := ast.RulesForPreset(presets.Secure)
	c := newPlanCache()
	first := "return 0"
	if _, err := c.validate(first, sha256Hex(first), rules); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= planCacheSize; i++ {
		s := fmt.Sprintf("return %d", i)
		if _, err := c.validate(s, sha256Hex(s), rules); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.entries); n != planCacheSize || c.order.Len() != planCacheSize {
		t.Fatalf("%d entries, %d in order, want %d", n, c.order.Len(), planCacheSize)
	}
	if _, ok := c.entries[planKey{scriptSHA: sha256Hex(first), rules: rulesKey(rules)}]; ok {
		t.Fatal("the least recently used plan is still remembered")
	}
}

func TestPlanCacheConcurrent(t *testing.T) {
	rules, _ := ast.RulesForPreset(presets.Secure)
	c := newPlanCache()
	var wg sync.WaitGroup
	for i := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s := fmt.Sprintf("return %d", i%3)
			for range 20 {
				if ch, err := c.validate(s, sha256Hex(s), rules); err != nil || ch == nil {
					t.Errorf("validate: %v", err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if n := len(c.entries); n != 3 {
		t.Fatalf("%d entries, want 3", n)
	}
}

// TestRulesKeyCoversRules fails when ast.Rules gains a field that rulesKey
// does not spell out: two plans validated under rules differing only in
// that field would share a validation.
func TestRulesKeyCoversRules(t *testing.T) {
	base, _ := ast.RulesForPreset(presets.Secure)
	variants := map[string]func(r *ast.Rules){
		"MaxScriptBytes":    func(r *ast.Rules) { r.MaxScriptBytes++ },
		"MaxScriptLines":    func(r *ast.Rules) { r.MaxScriptLines++ },
		"MaxNestingDepth":   func(r *ast.Rules) { r.MaxNestingDepth++ },
		"AllowLoops":        func(r *ast.Rules) { r.AllowLoops = !r.AllowLoops },
		"Regex":             func(r *ast.Rules) { r.Regex = r.Regex + "x" },
		"AllowConsole":      func(r *ast.Rules) { r.AllowConsole = !r.AllowConsole },
		"BannedIdentifiers": func(r *ast.Rules) { r.BannedIdentifiers = append([]string{"x"}, r.BannedIdentifiers...) },
		"Preset":            func(r *ast.Rules) { r.Preset = r.Preset + "x" },
		"CodeMode":          func(r *ast.Rules) { r.CodeMode = !r.CodeMode },
	}
	typ := reflect.TypeOf(ast.Rules{})
	for i := range typ.NumField() {
		name := typ.Field(i).Name
		vary, ok := variants[name]
		if !ok {
			t.Errorf("ast.Rules.%s is not in rulesKey (add it there and here)", name)
			continue
		}
		r := base
		r.BannedIdentifiers = append([]string(nil), base.BannedIdentifiers...)
		vary(&r)
		if rulesKey(r) == rulesKey(base) {
			t.Errorf("rules differing in %s share a key", name)
		}
	}
	split := base
	split.BannedIdentifiers = []string{"ab"}
	joined := base
	joined.BannedIdentifiers = []string{"a", "b"}
	if rulesKey(split) == rulesKey(joined) {
		t.Error("banned identifiers [ab] and [a b] share a key")
	}
}

// TestPlanCacheBytes checks the memory bounds: a script over
// planCacheMaxScript is validated but not remembered, and scripts are
// evicted, oldest first, once their lengths add up to more than
// planCacheBytes, whatever their number.
func TestPlanCacheBytes(t *testing.T) {
	rules, _ := ast.RulesForPreset(presets.Experimental)
	// A valid plan of exactly n bytes: a return and a comment to pad.
	sized := func(i, n int) string {
		s := fmt.Sprintf("return %d //", i)
		return s + strings.Repeat("x", n-len(s))
	}
	t.Run("a script over the per-script bound is not remembered", func(t *testing.T) {
		c := newPlanCache()
		s := sized(0, planCacheMaxScript+1)
		if _, err := c.validate(s, sha256Hex(s), rules); err != nil {
			t.Fatal(err)
		}
		if len(c.entries) != 0 || c.bytes != 0 {
			t.Fatalf("%d entries, %d bytes remembered", len(c.entries), c.bytes)
		}
	})
	t.Run("the total is bounded", func(t *testing.T) {
		c := newPlanCache()
		n := planCacheBytes/planCacheMaxScript + 8
		for i := range n {
			s := sized(i, planCacheMaxScript)
			if _, err := c.validate(s, sha256Hex(s), rules); err != nil {
				t.Fatal(err)
			}
			if c.bytes > planCacheBytes {
				t.Fatalf("after %d scripts: %d bytes remembered, bound %d", i+1, c.bytes, planCacheBytes)
			}
		}
		if want := planCacheBytes / planCacheMaxScript; len(c.entries) != want {
			t.Fatalf("%d entries, want %d", len(c.entries), want)
		}
		first := sized(0, planCacheMaxScript)
		if _, ok := c.entries[planKey{scriptSHA: sha256Hex(first), rules: rulesKey(rules)}]; ok {
			t.Fatal("the oldest script is still remembered past the byte bound")
		}
		last := sized(n-1, planCacheMaxScript)
		if _, ok := c.entries[planKey{scriptSHA: sha256Hex(last), rules: rulesKey(rules)}]; !ok {
			t.Fatal("the newest script is not remembered")
		}
	})
}
