// Package redact removes secrets from values before they are shown or
// logged: in audit records, logs, approval prompts and results returned to
// the client.
//
// A Redactor applies three kinds of rules:
//
//   - Secret keys. The value under an object key that looks secret is
//     replaced whole. Keys are compared word by word, case-insensitively,
//     with separators and camelCase normalised (apiKey, api-key and API_KEY
//     are the same key). A key is secret when its last word — after
//     dropping format words such as value, string, pem or base64 — is
//     password, passwd, passphrase, pwd, pass, secret, token, apikey,
//     cookie, authorization, auth, credential(s), privatekey, accesskey,
//     secretkey or clientsecret; when it ends in "key" qualified by api, private,
//     secret, access, signing, client and similar words (api_key,
//     AWS_SECRET_ACCESS_KEY, but not primary_key, sort_key or monkey); or
//     when any of its words, or two neighbouring words together, is
//     password, passwd or passphrase (password_hash, PassWord). A token
//     after a pagination word (nextToken, next_page_token,
//     ContinuationToken) is a page cursor and is kept, and so are tokens,
//     tokenizer and max_tokens. redaction.keys adds globs matched against
//     the key in snake_case.
//   - Schema hints. When a JSON Schema is given, a value whose schema says
//     format: password, writeOnly: true or x-sensitive: true is replaced
//     whole. The schema is followed through properties,
//     additionalProperties, items, prefixItems, local $ref pointers
//     (#/$defs/..., #/definitions/...) and allOf/anyOf/oneOf.
//   - Value patterns, applied to every string (and to numbers long enough
//     to be card numbers): the built-in patterns listed by
//     presets.RedactionBuiltinPatterns — private key blocks, JSON Web
//     Tokens, bearer credentials, passwords in URLs, AWS access key ids,
//     GitHub and Slack tokens, values after secret-looking labels
//     (password=..., "apiKey": "...") and card numbers that pass the Luhn
//     check — then the patterns of redaction.patterns. A pattern with a
//     group named "secret" replaces only that group.
//
// Strings that hold a JSON object or array (a tool's text content, say)
// are parsed and redacted as values, so key rules apply inside them too.
// Booleans and nulls are never replaced: they cannot carry a secret, and
// keeping them keeps flags such as has_password readable.
//
// Work is bounded on hostile input: values nested deeper than the depth
// limit, values beyond the node limit and strings longer than the string
// limit are replaced by the placeholder rather than inspected, so redaction
// fails closed.
package redact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/codecall-go/codecall/presets"
)

// DefaultPlaceholder is what redacted values become unless the
// configuration says otherwise.
const DefaultPlaceholder = presets.DefaultRedactionPlaceholder

// The default bounds on the work of one call; see the With options.
const (
	DefaultMaxDepth       = 512
	DefaultMaxNodes       = 1 << 20
	DefaultMaxStringBytes = 8 << 20
)

// Redactor removes secrets from values. It is immutable once built and safe
// for concurrent use. A nil *Redactor behaves like Default().
type Redactor struct {
	placeholder    string
	keys           presets.Globs
	patterns       []pattern
	maxDepth       int
	maxNodes       int
	maxStringBytes int
}

// Option tunes a Redactor built by New.
type Option func(*Redactor)

// WithMaxDepth sets how deeply nested a value may be before the rest of it
// is replaced by the placeholder (default DefaultMaxDepth).
func WithMaxDepth(n int) Option { return func(r *Redactor) { r.maxDepth = n } }

// WithMaxNodes sets how many values (objects, arrays, strings, numbers...)
// one call inspects; values beyond it are replaced by the placeholder
// (default DefaultMaxNodes).
func WithMaxNodes(n int) Option { return func(r *Redactor) { r.maxNodes = n } }

// WithMaxStringBytes sets the longest string that is scanned for patterns;
// a longer string is replaced by the placeholder (default
// DefaultMaxStringBytes).
func WithMaxStringBytes(n int) Option { return func(r *Redactor) { r.maxStringBytes = n } }

