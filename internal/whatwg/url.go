package whatwg

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// URL is a URL record. Nullable components have a Has flag: a URL whose
// HasHost is false has a null host, which is not the same as an empty one.
type URL struct {
	Scheme   string
	Username string
	Password string
	Host     string // the serialised host: a domain, an IPv4 address, [an IPv6 address], an opaque host or ""
	HasHost  bool
	Port     int // -1 when null
	// Path holds the segments of a hierarchical path; OpaquePath the path
	// of a URL such as mailto:x or data:..., when Opaque.
	Path        []string
	Opaque      bool
	OpaquePath  string
	Query       string
	HasQuery    bool
	Fragment    string
	HasFragment bool
}

// Clone returns a deep copy of u.
func (u *URL) Clone() *URL {
	c := *u
	c.Path = append([]string(nil), u.Path...)
	return &c
}

// specialPorts are the special schemes and their default ports (-1: none).
var specialPorts = map[string]int{"ftp": 21, "file": -1, "http": 80, "https": 443, "ws": 80, "wss": 443}

// IsSpecial reports whether scheme is one of the special schemes.
func IsSpecial(scheme string) bool {
	_, ok := specialPorts[scheme]
	return ok
}

func defaultPort(scheme string) int {
	if p, ok := specialPorts[scheme]; ok {
		return p
	}
	return -1
}

// Special reports whether u's scheme is special.
func (u *URL) Special() bool { return IsSpecial(u.Scheme) }

// IncludesCredentials reports whether u has a username or a password.
func (u *URL) IncludesCredentials() bool { return u.Username != "" || u.Password != "" }

// CannotHaveCredentialsOrPort reports whether u's host is null or empty,
// or its scheme is file: its username, password and port cannot be set.
func (u *URL) CannotHaveCredentialsOrPort() bool {
	return !u.HasHost || u.Host == "" || u.Scheme == "file"
}

// String is the URL serialiser: the href.
func (u *URL) String() string { return u.serialize(false) }

func (u *URL) serialize(excludeFragment bool) string {
	var b strings.Builder
	b.WriteString(u.Scheme)
	b.WriteByte(':')
	if u.HasHost {
		b.WriteString("//")
		if u.IncludesCredentials() {
			b.WriteString(u.Username)
			if u.Password != "" {
				b.WriteByte(':')
				b.WriteString(u.Password)
			}
			b.WriteByte('@')
		}
		b.WriteString(u.Host)
		if u.Port >= 0 {
			b.WriteByte(':')
			b.WriteString(strconv.Itoa(u.Port))
		}
	}
	if !u.HasHost && !u.Opaque && len(u.Path) > 1 && u.Path[0] == "" {
		b.WriteString("/.")
	}
	b.WriteString(u.Pathname())
	if u.HasQuery {
		b.WriteByte('?')
		b.WriteString(u.Query)
	}
	if !excludeFragment && u.HasFragment {
		b.WriteByte('#')
		b.WriteString(u.Fragment)
	}
	return b.String()
}

// Pathname is the URL path serialiser.
func (u *URL) Pathname() string {
	if u.Opaque {
		return u.OpaquePath
	}
	n := len(u.Path)
	for _, s := range u.Path {
		n += len(s)
	}
	var b strings.Builder
	b.Grow(n)
	for _, s := range u.Path {
		b.WriteByte('/')
		b.WriteString(s)
	}
	return b.String()
}

// HostPort is the host getter's value: the host, and the port when set.
func (u *URL) HostPort() string {
	if !u.HasHost {
		return ""
	}
	if u.Port < 0 {
		return u.Host
	}
	return u.Host + ":" + strconv.Itoa(u.Port)
}

// Origin is the serialisation of u's origin: scheme://host[:port] for
// http, https, ws, wss and ftp, the origin of the inner URL for a blob:
// URL whose path is such a URL, and "null" (an opaque origin) otherwise.
func (u *URL) Origin() string {
	switch u.Scheme {
	case "http", "https", "ws", "wss", "ftp":
		return u.Scheme + "://" + u.HostPort()
	case "blob":
		inner, ok := Parse(u.Pathname(), nil)
		if ok && (inner.Scheme == "http" || inner.Scheme == "https") {
			return inner.Origin()
		}
	}
	return "null"
}

