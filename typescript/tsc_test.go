package typescript

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// realisticTools are tool schemas shaped like those of real MCP servers.
var realisticTools = []Function{
	{
		Name:        "github.create_issue",
		Title:       "Create issue",
		Description: "Open a new issue in a GitHub repository.",
		Effects:     Effects{ReadOnly: ptr(false), OpenWorld: ptr(true)},
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"owner": {"type": "string", "description": "Repository owner"},
				"repo": {"type": "string", "description": "Repository name"},
				"title": {"type": "string", "minLength": 1},
				"body": {"type": "string"},
				"labels": {"type": "array", "items": {"type": "string"}, "uniqueItems": true},
				"assignees": {"type": "array", "items": {"type": "string"}},
				"milestone": {"type": ["integer", "null"]}
			},
			"required": ["owner", "repo", "title"],
			"additionalProperties": false
		}`),
		OutputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"number": {"type": "integer"},
				"url": {"type": "string", "format": "uri"},
				"state": {"enum": ["open", "closed"]},
				"user": {"$ref": "#/$defs/User"},
				"assignees": {"type": "array", "items": {"$ref": "#/$defs/User"}}
			},
			"required": ["number", "url", "state"],
			"$defs": {"User": {"type": "object", "properties": {"login": {"type": "string"}, "id": {"type": "integer"}}, "required": ["login"]}}
		}`),
	},
	{
		Name:         "filesystem/read-file",
		Description:  "Read a text file.",
		Effects:      Effects{ReadOnly: ptr(true)},
		InputSchema:  json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"},"encoding":{"type":"string","enum":["utf-8","base64"],"default":"utf-8"},"range":{"type":"array","prefixItems":[{"type":"integer"},{"type":"integer"}],"items":false,"minItems":2}},"required":["path"]}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"content":{"type":"string"},"size":{"type":"integer"}},"required":["content","size"]}`),
	},
	{
		Name:        "search.query",
		Description: "Search documents with filters.",
		InputSchema: json.RawMessage(`{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type": "object",
			"properties": {
				"q": {"type": "string"},
				"filter": {"$ref": "#/$defs/Filter"},
				"limit": {"type": "integer", "minimum": 1, "maximum": 100, "default": 10},
				"sort": {"oneOf": [{"const": "relevance"}, {"type": "object", "properties": {"field": {"type": "string"}, "desc": {"type": "boolean"}}, "required": ["field"]}]}
			},
			"required": ["q"],
			"$defs": {
				"Filter": {
					"anyOf": [
						{"type": "object", "properties": {"and": {"type": "array", "items": {"$ref": "#/$defs/Filter"}}}, "required": ["and"], "additionalProperties": false},
						{"type": "object", "properties": {"or": {"type": "array", "items": {"$ref": "#/$defs/Filter"}}}, "required": ["or"], "additionalProperties": false},
						{"type": "object", "properties": {"field": {"type": "string"}, "equals": {"type": ["string", "number", "boolean", "null"]}}, "required": ["field", "equals"], "additionalProperties": false}
					]
				}
			}
		}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"hits":{"type":"array","items":{"type":"object","properties":{"id":{"type":"string"},"score":{"type":"number"},"fields":{"type":"object","additionalProperties":true}},"required":["id","score"]}},"total":{"type":"integer"}},"required":["hits"]}`),
	},
	{
		Name:             "kv.put",
		Description:      "Store a JSON value.",
		Effects:          Effects{Idempotent: ptr(true), Destructive: ptr(true)},
		RequiresApproval: true,
		InputSchema:      json.RawMessage(`{"type":"object","properties":{"key":{"type":"string","pattern":"^[a-z0-9/]+$"},"value":{"$ref":"#/definitions/Json"},"ttl":{"type":"number","nullable":true}},"required":["key","value"],"definitions":{"Json":{"anyOf":[{"type":"null"},{"type":"boolean"},{"type":"number"},{"type":"string"},{"type":"array","items":{"$ref":"#/definitions/Json"}},{"type":"object","additionalProperties":{"$ref":"#/definitions/Json"}}]}}}`),
	},
}

