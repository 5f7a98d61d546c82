package policy

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/toolerr"
)

// inputSchema is a tool's input schema compiled for validation; schema is
// nil when the tool's schema cannot be compiled, and then the tool itself
// judges its input (as mcp-go's own validation does).
type inputSchema struct {
	schema *jsonschema.Schema
}

// validate checks a call's arguments against its tool's input schema, so
// that a call which cannot run is refused before a policy or a person is
// asked about it. The schema is compiled once per tool and gate.
func (g *Gate) validate(t *catalog.Tool, c Call) error {
	var in *inputSchema
	if v, ok := g.schemas.Load(t); ok {
		in = v.(*inputSchema)
	} else {
		in = &inputSchema{schema: compileInputSchema(t.InputSchema)}
		g.schemas.Store(t, in)
	}
	if in.schema == nil {
		return nil
	}
	why, mismatch := explain(in.schema, c.Args)
	if why == "" {
		return nil
	}
	return &toolerr.Error{Code: toolerr.Validation, Tool: c.Tool,
		Message:  "input does not match the tool's input schema: " + why,
		Hint:     "read the tool's inputSchema (codecall.describe) and send the input it asks for",
		Mismatch: mismatch}
}

func compileInputSchema(raw json.RawMessage) *jsonschema.Schema {
	if len(bytes.TrimSpace(raw)) == 0 {
		return nil
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(raw))
	if err != nil {
		return nil
	}
	c := jsonschema.NewCompiler()
	const url = "mem://tool/input.json"
	if err := c.AddResource(url, doc); err != nil {
		return nil
	}
	s, err := c.Compile(url)
	if err != nil {
		return nil
	}
	return s
}

// explain validates args and describes what is wrong in plain words, one
// clause per problem ("missing property 'start'"), "" when args are valid,
// and locates the first problem.
func explain(s *jsonschema.Schema, args map[string]any) (string, *toolerr.Mismatch) {
	why, verr, inst := validateArgs(s, args)
	if verr == nil {
		return why, nil
	}
	return why, locate(verr, inst)
}

// validateArgs validates args; it returns the description of a failure
// and, when the validator reported one, its error and the instance it
// validated.
func validateArgs(s *jsonschema.Schema, args map[string]any) (string, *jsonschema.ValidationError, any) {
	var inst any = args
	if args == nil {
		inst = map[string]any{}
	}
	err := s.Validate(inst)
	var verr *jsonschema.ValidationError
	if err != nil && !errors.As(err, &verr) {
		// A Go value the validator does not know (a caller's own type):
		// validate its JSON form instead.
		raw, merr := json.Marshal(inst)
		if merr != nil {
			return "the input cannot be encoded as JSON", nil, nil
		}
		if inst, merr = jsonschema.UnmarshalJSON(bytes.NewReader(raw)); merr != nil {
			return "the input cannot be read as JSON", nil, nil
		}
		err = s.Validate(inst)
		if err != nil && !errors.As(err, &verr) {
			return "the input cannot be checked against the schema", nil, nil
		}
	}
	if verr == nil {
		return "", nil, nil
	}
	var msgs []string
	for _, line := range strings.Split(verr.Error(), "\n")[1:] {
		line = strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(line), "- "))
		if line != "" {
			msgs = append(msgs, line)
		}
	}
	if len(msgs) == 0 {
		return verr.Error(), verr, inst
	}
	return strings.Join(msgs, "; "), verr, inst
}
