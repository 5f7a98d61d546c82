package typescript

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// moduleFeature is one schema feature spec §6.2 names, and the type
// aliases DeclareModule renders for an output schema that uses it.
type moduleFeature struct {
	name   string
	schema string
	want   string // the tool's aliases, without the module's indentation
	warned bool   // whether the tool's comment warns that the type leaves something out
}

var moduleFeatureCases = []moduleFeature{
	{
		name:   "enum",
		schema: `{"enum":["open","closed",null]}`,
		want:   "type FOutput = \"open\" | \"closed\" | null;\n",
	},
	{
		name:   "const",
		schema: `{"type":"object","properties":{"kind":{"const":"order"},"version":{"const":2}},"required":["kind","version"]}`,
		want: `type FOutput = {
  kind: "order";
  version: 2;
};
`,
	},
	{
		name:   "oneOf",
		schema: `{"oneOf":[{"type":"string","description":"An order id"},{"type":"object","properties":{"sku":{"type":"string"}},"required":["sku"]}]}`,
		want:   "type FOutput = string /* An order id */ | { sku: string };\n",
	},
	{
		name:   "anyOf",
		schema: `{"type":"object","properties":{"total":{"anyOf":[{"type":"number"},{"type":"string","pattern":"^[0-9.]+$"}]}},"required":["total"]}`,
		want:   "type FOutput = { total: number | string };\n",
	},
	{
		name:   "nullable",
		schema: `{"type":"object","properties":{"note":{"type":"string","nullable":true},"owner":{"$ref":"#/$defs/User","nullable":true},"tags":{"type":["string","null"],"nullable":true}},"required":["note","owner"],"$defs":{"User":{"type":"object","properties":{"login":{"type":"string"}},"required":["login"]}}}`,
		want: `type FOutput = {
  note: string | null;
  owner: F$User | null;
  tags?: string | null;
};
type F$User = { login: string };
`,
	},
	{
		name:   "nullable as a null type",
		schema: `{"type":"object","properties":{"due":{"type":["string","null"],"format":"date"}},"required":["due"]}`,
		want: `type FOutput = {
  /** @format date */
  due: string | null;
};
`,
	},
	{
		name:   "$ref within the same document",
		schema: `{"type":"object","properties":{"billing":{"$ref":"#/$defs/Address"},"shipping":{"$ref":"#/$defs/Address"},"contact":{"$ref":"#/properties/billing"}},"required":["billing"],"$defs":{"Address":{"description":"A postal address.","type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}`,
		want: `type FOutput = {
  billing: F$Address;
  shipping?: F$Address;
  contact?: F$properties_billing;
};
/** A postal address. */
type F$Address = { city: string };
type F$properties_billing = F$Address;
`,
	},
	{
		name:   "recursive object schema",
		schema: `{"$ref":"#/$defs/Category","$defs":{"Category":{"type":"object","properties":{"name":{"type":"string"},"children":{"type":"array","items":{"$ref":"#/$defs/Category"}},"parent":{"$ref":"#/$defs/Category"}},"required":["name"]}}}`,
		want: `type FOutput = F$Category;
type F$Category = {
  name: string;
  children?: F$Category[];
  parent?: F$Category;
};
`,
	},
	{
		name:   "additionalProperties",
		schema: `{"type":"object","properties":{"labels":{"type":"object","additionalProperties":{"type":"string"}},"closed":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":false},"open":{"type":"object","properties":{"a":{"type":"string"}},"additionalProperties":true},"counts":{"type":"object","properties":{"total":{"type":"integer"}},"required":["total"],"additionalProperties":{"type":"integer"}}}}`,
		want: `type FOutput = {
  labels?: { [key: string]: string };
  closed?: { a?: string };
  open?: {
    a?: string;
    [key: string]: unknown;
  };
  counts?: {
    /** @integer */
    total: number;
    [key: string]: number /* integer */;
  };
};
`,
	},
	{
		name:   "patternProperties",
		schema: `{"type":"object","properties":{"id":{"type":"string"}},"required":["id"],"patternProperties":{"^x-":{"type":"string"},"^n_":{"type":"number"}},"additionalProperties":false}`,
		want: `type FOutput = {
  id: string;
  /**
   * Property names matching "^x-"
   * Property names matching "^n_"
   */
  [key: string]: string | number;
};
`,
	},
	{
		name:   "tuple with items as an array",
		schema: `{"type":"array","items":[{"type":"number"},{"type":"number"},{"type":"string"}],"additionalItems":false,"minItems":2}`,
		want:   "/** @minItems 2 */\ntype FOutput = [number, number, string?];\n",
	},
	{
		name:   "tuple with prefixItems",
		schema: `{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":{"type":"boolean"},"minItems":2}`,
		want:   "/** @minItems 2 */\ntype FOutput = [string, number /* integer */, ...boolean[]];\n",
	},
	{
		name:   "unrepresentable feature falls back to unknown with a warning",
		schema: `{"type":"object","properties":{"rule":{"not":{"type":"string"}},"remote":{"$ref":"https://example.com/schema.json"},"cond":{"type":"string","if":{"minLength":1},"then":{"pattern":"^a"}}},"required":["rule"]}`,
		want: `type FOutput = {
  rule: unknown /* not: negation is not expressed */;
  remote?: unknown /* external $ref "https://example.com/schema.json" is not resolved */;
  cond?: string /* if/then/else is not expressed */;
};
`,
		warned: true,
	},
}

