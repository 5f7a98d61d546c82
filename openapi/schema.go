package openapi

import (
	"fmt"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// direction says which side of the exchange a schema describes: readOnly
// properties are left out of what a caller sends, writeOnly ones out of
// what it receives.
type direction int

const (
	toServer direction = iota
	fromServer
)

// schemaConv turns kin-openapi schemas into JSON Schema (2020-12) values
// for one tool. A schema met again while it is being converted (a $ref
// cycle) is moved to $defs and referred to, so recursive types stay
// finite and keep their name.
type schemaConv struct {
	dir   direction
	stack map[*openapi3.Schema]bool
	names map[*openapi3.Schema]string // schemas that must live in $defs
	taken map[string]bool
	defs  map[string]any
}

func newSchemaConv(dir direction) *schemaConv {
	return &schemaConv{dir: dir, stack: map[*openapi3.Schema]bool{}, names: map[*openapi3.Schema]string{},
		taken: map[string]bool{}, defs: map[string]any{}}
}

// defName names a recursive schema after the last segment of its $ref.
func (c *schemaConv) defName(sr *openapi3.SchemaRef) string {
	if n, ok := c.names[sr.Value]; ok {
		return n
	}
	base := "Schema"
	if i := strings.LastIndexAny(sr.Ref, "/#"); i >= 0 && i+1 < len(sr.Ref) {
		base = sanitizeDef(sr.Ref[i+1:])
	}
	name := base
	for i := 2; c.taken[name]; i++ {
		name = fmt.Sprintf("%s%d", base, i)
	}
	c.taken[name] = true
	c.names[sr.Value] = name
	return name
}

func sanitizeDef(s string) string {
	var b strings.Builder
	for _, r := range s {
		if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	if b.Len() == 0 {
		return "Schema"
	}
	return b.String()
}

// ref converts a schema reference.
func (c *schemaConv) ref(sr *openapi3.SchemaRef) any {
	if sr == nil || sr.Value == nil {
		return map[string]any{}
	}
	s := sr.Value
	if c.stack[s] {
		return map[string]any{"$ref": "#/$defs/" + c.defName(sr)}
	}
	c.stack[s] = true
	out := c.schema(s)
	delete(c.stack, s)
	if name, ok := c.names[s]; ok {
		c.defs[name] = out
		return map[string]any{"$ref": "#/$defs/" + name}
	}
	return out
}

// withDefs puts the collected $defs into a root schema.
func (c *schemaConv) withDefs(root map[string]any) map[string]any {
	if len(c.defs) > 0 {
		root["$defs"] = c.defs
	}
	return root
}

func (c *schemaConv) refs(srs openapi3.SchemaRefs) []any {
	out := make([]any, 0, len(srs))
	for _, sr := range srs {
		out = append(out, c.ref(sr))
	}
	return out
}

// schema converts one schema. OpenAPI 3.0's nullable, example and boolean
// exclusive bounds become their JSON Schema 2020-12 forms.
func (c *schemaConv) schema(s *openapi3.Schema) any {
	if s.Always != nil {
		return *s.Always
	}
	m := map[string]any{}
	if s.Type != nil && len(*s.Type) > 0 {
		types := append([]string(nil), (*s.Type)...)
		if s.Nullable && !contains(types, "null") {
			types = append(types, "null")
		}
		if len(types) == 1 {
			m["type"] = types[0]
		} else {
			m["type"] = types
		}
	}
	set := func(k string, v any, ok bool) {
		if ok {
			m[k] = v
		}
	}
	set("title", s.Title, s.Title != "")
	set("description", s.Description, s.Description != "")
	set("format", s.Format, s.Format != "")
	if len(s.Enum) > 0 {
		enum := s.Enum
		if s.Nullable && !containsAny(enum, nil) {
			enum = append(append([]any(nil), enum...), nil)
		}
		m["enum"] = enum
	}
	set("default", s.Default, s.Default != nil)
	set("const", s.Const, s.Const != nil)
	switch {
	case len(s.Examples) > 0:
		m["examples"] = s.Examples
	case s.Example != nil:
		m["examples"] = []any{s.Example}
	}
	set("deprecated", true, s.Deprecated)
	set("multipleOf", derefF(s.MultipleOf), s.MultipleOf != nil)
	switch {
	case s.ExclusiveMin.Value != nil:
		m["exclusiveMinimum"] = *s.ExclusiveMin.Value
		set("minimum", derefF(s.Min), s.Min != nil)
	case s.ExclusiveMin.IsTrue() && s.Min != nil:
		m["exclusiveMinimum"] = *s.Min
	default:
		set("minimum", derefF(s.Min), s.Min != nil)
	}
	switch {
	case s.ExclusiveMax.Value != nil:
		m["exclusiveMaximum"] = *s.ExclusiveMax.Value
		set("maximum", derefF(s.Max), s.Max != nil)
	case s.ExclusiveMax.IsTrue() && s.Max != nil:
		m["exclusiveMaximum"] = *s.Max
	default:
		set("maximum", derefF(s.Max), s.Max != nil)
	}
	set("minLength", s.MinLength, s.MinLength > 0)
	set("maxLength", derefU(s.MaxLength), s.MaxLength != nil)
	set("pattern", s.Pattern, s.Pattern != "")
	if s.Items != nil {
		m["items"] = c.ref(s.Items)
	}
	if len(s.PrefixItems) > 0 {
		m["prefixItems"] = c.refs(s.PrefixItems)
	}
	set("minItems", s.MinItems, s.MinItems > 0)
	set("maxItems", derefU(s.MaxItems), s.MaxItems != nil)
	set("uniqueItems", true, s.UniqueItems)
	if len(s.Properties) > 0 {
		props := map[string]any{}
		var required []string
		for _, name := range sortedKeys(s.Properties) {
			p := s.Properties[name]
			if p != nil && p.Value != nil && ((c.dir == toServer && p.Value.ReadOnly) || (c.dir == fromServer && p.Value.WriteOnly)) {
				continue
			}
			props[name] = c.ref(p)
		}
		for _, r := range s.Required {
			if _, ok := props[r]; ok {
				required = append(required, r)
			}
		}
		m["properties"] = props
		if len(required) > 0 {
			m["required"] = required
		}
	} else if len(s.Required) > 0 {
		m["required"] = s.Required
	}
	switch {
	case s.AdditionalProperties.Schema != nil:
		m["additionalProperties"] = c.ref(s.AdditionalProperties.Schema)
	case s.AdditionalProperties.Has != nil:
		m["additionalProperties"] = *s.AdditionalProperties.Has
	}
	set("minProperties", s.MinProps, s.MinProps > 0)
	set("maxProperties", derefU(s.MaxProps), s.MaxProps != nil)
	if len(s.OneOf) > 0 {
		m["oneOf"] = c.refs(s.OneOf)
	}
	if len(s.AnyOf) > 0 {
		m["anyOf"] = c.refs(s.AnyOf)
	}
	if len(s.AllOf) > 0 {
		m["allOf"] = c.refs(s.AllOf)
	}
	if s.Not != nil {
		m["not"] = c.ref(s.Not)
	}
	return m
}

// isObject reports whether a schema describes a JSON object with named
// properties, whose fields can be merged into a tool's input.
func isObject(s *openapi3.Schema) bool {
	return s != nil && (s.Type == nil || s.Type.Is("object")) && len(s.Properties) > 0 &&
		len(s.OneOf) == 0 && len(s.AnyOf) == 0 && len(s.AllOf) == 0
}

func contains(list []string, v string) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func containsAny(list []any, v any) bool {
	for _, x := range list {
		if x == v {
			return true
		}
	}
	return false
}

func derefF(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}

func derefU(p *uint64) any {
	if p == nil {
		return nil
	}
	return *p
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
