package meta

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"
)

// explainValidation re-validates input against a tool's input schema to
// describe what is wrong in plain words. mcp-go's own refusal prints the
// validator's internal error values (e.g. "&{Missing:[start]}"), which a
// model cannot act on. It runs only after a refusal, so the schema is
// compiled on this cold path. It returns "" when it has nothing to add.
func explainValidation(schema json.RawMessage, input map[string]any) string {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return ""
	}
	c := jsonschema.NewCompiler()
	const url = "mem://tool/input.json"
	if err := c.AddResource(url, doc); err != nil {
		return ""
	}
	sch, err := c.Compile(url)
	if err != nil {
		return ""
	}
	// Round-trip the input so numbers have the types the validator expects.
	raw, err := json.Marshal(input)
	if err != nil {
		return ""
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return ""
	}
	verr, ok := sch.Validate(inst).(*jsonschema.ValidationError)
	if !ok {
		return ""
	}
	var msgs []string
	for _, line := range strings.Split(verr.Error(), "\n")[1:] {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
		if line != "" {
			msgs = append(msgs, line)
		}
	}
	return strings.Join(msgs, "; ")
}