// moduleAliases returns the type aliases DeclareModule wrote for its only
// tool, without the module's indentation.
func moduleAliases(t *testing.T, out string) string {
	t.Helper()
	_, rest, ok := strings.Cut(out, "export function f(")
	if !ok {
		t.Fatalf("no function f in:\n%s", out)
	}
	_, rest, _ = strings.Cut(rest, "\n")
	aliases, _, ok := strings.Cut(rest, "  /** This module's server")
	if !ok {
		t.Fatalf("no __meta__ in:\n%s", out)
	}
	lines := strings.SplitAfter(aliases, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimPrefix(l, "  ")
	}
	return strings.Join(lines, "")
}

func TestDeclareModuleSchemaFeatures(t *testing.T) {
	for _, tc := range moduleFeatureCases {
		t.Run(tc.name, func(t *testing.T) {
			out := DeclareModule(Module{Specifier: "@codemode/servers/features", Tools: []ModuleTool{{
				Export:   "f",
				Function: Function{Name: "f", OutputSchema: json.RawMessage(tc.schema)},
			}}})
			if got := moduleAliases(t, out); got != tc.want {
				t.Errorf("schema %s\ngot:\n%s\nwant:\n%s", tc.schema, got, tc.want)
			}
			if warned := strings.Contains(out, "Warning: the output type does not express all of its schema"); warned != tc.warned {
				t.Errorf("warning in comment: %v, want %v:\n%s", warned, tc.warned, out)
			}
		})
	}
}

