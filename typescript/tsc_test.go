package typescript

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
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

// runTSC compiles files in dir under --strict and fails the test with the
// compiler's output when they do not compile.
func runTSC(t *testing.T, tsc []string, dir string, files ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	args := append(tsc[1:], "--strict", "--noEmit", "--lib", "es2022", "--target", "es2022", "--pretty", "false")
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