// realisticChecks call the realistic tools the way a plan would, so that
// compiling them proves the overloads accept good input and reject bad.
const realisticChecks = `
async function _checkGithub(): Promise<string> {
  const issue = await callTool("github.create_issue", { owner: "o", repo: "r", title: "Bug", labels: ["bug"], milestone: null });
  const n: number = issue.number;
  const who: string | undefined = issue.user?.login;
  // @ts-expect-error title is required
  await callTool("github.create_issue", { owner: "o", repo: "r" });
  // @ts-expect-error state is "open" or "closed"
  const s: "merged" = issue.state;
  return issue.url + n + who + s;
}
async function _checkFilesystem(): Promise<number> {
  const file = await callTool("filesystem/read-file", { path: "/etc/hosts", range: [0, 10] });
  // @ts-expect-error encoding is an enum
  await callTool("filesystem/read-file", { path: "x", encoding: "latin1" });
  return file.size + file.content.length;
}
async function _checkSearch(): Promise<number> {
  const r = await callTool("search.query", {
    q: "invoices",
    filter: { and: [{ field: "status", equals: "paid" }, { or: [{ field: "total", equals: 3 }] }] },
    sort: { field: "date", desc: true },
  });
  await callTool("search.query", { q: "x", sort: "relevance" });
  // @ts-expect-error sort is "relevance" or an object
  await callTool("search.query", { q: "x", sort: "date" });
  return r.hits.length + (r.total ?? 0);
}
async function _checkKV(): Promise<unknown> {
  await callTool("kv.put", { key: "a/b", value: { nested: [1, "two", null, { deep: true }] }, ttl: null });
  // @ts-expect-error undefined is not JSON
  await callTool("kv.put", { key: "a", value: undefined });
  return callTool("kv.put", { key: "a", value: 1 });
}
async function _checkBilling(): Promise<number> {
  const r = await callTool("billing.create_invoice", { customerId: "c1", amount: 3 });
  // @ts-expect-error customerId is required
  await callTool("billing.create_invoice", { amount: 3 });
  // @ts-expect-error no such tool
  await callTool("billing.delete_invoice", {});
  return r.total;
}
`

// tscCommand finds a TypeScript compiler: $CODECALLTEST_TSC, then tsc on the
// PATH, then one npx can run without installing anything.
func tscCommand(t *testing.T) []string {
	t.Helper()
	if p := os.Getenv("CODECALLTEST_TSC"); p != "" {
		return []string{p}
	}
	if p, err := exec.LookPath("tsc"); err == nil {
		return []string{p}
	}
	if npx, err := exec.LookPath("npx"); err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		out, err := exec.CommandContext(ctx, npx, "--no-install", "tsc", "--version").Output()
		if err == nil && strings.HasPrefix(string(out), "Version ") {
			return []string{npx, "--no-install", "tsc"}
		}
	}
	t.Skip("no TypeScript compiler found; to run this check, install one outside the repository " +
		"(mkdir -p /tmp/tsc && cd /tmp/tsc && npm install typescript@5.9.3) and set " +
		"CODECALLTEST_TSC=/tmp/tsc/node_modules/.bin/tsc, or put tsc on the PATH")
	return nil
}

// runTSC compiles files in dir under --strict, as ES2022 modules where they
// are modules, and fails the test with the compiler's output when they do
// not compile.
func runTSC(t *testing.T, tsc []string, dir string, files ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append(tsc[1:], "--strict", "--noEmit", "--lib", "es2022", "--target", "es2022", "--module", "es2022", "--pretty", "false")
	cmd := exec.CommandContext(ctx, tsc[0], append(args, files...)...)
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tsc %s: %v\n%s", strings.Join(files, " "), err, out)
	}
}

// TestTypeScriptCompiles writes every declaration the other tests render,
// realistic tools with calls against them, and randomly generated schemas
// into one file and compiles it with tsc --strict.
func TestTypeScriptCompiles(t *testing.T) {
	tsc := tscCommand(t)
	var decls strings.Builder
	names := map[string]bool{}
	declare := func(f Function) {
		if names[f.Name] {
			t.Fatalf("tool name %q declared twice", f.Name)
		}
		names[f.Name] = true
		decls.WriteString(Declare(f))
	}
	for _, tc := range declareCases {
		declare(tc.fn)
	}
	for _, f := range realisticTools {
		declare(f)
	}
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 300 {
		declare(Function{
			Name:         fmt.Sprintf("random.%s_%d", randomString(r), i),
			Description:  randomString(r),
			InputSchema:  randomSchema(t, r),
			OutputSchema: randomSchema(t, r),
		})
	}
	for i, tc := range typeOfCases {
		ts, err := TypeOf(json.RawMessage(tc.schema))
		if err != nil {
			t.Fatalf("TypeOf(%s): %v", tc.schema, err)
		}
		fmt.Fprintf(&decls, "type TypeOfCase%d = %s;\n", i, ts)
	}
	for i := range 300 {
		schema := randomSchema(t, r)
		ts, err := TypeOf(schema)
		if err != nil {
			t.Fatalf("TypeOf(%s): %v", schema, err)
		}
		fmt.Fprintf(&decls, "type TypeOfRandom%d = %s;\n", i, ts)
	}

	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("declarations.ts", decls.String()+realisticChecks)
	write("declarations.d.ts", decls.String())
	t.Run("ts", func(t *testing.T) { runTSC(t, tsc, dir, "declarations.ts") })
	t.Run("d.ts", func(t *testing.T) { runTSC(t, tsc, dir, "declarations.d.ts") })
}