// defaultRedactor is the zero-configuration Redactor. It is built once and
// never changed.
var defaultRedactor = mustDefault()

func mustDefault() *Redactor {
	r, err := New(presets.RedactionConfig{})
	if err != nil {
		panic("redact: the built-in configuration is invalid: " + err.Error())
	}
	return r
}

// Default returns the Redactor with only the built-in rules and the
// default placeholder.
func Default() *Redactor { return defaultRedactor }

// New builds a Redactor from the redaction section of the configuration.
// The built-in rules always apply; cfg adds key globs and patterns, turns
// built-in patterns off and may change the placeholder (empty means
// DefaultPlaceholder). An invalid cfg is reported as the
// *presets.ValidationError that configuration loading gives, naming the key
// and the pattern.
func New(cfg presets.RedactionConfig, opts ...Option) (*Redactor, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	r := &Redactor{
		placeholder:    nonEmpty(cfg.Placeholder, DefaultPlaceholder),
		maxDepth:       DefaultMaxDepth,
		maxNodes:       DefaultMaxNodes,
		maxStringBytes: DefaultMaxStringBytes,
	}
	for _, o := range opts {
		o(r)
	}
	if r.maxDepth < 1 || r.maxNodes < 1 || r.maxStringBytes < 1 {
		return nil, fmt.Errorf("redact: limits must be positive (depth %d, nodes %d, string bytes %d)", r.maxDepth, r.maxNodes, r.maxStringBytes)
	}
	for i, k := range cfg.Keys {
		g, err := presets.CompileGlob(snakeGlob(k))
		if err != nil {
			return nil, fmt.Errorf("redaction.keys[%d]: %q: %w", i, k, err)
		}
		r.keys = append(r.keys, g)
	}
	for _, p := range builtinPatterns {
		if !slices.Contains(cfg.DisabledPatterns, p.name) {
			r.patterns = append(r.patterns, p)
		}
	}
	for i, p := range cfg.Patterns {
		re, err := p.Compile()
		if err != nil {
			return nil, fmt.Errorf("redaction.patterns[%d]: %w", i, err)
		}
		r.patterns = append(r.patterns, newPattern(p.Name, re))
	}
	return r, nil
}

