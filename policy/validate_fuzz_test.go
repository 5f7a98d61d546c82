package policy_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/toolerr"
)

// FuzzValidation feeds the gate's input validation hostile schemas and
// arguments (tool metadata is untrusted): it must never panic, and a call
// it refuses must be refused with VALIDATION.
func FuzzValidation(f *testing.F) {
	f.Add(`{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`, `{"id":1}`)
	f.Add(`{"type":"object","additionalProperties":false}`, `{"x":[1,2,{"y":null}]}`)
	f.Add(`{"$ref":"#"}`, `{}`)
	f.Add(`{"type":"object","properties":{"n":{"type":"integer","minimum":3}}}`, `{"n":2.5}`)
	f.Add(`{"allOf":[{"$ref":"#/$defs/a"}],"$defs":{"a":{"required":["q"]}}}`, `{"q":"x"}`)
	f.Add(`{"type":"object","properties":{"s":{"pattern":"(a+)+$"}}}`, `{"s":"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!"}`)
	f.Add(`not json`, `{}`)
	cfg := presets.Default()
	gate, err := policy.NewGate(cfg)
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, schema, args string) {
		tool := mcp.NewToolWithRawSchema("fz.tool", "", json.RawMessage(schema))
		tool.Annotations.ReadOnlyHint = mcp.ToBoolPtr(true)
		snap, _, err := catalog.Build([]mcp.Tool{tool}, catalog.Options{Config: cfg, DefaultAppID: "fz"})
		if err != nil {
			return
		}
		var in map[string]any
		if json.Unmarshal([]byte(args), &in) != nil {
			return
		}
		_, err = gate.Decide(context.Background(), snap, policy.Call{Tool: "fz.tool", Via: policy.ViaExecute, Args: in})
		if err != nil {
			if code := toolerr.CodeOf(err); code != toolerr.Validation && code != toolerr.NotFound {
				t.Fatalf("refused with %v", err)
			}
		}
	})
}