// shopModule is a server module shaped like a real one.
var shopModule = Module{
	Specifier:     "@codemode/servers/shop",
	ServerID:      "shop",
	ServerName:    "Shop",
	ServerVersion: "2.1.0",
	Tools: []ModuleTool{
		{Export: "cancel_order", Function: Function{
			Name:             "shop.cancel_order",
			Title:            "Cancel order",
			Description:      "Cancel an order that has not shipped.",
			RequiresApproval: true,
			Effects:          Effects{ReadOnly: ptr(false), Destructive: ptr(true), Idempotent: ptr(true), OpenWorld: ptr(false)},
			InputSchema:      json.RawMessage(`{"type":"object","properties":{"orderId":{"type":"string"},"reason":{"enum":["customer","fraud","stock"]}},"required":["orderId"],"additionalProperties":false}`),
		}},
		{Export: "enum", Function: Function{
			Name:         "shop.enum",
			Description:  "List the values a field may take.",
			Effects:      Effects{ReadOnly: ptr(true)},
			InputSchema:  json.RawMessage(`{"type":"string","description":"The field's name."}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"values":{"type":"array","items":{"type":"string"}}},"required":["values"]}`),
		}},
		{Export: "get_order", Function: Function{
			Name:        "shop.get_order",
			Title:       "Get order",
			Description: "Fetch one order with its lines.",
			Effects:     Effects{ReadOnly: ptr(true), OpenWorld: ptr(false)},
			InputSchema: json.RawMessage(`{"type":"object","properties":{"orderId":{"type":"string","description":"The order's id."}},"required":["orderId"]}`),
			OutputSchema: json.RawMessage(`{
				"type": "object",
				"properties": {
					"id": {"type": "string"},
					"status": {"enum": ["open", "shipped", "cancelled"]},
					"lines": {"type": "array", "items": {"$ref": "#/$defs/Line"}},
					"note": {"type": "string", "nullable": true}
				},
				"required": ["id", "status", "lines"],
				"$defs": {"Line": {"type": "object", "properties": {"sku": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1}}, "required": ["sku", "quantity"]}}
			}`),
		}},
		{Export: "list_orders", Function: Function{
			Name:         "shop.list_orders",
			Description:  "List recent orders.",
			Effects:      Effects{ReadOnly: ptr(true)},
			InputSchema:  json.RawMessage(`{"type":"object","properties":{"limit":{"type":"integer","default":20},"status":{"type":"string"}}}`),
			OutputSchema: json.RawMessage(`{"type":"object","properties":{"orders":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"total":{"type":"number"}},"required":["id"]}}},"required":["orders"]}`),
		}},
		{Export: "ping", Function: Function{Name: "shop.ping", InputSchema: json.RawMessage(`{"type":"object","properties":{}}`)}},
		{Export: "version", Function: Function{Name: "shop.version"}},
	},
}

func TestDeclareModule(t *testing.T) {
	got := DeclareModule(shopModule)
	if got != shopModuleWant {
		t.Errorf("DeclareModule(shop)\ngot:\n%s\nwant:\n%s", got, shopModuleWant)
	}
	for range 3 {
		if again := DeclareModule(shopModule); again != got {
			t.Fatalf("DeclareModule differs between calls:\n%s\n---\n%s", got, again)
		}
	}
}

const shopModuleWant = `/** Tools of the MCP server Shop (serverId "shop", version 2.1.0). */
declare module "@codemode/servers/shop" {
  /**
   * Cancel an order that has not shipped.
   * Requires approval: a person confirms each call; a denial is final.
   * Canonical MCP tool: shop.cancel_order
   * Resolves to the result's structuredContent if it has one, else to a lone text block as a string, else to the whole MCP result object (binary content base64-encoded).
   * @title Cancel order
   * @remarks destructive, idempotent
   * @annotations readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false
   */
  export function cancel_order(input: Shop_CancelOrderInput): Promise<unknown>;
  type Shop_CancelOrderInput = {
    orderId: string;
    reason?: "customer" | "fraud" | "stock";
  };
  /**
   * List the values a field may take.
   * Canonical MCP tool: shop.enum
   * @remarks read-only
   * @annotations readOnlyHint: true
   */
  function Shop_Enum$call(input: Shop_EnumInput): Promise<Shop_EnumOutput>;
  export { Shop_Enum$call as enum };
  /** The field's name. */
  type Shop_EnumInput = string;
  type Shop_EnumOutput = { values: string[] };
  /**
   * Fetch one order with its lines.
   * Canonical MCP tool: shop.get_order
   * @title Get order
   * @remarks read-only
   * @annotations readOnlyHint: true, openWorldHint: false
   */
  export function get_order(input: Shop_GetOrderInput): Promise<Shop_GetOrderOutput>;
  type Shop_GetOrderInput = {
    /** The order's id. */
    orderId: string;
  };
  type Shop_GetOrderOutput = {
    id: string;
    status: "open" | "shipped" | "cancelled";
    lines: Shop_GetOrder$Line[];
    note?: string | null;
  };
  type Shop_GetOrder$Line = {
    sku: string;
    /** @integer @minimum 1 */
    quantity: number;
  };
  /**
   * List recent orders.
   * Canonical MCP tool: shop.list_orders
   * @remarks read-only
   * @annotations readOnlyHint: true
   */
  export function list_orders(input?: Shop_ListOrdersInput): Promise<Shop_ListOrdersOutput>;
  type Shop_ListOrdersInput = {
    /** @integer @default 20 */
    limit?: number;
    status?: string;
  };
  type Shop_ListOrdersOutput = {
    orders: {
      id: string;
      total?: number;
    }[];
  };
  /**
   * Canonical MCP tool: shop.ping
   * Resolves to the result's structuredContent if it has one, else to a lone text block as a string, else to the whole MCP result object (binary content base64-encoded).
   */
  export function ping(input?: Record<string, never>): Promise<unknown>;
  /**
   * Canonical MCP tool: shop.version
   * Resolves to the result's structuredContent if it has one, else to a lone text block as a string, else to the whole MCP result object (binary content base64-encoded).
   */
  export function version(input?: Record<string, never>): Promise<unknown>;
  /** This module's server, and the canonical MCP name and export name of each of its tools. */
  export const __meta__: {
    readonly serverId: string;
    readonly serverName: string;
    readonly serverVersion?: string;
    readonly tools: ReadonlyArray<{ readonly toolName: string; readonly exportName: string; readonly description?: string }>;
  };
}
`

