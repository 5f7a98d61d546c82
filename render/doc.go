// Package render writes the text block of a tool result: the result's
// structured content, a JSON document, as text in one of three formats.
// Models pay for every token of that text, and the formats differ in how
// many they spend and how close they stay to JSON.
//
// It is a leaf: it imports only the standard library.
//
// # JSON
//
// JSON is the document as compact JSON, with the whitespace between tokens
// removed and everything else kept as written. It is the default, and the
// choice when the reader is a program, or a model that should see exactly
// what a JSON parser would.
//
// # Compact
//
// Compact is indented plain text that a model reads like a listing. It
// spends the fewest tokens on small, irregular results: messages, records,
// configuration. It keeps every value, the order of keys and the text of
// numbers, and it is unambiguous (the package's tests read every output
// back to its document), but it is meant for reading, not parsing.
//
// Layout:
//
//   - An object is one "key: value" line per member. A member whose value is
//     a non-empty object, or an array that is not inline, is "key:" alone,
//     with the value's lines indented two spaces further.
//   - An array of two or more primitives is inline, its items separated by a
//     comma and a space: "tags: a, b, c". Any other non-empty array,
//     including one of a single primitive, is one item per line, each line
//     starting with a hyphen and a space. An item that is an object has its
//     first member on the hyphen line and the others below it, aligned with
//     the first; an item that is itself a list starts with a second hyphen:
//     "- - a".
//   - An empty object is {} and an empty array is [].
//   - Numbers are the document's text; booleans are true and false, null is
//     null.
//   - A document that is a primitive, {}, [] or an inline array is that one
//     line. There is no trailing newline.
//
// A string is written as it is unless one of these holds, and then it is
// quoted:
//
//   - it is empty, or begins or ends with white space (Unicode White_Space);
//   - it contains a control character, U+2028 or U+2029;
//   - it begins with a double quote, "[" or "{";
//   - it is a hyphen, or begins with a hyphen and a space;
//   - it contains a colon followed by a space, or ends with a colon;
//   - it contains a comma followed by a space;
//   - it is true, false or null, in any letter case;
//   - it reads as a number: /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?$/.
//
// So an unquoted word is always a string, a list item is never mistaken for
// a member, and an inline array splits at every comma and space outside
// quotes. A key is quoted by the first five rules only.
//
// A quoted string or key is in double quotes. The double quote and the
// backslash are escaped with a backslash; line feed, carriage return and tab
// are written \n, \r and \t; any other control character, U+2028 and U+2029
// are written \uXXXX with lowercase hex digits. Nothing else is escaped.
//
// For example, {"id":7,"tags":["a","b"],"owner":{"name":"Ada"},
// "notes":["call back"],"status":"on hold: waiting"} reads
//
//	id: 7
//	tags: a, b
//	owner:
//	  name: Ada
//	notes:
//	  - call back
//	status: "on hold: waiting"
//
// # TOON
//
// TOON is Token-Oriented Object Notation, written as version 4.1 of its
// specification (https://github.com/toon-format/spec) asks of an encoder,
// with the default options: two spaces per level and the comma delimiter.
// It declares the fields of an array of uniform objects once and writes
// one row per object, so it spends the fewest tokens on tables: lists of
// records with the same keys. A TOON decoder recovers the JSON value:
// numbers equal in value, and the objects of a table with their keys in the
// header's order. Choose it for large regular results; on irregular data it
// is close to Compact.
//
// Numbers are written in TOON's canonical form from the document's digits,
// so no precision is lost: 1.50 is 1.5, 1e3 is 1000, -0 is 0, and numbers
// below 1e-6 or from 1e21 in magnitude use an exponent (1e+21, 1.5e-7).
// A document that is a single string beginning with U+FEFF is quoted:
// an encoder must not start a document with what decoders strip as a
// byte-order mark (§12).
//
// # Limits
//
// Value reads the whole document into memory. Compact and TOON refuse
// documents nested deeper than MaxDepth, and for a repeated key within one
// object they keep the last value at the first position, as JavaScript
// does.
package render
