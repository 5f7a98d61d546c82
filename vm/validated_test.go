package vm

import (
	"context"
	"testing"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/presets"
)

// TestValidatedPlans runs plans through the validator, as codecall.execute
// does: the runtime's locations map back to the user's script.
func TestValidatedPlans(t *testing.T) {
	l := limits(t, presets.Balanced)
	cases := []struct {
		script string
		want   want
		loc    *Location
	}{
		{script: "const r = await callTool('crm.find', {q: 'ada'});\nreturn r.input", want: okWith(`{"q":"ada"}`)},
		{script: "const k = 'constr' + 'uctor';\nconst f = ({})[k][k];\nreturn f('return 1')", want: codeGen, loc: &Location{Line: 3, Column: 9}},
		{script: "const k = 'constr' + 'uctor'; return ({})[k][k]('return 1')", want: codeGen, loc: &Location{Line: 1, Column: 48}},
		{script: "return new RegExp('(?=a)').test('a')", want: okWith(`true`)},
	}
	for _, c := range cases {
		t.Run(c.script, func(t *testing.T) {
			plan, err := ast.Validate(c.script, ast.RulesFor(l))
			if err != nil {
				t.Fatalf("validate: %v", err)
			}
			res := Run(context.Background(), plan, &mcptest.Host{}, Options{RunID: "v", Limits: l})
			checkWant(t, res, c.want)
			if c.loc != nil && (res.Error == nil || res.Error.Location == nil || *res.Error.Location != *c.loc) {
				t.Errorf("location: %s, want %+v", describe(res), *c.loc)
			}
		})
	}
}