// declareOne renders a module of one tool exported as f.
func declareOne(fn Function) string {
	return DeclareModule(Module{Specifier: "@codemode/servers/one", Tools: []ModuleTool{{Export: "f", Function: fn}}})
}

// signature returns the function declaration of f in a module.
func signature(t *testing.T, out string) string {
	t.Helper()
	for _, l := range strings.Split(out, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "export function f(") {
			return l
		}
	}
	t.Fatalf("no function f in:\n%s", out)
	return ""
}

// moduleInputCase is an input schema and how DeclareModule declares the
// input parameter of a tool exported as f.
type moduleInputCase struct {
	name, schema string
	sig          string // the function declaration
	alias        string // the input alias; "" when there is none
}

const (
	sigNoInput       = "export function f(input?: Record<string, never>): Promise<unknown>;"
	sigOptionalInput = "export function f(input?: FInput): Promise<unknown>;"
	sigRequiredInput = "export function f(input: FInput): Promise<unknown>;"
)

var moduleInputCases = []moduleInputCase{
	{"absent", ``, sigNoInput, ""},
	{"null", `null`, sigNoInput, ""},
	{"empty schema", `{}`, sigNoInput, ""},
	{"true schema", `true`, sigNoInput, ""},
	{"annotations only", `{"$schema":"https://json-schema.org/draft/2020-12/schema","description":"Takes nothing."}`, sigNoInput, ""},
	{"object without properties", `{"type":"object"}`, sigNoInput, ""},
	{"empty properties", `{"type":"object","properties":{},"required":[]}`, sigNoInput, ""},
	{"closed empty object", `{"type":"object","properties":{},"additionalProperties":false}`, sigNoInput, ""},
	{"open empty object", `{"type":"object","additionalProperties":true}`, sigOptionalInput, "type FInput = Record<string, unknown>;"},
	{"map", `{"type":"object","additionalProperties":{"type":"string"}}`, sigOptionalInput, "type FInput = { [key: string]: string };"},
	{"no required property", `{"type":"object","properties":{"q":{"type":"string"}}}`, sigOptionalInput, "type FInput = { q?: string };"},
	{"object implied by properties", `{"properties":{"q":{"type":"string"}}}`, sigOptionalInput, "type FInput = { q?: string };"},
	{"object or null", `{"type":["object","null"],"properties":{"q":{"type":"string"}}}`, sigOptionalInput, "type FInput = { q?: string } | null;"},
	{"required property", `{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}`, sigRequiredInput, "type FInput = { q: string };"},
	{"minProperties", `{"type":"object","properties":{"q":{"type":"string"}},"minProperties":1}`, sigRequiredInput, ""},
	{"requirement in anyOf", `{"type":"object","properties":{"a":{"type":"string"},"b":{"type":"string"}},"anyOf":[{"required":["a"]},{"required":["b"]}]}`, sigRequiredInput, ""},
	{"root $ref to an optional object", `{"$ref":"#/$defs/Args","$defs":{"Args":{"type":"object","properties":{"q":{"type":"string"}}}}}`, sigOptionalInput, "type FInput = F$Args;"},
	{"root $ref to a required object", `{"$ref":"#/$defs/Args","$defs":{"Args":{"type":"object","properties":{"q":{"type":"string"}},"required":["q"]}}}`, sigRequiredInput, "type FInput = F$Args;"},
	{"root $ref with siblings", `{"$ref":"#/$defs/Args","type":"object","$defs":{"Args":{"type":"object"}}}`, sigRequiredInput, ""},
	{"root $ref cycle", `{"$ref":"#"}`, sigRequiredInput, ""},
	{"array root", `{"type":"array","items":{"type":"string"}}`, sigRequiredInput, "type FInput = string[];"},
	{"string root", `{"type":"string","enum":["a","b"]}`, sigRequiredInput, `type FInput = "a" | "b";`},
	{"false schema", `false`, sigRequiredInput, "type FInput = never;"},
	{"invalid JSON", `{"type":`, sigRequiredInput, "type FInput = unknown /* input schema not used: invalid schema: unexpected EOF */;"},
}