// randomSchema returns a random schema mixing every feature the generator
// handles, including references that are recursive, circular, external or
// dangling, odd names and odd strings.
func randomSchema(t *testing.T, r *rand.Rand) json.RawMessage {
	t.Helper()
	root := map[string]any{}
	if s, ok := randomNode(r, 0).(map[string]any); ok && r.IntN(3) == 0 {
		root = s
	} else {
		root["type"] = "object"
		root["properties"] = randomProperties(r, 0)
		root["required"] = []string{"a", "b-c"}
	}
	defs, definitions := map[string]any{}, map[string]any{}
	for i := range 2 {
		defs[fmt.Sprintf("D%d", i)] = randomNode(r, 1)
		definitions[fmt.Sprintf("D%d", i+2)] = randomNode(r, 1)
	}
	root["$defs"], root["definitions"] = defs, definitions
	data, err := json.Marshal(root)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

var randomNames = []string{"a", "b-c", "1st", "__proto__", "constructor", "toString", "x y", "$ref", "*/", "class", "é", ""}

var randomStrings = []string{"", "x", "*/", "a\"b", "multi\nline", "\u2028", "back\\slash", "é", "${x}", "`tick`", "<tag>", "@tag"}

func randomString(r *rand.Rand) string { return randomStrings[r.IntN(len(randomStrings))] }

func randomValue(r *rand.Rand, depth int) any {
	switch n := r.IntN(8); {
	case n == 0:
		return nil
	case n == 1:
		return r.IntN(2) == 0
	case n == 2:
		return r.IntN(7) - 3
	case n == 3:
		return -1.5e-3
	case n == 4 && depth < 2:
		return []any{randomValue(r, depth+1), randomValue(r, depth+1)}
	case n == 5 && depth < 2:
		return map[string]any{randomNames[r.IntN(len(randomNames))]: randomValue(r, depth+1)}
	default:
		return randomString(r)
	}
}

func randomProperties(r *rand.Rand, depth int) map[string]any {
	props := map[string]any{}
	for range r.IntN(4) {
		props[randomNames[r.IntN(len(randomNames))]] = randomNode(r, depth+1)
	}
	return props
}

func randomNode(r *rand.Rand, depth int) any {
	if depth > 4 {
		return map[string]any{"type": "string"}
	}
	primitives := []string{"string", "number", "integer", "boolean", "null", "object", "array"}
	refs := []string{"#/$defs/D0", "#/$defs/D1", "#/definitions/D2", "#/definitions/D3", "#", "#/properties/a", "#/$defs/D0/anyOf/0", "https://example.com/x.json", "#/$defs/missing", "#anchor"}
	many := func() []any {
		var out []any
		for range 1 + r.IntN(3) {
			out = append(out, randomNode(r, depth+1))
		}
		return out
	}
	switch r.IntN(20) {
	case 0:
		return r.IntN(2) == 0
	case 1:
		return map[string]any{}
	case 2:
		return map[string]any{"type": primitives[r.IntN(len(primitives))]}
	case 3:
		return map[string]any{"type": []string{primitives[r.IntN(len(primitives))], primitives[r.IntN(len(primitives))], "null"}}
	case 4:
		return map[string]any{"enum": []any{randomValue(r, 0), randomValue(r, 0), randomValue(r, 0)}}
	case 5:
		return map[string]any{"const": randomValue(r, 0)}
	case 6, 7:
		s := map[string]any{"type": "object", "properties": randomProperties(r, depth), "required": []string{randomNames[r.IntN(len(randomNames))]}}
		switch r.IntN(4) {
		case 0:
			s["additionalProperties"] = false
		case 1:
			s["additionalProperties"] = true
		case 2:
			s["additionalProperties"] = randomNode(r, depth+1)
		}
		if r.IntN(3) == 0 {
			s["patternProperties"] = map[string]any{"^x-": randomNode(r, depth+1)}
		}
		return s
	case 8, 9:
		s := map[string]any{"type": "array"}
		switch r.IntN(4) {
		case 0:
			s["items"] = randomNode(r, depth+1)
		case 1:
			s["prefixItems"] = many()
			s["items"] = []any{false, true, randomNode(r, depth+1)}[r.IntN(3)]
		case 2:
			s["items"] = many()
			s["additionalItems"] = []any{false, randomNode(r, depth+1)}[r.IntN(2)]
		}
		s["minItems"] = r.IntN(3)
		if r.IntN(3) == 0 {
			s["maxItems"] = r.IntN(3)
		}
		return s
	case 10:
		return map[string]any{"anyOf": many()}
	case 11:
		return map[string]any{"oneOf": many(), "description": randomString(r)}
	case 12:
		return map[string]any{"allOf": many()}
	case 13, 14:
		return map[string]any{"$ref": refs[r.IntN(4)]}
	case 15:
		return map[string]any{"$ref": refs[r.IntN(len(refs))]}
	case 16:
		return map[string]any{"type": primitives[r.IntN(len(primitives))], "nullable": true}
	case 17:
		return map[string]any{"not": randomNode(r, depth+1), "if": map[string]any{}, "then": map[string]any{}}
	case 18:
		return map[string]any{"type": "string", "format": randomString(r), "description": randomString(r), "default": randomValue(r, 0), "examples": []any{randomValue(r, 0)}}
	default:
		return map[string]any{"$ref": refs[r.IntN(len(refs))], "type": "object", "properties": randomProperties(r, depth)}
	}
}

// moduleFeatureExports names the functions of the §6.2 cases in the module
// TestModulesCompile declares, so that its checks can call them.
var moduleFeatureExports = map[string]string{
	"enum":                         "enum_",
	"const":                        "const_",
	"oneOf":                        "one_of",
	"nullable":                     "nullable",
	"recursive object schema":      "recursive",
	"additionalProperties":         "additional_properties",
	"patternProperties":            "pattern_properties",
	"tuple with items as an array": "items_tuple",
	"tuple with prefixItems":       "prefix_items_tuple",
	"unrepresentable feature falls back to unknown with a warning": "unrepresentable",
}

// moduleChecks use the modules TestModulesCompile declares the way a plan
// would, so that compiling them proves the declarations accept good calls
// and reject bad ones.
const moduleChecks = `import * as shop from "@codemode/servers/shop";
import * as features from "@codemode/servers/features";
import * as exportNames from "@codemode/servers/export-names";
import { specVersion, listServers, describeServer, listTools, getTool, searchTools, type ToolDefinition } from "@codemode/discovery";
import {
  CodemodeError, SchemaValidationError, ToolNotFoundError, ServerNotFoundError,
  ToolCallError, AuthenticationError, SandboxLimitError,
} from "@codemode/errors";

export async function checkShop(): Promise<number> {
  const order = await shop.get_order({ orderId: "o1" });
  const status: "open" | "shipped" | "cancelled" = order.status;
  const quantity: number = order.lines[0].quantity;
  const note: string | null | undefined = order.note;
  // @ts-expect-error orderId is required
  await shop.get_order({});
  // @ts-expect-error get_order needs an input
  await shop.get_order();
  await shop.list_orders();
  await shop.list_orders({ limit: 5 });
  await shop.ping();
  await shop.ping({});
  // @ts-expect-error ping takes no arguments
  await shop.ping({ x: 1 });
  await shop.version();
  const values: string[] = (await shop.enum("status")).values;
  // @ts-expect-error the input of enum is a string
  await shop.enum({ field: "status" });
  // @ts-expect-error cancel_order's input allows no other properties
  await shop.cancel_order({ orderId: "o1", extra: true });
  const cancelled: unknown = await shop.cancel_order({ orderId: "o1", reason: "fraud" });
  // @ts-expect-error the function behind a renamed export is not exported
  shop.Shop_Enum$call;
  const meta = shop.__meta__.serverId + shop.__meta__.serverName + (shop.__meta__.serverVersion ?? "") +
    shop.__meta__.tools.map((t) => t.toolName + t.exportName + (t.description ?? "")).join();
  return quantity + status.length + (note?.length ?? 0) + values.length + meta.length + String(cancelled).length;
}

export async function checkFeatures(): Promise<unknown[]> {
  const e: "open" | "closed" | null = await features.enum_();
  const c = await features.const_();
  const version: 2 = c.version;
  // @ts-expect-error kind is the constant "order"
  const kind: "invoice" = c.kind;
  const o = await features.one_of();
  const sku: string = typeof o === "string" ? o : o.sku;
  const n = await features.nullable();
  const login: string | undefined = n.owner?.login;
  const note: string | null = n.note;
  const cat = await features.recursive();
  const grandparent: string | undefined = cat.children?.[0]?.parent?.parent?.name;
  const ap = await features.additional_properties();
  const label: string | undefined = ap.labels?.["x"];
  // @ts-expect-error a closed object takes no other properties
  const closed: NonNullable<typeof ap.closed> = { a: "x", b: "y" };
  const pp = await features.pattern_properties();
  const extension: string | number = pp["x-trace"];
  const t1 = await features.items_tuple();
  const first: number = t1[0];
  // @ts-expect-error a tuple of at most three elements
  const fourth = t1[3];
  const t2 = await features.prefix_items_tuple();
  const flag: boolean = t2[2];
  // @ts-expect-error the second element is a number
  const second: string = t2[1];
  const u = await features.unrepresentable();
  const rule: unknown = u.rule;
  return [e, version, kind, sku, login, note, grandparent, label, closed, extension, first, fourth, flag, second, rule];
}

export async function checkExportNames(): Promise<unknown[]> {
  return [await exportNames.enum(), await exportNames.catch(), await exportNames["get-order"](), await exportNames.café()];
}

export async function checkDiscovery(): Promise<number> {
  const version: string = specVersion;
  const servers = await listServers();
  const d = await describeServer(servers[0].serverId);
  const tools: ToolDefinition[] = await listTools(d.serverId, { detail: "full" });
  await listTools(d.serverId);
  // @ts-expect-error detail is one of three levels
  await listTools(d.serverId, { detail: "everything" });
  const tool = await getTool("shop", "get_order");
  const found = await searchTools("orders", { serverId: "shop", limit: 5, detail: "name" });
  await searchTools("orders");
  const where: string = found.results[0].serverId + found.results[0].toolName + found.query;
  const readOnly: boolean | undefined = tool.annotations?.readOnlyHint;
  const schema: Record<string, unknown> | undefined = tool.inputSchema ?? tool.outputSchema;
  return version.length + d.toolCount + d.modulePath.length + d.serverName.length + (d.description ?? d.version ?? "").length +
    tools.length + (tool.declaration?.length ?? 0) + where.length + (d.capabilities?.length ?? 0) + Number(readOnly) + Number(schema) +
    tool.exportName.length + (tool.description?.length ?? 0);
}

export async function checkErrors(): Promise<string> {
  try {
    await shop.get_order({ orderId: "x" });
  } catch (e) {
    if (e instanceof SchemaValidationError) {
      return e.path + e.expected + e.received + e.toolName + e.exportName + e.serverId + String(e.example) + e.hint;
    }
    if (e instanceof AuthenticationError) return e.code + String(e.retryable) + String(e.result) + e.toolName;
    if (e instanceof ToolCallError) return e.toolName + e.exportName + e.serverId;
    if (e instanceof ToolNotFoundError) return e.serverId + e.toolName;
    if (e instanceof ServerNotFoundError) return e.serverId;
    if (e instanceof SandboxLimitError) return e.limit;
    if (e instanceof CodemodeError) return e.hint + e.code + e.message;
  }
  const err: CodemodeError = new AuthenticationError("denied");
  const base: Error = err;
  return err.hint + base.message;
}
`

// testExportName derives an export identifier from a tool name the way a
// host might: characters that cannot be in an identifier become "_", and a
// name that starts with a digit gets a leading "_". Reserved words are kept,
// so that the module declares them through an export clause.
func testExportName(name string) string {
	var b strings.Builder
	for i, r := range name {
		switch {
		case r == '$' || r == '_' || idStart(r), i > 0 && idContinue(r):
			b.WriteRune(r)
		case i == 0 && r >= '0' && r <= '9':
			b.WriteString("_")
			b.WriteRune(r)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// moduleOf returns a module exporting fs, with export names derived from
// the tool names and made unique.
func moduleOf(specifier string, fs ...Function) Module {
	m := Module{Specifier: specifier, ServerID: specifier, ServerName: specifier}
	used := map[string]bool{}
	for _, f := range fs {
		name := testExportName(f.Name)
		for i := 2; used[name]; i++ {
			name = testExportName(f.Name) + "__" + strconv.Itoa(i)
		}
		used[name] = true
		m.Tools = append(m.Tools, ModuleTool{Export: name, Function: f})
	}
	return m
}

// TestModulesCompile writes the fixed modules and server modules of every
// kind the other tests render (the spec's schema features, input shapes,
// export names, realistic and random tools) into one script, and compiles
// it with tsc --strict with code that imports and calls them; then the same
// declarations alone as a .d.ts file.
func TestModulesCompile(t *testing.T) {
	tsc := tscCommand(t)
	var decls strings.Builder
	decls.WriteString(DiscoveryModule)
	decls.WriteString(ErrorsModule)
	decls.WriteString(DeclareModule(shopModule))

	features := Module{Specifier: "@codemode/servers/features", ServerID: "features", ServerName: "Features"}
	var featureInputs []Function
	for i, tc := range moduleFeatureCases {
		export, ok := moduleFeatureExports[tc.name]
		if !ok {
			export = fmt.Sprintf("feature_%d", i)
		}
		features.Tools = append(features.Tools, ModuleTool{Export: export, Function: Function{
			Name:         fmt.Sprintf("features.case_%c", 'a'+i),
			OutputSchema: json.RawMessage(tc.schema),
		}})
		featureInputs = append(featureInputs, Function{Name: fmt.Sprintf("feature_inputs.case_%c", 'a'+i), InputSchema: json.RawMessage(tc.schema)})
	}
	decls.WriteString(DeclareModule(features))
	decls.WriteString(DeclareModule(moduleOf("@codemode/servers/feature-inputs", featureInputs...)))

	var inputs []Function
	for i, tc := range moduleInputCases {
		inputs = append(inputs, Function{Name: fmt.Sprintf("inputs.case%d", i), InputSchema: json.RawMessage(tc.schema)})
	}
	decls.WriteString(DeclareModule(moduleOf("@codemode/servers/inputs", inputs...)))

	names := Module{Specifier: "@codemode/servers/export-names"}
	for _, export := range []string{"get_order", "$price", "café", "type", "enum", "catch", "interface", "eval", "arguments", "let", "get-order", "1st", "", "x y"} {
		names.Tools = append(names.Tools, ModuleTool{Export: export, Function: Function{Name: "names." + export}})
	}
	names.Tools = append(names.Tools, ModuleTool{Export: "Names_Enum$call", Function: Function{Name: "names.enum"}})
	decls.WriteString(DeclareModule(names))

	var declared []Function
	for _, tc := range declareCases {
		declared = append(declared, tc.fn)
	}
	declared = append(declared, realisticTools...)
	decls.WriteString(DeclareModule(moduleOf("@codemode/servers/declared", declared...)))

	var cases []Function
	for i, tc := range typeOfCases {
		cases = append(cases, Function{Name: fmt.Sprintf("cases.case%d", i), InputSchema: json.RawMessage(tc.schema), OutputSchema: json.RawMessage(tc.schema)})
	}
	decls.WriteString(DeclareModule(moduleOf("@codemode/servers/type-of-cases", cases...)))

	r := rand.New(rand.NewPCG(3, 4))
	var random []Function
	for i := range 200 {
		random = append(random, Function{
			Name:             fmt.Sprintf("%s.%d", randomString(r), i),
			Title:            randomString(r),
			Description:      randomString(r),
			InputSchema:      randomSchema(t, r),
			OutputSchema:     randomSchema(t, r),
			Effects:          Effects{ReadOnly: ptr(r.IntN(2) == 0), OpenWorld: ptr(r.IntN(2) == 0)},
			RequiresApproval: r.IntN(2) == 0,
		})
	}
	decls.WriteString(DeclareModule(moduleOf("@codemode/servers/random", random...)))

	dir := t.TempDir()
	write := func(name, text string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("modules.ts", decls.String())
	write("checks.ts", moduleChecks)
	write("modules.d.ts", decls.String())
	t.Run("ts", func(t *testing.T) { runTSC(t, tsc, dir, "modules.ts", "checks.ts") })
	t.Run("d.ts", func(t *testing.T) { runTSC(t, tsc, dir, "modules.d.ts") })
}
