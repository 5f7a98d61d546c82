package openapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
)

// OperationRef identifies an operation, for WithSelect and overrides.
type OperationRef struct {
	// Name is the tool name the operation gets (without the app prefix).
	Name string
	// ID is the document's operationId, "" when it has none.
	ID string
	// Method is upper-case (GET, POST...); Path is the path template.
	Method, Path string
	// Tags are the operation's tags.
	Tags []string
}

// Override changes how one operation is served.
type Override struct {
	// RequiresApproval, when set, is the tool's requiresApproval.
	RequiresApproval *bool
	// Timeout, when positive, replaces the app's timeout for the operation.
	Timeout time.Duration
}

// Operation is one operation of the document as a tool.
type Operation struct {
	OperationRef
	// Tool is the MCP tool: name, description, schemas, annotations and
	// _meta.codecall (source openapi).
	Tool mcp.Tool
	// Timeout bounds one call (0: the app's).
	Timeout time.Duration

	params   []param
	body     *body
	security []securityNeed
}

// param is one parameter of an operation and the input field that holds it.
type param struct {
	field    string // property of the tool's input
	name     string // the parameter's own name
	in       string // path, query, header, cookie
	style    string
	explode  bool
	reserved bool // allowReserved
	json     bool // content: application/json (serialised as JSON text)
	required bool
}

// body is an operation's request body and where it is in the input.
type body struct {
	mediaType string
	field     string   // the input property holding the whole body; "" when merged
	merged    []string // the body's own properties, at the top of the input
	required  bool
}

// securityNeed is a security scheme an operation asks for, named in the
// hint of a 401 so the operator knows which credential to configure.
type securityNeed struct{ scheme string }

var methods = []string{http.MethodGet, http.MethodPut, http.MethodPost, http.MethodDelete, http.MethodOptions,
	http.MethodHead, http.MethodPatch, http.MethodTrace}

// Skipped is an operation of the document that is not served, and why.
type Skipped struct {
	OperationRef
	// Reason says why, in words an operator can act on.
	Reason string
}

// build synthesises the tools of every selected operation of doc; an
// operation that cannot be served (a body CodeCall cannot send) is skipped
// with its reason, so the rest of the API stays reachable.
func build(doc *Document, o *options) ([]*Operation, []Skipped) {
	type raw struct {
		path, method string
		item         *openapi3.PathItem
		op           *openapi3.Operation
	}
	var ops []raw
	paths := doc.T.Paths.Map()
	for _, p := range sortedKeys(paths) {
		item := paths[p]
		for _, m := range methods {
			if op := item.GetOperation(m); op != nil {
				ops = append(ops, raw{p, m, item, op})
			}
		}
	}
	taken := map[string]bool{}
	var out []*Operation
	var skipped []Skipped
	for _, r := range ops {
		name := toolName(r.op.OperationID, r.method, r.path)
		base := name
		for i := 2; taken[name]; i++ {
			name = fmt.Sprintf("%s_%d", base, i)
		}
		taken[name] = true
		ref := OperationRef{Name: name, ID: r.op.OperationID, Method: r.method, Path: r.path, Tags: r.op.Tags}
		if o.selectOp != nil && !o.selectOp(ref) {
			continue
		}
		op, err := newOperation(doc, ref, r.item, r.op, o)
		if err != nil {
			skipped = append(skipped, Skipped{OperationRef: ref, Reason: err.Error()})
			continue
		}
		out = append(out, op)
	}
	return out, skipped
}

// toolName is the operationId made a valid tool name, or, without one, a
// name made from the method and the path: GET /pets/{id} is get_pets_id.
func toolName(id, method, path string) string {
	clean := func(s string) string {
		var b strings.Builder
		for _, r := range s {
			if r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' {
				b.WriteRune(r)
			} else {
				b.WriteByte('_')
			}
		}
		return strings.Trim(b.String(), "_")
	}
	if n := clean(id); n != "" {
		return n
	}
	var parts []string
	for _, seg := range strings.Split(path, "/") {
		if seg = clean(strings.NewReplacer("{", "", "}", "").Replace(seg)); seg != "" {
			parts = append(parts, seg)
		}
	}
	return strings.ToLower(method) + "_" + strings.Join(parts, "_")
}

