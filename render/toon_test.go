package render

import (
	"strings"
	"testing"
)

// The expected outputs below were worked out by hand from the TOON 4.1
// specification; the section each case exercises is in its name.

func TestTOONPrimitives(t *testing.T) {
	runGoldens(t, TOON, []golden{
		{"string at root", `"hello world"`, `hello world`},
		{"unicode and emoji unquoted", `"café 世界 👋"`, `café 世界 👋`},
		{"empty string 7.2", `""`, `""`},
		{"true as a string 7.2", `"true"`, `"true"`},
		{"null as a string 7.2", `"null"`, `"null"`},
		{"True is not a literal", `"True"`, `True`},
		{"number-like 7.2", `"42"`, `"42"`},
		{"leading zero 7.2", `"007"`, `"007"`},
		{"leading plus 7.2", `"+1"`, `"+1"`},
		{"exponent-like 7.2", `"1E-6"`, `"1E-6"`},
		{"not number-like", `"1.2.3"`, `1.2.3`},
		{"leading space 7.2", `" a"`, `" a"`},
		{"trailing tab 7.2", `"a\t"`, `"a\t"`},
		{"inner space", `"a b"`, `a b`},
		{"hyphen 7.2", `"-"`, `"-"`},
		{"leading hyphen 7.2", `"-x"`, `"-x"`},
		{"inner hyphen", `"a-b"`, `a-b`},
		{"number sign 7.2", `"#tag"`, `"#tag"`},
		{"inner number sign", `"a#b"`, `a#b`},
		{"colon 7.2", `"a:b"`, `"a:b"`},
		{"comma 7.2", `"a,b"`, `"a,b"`},
		{"pipe is not the delimiter", `"a|b"`, `a|b`},
		{"brackets 7.2", `"[1]"`, `"[1]"`},
		{"braces 7.2", `"{x}"`, `"{x}"`},
		{"escapes 7.1", `"q\"b\\n\nr\rt\t"`, `"q\"b\\n\nr\rt\t"`},
		{"other controls 7.1", `"\u0000\u001f"`, `"\u0000\u001f"`},
		{"DEL and U+2028 literal 7.1", "\"\u007f\u2028\"", "\u007f\u2028"},
		{"byte-order mark at the start 12", `"\ufeffx"`, "\"\ufeffx\""},
		{"byte-order mark inside", `"x\ufeff"`, "x\ufeff"},
		{"true", `true`, `true`},
		{"false", `false`, `false`},
		{"null", `null`, `null`},
		{"integer", `42`, `42`},
		{"negative decimal", `-3.25`, `-3.25`},
	})
}

func TestTOONNumbers(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"0", "0"}, {"-0", "0"}, {"-0.0", "0"}, {"0e10", "0"}, {"-0E-3", "0"},
		{"1", "1"}, {"-7", "-7"}, {"1.0", "1"}, {"1.50", "1.5"}, {"123.4500", "123.45"},
		{"1e3", "1000"}, {"1E+3", "1000"}, {"1.5e3", "1500"}, {"25e-1", "2.5"}, {"100e-2", "1"},
		{"0.1", "0.1"}, {"0.000001", "0.000001"}, {"1e-6", "0.000001"}, {"-1.5e-6", "-0.0000015"},
		{"0.0000001", "1e-7"}, {"1e-7", "1e-7"}, {"0.00000012", "1.2e-7"}, {"-9.99e-7", "-9.99e-7"},
		{"1e20", "100000000000000000000"}, {"999999999999999999999", "999999999999999999999"},
		{"9.99999e20", "999999000000000000000"},
		{"1e21", "1e+21"}, {"1000000000000000000000", "1e+21"}, {"-12345678901234567890123", "-1.2345678901234567890123e+22"},
		{"9007199254740993", "9007199254740993"}, // beyond float64, kept exactly
		{"0.30000000000000000000000001", "0.30000000000000000000000001"},
		{"1e400", "1e+400"}, {"1e-400", "1e-400"},
		{"12e99999999999999999999", "1.2e+100000000000000000000"},
		{"0.5e-99999999999999999999", "5e-100000000000000000000"},
	} {
		var b strings.Builder
		writeCanonicalNumber(&b, c.in)
		if got := b.String(); got != c.want {
			t.Errorf("canonical %s = %s, want %s", c.in, got, c.want)
		}
		if err := checkCanonical(c.want); err != nil {
			t.Errorf("want %s: %v", c.want, err)
		}
		if !sameNumber(c.in, c.want) {
			t.Errorf("%s and %s differ in value", c.in, c.want)
		}
	}
}