// Parse is the API URL parser: it parses input, against base when base is
// not nil, and reports false on failure.
func Parse(input string, base *URL) (*URL, bool) {
	u := &URL{Port: -1}
	p := parser{in: []rune(trimControlAndSpace(input)), base: base, url: u}
	p.in = removeTabAndNewline(p.in)
	if !p.run(schemeStart, noOverride) {
		return nil, false
	}
	return u, true
}

// Setters. Each parses value with a state override on a copy of u and
// keeps the copy only when the parse succeeds, so a value the standard
// rejects leaves u as it was.

// SetHref parses value as a whole new URL; it reports false (and keeps u)
// when value is not a valid URL.
func (u *URL) SetHref(value string) bool {
	n, ok := Parse(value, nil)
	if ok {
		*u = *n
	}
	return ok
}

// SetProtocol sets the scheme from value up to its first ':'.
func (u *URL) SetProtocol(value string) { u.override(value+":", schemeStart) }

// SetUsername sets the username, percent-encoded.
func (u *URL) SetUsername(value string) {
	if !u.CannotHaveCredentialsOrPort() {
		u.Username = percentEncodeString(value, userinfoSet)
	}
}

// SetPassword sets the password, percent-encoded.
func (u *URL) SetPassword(value string) {
	if !u.CannotHaveCredentialsOrPort() {
		u.Password = percentEncodeString(value, userinfoSet)
	}
}

// SetHost sets the host and, when value has one, the port.
func (u *URL) SetHost(value string) {
	if !u.Opaque {
		u.override(value, hostState)
	}
}

// SetHostname sets the host only.
func (u *URL) SetHostname(value string) {
	if !u.Opaque {
		u.override(value, hostnameState)
	}
}

// SetPort sets the port from value's leading digits; "" removes it.
func (u *URL) SetPort(value string) {
	if u.CannotHaveCredentialsOrPort() {
		return
	}
	if value == "" {
		u.Port = -1
		return
	}
	u.override(value, portState)
}

// SetPathname replaces the path.
func (u *URL) SetPathname(value string) {
	if u.Opaque {
		return
	}
	c := u.Clone()
	c.Path = nil
	if c.parseOverride(value, pathStart) {
		*u = *c
	}
}

// SetSearch replaces the query: "" removes it, "?" leaves an empty one.
func (u *URL) SetSearch(value string) {
	if value == "" {
		u.Query, u.HasQuery = "", false
		u.stripTrailingSpaces()
		return
	}
	c := u.Clone()
	c.Query, c.HasQuery = "", true
	if c.parseOverride(strings.TrimPrefix(value, "?"), queryState) {
		*u = *c
	}
}

// SetQuery sets the query to an already encoded value (URLSearchParams'
// serialisation); "" removes it.
func (u *URL) SetQuery(encoded string) {
	u.Query, u.HasQuery = encoded, encoded != ""
	if !u.HasQuery {
		u.stripTrailingSpaces()
	}
}

// SetHash replaces the fragment; "" removes it.
func (u *URL) SetHash(value string) {
	if value == "" {
		u.Fragment, u.HasFragment = "", false
		u.stripTrailingSpaces()
		return
	}
	c := u.Clone()
	c.Fragment, c.HasFragment = "", true
	if c.parseOverride(strings.TrimPrefix(value, "#"), fragmentState) {
		*u = *c
	}
}

// stripTrailingSpaces removes the trailing spaces of an opaque path once
// nothing follows it, as a serialised URL could not keep them.
func (u *URL) stripTrailingSpaces() {
	if u.Opaque && !u.HasFragment && !u.HasQuery {
		u.OpaquePath = strings.TrimRight(u.OpaquePath, " ")
	}
}

func (u *URL) override(value string, s state) {
	c := u.Clone()
	if c.parseOverride(value, s) {
		*u = *c
	}
}

func (u *URL) parseOverride(value string, s state) bool {
	p := parser{in: removeTabAndNewline([]rune(value)), url: u}
	return p.run(s, s)
}

// trimControlAndSpace removes leading and trailing C0 controls and spaces.
func trimControlAndSpace(s string) string {
	return strings.TrimFunc(s, func(r rune) bool { return r <= 0x20 })
}