func newOperation(doc *Document, ref OperationRef, item *openapi3.PathItem, op *openapi3.Operation, o *options) (*Operation, error) {
	out := &Operation{OperationRef: ref}
	conv := newSchemaConv(toServer)
	props := map[string]any{}
	var required []string
	// Path-level parameters apply unless the operation redefines them.
	params := map[string]*openapi3.Parameter{}
	var order []string
	for _, list := range []openapi3.Parameters{item.Parameters, op.Parameters} {
		for _, pr := range list {
			if pr == nil || pr.Value == nil {
				continue
			}
			key := pr.Value.In + ":" + pr.Value.Name
			if _, seen := params[key]; !seen {
				order = append(order, key)
			}
			params[key] = pr.Value
		}
	}
	list := make([]*openapi3.Parameter, 0, len(order))
	for _, key := range order {
		list = append(list, params[key])
	}
	names := map[string]int{}
	for _, key := range order {
		names[params[key].Name]++
	}
	for _, key := range order {
		p := params[key]
		field := p.Name
		if names[p.Name] > 1 {
			// The same name in two places (an id in the path and in a
			// header): each gets its location in front.
			field = p.In + "_" + p.Name
		}
		pm := param{field: field, name: p.Name, in: p.In, required: p.Required || p.In == openapi3.ParameterInPath,
			reserved: p.AllowReserved}
		pm.style, pm.explode = styleOf(p)
		var schema any = map[string]any{}
		switch {
		case p.Schema != nil:
			schema = conv.ref(p.Schema)
		case p.Content != nil:
			if mt := p.Content.Get("application/json"); mt != nil && mt.Schema != nil {
				schema = conv.ref(mt.Schema)
				pm.json = true
			}
		}
		if sm, ok := schema.(map[string]any); ok && p.Description != "" {
			if _, has := sm["description"]; !has {
				sm["description"] = p.Description
			}
		}
		if sm, ok := schema.(map[string]any); ok && p.Example != nil {
			sm["examples"] = []any{p.Example}
		}
		props[field] = schema
		if pm.required {
			required = append(required, field)
		}
		out.params = append(out.params, pm)
	}
	if op.RequestBody != nil && op.RequestBody.Value != nil {
		rb := op.RequestBody.Value
		mediaType, mt := pickMediaType(rb.Content)
		if mt == nil {
			return nil, fmt.Errorf("the request body has no media type CodeCall can send (JSON, form, multipart or text; the document offers %s)", strings.Join(sortedKeys(rb.Content), ", "))
		}
		b := &body{mediaType: mediaType, required: rb.Required}
		var bodySchema *openapi3.Schema
		if mt.Schema != nil {
			bodySchema = mt.Schema.Value
		}
		clash := false
		if isObject(bodySchema) {
			for name := range bodySchema.Properties {
				if _, ok := props[name]; ok {
					clash = true
				}
			}
		}
		if isObject(bodySchema) && !clash && (mt.Schema.Ref == "" || !refersTo(bodySchema, bodySchema)) {
			// The body's fields sit next to the parameters: the form a
			// person would write.
			for _, name := range sortedKeys(bodySchema.Properties) {
				p := bodySchema.Properties[name]
				if p != nil && p.Value != nil && p.Value.ReadOnly {
					continue
				}
				props[name] = conv.ref(p)
				b.merged = append(b.merged, name)
			}
			if rb.Required {
				for _, r := range bodySchema.Required {
					if contains(b.merged, r) {
						required = append(required, r)
					}
				}
			}
		} else {
			b.field = "body"
			for i := 2; props[b.field] != nil; i++ {
				b.field = fmt.Sprintf("body%d", i)
			}
			var schema any = map[string]any{}
			if mt.Schema != nil {
				schema = conv.ref(mt.Schema)
			}
			if sm, ok := schema.(map[string]any); ok && rb.Description != "" {
				if _, has := sm["description"]; !has {
					sm["description"] = rb.Description
				}
			}
			props[b.field] = schema
			if rb.Required {
				required = append(required, b.field)
			}
		}
		out.body = b
	}
	input := map[string]any{"type": "object", "properties": props, "additionalProperties": false}
	if len(required) > 0 {
		sort.Strings(required)
		input["required"] = required
	}
	inRaw, err := json.Marshal(conv.withDefs(input))
	if err != nil {
		return nil, fmt.Errorf("input schema: %w", err)
	}
	desc := op.Description
	if desc == "" {
		desc = op.Summary
	} else if op.Summary != "" && !strings.HasPrefix(desc, op.Summary) {
		desc = op.Summary + "\n\n" + desc
	}
	if desc == "" {
		desc = ref.Method + " " + ref.Path
	}
	desc += fmt.Sprintf("\n\nHTTP: %s %s", ref.Method, ref.Path)
	t := mcp.Tool{Name: ref.Name, Title: op.Summary, Description: desc, RawInputSchema: inRaw}
	if outSchema := outputSchema(op); outSchema != nil {
		if raw, err := json.Marshal(outSchema); err == nil {
			t.RawOutputSchema = raw
		}
	}
	t.Annotations = annotationsFor(ref.Method, op.Summary)
	meta := catalog.Meta{AppID: o.app, Source: catalog.SourceOpenAPI, Tags: op.Tags, Examples: examplesOf(out, list, op)}
	if ov, ok := o.overrideFor(ref); ok {
		meta.RequiresApproval = ov.RequiresApproval
		out.Timeout = ov.Timeout
		if ov.Timeout > 0 {
			meta.TimeoutMs = ov.Timeout.Milliseconds()
		}
	}
	out.Tool = catalog.SetMeta(t, meta)
	out.security = securityOf(doc, op)
	return out, nil
}

