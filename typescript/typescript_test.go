package typescript

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"testing"
)

// typeOfCase is one schema and the type expression TypeOf must render.
type typeOfCase struct {
	name   string
	schema string
	want   string
}

var typeOfCases = []typeOfCase{
	// Basics.
	{"empty schema", `{}`, `unknown`},
	{"true schema", `true`, `unknown`},
	{"false schema", `false`, `never`},
	{"string", `{"type":"string"}`, `string`},
	{"number", `{"type":"number"}`, `number`},
	{"integer", `{"type":"integer"}`, `number /* integer */`},
	{"boolean", `{"type":"boolean"}`, `boolean`},
	{"null", `{"type":"null"}`, `null`},
	{"unsupported type", `{"type":"file"}`, `unknown /* unsupported type "file" */`},
	{"invalid type keyword", `{"type":5}`, `unknown /* invalid type keyword */`},
	{"not a schema", `"string"`, `unknown /* invalid schema: a schema must be an object or a boolean */`},
	{"annotations only", `{"title":"T","description":"D","$comment":"c"}`, `unknown`},

	// Objects.
	{"required and optional", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"number"}},"required":["a"]}`,
		"{\n  a: string;\n  b?: number;\n}"},
	{"property order kept", `{"type":"object","properties":{"zeta":{"type":"string"},"alpha":{"type":"string"},"mid":{"type":"string"}},"required":["alpha","mid","zeta"]}`,
		"{\n  zeta: string;\n  alpha: string;\n  mid: string;\n}"},
	{"one property on one line", `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"]}`, `{ id: string }`},
	{"object implied by properties", `{"properties":{"a":{"type":"boolean"}}}`, `{ a?: boolean }`},
	{"quoted property names", `{"properties":{"a-b":{},"1x":{},"ok_$":{},"é":{},"say \"hi\"":{},"class":{}}}`,
		"{\n  \"a-b\"?: unknown;\n  \"1x\"?: unknown;\n  ok_$?: unknown;\n  \"é\"?: unknown;\n  \"say \\\"hi\\\"\"?: unknown;\n  class?: unknown;\n}"},
	{"required but not declared", `{"type":"object","properties":{"a":{"type":"string"}},"required":["a","b"]}`,
		"{\n  a: string;\n  b: unknown;\n}"},
	{"duplicate key keeps last value at first position", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"null"},"a":{"type":"number"}}}`,
		"{\n  a?: number;\n  b?: null;\n}"},
	{"plain object", `{"type":"object"}`, `Record<string, unknown>`},
	{"empty properties", `{"type":"object","properties":{}}`, `Record<string, unknown>`},
	{"nested object", `{"type":"object","properties":{"a":{"type":"object","properties":{"x":{"type":"string"},"y":{"type":"number"}},"required":["x"]}},"required":["a"]}`,
		"{\n  a: {\n    x: string;\n    y?: number;\n  };\n}"},

	// additionalProperties and patternProperties.
	{"closed object", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false}`, `{ a?: string }`},
	{"closed empty object", `{"type":"object","additionalProperties":false}`, `Record<string, never>`},
	{"open object", `{"type":"object","additionalProperties":true}`, `Record<string, unknown>`},
	{"open object with properties", `{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true}`,
		"{\n  a?: string;\n  [key: string]: unknown;\n}"},
	{"map", `{"type":"object","additionalProperties":{"type":"number"}}`, `{ [key: string]: number }`},
	{"map with properties widens by union", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"boolean"}},"required":["a"],"additionalProperties":{"type":"number"}}`,
		"{\n  a: string;\n  b?: boolean;\n  [key: string]: number | string | boolean | undefined;\n}"},
	{"map with required properties only", `{"type":"object","properties":{"a":{"type":"number"}},"required":["a"],"additionalProperties":{"type":"number"}}`,
		"{\n  a: number;\n  [key: string]: number;\n}"},
	{"map with long properties widens to unknown", `{"type":"object","properties":{"a":{"type":"object","properties":{"x":{"type":"string"},"y":{"type":"string"}}}},"required":["a"],"additionalProperties":{"type":"number"}}`,
		"{\n  a: {\n    x?: string;\n    y?: string;\n  };\n  [key: string]: unknown /* other properties: number */;\n}"},
	{"required extra takes additionalProperties", `{"type":"object","required":["k"],"additionalProperties":{"type":"string"}}`,
		"{\n  k: string;\n  [key: string]: string;\n}"},
	{"pattern properties", `{"type":"object","patternProperties":{"^x-":{"type":"string"},"^n-":{"type":"number"}},"additionalProperties":false}`,
		"{\n  /**\n   * Property names matching \"^x-\"\n   * Property names matching \"^n-\"\n   */\n  [key: string]: string | number;\n}"},
	{"pattern properties with properties", `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"patternProperties":{"^x-":{"type":"string"}}}`,
		"{\n  id: string;\n  /** Property names matching \"^x-\" */\n  [key: string]: string;\n}"},
	{"pattern properties with optional property", `{"type":"object","properties":{"n":{"type":"integer"}},"patternProperties":{"^x-":{"type":"string"}}}`,
		"{\n  /** @integer */\n  n?: number;\n  /** Property names matching \"^x-\" */\n  [key: string]: string | number | undefined;\n}"},

	// Enums and constants.
	{"string enum", `{"type":"string","enum":["EUR","USD"]}`, `"EUR" | "USD"`},
	{"string enum escaping", `{"enum":["a","b\"c","line\nbreak","tab\there","\u2028","*/","back\\slash"]}`,
		`"a" | "b\"c" | "line\nbreak" | "tab\there" | "\u2028" | "*/" | "back\\slash"`},
	{"number enum", `{"enum":[1,-2.5,1e3,0]}`, `1 | -2.5 | 1e3 | 0`},
	{"boolean enum", `{"enum":[true,false]}`, `true | false`},
	{"null enum", `{"enum":[null]}`, `null`},
	{"mixed enum", `{"enum":["a",1,true,null,{"k":1,"a b":[1]},[1,"x"],{}]}`,
		`"a" | 1 | true | null | { k: 1; "a b": [1] } | [1, "x"] | Record<string, never>`},
	{"enum duplicates", `{"enum":["a","a",1,1.0]}`, `"a" | 1 | 1.0`},
	{"empty enum", `{"enum":[]}`, `never`},
	{"enum not an array", `{"enum":"a"}`, `unknown /* enum is not an array */`},
	{"const string", `{"const":"x"}`, `"x"`},
	{"const wins over type", `{"type":"string","const":"x"}`, `"x"`},
	{"const null", `{"const":null}`, `null`},
	{"const object", `{"const":{"kind":"point","at":[1,-2]}}`, `{ kind: "point"; at: [1, -2] }`},

	// Combinations.
	{"oneOf", `{"oneOf":[{"type":"string"},{"type":"integer"}]}`, `string | number /* integer */`},
	{"anyOf", `{"anyOf":[{"type":"string"},{"type":"array","items":{"type":"string"}}]}`, `string | string[]`},
	{"anyOf unconstrained member", `{"anyOf":[{"type":"string"},{}]}`, `unknown`},
	{"anyOf false member", `{"anyOf":[{"type":"string"},false]}`, `string`},
	{"union member docs", `{"anyOf":[{"type":"string","description":"A name"},{"type":"integer","title":"A count"}]}`,
		`string /* A name */ | number /* A count; integer */`},
	{"allOf", `{"allOf":[{"type":"object","properties":{"a":{"type":"string"}}},{"type":"object","properties":{"b":{"type":"number"}}}]}`,
		`{ a?: string } & { b?: number }`},
	{"allOf with union", `{"allOf":[{"anyOf":[{"type":"string"},{"type":"number"}]},{"description":"no constraint"}]}`, `string | number`},
	{"allOf parenthesises unions", `{"allOf":[{"anyOf":[{"type":"string"},{"type":"number"}]},{"anyOf":[{"type":"number"},{"type":"boolean"}]}]}`,
		`(string | number) & (number | boolean)`},
	{"oneOf beside properties", `{"type":"object","properties":{"kind":{"type":"string"}},"oneOf":[{"required":["a"]},{"required":["b"]}]}`,
		`{ kind?: string } & ({ a: unknown } | { b: unknown })`},
	{"too many combinations", `{"allOf":[{"type":"number"},{"enum":[1,2,3,4,5,6,7,8,9,10]},{"enum":[1,2,3,4,5,6,7,8,9,11]},{"enum":[1,2,3,4,5,6,7,8,9,12]},{"enum":[1,2,3,4,5,6,7,8,9,13]}]}`,
		`number /* alternatives of anyOf/oneOf/allOf omitted: too many combinations */`},
	{"anyOf not an array", `{"type":"string","anyOf":{}}`, `string /* anyOf is not an array */`},
	{"nested unions are flattened", `{"anyOf":[{"type":"string"},{"anyOf":[{"type":"number"},{"type":"string"}]},{"type":["boolean","number"]}]}`,
		`string | number | boolean`},
	{"alternative differing only in a comment", `{"anyOf":[{"type":"number"},{"type":"integer"},{"type":"string","description":"A"},{"type":"string","description":"B"}]}`,
		`number /* integer */ | string /* A */ | string /* B */`},

	// Null.
	{"nullable", `{"type":"string","nullable":true}`, `string | null`},
	{"nullable object", `{"type":"object","properties":{"a":{"type":"string"}},"nullable":true}`, `{ a?: string } | null`},
	{"nullable enum keeps enum", `{"enum":["a"],"nullable":true}`, `"a"`},
	{"nullable with null type", `{"type":["string","null"],"nullable":true}`, `string | null`},
	{"nullable union", `{"anyOf":[{"type":"string"},{"type":"number"}],"nullable":true}`, `string | number | null`},
	{"type with null", `{"type":["string","null"]}`, `string | null`},
	{"integer or null", `{"type":["integer","null"]}`, `number | null /* integer */`},
	{"integer or number", `{"type":["integer","number"]}`, `number`},
	{"multiple types", `{"type":["string","number","boolean","null"]}`, `string | number | boolean | null`},
	{"object or array", `{"type":["object","array"],"properties":{"a":{"type":"string"}},"items":{"type":"string"}}`, `{ a?: string } | string[]`},

	// Arrays and tuples.
	{"array", `{"type":"array","items":{"type":"string"}}`, `string[]`},
	{"array without items", `{"type":"array"}`, `unknown[]`},
	{"array implied by items", `{"items":{"type":"boolean"}}`, `boolean[]`},
	{"array of union", `{"type":"array","items":{"type":["string","number"]}}`, `(string | number)[]`},
	{"array of negative literal", `{"type":"array","items":{"const":-1}}`, `(-1)[]`},
	{"array of arrays", `{"type":"array","items":{"type":"array","items":{"type":"number"}}}`, `number[][]`},
	{"array of format", `{"type":"array","items":{"type":"string","format":"uri"}}`, `string /* format: uri */[]`},
	{"empty array", `{"type":"array","items":false}`, `[]`},
	{"prefixItems closed", `{"type":"array","prefixItems":[{"type":"string"},{"type":"number"}],"items":false,"minItems":2}`, `[string, number]`},
	{"prefixItems with rest", `{"type":"array","prefixItems":[{"type":"string"},{"type":["number","null"]}],"items":{"type":"boolean"},"minItems":1}`,
		`[string, (number | null)?, ...boolean[]]`},
	{"prefixItems open", `{"type":"array","prefixItems":[{"type":"string"}]}`, `[string?, ...unknown[]]`},
	{"prefixItems optional integer", `{"type":"array","prefixItems":[{"type":"integer"}],"items":false}`, `[number /* integer */?]`},
	{"items array closed", `{"type":"array","items":[{"type":"string"},{"type":"number"}],"additionalItems":false,"minItems":2}`, `[string, number]`},
	{"items array with additionalItems", `{"type":"array","items":[{"type":"string"},{"type":"number"}],"additionalItems":{"type":"string"},"minItems":2}`,
		`[string, number, ...string[]]`},
	{"items array closed by maxItems", `{"type":"array","items":[{"type":"string"},{"type":"number"},{"type":"null"}],"minItems":1,"maxItems":2}`,
		`[string, number?]`},
	{"array of objects", `{"type":"object","properties":{"lines":{"type":"array","items":{"type":"object","properties":{"sku":{"type":"string"},"qty":{"type":"integer"}},"required":["sku"]}},"pairs":{"type":"array","prefixItems":[{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}}},{"type":"string"}],"minItems":1}}}`,
		"{\n  lines?: {\n    sku: string;\n    /** @integer */\n    qty?: number;\n  }[];\n  /** @minItems 1 */\n  pairs?: [{\n    a?: string;\n    b?: string;\n  }, string?, ...unknown[]];\n}"},
	{"tuple of objects", `{"type":"array","prefixItems":[{"type":"object","properties":{"a":{"type":"string"}}}],"items":false,"minItems":1}`,
		`[{ a?: string }]`},

	// Documentation.
	{"property docs", `{"type":"object","properties":{"a":{"type":"string","description":"Ends */ here.\nSecond line","default":"x","examples":["y","z*/"]}}}`,
		"{\n  /**\n   * Ends *\\/ here.\n   * Second line\n   * @default \"x\"\n   * @example \"y\"\n   * @example \"z*\\/\"\n   */\n  a?: string;\n}"},
	{"property tags", `{"type":"object","properties":{"when":{"type":"string","format":"date-time","deprecated":true},"n":{"type":"integer","minimum":0,"maximum":10},"s":{"type":"string","minLength":1,"pattern":"^[a-z]+$"}}}`,
		"{\n  /** @format date-time @deprecated */\n  when?: string;\n  /** @integer @minimum 0 @maximum 10 */\n  n?: number;\n  /** @minLength 1 @pattern ^[a-z]+$ */\n  s?: string;\n}"},
	{"title when no description", `{"type":"object","properties":{"a":{"type":"string","title":"The A"}}}`, "{\n  /** The A */\n  a?: string;\n}"},

	// What a type cannot say.
	{"not", `{"not":{"type":"string"}}`, `unknown /* not: negation is not expressed */`},
	{"not beside type", `{"type":"string","not":{"const":""}}`, `string /* not: negation is not expressed */`},
	{"if then else", `{"if":{"type":"string"},"then":{"minLength":1},"else":{"type":"number"}}`, `unknown /* if/then/else is not expressed */`},
	{"dependentSchemas", `{"type":"object","dependentSchemas":{"a":{"required":["b"]}}}`, `Record<string, unknown> /* dependentSchemas is not expressed */`},
	{"dynamicRef", `{"$dynamicRef":"#node"}`, `unknown /* $dynamicRef is not supported */`},

	// References, expanded in place by TypeOf.
	{"$defs", `{"$defs":{"id":{"type":"string"}},"type":"object","properties":{"id":{"$ref":"#/$defs/id"}},"required":["id"]}`, `{ id: string }`},
	{"definitions", `{"definitions":{"id":{"type":"string"}},"type":"object","properties":{"id":{"$ref":"#/definitions/id"}}}`, `{ id?: string }`},
	{"recursive $ref", `{"$defs":{"n":{"type":"object","properties":{"next":{"$ref":"#/$defs/n"}}}},"$ref":"#/$defs/n"}`,
		`{ next?: unknown /* recursive $ref "#/$defs/n" */ }`},
	{"$ref with siblings", `{"$defs":{"o":{"type":"object","properties":{"a":{"type":"string"}}}},"$ref":"#/$defs/o","required":["b"]}`,
		`{ a?: string } & { b: unknown }`},
	{"$ref to a property", `{"type":"object","properties":{"a":{"type":"string"},"b":{"$ref":"#/properties/a"}}}`, "{\n  a?: string;\n  b?: string;\n}"},
	{"$ref escaped pointer", `{"$defs":{"a/b":{"type":"string"},"c d":{"type":"number"}},"anyOf":[{"$ref":"#/$defs/a~1b"},{"$ref":"#/$defs/c%20d"}]}`, `string | number`},
	{"$ref into an array", `{"$defs":{"list":[{"type":"string"}]},"$ref":"#/$defs/list/0"}`, `string`},
	{"$ref to root $id", `{"$id":"https://x.test/s","$defs":{"id":{"type":"string"}},"$ref":"https://x.test/s#/$defs/id"}`, `string`},
	{"external $ref", `{"$ref":"https://example.com/schema.json"}`, `unknown /* external $ref "https://example.com/schema.json" is not resolved */`},
	{"relative $ref", `{"$ref":"other.json#/a"}`, `unknown /* external $ref "other.json#/a" is not resolved */`},
	{"unresolvable $ref", `{"$ref":"#/$defs/missing"}`, `unknown /* $ref "#/$defs/missing" does not resolve */`},
	{"bad array index", `{"$defs":{"list":[{"type":"string"}]},"$ref":"#/$defs/list/01"}`, `unknown /* $ref "#/$defs/list/01" does not resolve */`},
	{"anchor $ref", `{"$ref":"#anchor"}`, `unknown /* $ref to anchor "#anchor" is not supported */`},
	{"$ref not a string", `{"$ref":5}`, `unknown /* $ref is not a string */`},
	{"comment escaping in $ref", `{"$ref":"x*/y"}`, `unknown /* external $ref "x*\/y" is not resolved */`},
}

func TestTypeOf(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range typeOfCases {
		if seen[tc.name] {
			t.Fatalf("duplicate case name %q", tc.name)
		}
		seen[tc.name] = true
		t.Run(tc.name, func(t *testing.T) {
			got, err := TypeOf(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatalf("TypeOf(%s): %v", tc.schema, err)
			}
			if got != tc.want {
				t.Errorf("TypeOf(%s)\ngot:\n%s\nwant:\n%s", tc.schema, got, tc.want)
			}
		})
	}
}

func TestTypeOfAbsent(t *testing.T) {
	for _, s := range []string{"", "  ", "null", " null\n"} {
		got, err := TypeOf(json.RawMessage(s))
		if err != nil || got != "unknown" {
			t.Errorf("TypeOf(%q) = %q, %v; want unknown", s, got, err)
		}
	}
}

func TestTypeOfErrors(t *testing.T) {
	deepJSON := strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1)
	var many strings.Builder
	many.WriteString(`{"type":"object","properties":{`)
	for i := range maxSteps + 10 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `"p%d":{}`, i)
	}
	many.WriteString(`}}`)
	for _, tc := range []struct {
		name   string
		schema string
		want   error
	}{
		{"truncated", `{"type":`, ErrInvalidSchema},
		{"trailing data", `{} {}`, ErrInvalidSchema},
		{"not JSON", `type: string`, ErrInvalidSchema},
		{"too deep", deepJSON, ErrTooLarge},
		{"too big", `"` + strings.Repeat("x", maxSchemaBytes) + `"`, ErrTooLarge},
		{"too many properties", many.String(), ErrTooLarge},
		{"exponential expansion", exponentialRefs(40), ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := TypeOf(json.RawMessage(tc.schema))
			if !errors.Is(err, tc.want) {
				t.Fatalf("TypeOf = %.80q, %v; want error %v", got, err, tc.want)
			}
		})
	}
}

// exponentialRefs returns a schema whose definition i refers twice to
// definition i+1, so expanding it in place would take 2^n steps.
func exponentialRefs(n int) string {
	var b strings.Builder
	b.WriteString(`{"$ref":"#/$defs/d0","$defs":{`)
	for i := range n {
		fmt.Fprintf(&b, `"d%d":{"type":"object","properties":{"l":{"$ref":"#/$defs/d%d"},"r":{"$ref":"#/$defs/d%d"}}},`, i, i+1, i+1)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}}}`, n)
	return b.String()
}

func TestTypeOfDepthLimit(t *testing.T) {
	schema := `{"type":"string"}`
	for range maxDepth + 5 {
		schema = `{"type":"object","properties":{"a":` + schema + `},"required":["a"]}`
	}
	got, err := TypeOf(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(got, fmt.Sprintf("unknown /* nested deeper than %d levels */", maxDepth)) {
		t.Errorf("deep schema not cut at the depth limit:\n%s", got)
	}
}

// declareCase is one tool and the declarations Declare must render. Tool
// names are unique across the table, so that the compiler check can put all
// of them in one file.
type declareCase struct {
	name string
	fn   Function
	want string
}

var declareCases = []declareCase{
	{
		name: "full example",
		fn: Function{
			Name:             "billing.create_invoice",
			Title:            "Create invoice",
			Description:      "Create an invoice for a customer.\n\nAmounts are in cents; never write */ in notes.",
			Effects:          Effects{ReadOnly: ptr(false), Destructive: ptr(false), Idempotent: ptr(true), OpenWorld: ptr(true)},
			RequiresApproval: true,
			InputSchema: json.RawMessage(`{
				"type": "object",
				"properties": {
					"customerId": {"type": "string", "description": "Customer id"},
					"amount": {"type": "integer", "minimum": 0},
					"currency": {"enum": ["EUR", "USD"], "default": "EUR"},
					"lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}},
					"dueDate": {"type": ["string", "null"], "format": "date"}
				},
				"required": ["customerId", "amount"],
				"$defs": {
					"Line": {
						"description": "One invoice line.",
						"type": "object",
						"properties": {"sku": {"type": "string"}, "quantity": {"type": "integer"}},
						"required": ["sku"]
					}
				}
			}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"total":{"type":"number"}},"required":["id","total"]}`),
		},
		want: `/**
 * Create an invoice for a customer.
 *
 * Amounts are in cents; never write *\/ in notes.
 * Requires approval: a person confirms each call; a denial is final.
 * @title Create invoice
 * @remarks non-destructive, idempotent, open-world
 */
declare function callTool(name: "billing.create_invoice", input: Billing_CreateInvoiceInput): Promise<Billing_CreateInvoiceOutput>;
type Billing_CreateInvoiceInput = {
  /** Customer id */
  customerId: string;
  /** @integer @minimum 0 */
  amount: number;
  /** @default "EUR" */
  currency?: "EUR" | "USD";
  lines?: Billing_CreateInvoice$Line[];
  /** @format date */
  dueDate?: string | null;
};
type Billing_CreateInvoiceOutput = {
  id: string;
  total: number;
};
/** One invoice line. */
type Billing_CreateInvoice$Line = {
  sku: string;
  /** @integer */
  quantity?: number;
};
`,
	},
	{
		name: "no schemas",
		fn:   Function{Name: "ping"},
		want: `declare function callTool(name: "ping", input: PingInput): Promise<unknown>;
type PingInput = Record<string, unknown>;
`,
	},
	{
		name: "null schemas",
		fn:   Function{Name: "ping_null", InputSchema: json.RawMessage("null"), OutputSchema: json.RawMessage("null")},
		want: `declare function callTool(name: "ping_null", input: PingNullInput): Promise<unknown>;
type PingNullInput = Record<string, unknown>;
`,
	},
	{
		name: "recursive definitions in input and output",
		fn: Function{
			Name:         "tree.walk",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"root":{"$ref":"#/$defs/Node"}},"required":["root"],"$defs":{"Node":{"description":"A tree node.","type":"object","properties":{"value":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/Node"}}},"required":["value"]}}}`),
			OutputSchema: json.RawMessage(`{"$ref":"#/$defs/Node","$defs":{"Node":{"type":"object","properties":{"id":{"type":"integer"},"parent":{"$ref":"#/$defs/Node"}}}}}`),
		},
		want: `declare function callTool(name: "tree.walk", input: Tree_WalkInput): Promise<Tree_WalkOutput>;
type Tree_WalkInput = { root: Tree_Walk$Node };
type Tree_WalkOutput = Tree_Walk$Node_2;
/** A tree node. */
type Tree_Walk$Node = {
  value: string;
  children?: Tree_Walk$Node[];
};
type Tree_Walk$Node_2 = {
  /** @integer */
  id?: number;
  parent?: Tree_Walk$Node_2;
};
`,
	},
	{
		name: "same definition name in another tool",
		fn: Function{
			Name:        "tree.copy",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"root":{"$ref":"#/definitions/Node"}},"definitions":{"Node":{"type":["object","null"],"properties":{"next":{"$ref":"#/definitions/Node"}}}}}`),
		},
		want: `declare function callTool(name: "tree.copy", input: Tree_CopyInput): Promise<unknown>;
type Tree_CopyInput = { root?: Tree_Copy$Node };
type Tree_Copy$Node = { next?: Tree_Copy$Node } | null;
`,
	},
	{
		name: "mutual recursion through unions",
		fn: Function{
			Name:        "expr.eval",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"expr":{"$ref":"#/$defs/Expr"}},"required":["expr"],"$defs":{"Expr":{"oneOf":[{"type":"number"},{"$ref":"#/$defs/Sum"}]},"Sum":{"type":"object","properties":{"op":{"const":"+"},"args":{"type":"array","items":{"$ref":"#/$defs/Expr"}}},"required":["op","args"]}}}`),
		},
		want: `declare function callTool(name: "expr.eval", input: Expr_EvalInput): Promise<unknown>;
type Expr_EvalInput = { expr: Expr_Eval$Expr };
type Expr_Eval$Expr = number | Expr_Eval$Sum;
type Expr_Eval$Sum = {
  op: "+";
  args: Expr_Eval$Expr[];
};
`,
	},
	{
		name: "circular aliases",
		fn: Function{
			Name:        "loop.alias",
			InputSchema: json.RawMessage(`{"$ref":"#/$defs/A","$defs":{"A":{"anyOf":[{"$ref":"#/$defs/B"},{"type":"string"}]},"B":{"anyOf":[{"$ref":"#/$defs/A"},{"type":"number"},{"type":"array","items":{"$ref":"#/$defs/A"}}]}}}`),
		},
		want: `declare function callTool(name: "loop.alias", input: Loop_AliasInput): Promise<unknown>;
type Loop_AliasInput = Loop_Alias$A;
type Loop_Alias$A = unknown /* circular $ref "#/$defs/B" */ | string;
type Loop_Alias$B = unknown /* circular $ref "#/$defs/A" */ | number | Loop_Alias$A[];
`,
	},
	{
		// TypeScript resolves the array and tuple types of an optional or
		// rest tuple element eagerly, so a reference back from there is
		// circular; from a plain array element it is not.
		name: "recursion through tuples",
		fn: Function{
			Name:        "tuple.tree",
			InputSchema: json.RawMessage(`{"$defs":{"T":{"anyOf":[{"type":"string"},{"type":"array","prefixItems":[{"type":"string"}],"items":{"type":"array","prefixItems":[{"$ref":"#/$defs/T"}],"items":false,"minItems":1},"minItems":1},{"type":"array","items":{"$ref":"#/$defs/T"}}]}},"type":"object","properties":{"tree":{"$ref":"#/$defs/T"}},"required":["tree"]}`),
		},
		want: `declare function callTool(name: "tuple.tree", input: Tuple_TreeInput): Promise<unknown>;
type Tuple_TreeInput = { tree: Tuple_Tree$T };
type Tuple_Tree$T = string | [string, ...[unknown /* circular $ref "#/$defs/T" */][]] | Tuple_Tree$T[];
`,
	},
	{
		name: "references outside definitions",
		fn: Function{
			Name:         "loop.pointer",
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/properties/a"},"b":{"$ref":"#/properties/c"},"c":{"type":"array","items":{"$ref":"#/properties/b"}},"child":{"$ref":"#"}}}`),
			OutputSchema: json.RawMessage(`{"anyOf":[{"$ref":"#"},{"type":"object","properties":{"x":{"$ref":"#"}}}]}`),
		},
		want: `declare function callTool(name: "loop.pointer", input: Loop_PointerInput): Promise<Loop_PointerOutput>;
type Loop_PointerInput = {
  a?: Loop_Pointer$properties_a;
  b?: Loop_Pointer$properties_c;
  c?: Loop_Pointer$properties_b[];
  child?: Loop_PointerInput;
};
type Loop_PointerOutput = unknown /* circular $ref "#" */ | { x?: Loop_PointerOutput };
type Loop_Pointer$properties_a = unknown /* circular $ref "#/properties/a" */;
type Loop_Pointer$properties_c = Loop_Pointer$properties_b[];
type Loop_Pointer$properties_b = Loop_Pointer$properties_c;
`,
	},
	{
		name: "definition names that are not identifiers",
		fn: Function{
			Name:        "defs.names",
			InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/$defs/my-type"},"b":{"$ref":"#/$defs/my_type"},"c":{"$ref":"#/$defs/a~1b"}},"$defs":{"my-type":{"type":"string"},"my_type":{"type":"number"},"a/b":{"type":"boolean"}}}`),
		},
		want: `declare function callTool(name: "defs.names", input: Defs_NamesInput): Promise<unknown>;
type Defs_NamesInput = {
  a?: Defs_Names$my_type;
  b?: Defs_Names$my_type_2;
  c?: Defs_Names$a_b;
};
type Defs_Names$my_type = string;
type Defs_Names$my_type_2 = number;
type Defs_Names$a_b = boolean;
`,
	},
	{
		name: "invalid schemas",
		fn: Function{
			Name:         "bad-json",
			InputSchema:  json.RawMessage(`{"type":`),
			OutputSchema: json.RawMessage(`[1,2]`),
		},
		want: `declare function callTool(name: "bad-json", input: BadJson_f40076edInput): Promise<BadJson_f40076edOutput>;
type BadJson_f40076edInput = unknown /* input schema not used: invalid schema: unexpected EOF */;
type BadJson_f40076edOutput = unknown /* invalid schema: a schema must be an object or a boolean */;
`,
	},
	{
		name: "name that needs quoting and hashing",
		fn: Function{
			Name:        "weird name/with:chars \"*/",
			Description: "Line */ one",
			InputSchema: json.RawMessage(`{"type":"object"}`),
		},
		want: `/** Line *\/ one */
declare function callTool(name: "weird name/with:chars \"*/", input: WeirdNameWithChars_6e6b054cInput): Promise<unknown>;
type WeirdNameWithChars_6e6b054cInput = Record<string, unknown>;
`,
	},
	{
		name: "root documentation and non-object input",
		fn: Function{
			Name:         "echo",
			Title:        "Echo",
			InputSchema:  json.RawMessage(`{"title":"EchoArgs","type":"object","properties":{"text":{"type":"string"}},"required":["text"]}`),
			OutputSchema: json.RawMessage(`{"description":"The text, unchanged.","type":"string"}`),
		},
		want: `/** @title Echo */
declare function callTool(name: "echo", input: EchoInput): Promise<EchoOutput>;
/** EchoArgs */
type EchoInput = { text: string };
/** The text, unchanged. */
type EchoOutput = string;
`,
	},
	{
		name: "input too deep to parse",
		fn: Function{
			Name:         "deep.input",
			InputSchema:  json.RawMessage(strings.Repeat("[", maxJSONDepth+1) + strings.Repeat("]", maxJSONDepth+1)),
			OutputSchema: json.RawMessage(`{"type":"boolean"}`),
		},
		want: `declare function callTool(name: "deep.input", input: Deep_InputInput): Promise<Deep_InputOutput>;
type Deep_InputInput = unknown /* input schema not used: schema too large: schema nests deeper than 256 levels */;
type Deep_InputOutput = boolean;
`,
	},
}

func TestDeclare(t *testing.T) {
	seen := map[string]bool{}
	for _, tc := range declareCases {
		if seen[tc.fn.Name] {
			t.Fatalf("tool name %q used twice", tc.fn.Name)
		}
		seen[tc.fn.Name] = true
		t.Run(tc.name, func(t *testing.T) {
			got := Declare(tc.fn)
			if got != tc.want {
				t.Errorf("Declare(%q)\ngot:\n%s\nwant:\n%s", tc.fn.Name, got, tc.want)
			}
		})
	}
}

func ptr(b bool) *bool { return &b }

// TestToolDoc pins the comment on the callTool overload: what a model learns
// about approval and side effects before it calls, in as few words as that
// takes, and nothing when the tool states nothing.
func TestToolDoc(t *testing.T) {
	yes, no := ptr(true), ptr(false)
	tests := []struct {
		name string
		fn   Function
		want string // the comment; "" for none
	}{
		{"nothing stated", Function{}, ""},
		{"read-only", Function{Effects: Effects{ReadOnly: yes, Destructive: no, Idempotent: yes, OpenWorld: no}},
			"/** @remarks read-only */\n"},
		{"read-only web lookup", Function{Effects: Effects{ReadOnly: yes, OpenWorld: yes}},
			"/** @remarks read-only, open-world */\n"},
		{"destructive and idempotent", Function{Effects: Effects{ReadOnly: no, Destructive: yes, Idempotent: yes, OpenWorld: no}},
			"/** @remarks destructive, idempotent */\n"},
		{"additive write that reaches out", Function{Effects: Effects{ReadOnly: no, Destructive: no, Idempotent: no, OpenWorld: yes}},
			"/** @remarks non-destructive, not idempotent, open-world */\n"},
		{"only readOnly false", Function{Effects: Effects{ReadOnly: no}}, "/** @remarks writes */\n"},
		{"only closed world", Function{Effects: Effects{OpenWorld: no}}, ""},
		{"approval alone", Function{RequiresApproval: true},
			"/** Requires approval: a person confirms each call; a denial is final. */\n"},
		{"everything", Function{Description: "Refund a payment.", Title: "Refund", RequiresApproval: true,
			Effects: Effects{ReadOnly: no, Destructive: yes, Idempotent: no, OpenWorld: no}},
			"/**\n * Refund a payment.\n * Requires approval: a person confirms each call; a denial is final.\n" +
				" * @title Refund\n * @remarks destructive, not idempotent\n */\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tt.fn.Name = "t.tool"
			got, _, _ := strings.Cut(Declare(tt.fn), "declare function")
			if got != tt.want {
				t.Errorf("comment\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

func TestDeclareDeterministic(t *testing.T) {
	for _, tc := range declareCases {
		first := Declare(tc.fn)
		for range 5 {
			if got := Declare(tc.fn); got != first {
				t.Fatalf("Declare(%q) differs between calls:\n%s\n---\n%s", tc.fn.Name, first, got)
			}
		}
	}
}

func TestDeclareLimits(t *testing.T) {
	var many strings.Builder
	many.WriteString(`{"type":"object","properties":{`)
	for i := range maxSteps + 10 {
		if i > 0 {
			many.WriteByte(',')
		}
		fmt.Fprintf(&many, `"p%d":{}`, i)
	}
	many.WriteString(`}}`)
	small := json.RawMessage(`{"type":"object","properties":{"ok":{"type":"boolean"}},"required":["ok"]}`)

	t.Run("oversized output keeps input", func(t *testing.T) {
		got := Declare(Function{Name: "big.output", InputSchema: small, OutputSchema: json.RawMessage(many.String())})
		want := `declare function callTool(name: "big.output", input: Big_OutputInput): Promise<Big_OutputOutput>;
type Big_OutputInput = { ok: boolean };
type Big_OutputOutput = unknown /* output schema too large to render */;
`
		if got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("oversized input keeps output", func(t *testing.T) {
		got := Declare(Function{Name: "big.input", InputSchema: json.RawMessage(many.String()), OutputSchema: small})
		want := `declare function callTool(name: "big.input", input: Big_InputInput): Promise<Big_InputOutput>;
type Big_InputInput = unknown /* input schema too large to render */;
type Big_InputOutput = { ok: boolean };
`
		if got != want {
			t.Errorf("got:\n%s\nwant:\n%s", got, want)
		}
	})
	t.Run("exponential references stay linear", func(t *testing.T) {
		got := Declare(Function{Name: "exp.refs", InputSchema: json.RawMessage(exponentialRefs(40))})
		if !strings.Contains(got, "type Exp_Refs$d40 = string;") || len(got) > 10000 {
			t.Errorf("unexpected declarations (%d bytes):\n%.2000s", len(got), got)
		}
	})
	t.Run("long description is truncated", func(t *testing.T) {
		got := Declare(Function{Name: "long.doc", Description: strings.Repeat("word ", maxDocLen)})
		if len(got) > maxDocLen+500 || !strings.Contains(got, "…") {
			t.Errorf("description not truncated: %d bytes", len(got))
		}
	})
}

func TestTypeName(t *testing.T) {
	for _, tc := range []struct{ tool, want string }{
		{"create_invoice", "CreateInvoice"},
		{"billing.create_invoice", "Billing_CreateInvoice"},
		{"a.b.c", "A_B_C"},
		{"v2_list", "V2List"},
		{"search", "Search"},
		{"get-weather", "GetWeather_041aeb16"},
		{"createInvoice", "CreateInvoice_ded16818"},
		{"fs/read_file", "FsReadFile_7e15c02e"},
		{"list_2", "List2_8f2cf058"},
		{"", "Tool_811c9dc5"},
		{"42", "Tool42_87e38583"},
		{"日本", "Tool_9f26ee51"},
	} {
		if got := TypeName(tc.tool); got != tc.want {
			t.Errorf("TypeName(%q) = %q, want %q", tc.tool, got, tc.want)
		}
	}
}

func TestTypeNameUnique(t *testing.T) {
	names := []string{
		"billing.create_invoice", "billing_create.invoice", "billing.create.invoice", "billing_create_invoice",
		"billing.createInvoice", "billing.create-invoice", "Billing.create_invoice", "billing..create_invoice",
		"billing.create_invoice ", "billing/create_invoice", "a_b", "ab", "a.b", "aB", "a_b_input", "a_b.input",
		"list2", "list_2", "list.2", "", "_", ".", "a", "A", "tool", "Tool", "x_0", "x0",
		strings.Repeat("a", maxReadableName), strings.Repeat("a", maxReadableName+1), strings.Repeat("a", maxReadableName+2),
	}
	ident := regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)
	owner := map[string]string{}
	for _, n := range names {
		tn := TypeName(n)
		if !ident.MatchString(tn) {
			t.Errorf("TypeName(%q) = %q is not a plain identifier", n, tn)
		}
		if prev, dup := owner[tn]; dup {
			t.Errorf("TypeName(%q) = TypeName(%q) = %q", n, prev, tn)
		}
		owner[tn] = n
	}
}