func nonEmpty(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

func (r *Redactor) orDefault() *Redactor {
	if r == nil {
		return defaultRedactor
	}
	return r
}

// Placeholder returns what redacted values and matches are replaced by.
func (r *Redactor) Placeholder() string { return r.orDefault().placeholder }

// SecretKey reports whether the value under an object key with this name is
// always redacted, by the built-in key rules or redaction.keys.
func (r *Redactor) SecretKey(name string) bool {
	r = r.orDefault()
	if builtinSecretKey(name) {
		return true
	}
	return len(r.keys) > 0 && r.keys.Match(snake(name))
}

// String replaces every match of the value patterns in s. Key rules and
// schema hints do not apply to a bare string; use Value or JSON for
// structured data. A string longer than the string limit is replaced whole.
func (r *Redactor) String(s string) string {
	r = r.orDefault()
	out, _ := r.str(s)
	return out
}

func (r *Redactor) str(s string) (string, bool) {
	if len(s) > r.maxStringBytes {
		return r.placeholder, true
	}
	if s == "" {
		return s, false
	}
	changed := false
	has := newByteSet(s)
	for i := range r.patterns {
		p := &r.patterns[i]
		if p.needs != nil && !p.needs(has) {
			continue
		}
		var ch bool
		s, ch = p.apply(s, r.placeholder)
		if ch {
			changed = true
			has = newByteSet(s) // the placeholder brings its own bytes
		}
	}
	return s, changed
}

// Value returns a redacted deep copy of v; v itself is never modified.
// schema, when not empty, is the JSON Schema describing v (a tool's input
// or output schema), whose hints mark more values secret; an invalid
// schema is ignored. v is normally what encoding/json decodes into an any
// (maps, slices, strings, float64 or json.Number, bools, nil); a
// json.RawMessage is parsed, and values of any other type are converted
// through encoding/json first (a value that cannot be encoded becomes the
// placeholder).
func (r *Redactor) Value(v any, schema json.RawMessage) any {
	w := walker{r: r.orDefault()}
	w.budget = w.r.maxNodes
	return w.value(v, parseSchema(schema), 0)
}

// Redacts reports whether Value would replace anything in v, without
// building the copy: a caller that only needs to know (or that looks for
// what was redacted only when something was) spares the copy in the
// common case of a value with nothing secret in it.
func (r *Redactor) Redacts(v any, schema json.RawMessage) bool {
	w := walker{r: r.orDefault(), lookOnly: true}
	w.budget = w.r.maxNodes
	w.value(v, parseSchema(schema), 0)
	return w.changed
}

// JSON redacts a JSON document, as Value does, and returns it encoded. When
// nothing was redacted it returns raw itself, byte for byte; otherwise a
// compact encoding. Input that is not a single valid JSON value (empty
// input included) gives the placeholder as a JSON string.
func (r *Redactor) JSON(raw json.RawMessage, schema json.RawMessage) json.RawMessage {
	r = r.orDefault()
	v, ok := decodeJSON(raw)
	if !ok {
		return r.placeholderJSON()
	}
	// Most documents hold nothing to redact: a walk that only looks finds
	// that out without building the copy that would be thrown away.
	sv := parseSchema(schema)
	look := walker{r: r, budget: r.maxNodes, lookOnly: true}
	if look.value(v, sv, 0); !look.changed {
		return raw
	}
	w := walker{r: r, budget: r.maxNodes}
	out := w.value(v, sv, 0)
	if !w.changed {
		return raw
	}
	b, err := encodeJSON(out)
	if err != nil {
		return r.placeholderJSON()
	}
	return b
}

func (r *Redactor) placeholderJSON() json.RawMessage {
	b, _ := encodeJSON(r.placeholder)
	return b
}

// decodeJSON parses exactly one JSON value, keeping numbers as written.
func decodeJSON(raw []byte) (any, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false
	}
	return v, true
}