// refersTo reports whether s's properties lead back to target: a merged
// body whose fields refer to the body itself stays under "body", where
// $defs can name it.
func refersTo(s, target *openapi3.Schema) bool {
	seen := map[*openapi3.Schema]bool{}
	var walk func(*openapi3.SchemaRef) bool
	walk = func(sr *openapi3.SchemaRef) bool {
		if sr == nil || sr.Value == nil {
			return false
		}
		if sr.Value == target {
			return true
		}
		if seen[sr.Value] {
			return false
		}
		seen[sr.Value] = true
		v := sr.Value
		for _, p := range v.Properties {
			if walk(p) {
				return true
			}
		}
		for _, list := range []openapi3.SchemaRefs{v.OneOf, v.AnyOf, v.AllOf, v.PrefixItems} {
			for _, x := range list {
				if walk(x) {
					return true
				}
			}
		}
		return walk(v.Items) || walk(v.AdditionalProperties.Schema) || walk(v.Not)
	}
	for _, p := range s.Properties {
		if walk(p) {
			return true
		}
	}
	return false
}

// styleOf returns a parameter's serialisation style and explode, with the
// OpenAPI defaults: form (explode) for query and cookie, simple for path
// and header.
func styleOf(p *openapi3.Parameter) (string, bool) {
	style := p.Style
	if style == "" {
		switch p.In {
		case openapi3.ParameterInQuery, openapi3.ParameterInCookie:
			style = openapi3.SerializationForm
		default:
			style = openapi3.SerializationSimple
		}
	}
	explode := style == openapi3.SerializationForm
	if p.Explode != nil {
		explode = *p.Explode
	}
	return style, explode
}

// pickMediaType chooses how to send a request body: JSON first, then form,
// then multipart, then any other text type as it is.
func pickMediaType(c openapi3.Content) (string, *openapi3.MediaType) {
	keys := sortedKeys(c)
	for _, want := range []func(string) bool{
		func(k string) bool { return k == "application/json" },
		func(k string) bool { return isJSON(k) },
		func(k string) bool { return k == "application/x-www-form-urlencoded" },
		func(k string) bool { return k == "multipart/form-data" },
		func(k string) bool { return strings.HasPrefix(k, "text/") },
		func(k string) bool { return k == "*/*" || k == "application/*" },
	} {
		for _, k := range keys {
			if want(strings.ToLower(k)) {
				return k, c[k]
			}
		}
	}
	return "", nil
}

func isJSON(mediaType string) bool {
	mt := strings.ToLower(strings.TrimSpace(strings.Split(mediaType, ";")[0]))
	return mt == "application/json" || strings.HasSuffix(mt, "+json")
}

// outputSchema is the schema of the first 2xx JSON response, when it is an
// object (MCP's structuredContent is always one).
func outputSchema(op *openapi3.Operation) map[string]any {
	mt := successJSON(op)
	if mt == nil || mt.Schema == nil || mt.Schema.Value == nil {
		return nil
	}
	if !objectish(mt.Schema.Value, 0) {
		return nil
	}
	conv := newSchemaConv(fromServer)
	root, ok := conv.ref(mt.Schema).(map[string]any)
	if !ok {
		return nil
	}
	if _, isRef := root["$ref"]; isRef {
		// A recursive root: point at its definition from an object.
		root = map[string]any{"allOf": []any{root}}
	}
	// MCP wants an output schema to say type object at its root.
	root["type"] = "object"
	return conv.withDefs(root)
}

// objectish reports whether every value a schema accepts is an object:
// type object, or properties without a type, or an allOf of such.
func objectish(s *openapi3.Schema, depth int) bool {
	switch {
	case s == nil || depth > 8:
		return false
	case s.Type != nil:
		return s.Type.Is("object")
	case len(s.Properties) > 0:
		return true
	case len(s.AllOf) > 0:
		for _, x := range s.AllOf {
			if x != nil && objectish(x.Value, depth+1) {
				return true
			}
		}
	}
	return false
}

// successJSON returns the JSON media type of the first 2xx response.
func successJSON(op *openapi3.Operation) *openapi3.MediaType {
	if op.Responses == nil {
		return nil
	}
	codes := sortedKeys(op.Responses.Map())
	for _, code := range codes {
		if !(strings.HasPrefix(code, "2")) {
			continue
		}
		r := op.Responses.Value(code)
		if r == nil || r.Value == nil {
			continue
		}
		for _, k := range sortedKeys(r.Value.Content) {
			if isJSON(k) {
				return r.Value.Content[k]
			}
		}
	}
	return nil
}

