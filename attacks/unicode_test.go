package attacks

import (
	"testing"
)

// unicodeCases spell banned names with escapes and look-alike characters,
// and hide code direction with BiDi controls. The validator judges names
// as the parser decodes them, and refuses invisible or direction-changing
// characters outright.
var unicodeCases = []attackCase{
	// Wall: validator, eval spelled \u0065val.
	{name: "escaped-eval-u4", cat: catUnicode,
		script: `return \u0065val("'PW'+'NED'")`, want: bannedIdentifier},
	// Wall: validator, eval spelled \u{65}val.
	{name: "escaped-eval-braces", cat: catUnicode,
		script: `return \u{65}val("'PW'+'NED'")`, want: bannedIdentifier},
	// Wall: validator, eval spelled e\u0076al.
	{name: "escaped-eval-middle", cat: catUnicode,
		script: `return e\u0076al("'PW'+'NED'")`, want: bannedIdentifier},
	// Wall: validator, Function spelled with an escape.
	{name: "escaped-Function", cat: catUnicode,
		script: `return Fun\u0063tion("return 'PW'+'NED'")()`, want: bannedIdentifier},
	// Wall: validator, require spelled with an escape.
	{name: "escaped-require", cat: catUnicode,
		script: `return \u0072equire('fs')`, want: bannedIdentifier},
	// Wall: validator, globalThis spelled with an escape.
	{name: "escaped-globalThis", cat: catUnicode,
		script: `return glob\u0061lThis`, want: bannedIdentifier},
	// Wall: validator, .constructor spelled with an escape.
	{name: "escaped-constructor-member", cat: catUnicode,
		script: `return (x => x).\u0063onstructor("return 'PW'+'NED'")()`, want: bannedMember},
	// Wall: validator, .__proto__ spelled with an escape.
	{name: "escaped-proto-member", cat: catUnicode,
		script: `return ({}).\u005f_proto__`, want: bannedMember},
	// Wall: validator, a string key with an escape is still "constructor".
	{name: "escaped-constructor-string-key", cat: catUnicode,
		script: `return (x => x)['\u0063onstructor']("return 'PW'+'NED'")()`, want: bannedMember},
	// Wall: validator, a string key with a hex escape.
	{name: "hex-escaped-constructor-string-key", cat: catUnicode,
		script: `return (x => x)['\x63onstructor']("return 'PW'+'NED'")()`, want: bannedMember},
	// Wall: validator, no escapes in identifiers or keywords at all.
	{name: "escaped-keyword", cat: catUnicode,
		script: `\u0069f (true) { return 1 }`, want: unicodeRefused},
	// Wall: validator, a BiDi override (U+202E) in a string.
	{name: "bidi-override-string", cat: catUnicode,
		script: "const role = 'user\u202e \u2066// admin\u2069\u2066'; return role", want: unicodeRefused},
	// Wall: validator, a BiDi override in a comment (Trojan Source).
	{name: "bidi-override-comment", cat: catUnicode,
		script: "let isAdmin = false;\n/*\u202e } \u2066if (isAdmin)\u2069 \u2066 begin admins only */\nreturn isAdmin", want: unicodeRefused},
	// Wall: validator, a zero-width joiner inside an identifier.
	{name: "zero-width-joiner-identifier", cat: catUnicode,
		script: "const ca\u200dllTool = () => 'shadowed'; return ca\u200dllTool()", want: unicodeRefused},
	// Wall: validator, a Cyrillic homoglyph identifier (U+0435 for e).
	{name: "cyrillic-homoglyph-eval", cat: catUnicode,
		script: "const \u0435val = (s) => s; return \u0435val('x')", want: unicodeRefused},
	// Wall: validator, a homoglyph shadowing an injected name.
	{name: "cyrillic-homoglyph-callTool", cat: catUnicode,
		script: "const c\u0430llTool = () => 'fake'; return c\u0430llTool('test.secret', {})", want: unicodeRefused},
	// Wall: validator. U+2028 ends a line comment, so what follows is code,
	// and checked as code.
	{name: "line-separator-ends-comment", cat: catUnicode,
		script: "// harmless\u2028return (x => x).constructor(\"return 'PW'+'NED'\")()", want: bannedMember},
	// Wall: validator, an invisible byte-order mark between tokens.
	{name: "bom-in-code", cat: catUnicode,
		script: "return 1 \ufeff+ 1", want: unicodeRefused},
	// Wall: the gate. An invisible character in a tool name is part of the
	// name: no tool has it.
	{name: "zero-width-space-tool-name", cat: catUnicode,
		script: "return await callTool('test.\u200becho', {})", want: toolErr("test.\u200becho", "NOT_FOUND")},
}

func TestUnicodeTricks(t *testing.T) { runCases(t, unicodeCases) }