// TestDeclareModuleInput pins the input parameter of spec §5.3.1: optional
// where the schema declares no argument or accepts {}, required otherwise,
// and of the schema's type whatever its root.
func TestDeclareModuleInput(t *testing.T) {
	for _, tt := range moduleInputCases {
		t.Run(tt.name, func(t *testing.T) {
			out := declareOne(Function{Name: "f", InputSchema: json.RawMessage(tt.schema)})
			if got := signature(t, out); got != tt.sig {
				t.Errorf("signature\n%s\nwant\n%s", got, tt.sig)
			}
			if tt.sig == sigNoInput && strings.Contains(out, "FInput") {
				t.Errorf("alias declared for an input that takes nothing:\n%s", out)
			}
			if tt.alias != "" && !strings.Contains(out, "\n  "+tt.alias+"\n") {
				t.Errorf("declarations lack %q:\n%s", tt.alias, out)
			}
		})
	}
}

// TestDeclareModuleOutput pins the result type of spec §5.3.2: the output
// schema's type, which is the result's structuredContent, or unknown with a
// sentence on unwrapping.
func TestDeclareModuleOutput(t *testing.T) {
	tests := []struct {
		name, schema string
		sig          string
		unwrap       bool // the comment explains unwrapping
		warned       bool
	}{
		{"absent", ``, "export function f(input?: Record<string, never>): Promise<unknown>;", true, false},
		{"null", `null`, "export function f(input?: Record<string, never>): Promise<unknown>;", true, false},
		{"object", `{"type":"object","properties":{"id":{"type":"string"}}}`, "export function f(input?: Record<string, never>): Promise<FOutput>;", false, false},
		{"empty", `{}`, "export function f(input?: Record<string, never>): Promise<FOutput>;", false, false},
		{"invalid JSON", `[1`, "export function f(input?: Record<string, never>): Promise<FOutput>;", false, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := declareOne(Function{Name: "f", OutputSchema: json.RawMessage(tt.schema)})
			if got := signature(t, out); got != tt.sig {
				t.Errorf("signature\n%s\nwant\n%s", got, tt.sig)
			}
			if got := strings.Contains(out, unwrapNote); got != tt.unwrap {
				t.Errorf("unwrapping explained: %v, want %v:\n%s", got, tt.unwrap, out)
			}
			if got := strings.Contains(out, "Warning:"); got != tt.warned {
				t.Errorf("warned: %v, want %v:\n%s", got, tt.warned, out)
			}
		})
	}
}