// encodeJSON encodes v compactly without HTML escaping, so that redacted
// text reads like the original.
func encodeJSON(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// walker is the state of one Value or JSON call.
type walker struct {
	r       *Redactor
	budget  int  // values left to inspect
	changed bool // something was replaced
	// secretKeys remembers SecretKey's verdict on the keys met so far,
	// once a walk has met more than fewKeys of them: a large document
	// repeats its keys (an array of records, a plan's tool trace), and
	// the verdict, a pure function of the key and the Redactor's rules,
	// costs a split into words and a glob match. A small document is
	// decided key by key, without the map.
	secretKeys map[string]bool
	keysMet    int
	// lookOnly walks without building the redacted copy: values are
	// inspected as in a full walk, changed says whether anything would be
	// replaced, and what value returns is not to be used.
	lookOnly bool
}

// fewKeys is how many keys a walk decides one by one before it remembers
// its verdicts.
const fewKeys = 16

// secretKey is w.r.SecretKey(k), decided once per key and walk in a large
// document.
func (w *walker) secretKey(k string) bool {
	if w.keysMet < fewKeys {
		w.keysMet++
		return w.r.SecretKey(k)
	}
	secret, ok := w.secretKeys[k]
	if !ok {
		secret = w.r.SecretKey(k)
		if w.secretKeys == nil {
			w.secretKeys = make(map[string]bool, fewKeys)
		}
		w.secretKeys[k] = secret
	}
	return secret
}

func (w *walker) redacted() string {
	w.changed = true
	return w.r.placeholder
}

func (w *walker) value(v any, s *schemaView, depth int) any {
	w.budget--
	if depth > w.r.maxDepth || w.budget < 0 {
		return w.redacted()
	}
	if v != nil && !isBool(v) && s.sensitive() {
		return w.redacted()
	}
	switch x := v.(type) {
	case nil, bool:
		return x
	case string:
		return w.string(x, depth)
	case map[string]any:
		return w.object(x, s, depth)
	case []any:
		if w.lookOnly {
			for i, e := range x {
				w.value(e, s.item(i), depth+1)
			}
			return x
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = w.value(e, s.item(i), depth+1)
		}
		return out
	case json.Number:
		return w.number(string(x), x)
	case float64:
		if math.Abs(x) >= 1e12 && x == math.Trunc(x) && !math.IsInf(x, 0) {
			return w.number(strconv.FormatFloat(x, 'f', -1, 64), x)
		}
		return x
	case int:
		return w.integer(int64(x), x)
	case int64:
		return w.integer(x, x)
	case int32, int16, int8, uint8, uint16, uint32, float32:
		return x // too short to be a card number
	case json.RawMessage:
		d, ok := decodeJSON(x)
		if !ok {
			return w.redacted()
		}
		return w.value(d, s, depth)
	default:
		b, err := json.Marshal(x)
		if err != nil {
			return w.redacted()
		}
		d, ok := decodeJSON(b)
		if !ok {
			return w.redacted()
		}
		return w.value(d, s, depth)
	}
}

func (w *walker) integer(n int64, orig any) any {
	if n > -1e12 && n < 1e12 {
		return orig
	}
	return w.number(strconv.FormatInt(n, 10), orig)
}

// number checks the digits of a long number against the patterns (card
// numbers are sometimes sent as numbers).
func (w *walker) number(text string, orig any) any {
	if _, ch := w.r.str(text); ch {
		return w.redacted()
	}
	return orig
}

func (w *walker) string(s string, depth int) any {
	return w.textWith(s, nil, depth)
}

// textWith redacts a string; when it holds a JSON object or array, that is
// redacted as a value described by s.
func (w *walker) textWith(str string, s *schemaView, depth int) any {
	if len(str) > w.r.maxStringBytes {
		return w.redacted()
	}
	if t := strings.TrimSpace(str); len(t) >= 2 && (t[0] == '{' && t[len(t)-1] == '}' || t[0] == '[' && t[len(t)-1] == ']') {
		if v, ok := decodeJSON([]byte(t)); ok {
			inner := walker{r: w.r, budget: w.budget, secretKeys: w.secretKeys, keysMet: w.keysMet, lookOnly: w.lookOnly}
			out := inner.value(v, s, depth+1)
			w.budget, w.secretKeys, w.keysMet = inner.budget, inner.secretKeys, inner.keysMet
			if !inner.changed {
				return str
			}
			w.changed = true
			if w.lookOnly {
				return str
			}
			b, err := encodeJSON(out)
			if err != nil {
				return w.r.placeholder
			}
			return string(b)
		}
	}
	out, ch := w.r.str(str)
	w.changed = w.changed || ch
	return out
}

func (w *walker) object(m map[string]any, s *schemaView, depth int) any {
	if w.lookOnly {
		for k, v := range m {
			if _, ch := w.r.str(k); ch {
				w.changed = true
			}
			w.field(k, v, s, depth)
		}
		return m
	}
	out := make(map[string]any, len(m))
	// Keys are strings too, and may carry a secret (a map keyed by
	// tokens). Keys that need no change keep their names; redacted keys
	// are added after them, in sorted order, with a #2, #3... suffix when
	// their redacted names collide, so every call gives the same result.
	var renamed []string
	for k, v := range m {
		if _, ch := w.r.str(k); ch {
			renamed = append(renamed, k)
			continue
		}
		out[k] = w.field(k, v, s, depth)
	}
	slices.Sort(renamed)
	for _, k := range renamed {
		w.changed = true
		base, _ := w.r.str(k)
		nk := base
		for i := 2; ; i++ {
			if _, taken := out[nk]; !taken {
				break
			}
			nk = base + "#" + strconv.Itoa(i)
		}
		out[nk] = w.field(k, m[k], s, depth)
	}
	return out
}

// field redacts the value under key k of an object described by s.
func (w *walker) field(k string, v any, s *schemaView, depth int) any {
	if v != nil && !isBool(v) && w.secretKey(k) {
		w.budget--
		return w.redacted()
	}
	return w.value(v, s.property(k), depth+1)
}

func isBool(v any) bool {
	_, ok := v.(bool)
	return ok
}