func TestTOONObjects(t *testing.T) {
	runGoldens(t, TOON, []golden{
		{"empty root object 8", `{}`, ``},
		{"fields in order 8", `{"id":123,"name":"Ada","active":true,"note":null}`,
			"id: 123\nname: Ada\nactive: true\nnote: null"},
		{"nested 8", `{"user":{"id":1,"profile":{"city":"Oslo"}},"n":1}`,
			"user:\n  id: 1\n  profile:\n    city: Oslo\nn: 1"},
		{"empty nested object 8", `{"a":{},"b":1}`, "a:\nb: 1"},
		{"keys needing quotes 7.3", `{"my-key":1,"a b":2,"":3,"1x":4,"x:y":5,"é":6,"_ok.v2":7,"-":8}`,
			"\"my-key\": 1\n\"a b\": 2\n\"\": 3\n\"1x\": 4\n\"x:y\": 5\n\"é\": 6\n_ok.v2: 7\n\"-\": 8"},
		{"escapes in keys 7.1", `{"a\nb":1,"q\"":2,"\u0004":3}`, "\"a\\nb\": 1\n\"q\\\"\": 2\n\"\\u0004\": 3"},
		{"quoted field values 7.2", `{"a":"x: y","b":"1,2","c":" pad ","d":"-1"}`,
			"a: \"x: y\"\nb: \"1,2\"\nc: \" pad \"\nd: \"-1\""},
		{"prototype keys are ordinary 15", `{"__proto__":1,"constructor":2}`, "__proto__: 1\nconstructor: 2"},
		{"single-entry object nests 9.5", `{"users":{"ada":{"age":36}}}`, "users:\n  ada:\n    age: 36"},
		{"keyed tabular 9.5", `{"users":{"ada":{"age":36,"city":"London"},"bob":{"city":"Oslo","age":25}}}`,
			"users[2:]{age,city}:\n  ada: 36,London\n  bob: 25,Oslo"},
		{"keyed tabular at the root 9.5", `{"ada":{"age":36},"bob":{"age":25}}`,
			"[2:]{age}:\n  ada: 36\n  bob: 25"},
		{"keyed with nested groups 9.5", `{"a":{"x":1,"p":{"q":2}},"b":{"x":3,"p":{"q":4}}}`,
			"[2:]{x,p{q}}:\n  a: 1,2\n  b: 3,4"},
		{"keyed entry keys quoted 9.5", `{"t":{"a b":{"v":"1,2"},"c":{"v":"ok"}}}`,
			"t[2:]{v}:\n  \"a b\": \"1,2\"\n  c: ok"},
		{"not keyed: key sets differ 9.5", `{"a":{"x":1},"b":{"y":2}}`, "a:\n  x: 1\nb:\n  y: 2"},
		{"not keyed: a primitive value 9.5", `{"a":{"x":1},"b":2}`, "a:\n  x: 1\nb: 2"},
		{"not keyed: an array column 9.5", `{"a":{"x":[1]},"b":{"x":[2]}}`,
			"a:\n  x[1]: 1\nb:\n  x[1]: 2"},
		{"not keyed: an empty object 9.5", `{"a":{},"b":{}}`, "a:\nb:"},
	})
}