// TestDeclareModuleDoc pins the comment of a tool's function: what it does,
// approval, its canonical name, and its MCP annotations both in words and
// as MCP names them (spec §6.3).
func TestDeclareModuleDoc(t *testing.T) {
	yes, no := ptr(true), ptr(false)
	out := json.RawMessage(`{"type":"object"}`)
	tests := []struct {
		name string
		fn   Function
		want string
	}{
		{"nothing stated", Function{Name: "t.tool", OutputSchema: out},
			"/** Canonical MCP tool: t.tool */\n"},
		{"read-only", Function{Name: "t.tool", OutputSchema: out, Effects: Effects{ReadOnly: yes, Destructive: no, Idempotent: yes, OpenWorld: no}},
			"/** Canonical MCP tool: t.tool @remarks read-only " +
				"@annotations readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false */\n"},
		{"only closed world", Function{Name: "t.tool", OutputSchema: out, Effects: Effects{OpenWorld: no}},
			"/** Canonical MCP tool: t.tool @annotations openWorldHint: false */\n"},
		{"everything", Function{Name: "t.tool", OutputSchema: out, Description: "Refund a payment.\n\nFull refunds only.", Title: "Refund", RequiresApproval: true,
			Effects: Effects{ReadOnly: no, Destructive: yes, Idempotent: no, OpenWorld: yes}},
			"/**\n * Refund a payment.\n *\n * Full refunds only.\n * Requires approval: a person confirms each call; a denial is final.\n" +
				" * Canonical MCP tool: t.tool\n * @title Refund\n * @remarks destructive, not idempotent, open-world\n" +
				" * @annotations readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true\n */\n"},
		{"name that needs quoting", Function{Name: "get weather */", OutputSchema: out},
			"/** Canonical MCP tool: \"get weather *\\/\" */\n"},
		{"name with dashes and slashes", Function{Name: "fs/read-file:v2", OutputSchema: out},
			"/** Canonical MCP tool: fs/read-file:v2 */\n"},
		{"both types widened", Function{Name: "t.tool", InputSchema: json.RawMessage(`{"not":{}}`), OutputSchema: json.RawMessage(`{"$ref":"other.json"}`)},
			"/**\n * Canonical MCP tool: t.tool\n * " + widenedNote2 + "\n */\n"},
		{"input widened", Function{Name: "t.tool", InputSchema: json.RawMessage(`{"type":"object","properties":{"a":{"$ref":"#/nowhere"}}}`), OutputSchema: out},
			"/**\n * Canonical MCP tool: t.tool\n * " + fmt.Sprintf(widenedNote, "input") + "\n */\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out := DeclareModule(Module{Specifier: "m", Tools: []ModuleTool{{Export: "f", Function: tt.fn}}})
			_, doc, _ := strings.Cut(out, "declare module \"m\" {\n")
			doc, _, _ = strings.Cut(doc, "export function f(")
			doc = strings.TrimSuffix(doc, "  ")
			lines := strings.SplitAfter(doc, "\n")
			for i, l := range lines {
				lines[i] = strings.TrimPrefix(l, "  ")
			}
			if got := strings.Join(lines, ""); got != tt.want {
				t.Errorf("comment\n%q\nwant\n%q", got, tt.want)
			}
		})
	}
}

// TestDeclareModuleExportNames checks that every export name is declared
// in a form that compiles: a plain function where the name can be a
// function's, an export clause for reserved words and other names.
func TestDeclareModuleExportNames(t *testing.T) {
	tests := []struct {
		export string
		want   string // the lines declaring the function, without the module's indentation
	}{
		{"get_order", "export function get_order(input?: Record<string, never>): Promise<unknown>;\n"},
		{"$price", "export function $price(input?: Record<string, never>): Promise<unknown>;\n"},
		{"café", "export function café(input?: Record<string, never>): Promise<unknown>;\n"},
		{"type", "export function type(input?: Record<string, never>): Promise<unknown>;\n"},
		{"enum", "function T$call(input?: Record<string, never>): Promise<unknown>;\nexport { T$call as enum };\n"},
		{"catch", "function T$call(input?: Record<string, never>): Promise<unknown>;\nexport { T$call as catch };\n"},
		{"interface", "function T$call(input?: Record<string, never>): Promise<unknown>;\nexport { T$call as interface };\n"},
		{"eval", "function T$call(input?: Record<string, never>): Promise<unknown>;\nexport { T$call as eval };\n"},
		{"get-order", "function T$call(input?: Record<string, never>): Promise<unknown>;\nexport { T$call as \"get-order\" };\n"},
		{"1st", "function T$call(input?: Record<string, never>): Promise<unknown>;\nexport { T$call as \"1st\" };\n"},
		{"", "function T$call(input?: Record<string, never>): Promise<unknown>;\nexport { T$call as \"\" };\n"},
	}
	for _, tt := range tests {
		t.Run(tt.export, func(t *testing.T) {
			out := DeclareModule(Module{Specifier: "m", Tools: []ModuleTool{{Export: tt.export, Function: Function{Name: "t"}}}})
			_, decl, _ := strings.Cut(out, "\n   */\n")
			decl, _, _ = strings.Cut(decl, "  /** This module's server")
			decl = strings.ReplaceAll(decl, "\n  ", "\n")
			decl = strings.TrimPrefix(decl, "  ")
			if decl != tt.want {
				t.Errorf("declaration\n%s\nwant\n%s", decl, tt.want)
			}
		})
	}
	t.Run("local name taken by an export", func(t *testing.T) {
		out := DeclareModule(Module{Specifier: "m", Tools: []ModuleTool{
			{Export: "T$call", Function: Function{Name: "x"}},
			{Export: "enum", Function: Function{Name: "t"}},
			{Export: "class", Function: Function{Name: "t.class"}},
		}})
		for _, want := range []string{
			"\n  export function T$call(",
			"\n  function T$call_2(input?: Record<string, never>): Promise<unknown>;\n  export { T$call_2 as enum };\n",
			"\n  function T_Class$call(input?: Record<string, never>): Promise<unknown>;\n  export { T_Class$call as class };\n",
		} {
			if !strings.Contains(out, want) {
				t.Errorf("declarations lack %q:\n%s", want, out)
			}
		}
	})
}

