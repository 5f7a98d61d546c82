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

// FuzzDeclareModule checks that DeclareModule never panics, always declares
// the module block with every tool's function and __meta__, and stays
// within the module-wide limit plus what each tool's names and
// documentation add.
func FuzzDeclareModule(f *testing.F) {
	for _, tc := range moduleFeatureCases {
		f.Add("@codemode/servers/features", "f", "features.f", "", "", []byte(tc.schema), []byte(tc.schema))
	}
	for _, tc := range moduleInputCases {
		f.Add("@codemode/servers/inputs", "enum", "inputs.f", "Title", "Description */", []byte(tc.schema), []byte(nil))
	}
	for _, tc := range declareCases {
		f.Add("m", "get-order", tc.fn.Name, tc.fn.Title, tc.fn.Description, []byte(tc.fn.InputSchema), []byte(tc.fn.OutputSchema))
	}
	f.Fuzz(func(t *testing.T, specifier, export, name, title, description string, input, output []byte) {
		m := Module{
			Specifier: specifier, ServerID: specifier, ServerName: title, ServerVersion: description,
			Tools: []ModuleTool{
				{Export: export, Function: Function{
					Name: name, Title: title, Description: description,
					InputSchema: input, OutputSchema: output,
					Effects:          Effects{ReadOnly: ptr(false), Destructive: ptr(true), Idempotent: ptr(false), OpenWorld: ptr(true)},
					RequiresApproval: true,
				}},
				// The same name again, and the schemas swapped.
				{Export: "second", Function: Function{Name: name, InputSchema: output, OutputSchema: input}},
			},
		}
		got := DeclareModule(m)
		wants := []string{"declare module " + quote(specifier) + " {\n", "\n  export function second(", "\n  export const __meta__: {\n"}
		switch {
		case isBindingIdent(export):
			wants = append(wants, "\n  export function "+export+"(")
		case isIdentifierName(export):
			wants = append(wants, " as "+export+" };\n")
		default:
			wants = append(wants, " as "+quote(export)+" };\n")
		}
		for _, want := range wants {
			if !strings.Contains(got, want) {
				t.Fatalf("declarations lack %q:\n%s", want, got)
			}
		}
		if !strings.HasSuffix(got, "\n}\n") {
			t.Fatalf("declarations do not end the module block:\n%s", got)
		}
		// Per tool: the comment (description, title, canonical name, fixed
		// sentences, JSDoc frame), the signature, and the fallback aliases
		// when the module's limit is reached.
		perTool := 8*maxDocLen + 6*maxInline + 3*len(export) + 6*len(TypeName(name)) + 2000
		header := 4*maxInline + len(quote(specifier)) + 1000
		if limit := maxModuleOutput + len(m.Tools)*perTool + header; len(got) > limit {
			t.Errorf("DeclareModule returned %d bytes, more than %d", len(got), limit)
		}
	})
}