func TestTOONArrays(t *testing.T) {
	runGoldens(t, TOON, []golden{
		{"empty root array 9.1", `[]`, `[]`},
		{"empty field array 9.1", `{"tags":[]}`, `tags: []`},
		{"primitive array 9.1", `{"tags":["admin","ops","dev"]}`, `tags[3]: admin,ops,dev`},
		{"mixed primitives 9.1", `{"v":[1,"a",true,null,-0,"",  " x"]}`, `v[7]: 1,a,true,null,0,""," x"`},
		{"quoting in inline arrays 9.1", `{"v":["a,b","c:d","true","1","- x"]}`,
			`v[5]: "a,b","c:d","true","1","- x"`},
		{"one empty string 9.1", `{"v":[""]}`, `v[1]: ""`},
		{"root primitive array 9.1", `["x","y"]`, `[2]: x,y`},
		{"tabular 9.3", `{"items":[{"sku":"A1","qty":2,"price":9.99},{"sku":"B2","qty":1,"price":14.5}]}`,
			"items[2]{sku,qty,price}:\n  A1,2,9.99\n  B2,1,14.5"},
		{"tabular at the root 9.3", `[{"id":1,"name":"Ada"},{"id":2,"name":"Bob"}]`,
			"[2]{id,name}:\n  1,Ada\n  2,Bob"},
		{"tabular field order of the first 9.3", `[{"a":1,"b":2},{"b":4,"a":3}]`, "[2]{a,b}:\n  1,2\n  3,4"},
		{"tabular with nulls and quoting 9.3", `{"r":[{"k":null,"v":"x,y"},{"k":"null","v":"http://a"}]}`,
			"r[2]{k,v}:\n  null,\"x,y\"\n  \"null\",\"http://a\""},
		{"tabular with keys needing quotes 9.3", `[{"a b":1,"":2},{"a b":3,"":4}]`, "[2]{\"a b\",\"\"}:\n  1,2\n  3,4"},
		{"single-row table 9.3", `{"t":[{"a":1}]}`, "t[1]{a}:\n  1"},
		{"nested field groups 9.3", `{"orders":[{"id":1,"customer":{"name":"Ada","country":"DK"},"total":99},{"id":2,"customer":{"country":"UK","name":"Bob"},"total":149}]}`,
			"orders[2]{id,customer{name,country},total}:\n  1,Ada,DK,99\n  2,Bob,UK,149"},
		{"deep field groups 9.3", `[{"a":{"b":{"c":1}},"d":2},{"a":{"b":{"c":3}},"d":4}]`,
			"[2]{a{b{c}},d}:\n  1,2\n  3,4"},
		{"list: key sets differ 9.4", `{"items":[{"id":1,"name":"First"},{"id":2,"name":"Second","extra":true}]}`,
			"items[2]:\n  - id: 1\n    name: First\n  - id: 2\n    name: Second\n    extra: true"},
		{"list: null and object in a column 9.3", `[{"a":null},{"a":{"b":1}}]`, "[2]:\n  - a: null\n  - a:\n      b: 1"},
		{"list: array in a column 9.3", `[{"a":[1]},{"a":[2]}]`, "[2]:\n  - a[1]: 1\n  - a[1]: 2"},
		{"list: empty object element 9.3", `[{"a":1},{}]`, "[2]:\n  - a: 1\n  -"},
		{"mixed 9.4", `{"items":[1,{"a":1},"text"]}`, "items[3]:\n  - 1\n  - a: 1\n  - text"},
		{"arrays of arrays 9.2", `{"pairs":[[1,2],[3,4],[]]}`, "pairs[3]:\n  - [2]: 1,2\n  - [2]: 3,4\n  - [0]:"},
		{"root arrays of arrays 9.2", `[["a"],["b,c"]]`, "[2]:\n  - [1]: a\n  - [1]: \"b,c\""},
		{"array of objects as an item 9.4", `[[{"a":1},{"a":2}],"x"]`,
			"[2]:\n  - [2]:\n    - a: 1\n    - a: 2\n  - x"},
		{"deeply nested lists 9.4", `[[[1,[2]]]]`, "[1]:\n  - [1]:\n    - [2]:\n      - 1\n      - [1]: 2"},
		{"first field tabular on the hyphen line 10", `{"items":[{"users":[{"id":1,"name":"Ada"},{"id":2,"name":"Bob"}],"status":"active"}]}`,
			"items[1]:\n  - users[2]{id,name}:\n      1,Ada\n      2,Bob\n    status: active"},
		{"first field keyed on the hyphen line 10", `[{"m":{"a":{"x":1},"b":{"x":2}},"n":0},"z"]`,
			"[2]:\n  - m[2:]{x}:\n      a: 1\n      b: 2\n    n: 0\n  - z"},
		{"first field a nested object 10", `[{"a":{"b":1},"c":2},{"d":[]}]`,
			"[2]:\n  - a:\n      b: 1\n    c: 2\n  - d: []"},
		{"first field a list 10", `[{"a":[1,{"b":2}],"c":3}]`,
			"[1]:\n  - a[2]:\n      - 1\n      - b: 2\n    c: 3"},
		{"later tabular field 10", `[{"id":1,"t":[{"a":1},{"a":2}]}]`,
			"[1]:\n  - id: 1\n    t[2]{a}:\n      1\n      2"},
		{"keyed-eligible element is not keyed 10", `[{"a":{"x":1},"b":{"x":2}},5]`,
			"[2]:\n  - a:\n      x: 1\n    b:\n      x: 2\n  - 5"},
		{"one object of objects is a table 9.3", `[{"a":{"x":1},"b":{"x":2}}]`, "[1]{a{x},b{x}}:\n  1,2"},
		{"quoted key with a list 7.3", `{"x-items":[{"id":1},{"id":2,"label":"archived"}]}`,
			"\"x-items\"[2]:\n  - id: 1\n  - id: 2\n    label: archived"},
		{"dotted key 8", `{"data.meta.items":[{"id":1}]}`, "data.meta.items[1]{id}:\n  1"},
	})
}