// TestDeclareModuleTypeNames checks that the type names of one module's
// tools never clash, even when two tools share a canonical name.
func TestDeclareModuleTypeNames(t *testing.T) {
	in := json.RawMessage(`{"type":"object","properties":{"n":{"$ref":"#/$defs/N"}},"required":["n"],"$defs":{"N":{"type":"number"}}}`)
	out := DeclareModule(Module{Specifier: "m", Tools: []ModuleTool{
		{Export: "a", Function: Function{Name: "x.get", InputSchema: in}},
		{Export: "b", Function: Function{Name: "x.get", InputSchema: in}},
		{Export: "c", Function: Function{Name: "x.list", InputSchema: in}},
	}})
	for _, want := range []string{
		"export function a(input: X_GetInput)", "type X_GetInput = { n: X_Get$N };", "type X_Get$N = number;",
		"export function b(input: X_Get_2Input)", "type X_Get_2Input = { n: X_Get_2$N };", "type X_Get_2$N = number;",
		"export function c(input: X_ListInput)", "type X_ListInput = { n: X_List$N };", "type X_List$N = number;",
	} {
		if !strings.Contains(out, "\n  "+want) {
			t.Errorf("declarations lack %q:\n%s", want, out)
		}
	}
}

// TestDeclareModuleLimits checks that a module stays bounded however many
// large schemas its tools have, and still declares every tool.
func TestDeclareModuleLimits(t *testing.T) {
	var big strings.Builder
	big.WriteString(`{"type":"object","properties":{`)
	for i := range 2000 {
		if i > 0 {
			big.WriteByte(',')
		}
		fmt.Fprintf(&big, `"property_with_a_long_name_%d":{"type":"string","description":"Some words about property %d."}`, i, i)
	}
	big.WriteString(`}}`)
	m := Module{Specifier: "@codemode/servers/big"}
	const tools = 8
	for i := range tools {
		m.Tools = append(m.Tools, ModuleTool{Export: fmt.Sprintf("tool_%d", i), Function: Function{
			Name:        fmt.Sprintf("big.tool_%d", i),
			InputSchema: json.RawMessage(big.String()),
		}})
	}
	out := DeclareModule(m)
	if limit := maxModuleOutput + tools*2000; len(out) > limit {
		t.Errorf("DeclareModule returned %d bytes, more than %d", len(out), limit)
	}
	for i := range tools {
		base := TypeName(m.Tools[i].Name)
		if want := fmt.Sprintf("\n  export function tool_%d(input?: %sInput): Promise<unknown>;\n", i, base); !strings.Contains(out, want) {
			t.Errorf("declarations lack %q", want)
		}
	}
	omitted := fmt.Sprintf("input schema not rendered: the module's declarations would exceed %d bytes", maxModuleOutput)
	if !strings.Contains(out, omitted) {
		t.Errorf("no tool's types were left out")
	}
	if !strings.Contains(out, "property_with_a_long_name_1999") {
		t.Errorf("no tool's types were rendered")
	}
	last := out[strings.LastIndex(out, "export function"):]
	if !strings.Contains(last, omitted) {
		t.Errorf("the last tool's types were rendered past the limit:\n%.500s", last)
	}
}

