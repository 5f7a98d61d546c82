package redact

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// Bounds on following a schema, so that a hostile or cyclic schema costs a
// fixed amount of work per value.
const (
	maxRefHops      = 16 // $ref chains
	maxSchemaBranch = 4  // allOf/anyOf/oneOf nesting
	maxViewNodes    = 32 // schema nodes that describe one value
)

// schemaView is every schema node that describes one value: the node
// itself, what its $ref points to, and its allOf/anyOf/oneOf branches. A
// nil view means "no schema".
type schemaView struct {
	root  map[string]any
	nodes []map[string]any
}

// schemaHints are the substrings without which a schema cannot mark
// anything sensitive; a schema that has none of them is not even parsed.
var schemaHints = [][]byte{[]byte(`"password"`), []byte(`"writeOnly"`), []byte(`"x-sensitive"`)}

// parseSchema returns the view of the schema's root, or nil when the schema
// is empty, invalid or marks nothing.
func parseSchema(raw json.RawMessage) *schemaView {
	if len(raw) == 0 {
		return nil
	}
	hinted := false
	for _, h := range schemaHints {
		if bytes.Contains(raw, h) {
			hinted = true
			break
		}
	}
	if !hinted {
		return nil
	}
	var root map[string]any
	if err := json.Unmarshal(raw, &root); err != nil || root == nil {
		return nil
	}
	v := &schemaView{root: root}
	v.add(root, 0)
	return v
}

// add puts node, its $ref target and its branches into the view.
func (v *schemaView) add(node map[string]any, branchDepth int) {
	for hops := 0; node != nil && len(v.nodes) < maxViewNodes; hops++ {
		v.nodes = append(v.nodes, node)
		if branchDepth < maxSchemaBranch {
			for _, k := range [...]string{"allOf", "anyOf", "oneOf"} {
				branches, _ := node[k].([]any)
				for _, b := range branches {
					if m, ok := b.(map[string]any); ok {
						v.add(m, branchDepth+1)
					}
				}
			}
		}
		ref, _ := node["$ref"].(string)
		if ref == "" || hops >= maxRefHops {
			return
		}
		node = resolvePointer(v.root, ref)
	}
}

// resolvePointer follows a local reference such as "#/$defs/Card" or
// "#/properties/a/items"; anything else resolves to nil.
func resolvePointer(root map[string]any, ref string) map[string]any {
	rest, ok := strings.CutPrefix(ref, "#")
	if !ok {
		return nil
	}
	if rest == "" {
		return root
	}
	rest, ok = strings.CutPrefix(rest, "/")
	if !ok {
		return nil
	}
	var cur any = root
	for _, tok := range strings.Split(rest, "/") {
		tok = strings.ReplaceAll(strings.ReplaceAll(tok, "~1", "/"), "~0", "~")
		switch c := cur.(type) {
		case map[string]any:
			cur = c[tok]
		case []any:
			i, err := strconv.Atoi(tok)
			if err != nil || i < 0 || i >= len(c) {
				return nil
			}
			cur = c[i]
		default:
			return nil
		}
	}
	m, _ := cur.(map[string]any)
	return m
}

// sensitive reports whether any node marks the value as secret.
func (v *schemaView) sensitive() bool {
	if v == nil {
		return false
	}
	for _, n := range v.nodes {
		if f, _ := n["format"].(string); f == "password" {
			return true
		}
		if b, _ := n["writeOnly"].(bool); b {
			return true
		}
		if b, _ := n["x-sensitive"].(bool); b {
			return true
		}
	}
	return false
}

// property returns the view of the value under key k of an object.
func (v *schemaView) property(k string) *schemaView {
	if v == nil {
		return nil
	}
	out := &schemaView{root: v.root}
	for _, n := range v.nodes {
		if props, ok := n["properties"].(map[string]any); ok {
			if p, ok := props[k].(map[string]any); ok {
				out.add(p, 0)
				continue
			}
		}
		if ap, ok := n["additionalProperties"].(map[string]any); ok {
			out.add(ap, 0)
		}
	}
	return out.orNil()
}

// item returns the view of element i of an array.
func (v *schemaView) item(i int) *schemaView {
	if v == nil {
		return nil
	}
	out := &schemaView{root: v.root}
	for _, n := range v.nodes {
		if prefix, ok := n["prefixItems"].([]any); ok && i < len(prefix) {
			if p, ok := prefix[i].(map[string]any); ok {
				out.add(p, 0)
			}
			continue
		}
		switch items := n["items"].(type) {
		case map[string]any:
			out.add(items, 0)
		case []any: // draft-04 tuples
			if i < len(items) {
				if p, ok := items[i].(map[string]any); ok {
					out.add(p, 0)
				}
			} else if ai, ok := n["additionalItems"].(map[string]any); ok {
				out.add(ai, 0)
			}
		}
	}
	return out.orNil()
}

func (v *schemaView) orNil() *schemaView {
	if len(v.nodes) == 0 {
		return nil
	}
	return v
}