func removeTabAndNewline(in []rune) []rune {
	out := in[:0]
	for _, r := range in {
		if r != '\t' && r != '\n' && r != '\r' {
			out = append(out, r)
		}
	}
	return out
}

// percentEncodeString UTF-8 percent-encodes every code point of s in set.
func percentEncodeString(s string, set func(rune) bool) string {
	var b strings.Builder
	for _, r := range s {
		percentEncode(&b, r, set)
	}
	return b.String()
}

const upperHex = "0123456789ABCDEF"

func percentEncode(b *strings.Builder, r rune, set func(rune) bool) {
	if !set(r) {
		b.WriteRune(r)
		return
	}
	var buf [utf8.UTFMax]byte
	n := utf8.EncodeRune(buf[:], r)
	for _, c := range buf[:n] {
		b.WriteByte('%')
		b.WriteByte(upperHex[c>>4])
		b.WriteByte(upperHex[c&15])
	}
}

// The percent-encode sets.

func c0ControlSet(r rune) bool { return r < 0x20 || r > 0x7E }

func fragmentSet(r rune) bool {
	return c0ControlSet(r) || r == ' ' || r == '"' || r == '<' || r == '>' || r == '`'
}

func querySet(r rune) bool {
	return c0ControlSet(r) || r == ' ' || r == '"' || r == '#' || r == '<' || r == '>'
}

func specialQuerySet(r rune) bool { return querySet(r) || r == '\'' }

func pathSet(r rune) bool { return querySet(r) || r == '?' || r == '`' || r == '{' || r == '}' }

func userinfoSet(r rune) bool {
	return pathSet(r) || r == '/' || r == ':' || r == ';' || r == '=' || r == '@' || (r >= '[' && r <= '^') || r == '|'
}

func componentSet(r rune) bool {
	return userinfoSet(r) || (r >= '$' && r <= '&') || r == '+' || r == ','
}

func formSet(r rune) bool {
	return componentSet(r) || r == '!' || (r >= '\'' && r <= ')') || r == '~'
}

// percentDecode decodes %XX escapes; anything else is kept as it is.
func percentDecode(s string) []byte {
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) && isHex(rune(s[i+1])) && isHex(rune(s[i+2])) {
			out = append(out, hexValue(s[i+1])<<4|hexValue(s[i+2]))
			i += 2
			continue
		}
		out = append(out, c)
	}
	return out
}

func isASCIIAlpha(r rune) bool { return r|0x20 >= 'a' && r|0x20 <= 'z' }
func isASCIIDigit(r rune) bool { return r >= '0' && r <= '9' }
func isHex(r rune) bool        { return isASCIIDigit(r) || (r|0x20 >= 'a' && r|0x20 <= 'f') }

func hexValue(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c | 0x20 - 'a' + 10
}

func lower(r rune) rune {
	if r >= 'A' && r <= 'Z' {
		return r + ('a' - 'A')
	}
	return r
}

// isWindowsDriveLetter: an ASCII letter then ':' or '|'.
func isWindowsDriveLetter(s string) bool {
	return len(s) == 2 && isASCIIAlpha(rune(s[0])) && (s[1] == ':' || s[1] == '|')
}

func isNormalizedWindowsDriveLetter(s string) bool { return isWindowsDriveLetter(s) && s[1] == ':' }

// startsWithWindowsDriveLetter checks code points from the parser's
// position on.
func startsWithWindowsDriveLetter(in []rune) bool {
	if len(in) < 2 || !isASCIIAlpha(in[0]) || (in[1] != ':' && in[1] != '|') {
		return false
	}
	if len(in) == 2 {
		return true
	}
	switch in[2] {
	case '/', '\\', '?', '#':
		return true
	}
	return false
}

func isSingleDot(s string) bool { return s == "." || strings.EqualFold(s, "%2e") }

func isDoubleDot(s string) bool {
	switch strings.ToLower(s) {
	case "..", ".%2e", "%2e.", "%2e%2e":
		return true
	}
	return false
}

// shortenPath removes the last path segment, except a file URL's drive
// letter.
func (u *URL) shortenPath() {
	if u.Scheme == "file" && len(u.Path) == 1 && isNormalizedWindowsDriveLetter(u.Path[0]) {
		return
	}
	if len(u.Path) > 0 {
		u.Path = u.Path[:len(u.Path)-1]
	}
}
