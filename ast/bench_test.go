package ast

import (
	"testing"

	"github.com/codecall-go/codecall/presets"
)

// BenchmarkValidate validates a typical 30-line plan under the secure
// preset: pre-scan, two parses, the walk and the compile.
func BenchmarkValidate(b *testing.B) {
	r, _ := RulesForPreset(presets.Secure)
	b.SetBytes(int64(len(benchPlan)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Validate(benchPlan, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkValidateLarge validates the largest script the experimental
// preset allows, made of realistic code.
func BenchmarkValidateLarge(b *testing.B) {
	r, _ := RulesForPreset(presets.Experimental)
	script := ""
	for len(script)+len(benchPlan) < int(r.MaxScriptBytes) {
		script += "{\n" + benchPlan[:len(benchPlan)-len("return {countries: ranking.length, ranking: ranking.slice(0, 5), overdue: overdue.length, checkedAt: codecallContext.now};")] + "}\n"
	}
	b.SetBytes(int64(len(script)))
	for b.Loop() {
		if _, err := Validate(script, r); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkPrescan measures the pre-scan alone on the typical plan.
func BenchmarkPrescan(b *testing.B) {
	lines := newLineIndex(benchPlan)
	b.SetBytes(int64(len(benchPlan)))
	for b.Loop() {
		prescan(benchPlan, lines, 48)
	}
}
