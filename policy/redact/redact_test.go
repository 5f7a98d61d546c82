package redact

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/presets"
)

const R = DefaultPlaceholder

func decode(t *testing.T, s string) any {
	t.Helper()
	v, ok := decodeJSON([]byte(s))
	if !ok {
		t.Fatalf("bad test JSON %s", s)
	}
	return v
}

func encode(t *testing.T, v any) string {
	t.Helper()
	b, err := encodeJSON(v)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestValue(t *testing.T) {
	tests := []struct {
		name   string
		in     string
		schema string
		want   string
	}{
		{"secret keys", `{"user":"bob","password":"hunter2","apiKey":"k","nested":{"Authorization":"Basic x"}}`, "",
			`{"apiKey":"[REDACTED]","nested":{"Authorization":"[REDACTED]"},"password":"[REDACTED]","user":"bob"}`},
		{"whole subtree under a secret key", `{"credentials":{"user":"a","pass":"b"},"n":1}`, "",
			`{"credentials":"[REDACTED]","n":1}`},
		{"numbers under secret keys", `{"pin":1234,"pwd":1234}`, "", `{"pin":1234,"pwd":"[REDACTED]"}`},
		{"booleans and nulls kept", `{"has_password":true,"password":null,"token":false}`, "",
			`{"has_password":true,"password":null,"token":false}`},
		{"pagination and counts kept", `{"nextToken":"abc","max_tokens":100,"keyword":"k"}`, "",
			`{"keyword":"k","max_tokens":100,"nextToken":"abc"}`},
		{"arrays", `[{"token":"a"},"` + ghToken + `",3]`, "", `[{"token":"[REDACTED]"},"[REDACTED]",3]`},
		{"patterns in strings", `{"note":"call with Bearer ` + bearerTok + `"}`, "", `{"note":"call with Bearer [REDACTED]"}`},
		{"card number as number", `{"n":4111111111111111,"id":1700000000000,"small":42}`, "",
			`{"id":1700000000000,"n":"[REDACTED]","small":42}`},
		{"embedded JSON text", `{"content":[{"type":"text","text":"{\"password\":\"x\",\"ok\":1}"}]}`, "",
			`{"content":[{"text":"{\"ok\":1,\"password\":\"[REDACTED]\"}","type":"text"}]}`},
		{"JSON text inside JSON text", `{"text":"{\"inner\":\"{\\\"password\\\":\\\"x\\\"}\"}"}`, "",
			`{"text":"{\"inner\":\"{\\\"password\\\":\\\"[REDACTED]\\\"}\"}"}`},
		{"key case and separators", `{"PassWord":"a","PASS_WORD":"b","x-Api-KEY":"c","Client.Secret":"d"}`, "",
			`{"Client.Secret":"[REDACTED]","PASS_WORD":"[REDACTED]","PassWord":"[REDACTED]","x-Api-KEY":"[REDACTED]"}`},
		{"embedded JSON unchanged keeps its text", `{"text":"{ \"a\" : 1 }"}`, "", `{"text":"{ \"a\" : 1 }"}`},
		{"secret in a key", `{"tokens":{"` + ghToken + `":{"scope":"repo"}}}`, "", `{"tokens":{"[REDACTED]":{"scope":"repo"}}}`},
		{"colliding redacted keys", `{"` + ghToken + `":1,"` + awsKey + `":2,"[REDACTED]":3}`, "",
			`{"[REDACTED]":3,"[REDACTED]#2":2,"[REDACTED]#3":1}`},

		{"schema format password", `{"pin":"1234","name":"x"}`,
			`{"type":"object","properties":{"pin":{"type":"string","format":"password"},"name":{"type":"string"}}}`,
			`{"name":"x","pin":"[REDACTED]"}`},
		{"schema writeOnly", `{"otp":"9"}`, `{"properties":{"otp":{"writeOnly":true}}}`, `{"otp":"[REDACTED]"}`},
		{"schema x-sensitive object", `{"card":{"number":"1","cvc":"2"}}`, `{"properties":{"card":{"x-sensitive":true}}}`, `{"card":"[REDACTED]"}`},
		{"schema items", `{"list":[{"code":"a"},{"code":"b"}]}`,
			`{"properties":{"list":{"items":{"properties":{"code":{"format":"password"}}}}}}`,
			`{"list":[{"code":"[REDACTED]"},{"code":"[REDACTED]"}]}`},
		{"schema prefixItems", `["a","b","c"]`, `{"prefixItems":[{},{"writeOnly":true}]}`, `["a","[REDACTED]","c"]`},
		{"schema draft-04 tuple", `["a","b","c"]`, `{"items":[{}],"additionalItems":{"x-sensitive":true}}`, `["a","[REDACTED]","[REDACTED]"]`},
		{"schema additionalProperties", `{"a":"1","b":"2"}`, `{"properties":{"a":{}},"additionalProperties":{"x-sensitive":true}}`,
			`{"a":"1","b":"[REDACTED]"}`},
		{"schema $ref to $defs", `{"login":{"user":"u","code":"c"}}`,
			`{"properties":{"login":{"$ref":"#/$defs/Login"}},"$defs":{"Login":{"properties":{"code":{"$ref":"#/$defs/Secret"}}},"Secret":{"type":"string","writeOnly":true}}}`,
			`{"login":{"code":"[REDACTED]","user":"u"}}`},
		{"schema definitions and allOf", `{"a":{"b":"x"}}`,
			`{"properties":{"a":{"allOf":[{"$ref":"#/definitions/B"}]}},"definitions":{"B":{"properties":{"b":{"format":"password"}}}}}`,
			`{"a":{"b":"[REDACTED]"}}`},
		{"schema anyOf branch", `{"s":"x"}`, `{"properties":{"s":{"anyOf":[{"type":"string","format":"password"},{"type":"null"}]}}}`, `{"s":"[REDACTED]"}`},
		{"schema cyclic ref", `{"next":{"next":{"v":"x"}}}`,
			`{"$ref":"#/$defs/N","$defs":{"N":{"$ref":"#/$defs/N","properties":{"next":{"$ref":"#/$defs/N"},"v":{"writeOnly":true}}}}}`,
			`{"next":{"next":{"v":"[REDACTED]"}}}`},
		{"schema false hint", `{"p":"x"}`, `{"properties":{"p":{"writeOnly":false,"x-sensitive":"yes","description":"password"}}}`, `{"p":"x"}`},
		{"invalid schema ignored", `{"password":"x","a":"b"}`, `{"properties": "password"`, `{"a":"b","password":"[REDACTED]"}`},
		{"external ref ignored", `{"a":"b"}`, `{"properties":{"a":{"$ref":"https://example.com/password.json"}}}`, `{"a":"b"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			in := decode(t, tt.in)
			got := encode(t, Default().Value(in, json.RawMessage(tt.schema)))
			if got != tt.want {
				t.Errorf("Value\n got %s\nwant %s", got, tt.want)
			}
			if again := encode(t, in); again != encode(t, decode(t, tt.in)) {
				t.Errorf("Value modified its input: %s", again)
			}
			if j := string(Default().JSON(json.RawMessage(tt.in), json.RawMessage(tt.schema))); j != tt.want && j != tt.in {
				t.Errorf("JSON\n got %s\nwant %s", j, tt.want)
			}
		})
	}
}

func TestValueGoTypes(t *testing.T) {
	type login struct {
		User     string `json:"user"`
		Password string `json:"password"`
	}
	in := map[string]any{
		"struct":  login{User: "u", Password: "p"},
		"strings": map[string]string{"token": "t", "x": ghToken},
		"raw":     json.RawMessage(`{"secret":"s"}`),
		"int":     int64(4111111111111111),
		"func":    func() {},
		"list":    []string{"a", awsKey},
	}
	got := encode(t, Default().Value(in, nil))
	want := `{"func":"[REDACTED]","int":"[REDACTED]","list":["a","[REDACTED]"],"raw":{"secret":"[REDACTED]"},` +
		`"strings":{"token":"[REDACTED]","x":"[REDACTED]"},"struct":{"password":"[REDACTED]","user":"u"}}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if in["strings"].(map[string]string)["token"] != "t" {
		t.Error("input modified")
	}
}

func TestJSON(t *testing.T) {
	r := Default()
	unchanged := json.RawMessage(`{ "a" : [1, 2.50, "x"] }`)
	if got := r.JSON(unchanged, nil); string(got) != string(unchanged) {
		t.Errorf("unchanged JSON re-encoded: %s", got)
	}
	if got := string(r.JSON(json.RawMessage(`{"a":"<b> & 1.50","token":"t","n":1.50}`), nil)); got != `{"a":"<b> & 1.50","n":1.50,"token":"[REDACTED]"}` {
		t.Errorf("got %s", got)
	}
	for _, bad := range []string{``, `{`, `{"a":1} {"b":2}`, `nul`, "\"\xff"} {
		if got := string(r.JSON(json.RawMessage(bad), nil)); got != `"[REDACTED]"` {
			t.Errorf("JSON(%q) = %s, want the placeholder", bad, got)
		}
	}
}

func TestNew(t *testing.T) {
	r, err := New(presets.RedactionConfig{
		Keys: []string{"ssn", "*Pin", "x-tenant-*"},
		Patterns: []presets.RedactionPattern{
			{Name: "ticket", Regex: `TKT-[0-9]{6}`},
			{Name: "session", Regex: `sid=(?P<secret>[a-f0-9]{8})`},
		},
		DisabledPatterns: []string{"cardNumber"},
		Placeholder:      "***",
	})
	if err != nil {
		t.Fatal(err)
	}
	in := decode(t, `{"SSN":"1","accountPIN":"2","account_pin":"3","X-Tenant-Secret-Id":"4","pin":"5","ssn_type":"6",
		"note":"see TKT-123456, sid=deadbeef; card 4111111111111111","password":"p"}`)
	got := encode(t, r.Value(in, nil))
	want := `{"SSN":"***","X-Tenant-Secret-Id":"***","accountPIN":"***","account_pin":"***",` +
		`"note":"see ***, sid=***; card 4111111111111111","password":"***","pin":"5","ssn_type":"6"}`
	if got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	if r.Placeholder() != "***" || !r.SecretKey("ssn") || r.SecretKey("pin") {
		t.Error("Placeholder or SecretKey")
	}
}

func TestNewErrors(t *testing.T) {
	tests := []struct {
		cfg  presets.RedactionConfig
		want string
	}{
		{presets.RedactionConfig{Patterns: []presets.RedactionPattern{{Name: "ticket", Regex: "TKT-("}}},
			`redaction.patterns[0].regex: pattern "ticket": invalid RE2 regular expression`},
		{presets.RedactionConfig{Patterns: []presets.RedactionPattern{{Name: "any", Regex: ".*"}}},
			`pattern "any": regex ".*" matches the empty string`},
		{presets.RedactionConfig{Keys: []string{"a[", "--"}}, "redaction.keys[0]: invalid glob"},
		{presets.RedactionConfig{DisabledPatterns: []string{"visa"}}, `unknown built-in pattern "visa"`},
	}
	for _, tt := range tests {
		_, err := New(tt.cfg)
		var ve *presets.ValidationError
		if !errors.As(err, &ve) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("New(%+v) = %v, want a ValidationError with %q", tt.cfg, err, tt.want)
		}
	}
	if _, err := New(presets.RedactionConfig{}, WithMaxDepth(0)); err == nil {
		t.Error("a zero depth limit was accepted")
	}
}

func TestLimits(t *testing.T) {
	r, err := New(presets.RedactionConfig{}, WithMaxDepth(3), WithMaxNodes(8), WithMaxStringBytes(10))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct{ in, want string }{
		{`{"a":{"b":{"c":{"d":1}}}}`, `{"a":{"b":{"c":{"d":"[REDACTED]"}}}}`},
		{`{"a":{"b":{"c":1}}}`, `{"a":{"b":{"c":1}}}`},
		{`[1,2,3,4,5,6,7,8,9,10]`, `[1,2,3,4,5,6,7,"[REDACTED]","[REDACTED]","[REDACTED]"]`},
		{`["short","01234567890"]`, `["short","[REDACTED]"]`},
	}
	for _, tt := range tests {
		if got := encode(t, r.Value(decode(t, tt.in), nil)); got != tt.want {
			t.Errorf("Value(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
	if got := r.String("01234567890"); got != R {
		t.Errorf("String over the limit = %q", got)
	}
}

// TestHostileDepth checks that deep input costs bounded work and fails
// closed instead of overflowing anything.
func TestHostileDepth(t *testing.T) {
	deep := strings.Repeat(`{"a":`, 5000) + `"` + ghToken + `"` + strings.Repeat(`}`, 5000)
	got := string(Default().JSON(json.RawMessage(deep), nil))
	if strings.Contains(got, ghToken) {
		t.Fatal("secret below the depth limit leaked")
	}
	if !json.Valid([]byte(got)) {
		t.Fatal("invalid JSON out")
	}
}

func TestNilRedactor(t *testing.T) {
	var r *Redactor
	if r.String(ghToken) != R || r.Placeholder() != R || !r.SecretKey("token") {
		t.Error("nil Redactor does not behave like Default")
	}
	if got := encode(t, r.Value(map[string]any{"password": "x"}, nil)); got != `{"password":"[REDACTED]"}` {
		t.Error(got)
	}
}

func TestConcurrentUse(t *testing.T) {
	r := Default()
	v := decode(t, `{"a":[{"token":"x","b":"`+ghToken+`"}],"c":"Bearer `+bearerTok+`"}`)
	want := encode(t, r.Value(v, nil))
	done := make(chan string)
	for range 8 {
		go func() {
			b, _ := encodeJSON(r.Value(v, nil))
			done <- string(b)
		}()
	}
	for range 8 {
		if got := <-done; got != want {
			t.Errorf("concurrent result %s, want %s", got, want)
		}
	}
}

// TestCyclicValue checks that a map that contains itself ends at the depth
// limit instead of recursing forever.
func TestCyclicValue(t *testing.T) {
	m := map[string]any{"token": "t"}
	m["self"] = m
	r, err := New(presets.RedactionConfig{}, WithMaxDepth(4))
	if err != nil {
		t.Fatal(err)
	}
	got := encode(t, r.Value(m, nil))
	if want := `{"self":{"self":{"self":{"self":{"self":"[REDACTED]","token":"[REDACTED]"},"token":"[REDACTED]"},"token":"[REDACTED]"},"token":"[REDACTED]"},"token":"[REDACTED]"}`; got != want {
		t.Errorf("got  %s\nwant %s", got, want)
	}
	type node struct{ Next *node }
	n := &node{}
	n.Next = n
	if got := Default().Value(n, nil); got != R {
		t.Errorf("a cyclic struct gave %v, want the placeholder", got)
	}
}

// TestRedactsAgreesWithValue checks the walk that only looks: Redacts is
// true exactly when Value replaces something, for every way a value gets
// replaced (secret key, pattern, renamed key, JSON text inside a string,
// schema hint, long number, node and depth budgets), and JSON returns its
// input itself when there is nothing to replace.
func TestRedactsAgreesWithValue(t *testing.T) {
	small, err := New(presets.RedactionConfig{}, WithMaxNodes(6), WithMaxDepth(3))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		r      *Redactor
		doc    string
		schema string
		want   bool
	}{
		{"nothing secret", Default(), `{"ok":true,"rows":[{"id":"a1","n":3}],"note":"all fine"}`, "", false},
		{"secret key", Default(), `{"rows":[{"id":"a1","apiKey":"k-123"}]}`, "", true},
		{"pattern in a value", Default(), `{"note":"token ` + ghToken + `"}`, "", true},
		{"pattern in a key", Default(), `{"` + ghToken + `":1}`, "", true},
		{"JSON text in a string", Default(), `{"raw":"{\"password\":\"hunter22\"}"}`, "", true},
		{"JSON text in a string, nothing secret", Default(), `{"raw":"{\"name\":\"ada\"}"}`, "", false},
		{"schema hint", Default(), `{"pin":"1234"}`, `{"properties":{"pin":{"writeOnly":true}}}`, true},
		{"long number", Default(), `{"n":4111111111111111}`, "", true},
		{"boolean under a secret key", Default(), `{"password":true}`, "", false},
		{"node budget", small, `[1,2,3,4,5,6,7,8]`, "", true},
		{"within the node budget", small, `[1,2,3]`, "", false},
		{"depth budget", small, `[[[[["deep"]]]]]`, "", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v, ok := decodeJSON([]byte(tt.doc))
			if !ok {
				t.Fatalf("bad test document %s", tt.doc)
			}
			var schema json.RawMessage
			if tt.schema != "" {
				schema = json.RawMessage(tt.schema)
			}
			if got := tt.r.Redacts(v, schema); got != tt.want {
				t.Errorf("Redacts = %v, want %v", got, tt.want)
			}
			out := tt.r.JSON(json.RawMessage(tt.doc), schema)
			if same := string(out) == tt.doc; same == tt.want {
				t.Errorf("JSON changed the document: %v, want %v (%s)", !same, tt.want, out)
			}
		})
	}
}
