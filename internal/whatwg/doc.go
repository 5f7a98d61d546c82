// Package whatwg implements the parts of the WHATWG URL and Encoding
// standards behind a plan's URL, URLSearchParams and TextDecoder globals:
// the basic URL parser with its state overrides (which the URL setters
// use), host parsing (domains through UTS #46, IPv4 in every form the
// standard accepts, IPv6), serialisation and origins, the
// application/x-www-form-urlencoded parser and serialiser, and the UTF-8
// decoder. UTF-8 is the only encoding.
//
// The package is pure Go and knows nothing of JavaScript: inputs are Go
// strings, which hold scalar values only, so a caller converts a
// JavaScript string (which may hold lone surrogates) as the standards'
// USVString conversion does, replacing them with U+FFFD.
//
// Every algorithm is iterative and runs in time linear in its input;
// callers bound the input sizes. The exception is IDNA (punycode is
// quadratic in a label's length), so a domain that needs it is refused
// over 4096 bytes: DNS names are at most 253.
package whatwg
