package render

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestParseFormat(t *testing.T) {
	for _, c := range []struct {
		in   string
		want Format
	}{
		{"", JSON}, {"json", JSON}, {"compact", Compact}, {"toon", TOON},
	} {
		got, err := ParseFormat(c.in)
		if err != nil || got != c.want {
			t.Errorf("ParseFormat(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"JSON", "yaml", " toon", "text"} {
		_, err := ParseFormat(in)
		if !errors.Is(err, ErrUnknownFormat) {
			t.Errorf("ParseFormat(%q) error = %v, want ErrUnknownFormat", in, err)
			continue
		}
		if msg := err.Error(); !strings.Contains(msg, `"json", "compact", "toon"`) {
			t.Errorf("ParseFormat(%q) error %q does not list the formats", in, msg)
		}
	}
	if _, err := Value("yaml", []byte(`1`)); !errors.Is(err, ErrUnknownFormat) {
		t.Errorf("Value(yaml) error = %v, want ErrUnknownFormat", err)
	}
}

func TestInvalidJSON(t *testing.T) {
	for _, doc := range []string{
		``, ` `, `{`, `[1,]`, `{"a":}`, `{"a" 1}`, `{1:2}`, `nul`, `01`, `1 2`, `{} {}`, `"a`,
		`[1] x`, "\ufeff1", `{"a":1,}`, `NaN`, `'a'`,
	} {
		for _, f := range formats {
			out, err := Value(f, []byte(doc))
			if !errors.Is(err, ErrInvalidJSON) {
				t.Errorf("Value(%s, %q) = %q, %v; want ErrInvalidJSON", f, doc, out, err)
			}
		}
	}
}

func TestDepthLimit(t *testing.T) {
	nest := func(n int) []byte {
		return []byte(strings.Repeat(`{"a":[`, n/2) + strings.Repeat(`[`, n%2) + `1` +
			strings.Repeat(`]`, n%2) + strings.Repeat(`]}`, n/2))
	}
	for _, f := range []Format{Compact, TOON} {
		if _, err := Value(f, nest(MaxDepth)); err != nil {
			t.Errorf("Value(%s) at depth %d: %v", f, MaxDepth, err)
		}
		_, err := Value(f, nest(MaxDepth+1))
		if !errors.Is(err, ErrTooDeep) {
			t.Errorf("Value(%s) at depth %d: error = %v, want ErrTooDeep", f, MaxDepth+1, err)
		}
		// The limit is checked before the rest is read, so a deep prefix
		// of an invalid document is enough.
		_, err = Value(f, []byte(strings.Repeat("[", 100000)))
		if !errors.Is(err, ErrTooDeep) {
			t.Errorf("Value(%s) of 100000 brackets: error = %v, want ErrTooDeep", f, err)
		}
	}
	if _, err := Value(JSON, nest(MaxDepth+1)); err != nil {
		t.Errorf("Value(json) at depth %d: %v", MaxDepth+1, err)
	}
}

func TestJSON(t *testing.T) {
	for _, c := range []struct{ name, in, want string }{
		{"scalar", ` 42 `, `42`},
		{"number text kept", `[1.50, 1E3, -0, 1e-7]`, `[1.50,1E3,-0,1e-7]`},
		{"indented", "{\n  \"a\": [1, 2],\n  \"b\": {\"c\": null}\n}\n", `{"a":[1,2],"b":{"c":null}}`},
		{"escapes kept", `"\u00e9\n<&>"`, `"\u00e9\n<&>"`},
		{"repeated keys kept", `{"a":1,"a":2}`, `{"a":1,"a":2}`},
		{"empty", `{ }`, `{}`},
		{"zero format", `[ true ]`, `[true]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := JSON
			if c.name == "zero format" {
				f = ""
			}
			got, err := Value(f, []byte(c.in))
			if err != nil || got != c.want {
				t.Fatalf("Value(json, %s) = %q, %v; want %q", c.in, got, err, c.want)
			}
		})
	}
}

// TestRepeatedKeys: Compact and TOON keep the last value at the first
// position.
func TestRepeatedKeys(t *testing.T) {
	var members []string
	for i := range 40 {
		members = append(members, `"k`+string(rune('a'+i%20))+`":`+string(rune('0'+i/20)))
	}
	doc := `{"x":0,` + strings.Join(members, ",") + `,"x":9}`
	got, err := Value(TOON, []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	want := "x: 9\nka: 1\nkb: 1\nkc: 1\nkd: 1\nke: 1\nkf: 1\nkg: 1\nkh: 1\nki: 1\nkj: 1\n" +
		"kk: 1\nkl: 1\nkm: 1\nkn: 1\nko: 1\nkp: 1\nkq: 1\nkr: 1\nks: 1\nkt: 1"
	if got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
	got, err = Value(Compact, []byte(`{"a":1,"b":2,"a":{"c":3}}`))
	if want := "a:\n  c: 3\nb: 2"; err != nil || got != want {
		t.Errorf("got %q, %v; want %q", got, err, want)
	}
}

// roundTrip checks that out, the rendering of doc in f, reads back as the
// document: exactly for Compact, up to key order and number spelling for
// TOON, whose tables reorder keys and whose numbers are canonical.
func roundTrip(t *testing.T, f Format, doc []byte, out string) {
	t.Helper()
	switch f {
	case Compact:
		want, err := parse(doc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeCompact(out)
		if err != nil {
			t.Fatalf("Compact output does not read back: %v\n%s", err, out)
		}
		if err := equalValue(&got, &want); err != nil {
			t.Fatalf("Compact output reads back differently: %v\n%s", err, out)
		}
	case TOON:
		var want any
		dec := json.NewDecoder(strings.NewReader(string(doc)))
		dec.UseNumber()
		if err := dec.Decode(&want); err != nil {
			t.Fatal(err)
		}
		got, err := decodeTOON(out)
		if err != nil {
			t.Fatalf("TOON output does not decode: %v\n%s", err, out)
		}
		if err := equalAny(toAny(&got), want); err != nil {
			t.Fatalf("TOON output decodes differently: %v\n%s", err, out)
		}
	}
}

type golden struct{ name, in, want string }

func runGoldens(t *testing.T, f Format, cases []golden) {
	t.Helper()
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Value(f, []byte(c.in))
			if err != nil {
				t.Fatalf("Value(%s, %s): %v", f, c.in, err)
			}
			if got != c.want {
				t.Fatalf("Value(%s, %s):\n%s\nwant:\n%s", f, c.in, got, c.want)
			}
			roundTrip(t, f, []byte(c.in), got)
		})
	}
}

// TestStrings: strings decode as encoding/json decodes them, escapes,
// surrogates and invalid bytes included.
func TestStrings(t *testing.T) {
	for _, raw := range []string{
		`"plain"`, `"\u00e9\/\b\f"`, `"\ud83d\ude00"`, `"\ud800"`, `"\ud800\u0041"`, `"\udc00x"`,
		"\"\xff\"", "\"a\xc3\"", "\"\xed\xa0\x80\"", `"\\\""`, "\"\u2028\"",
	} {
		var want string
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		v, err := parse([]byte(`{` + raw + `:` + raw + `}`))
		if err != nil {
			t.Fatalf("parse(%s): %v", raw, err)
		}
		if m := v.members[0]; m.key != want || m.val.text != want {
			t.Errorf("parse(%s) = %q: %q, want %q", raw, m.key, m.val.text, want)
		}
	}
	for _, raw := range []string{`"\x"`, `"\u12"`, "\"a\tb\"", `"\`, `"abc`} {
		if _, err := parse([]byte(raw)); !errors.Is(err, ErrInvalidJSON) {
			t.Errorf("parse(%s) error = %v, want ErrInvalidJSON", raw, err)
		}
	}
}
