package attacks

// codeModeSkipList are the cases that do not run through codemode.run,
// with the reason.
var codeModeSkipList = []struct {
	why string
	ids []string
}{
	{"codemode.run takes no context and Code Mode has no codecallContext", []string{
		"prototype-pollution/codecallContext-write", "prototype-pollution/codecallContext-deep-write",
		"prototype-pollution/codecallContext-reassigned", "prototype-pollution/codecallContext-defineProperty",
		"prototype-pollution/codecallContext-delete", "prototype-pollution/codecallContext-setPrototypeOf",
		"prototype-pollution/context-proto-key", "deep-nesting/context-deep", "sanity/codecallContext-read",
	}},
	{"codemode.run takes no allowedTools", []string{
		"tool-call-floods/allowedTools-narrows", "tool-call-floods/allowedTools-glob-narrows",
		"tool-call-floods/allowedTools-getTool", "tool-call-floods/allowedTools-cannot-widen", "tool-call-floods/allowedTools-star",
	}},
	{"the plan calls a spelling of test.secret it reads from codecallContext; in Code Mode a tool is reached only " +
		"through its export, and the module exports nothing for test.secret (codemode-imports/excluded-tool-*)", []string{
		"tool-call-floods/secret-variant-upper-case", "tool-call-floods/secret-variant-leading-space",
		"tool-call-floods/secret-variant-trailing-space", "tool-call-floods/secret-variant-trailing-NUL",
		"tool-call-floods/secret-variant-trailing-newline", "tool-call-floods/secret-variant-cyrillic-e",
		"tool-call-floods/secret-variant-one-dot-leader", "tool-call-floods/secret-variant-zero-width-space",
		"tool-call-floods/secret-variant-glob", "tool-call-floods/secret-variant-fullwidth",
	}},
	{"getTool is CodeCall's synchronous lookup; Code Mode's are @codemode/discovery's and __meta__ " +
		"(codemode-imports/discovery-*, codemode-namespaces/meta-*)", []string{
		"prototype-pollution/getTool-result-mutated", "prototype-pollution/getTool-schema-loosened",
		"tool-call-floods/getTool-secret", "sanity/getTool",
	}},
	{"mcpLog and mcpNotify are CodeCall's; Code Mode has only the console, which the output cases flood", []string{
		"output-floods/mcpLog-flood", "output-floods/mcpNotify-flood",
	}},
	{"it attacks codecall.execute's function-body wrapper; a module has none, and the harness's own wrapper is no wall", []string{
		"global-tampering/wrapper-escape", "global-tampering/wrapper-escape-comment",
	}},
}

// codeModeSkips is codeModeSkipList by id.
var codeModeSkips = func() map[string]string {
	m := map[string]string{}
	for _, s := range codeModeSkipList {
		for _, id := range s.ids {
			m[id] = s.why
		}
	}
	return m
}()

// codeModeOverrides are the cases whose Code Mode outcome is not the one
// codeModeWant maps theirs to, by id, each with the reason.
var codeModeOverrides = map[string]cmOverride{
	// Code Mode has no getTool, mcpLog or codecallContext: the same
	// chains start at a binding of the test module, or at its __meta__.
	"constructor-chain/getTool-constructor": {
		script: `return $cm_test.echo.constructor("return 'PW'+'NED'")()`},
	"constructor-chain/codecallContext-constructor-constructor": {
		script: `return $cm_test.__meta__.constructor.constructor("return 'PW'+'NED'")()`},
	"constructor-chain/new-computed": {
		script: `const F = $cm_test.echo['constr' + 'uctor']; return new F("return 'PW'+'NED'")()`},
	"constructor-chain/destructured-computed": {
		script: `const {['constr' + 'uctor']: F} = $cm_test.count; return F("return 'PW'+'NED'")()`},
	"constructor-chain/codecallContext-computed": {
		script: `const k = 'constr' + 'uctor'; return $cm_test.__meta__[k][k]("return 'PW'+'NED'")()`},
	"global-tampering/injected-functions-are-plain": {
		script: `return [$cm_test.echo, $cm_test.count, $cm_test.fail].map(f => [typeof f, Object.keys(f).length, Object.getOwnPropertyNames(f).filter(n => n !== 'length' && n !== 'name')])`,
		want:   wantPtr(ok(`[["function",0,[]],["function",0,[]],["function",0,[]]]`))},

	// A single text block is the text (§5.3.2): the host parses no JSON
	// text, so what a plan does to JSON.parse cannot reach it, and a
	// __proto__ key in a text result reaches the plan only through its own
	// JSON.parse, which makes it an own property.
	"prototype-pollution/json-parse-replaced":           {want: wantPtr(ok(`"{\"a\":1}"`))},
	"global-tampering/delete-builtin-methods-then-call": {want: wantPtr(ok(`"{\"a\":[1]}"`))},
	"sanity/text-results":                               {want: wantPtr(ok(`["{\"a\":1}", "hello"]`))},
	"prototype-pollution/proto-key-in-result": {
		script: `const r = JSON.parse(await callTool('test.json', {text: '{"__proto__": {"polluted": "yes"}, "a": 1}'}));
return [r.polluted === undefined, ({}).polluted === undefined, Object.getPrototypeOf(r) === Object.getPrototypeOf({}), r.a]`},
	"prototype-pollution/nested-proto-key-in-result": {
		script: `const r = JSON.parse(await callTool('test.json', {text: '{"x": {"__proto__": {"polluted": "yes"}}}'}));
return [r.x.polluted === undefined, ({}).polluted === undefined, Object.getPrototypeOf(r.x) === Object.getPrototypeOf({})]`},

	// The answer carries no tool input (§3.3.2 keeps inputs out of the
	// trace, and the diagnostic has no field for one).
	"sanity/uncaught-tool-error": {noCheck: true},

	// globalThis is a module's (§3.5): the plan's global object holds the
	// locked Function and eval, the result slot, the console and the
	// modules, nothing of the host.
	"global-tampering/globalThis": {
		want: wantPtr(ok(`["Function","eval","__codemode_result__","console","__codemode_modules__"]`))},

	// Proxy is a module's (§3.5), so the runtime, not the validator, is
	// the wall: each trap runs once, under the limits; the binding refuses
	// a __proto__ key, a revoked proxy and an array past the element cap;
	// the proxy depth cap stops a chain.
	"proxy/input-get-trap":           {want: wantPtr(ok(`{"n":1,"r":{"a":1}}`)), check: toolSaw(`{"a":1}`)},
	"proxy/ownKeys-proto":            {want: &typeError},
	"proxy/revoked-input":            {want: &typeError},
	"proxy/result-ownKeys-loops":     {want: &timedOut},
	"proxy/result-get-trap-recurses": {want: &stackExceeded},
	"proxy/input-array-length-lie":   {want: &rangeError},
	"proxy/typeof-Proxy":             {want: wantPtr(ok(`"function"`))},
	"proxy/shadowed-Proxy":           {want: wantPtr(ok(`1`))},
	"deep-nesting/proxy-chain-deep":  {want: &rangeError},
	// The shim's own refusal: a tool name is a string.
	"proxy/proxy-tool-name": {want: &typeError},

	// The linker's parser refuses an escaped keyword as a syntax error
	// before the validator sees it.
	"unicode/escaped-keyword": {want: &syntaxErr},
	// The text of a deep result is not parsed (§5.3.2), so the bridge's
	// depth cap on parsed results does not apply: the plan gets the text.
	"deep-nesting/tool-result-1000": {want: wantPtr(ok(""))},
}
