package typescript

import (
	"encoding/json"
	"strings"
	"testing"
)

// FuzzTypeOf checks that TypeOf never panics and that what it returns stays
// within the output limit.
func FuzzTypeOf(f *testing.F) {
	for _, tc := range typeOfCases {
		f.Add([]byte(tc.schema))
	}
	for _, tc := range declareCases {
		f.Add([]byte(tc.fn.InputSchema))
	}
	f.Fuzz(func(t *testing.T, schema []byte) {
		got, err := TypeOf(json.RawMessage(schema))
		if err != nil {
			if got != "" {
				t.Errorf("TypeOf returned %q with error %v", got, err)
			}
			return
		}
		if got == "" || len(got) > maxOutput {
			t.Errorf("TypeOf returned %d bytes", len(got))
		}
	})
}

// FuzzDeclare checks that Declare never panics, always declares the
// callTool overload and both aliases, and stays within the output limit
// plus what the tool name and documentation add.
func FuzzDeclare(f *testing.F) {
	for _, tc := range declareCases {
		f.Add(tc.fn.Name, tc.fn.Title, tc.fn.Description, []byte(tc.fn.InputSchema), []byte(tc.fn.OutputSchema))
	}
	for _, tc := range typeOfCases {
		f.Add("fuzz", "", "", []byte(tc.schema), []byte(tc.schema))
	}
	f.Fuzz(func(t *testing.T, name, title, description string, input, output []byte) {
		got := Declare(Function{
			Name: name, Title: title, Description: description,
			InputSchema: input, OutputSchema: output,
			Effects:          Effects{ReadOnly: ptr(true), OpenWorld: ptr(true)},
			RequiresApproval: true,
		})
		base := TypeName(name)
		wants := []string{"\ntype " + base + "Input = "}
		if absent(output) {
			wants = append(wants, "declare function callTool(name: "+quote(name)+", input: "+base+"Input): Promise<unknown>;\n")
		} else {
			wants = append(wants, "declare function callTool(name: "+quote(name)+", input: "+base+"Input): Promise<"+base+"Output>;\n",
				"\ntype "+base+"Output = ")
		}
		for _, want := range wants {
			if !strings.Contains(got, want) {
				t.Fatalf("declarations lack %q:\n%s", want, got)
			}
		}
		if limit := maxOutput + 2*len(quote(name)) + 3*len(base) + 2*maxDocLen + 4*maxInline + 1000; len(got) > limit {
			t.Errorf("Declare returned %d bytes, more than %d", len(got), limit)
		}
	})
}