// annotationsFor gives the hints HTTP's method semantics imply: GET, HEAD
// and OPTIONS only read; PUT and DELETE are idempotent and overwrite or
// remove; POST creates. Every operation reaches a remote system
// (openWorldHint), so the default policy asks before each write.
func annotationsFor(method, title string) mcp.ToolAnnotation {
	t, f := true, false
	a := mcp.ToolAnnotation{Title: title, OpenWorldHint: &t}
	switch method {
	case http.MethodGet, http.MethodHead, http.MethodOptions:
		a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint = &t, &f, &t
	case http.MethodPut:
		a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint = &f, &t, &t
	case http.MethodDelete:
		a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint = &f, &t, &t
	case http.MethodPost:
		a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint = &f, &f, &f
	default: // PATCH, TRACE
		a.ReadOnlyHint, a.DestructiveHint, a.IdempotentHint = &f, &t, &f
	}
	return a
}

// examplesOf builds example inputs from the document's examples: the
// parameters' and the request body's, named examples first.
func examplesOf(o *Operation, params []*openapi3.Parameter, op *openapi3.Operation) []catalog.Example {
	input := map[string]any{}
	byName := map[string]string{}
	for _, p := range o.params {
		byName[p.in+":"+p.name] = p.field
	}
	for _, p := range params {
		field := byName[p.In+":"+p.Name]
		switch {
		case p.Example != nil:
			input[field] = p.Example
		case len(p.Examples) > 0:
			for _, k := range sortedKeys(p.Examples) {
				if ex := p.Examples[k]; ex != nil && ex.Value != nil && ex.Value.Value != nil {
					input[field] = ex.Value.Value
					break
				}
			}
		case p.Schema != nil && p.Schema.Value != nil && p.Schema.Value.Example != nil:
			input[field] = p.Schema.Value.Example
		}
	}
	var bodies []map[string]any // one input per body example
	var names []string
	if o.body != nil && op.RequestBody != nil && op.RequestBody.Value != nil {
		if mt := op.RequestBody.Value.Content.Get(o.body.mediaType); mt != nil {
			add := func(name string, v any) {
				in := map[string]any{}
				if o.body.field != "" {
					in[o.body.field] = v
				} else if obj, ok := v.(map[string]any); ok {
					for k, x := range obj {
						if contains(o.body.merged, k) {
							in[k] = x
						}
					}
				} else {
					return
				}
				bodies = append(bodies, in)
				names = append(names, name)
			}
			for _, k := range sortedKeys(mt.Examples) {
				if ex := mt.Examples[k]; ex != nil && ex.Value != nil && ex.Value.Value != nil {
					desc := ex.Value.Summary
					if desc == "" {
						desc = k
					}
					add(desc, ex.Value.Value)
				}
			}
			if len(bodies) == 0 && mt.Example != nil {
				add("", mt.Example)
			}
		}
	}
	var out []catalog.Example
	for i, b := range bodies {
		in := map[string]any{}
		for k, v := range input {
			in[k] = v
		}
		for k, v := range b {
			in[k] = v
		}
		out = append(out, catalog.Example{Description: names[i], Input: in})
	}
	if len(out) == 0 && len(input) > 0 {
		out = append(out, catalog.Example{Input: input})
	}
	return out
}

// securityOf lists the security schemes an operation asks for.
func securityOf(doc *Document, op *openapi3.Operation) []securityNeed {
	reqs := doc.T.Security
	if op.Security != nil {
		reqs = *op.Security
	}
	var out []securityNeed
	for _, r := range reqs {
		for _, name := range sortedKeys(r) {
			out = append(out, securityNeed{scheme: name})
		}
	}
	return out
}

// baseURLOf returns the URL calls go to: the configured one, or the
// document's first server (its variables at their defaults), resolved
// against the document's own URL when relative.
func baseURLOf(doc *Document, configured string) (*url.URL, error) {
	raw := configured
	if raw == "" {
		if len(doc.T.Servers) == 0 {
			return nil, fmt.Errorf("the document lists no servers; set baseUrl")
		}
		s := doc.T.Servers[0]
		raw = s.URL
		for name, v := range s.Variables {
			if v != nil {
				raw = strings.ReplaceAll(raw, "{"+name+"}", v.Default)
			}
		}
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("base URL %q: %w", raw, err)
	}
	if !u.IsAbs() && IsURL(doc.Source) {
		src, _ := url.Parse(doc.Source)
		u = src.ResolveReference(u)
	}
	if (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("base URL %q is not an absolute http:// or https:// URL; set baseUrl", raw)
	}
	u.Path = strings.TrimSuffix(u.Path, "/")
	u.RawQuery, u.Fragment = "", ""
	return u, nil
}