func TestIsIdentifierName(t *testing.T) {
	for _, tc := range []struct {
		s            string
		name, inDecl bool
	}{
		{"a", true, true}, {"_a1", true, true}, {"$", true, true}, {"café", true, true}, {"π", true, true},
		{"x\u200d", true, true}, {"日本", true, true},
		{"enum", true, false}, {"class", true, false}, {"await", true, false}, {"arguments", true, false}, {"yield", true, false},
		{"let", true, false}, {"static", true, false}, {"public", true, false},
		{"", false, false}, {"1a", false, false}, {"a-b", false, false}, {"a b", false, false}, {"\u200da", false, false},
		{"a\xff", false, false}, {"a.b", false, false}, {"x*/", false, false},
	} {
		if got := isIdentifierName(tc.s); got != tc.name {
			t.Errorf("isIdentifierName(%q) = %v", tc.s, got)
		}
		if got := isBindingIdent(tc.s); got != tc.inDecl {
			t.Errorf("isBindingIdent(%q) = %v", tc.s, got)
		}
	}
}

// TestFixedModules checks that the declarations of the fixed modules export
// what spec §4 and §7 require.
func TestFixedModules(t *testing.T) {
	tests := []struct {
		name, text string
		wants      []string
	}{
		{"discovery", DiscoveryModule, []string{
			"declare module \"@codemode/discovery\" {\n",
			"export const specVersion: string;",
			"export function listServers(): Promise<ServerInfo[]>;",
			"export function describeServer(serverId: string): Promise<ServerDescription>;",
			"export function listTools(serverId: string, options?: ListToolsOptions): Promise<ToolDefinition[]>;",
			"export function getTool(serverId: string, toolName: string): Promise<ToolDefinition>;",
			"export function searchTools(query: string, options?: SearchToolsOptions): Promise<SearchResults>;",
			"export interface ServerInfo {", "serverId: string;", "serverName: string;", "capabilities?: string[];",
			"export interface ServerDescription extends ServerInfo {", "description?: string;", "version?: string;",
			"toolCount: number;", "modulePath: string;",
			"export interface ToolSummary {", "toolName: string;", "exportName: string;", "annotations?: ToolAnnotations;",
			"export interface ToolDefinition extends ToolSummary {", "inputSchema?: Record<string, unknown>;",
			"outputSchema?: Record<string, unknown>;", "declaration?: string;",
			"export interface SearchResults {", "query: string;", "results: Array<ToolDefinition & { serverId: string }>;",
			"export interface ListToolsOptions {", "export interface SearchToolsOptions {", "detail?: DetailLevel;",
			"limit?: number;", `export type DetailLevel = "name" | "description" | "full";`,
		}},
		{"errors", ErrorsModule, []string{
			"declare module \"@codemode/errors\" {\n",
			"export class CodemodeError extends Error {", "readonly hint: string;", "readonly code: string;",
			"export class SchemaValidationError extends CodemodeError {", "readonly path: string;",
			"readonly expected: string;", "readonly received: string;", "readonly example?: unknown;",
			"export class ToolNotFoundError extends CodemodeError {",
			"export class ServerNotFoundError extends CodemodeError {",
			"export class ToolCallError extends CodemodeError {", "readonly retryable: boolean;", "readonly result?: unknown;",
			"export class AuthenticationError extends ToolCallError {}",
			"export class SandboxLimitError extends CodemodeError {", "readonly limit: string;",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, want := range tt.wants {
				if !strings.Contains(tt.text, want) {
					t.Errorf("declaration lacks %q", want)
				}
			}
			if !strings.HasSuffix(tt.text, "}\n") {
				t.Errorf("declaration does not end with the module's closing brace and a newline")
			}
		})
	}
}
