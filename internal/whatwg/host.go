package whatwg

import (
	"strconv"
	"strings"

	"golang.org/x/net/idna"
)

// domainProfile is the standard's "domain to ASCII" with beStrict false:
// UTS #46 ToASCII with CheckHyphens off, CheckBidi and CheckJoiners on,
// UseSTD3ASCIIRules off, nontransitional processing and no DNS length
// check.
var domainProfile = idna.New(idna.MapForLookup(), idna.BidiRule(), idna.CheckJoiners(true),
	idna.CheckHyphens(false), idna.StrictDomainName(false), idna.Transitional(false), idna.VerifyDNSLength(false))

// parseHost is the host parser: the serialised host, or false.
func parseHost(input string, opaque bool) (string, bool) {
	if strings.HasPrefix(input, "[") {
		if len(input) < 2 || !strings.HasSuffix(input, "]") {
			return "", false
		}
		a, ok := parseIPv6([]rune(input[1 : len(input)-1]))
		if !ok {
			return "", false
		}
		return "[" + serializeIPv6(a) + "]", true
	}
	if opaque {
		if strings.ContainsFunc(input, isForbiddenHost) {
			return "", false
		}
		return percentEncodeString(input, c0ControlSet), true
	}
	domain := string(DecodeUTF8(nil, percentDecode(input)))
	ascii, ok := domainToASCII(domain)
	if !ok {
		return "", false
	}
	if endsInANumber(ascii) {
		v, ok := parseIPv4(ascii)
		if !ok {
			return "", false
		}
		return serializeIPv4(v), true
	}
	return ascii, true
}

func isForbiddenHost(r rune) bool {
	switch r {
	case 0, '\t', '\n', '\r', ' ', '#', '/', ':', '<', '>', '?', '@', '[', '\\', ']', '^', '|':
		return true
	}
	return false
}

func isForbiddenDomain(r rune) bool {
	return isForbiddenHost(r) || r <= 0x1F || r == '%' || r == 0x7F
}

// maxIDNABytes bounds a domain that needs UTS #46 processing (one that is
// not ASCII, or has an xn-- label). Punycode takes time quadratic in a
// label's length, in one native step; DNS names are at most 253 bytes.
const maxIDNABytes = 4096

// domainToASCII maps a domain to its ASCII form. An ASCII domain with no
// label starting with xn-- only needs lowercasing.
func domainToASCII(domain string) (string, bool) {
	result := ""
	if isASCII(domain) && !hasPunycodeLabel(domain) {
		result = strings.ToLower(domain)
	} else {
		if len(domain) > maxIDNABytes {
			return "", false
		}
		var err error
		if result, err = domainProfile.ToASCII(domain); err != nil {
			return "", false
		}
	}
	if result == "" || strings.ContainsFunc(result, isForbiddenDomain) {
		return "", false
	}
	return result, true
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

func hasPunycodeLabel(s string) bool {
	for label := range strings.SplitSeq(s, ".") {
		if len(label) >= 4 && strings.EqualFold(label[:4], "xn--") {
			return true
		}
	}
	return false
}

// endsInANumber reports whether the last label of a domain is a number,
// which makes the domain an IPv4 address (or a failure).
func endsInANumber(s string) bool {
	s = strings.TrimSuffix(s, ".")
	if s == "" {
		return false
	}
	last := s[strings.LastIndexByte(s, '.')+1:]
	if last != "" && strings.Trim(last, "0123456789") == "" {
		return true
	}
	_, ok := parseIPv4Number(last)
	return ok
}

// ipv4NumberCap saturates IPv4 numbers: anything above it is too large
// for any position anyway.
const ipv4NumberCap = 1 << 40

// parseIPv4Number parses one part of an IPv4 address: decimal, 0x hex or
// 0 octal.
func parseIPv4Number(s string) (uint64, bool) {
	if s == "" {
		return 0, false
	}
	radix := uint64(10)
	switch {
	case len(s) >= 2 && (s[:2] == "0x" || s[:2] == "0X"):
		s, radix = s[2:], 16
	case len(s) >= 2 && s[0] == '0':
		s, radix = s[1:], 8
	}
	var n uint64
	for i := 0; i < len(s); i++ {
		c := s[i]
		var d uint64
		switch {
		case c >= '0' && c <= '9':
			d = uint64(c - '0')
		case radix == 16 && isHex(rune(c)):
			d = uint64(hexValue(c))
		default:
			return 0, false
		}
		if d >= radix {
			return 0, false
		}
		n = min(n*radix+d, ipv4NumberCap)
	}
	return n, true
}

// parseIPv4 parses an address of one to four parts.
func parseIPv4(s string) (uint32, bool) {
	parts := strings.Split(s, ".")
	if parts[len(parts)-1] == "" && len(parts) > 1 {
		parts = parts[:len(parts)-1]
	}
	if len(parts) > 4 {
		return 0, false
	}
	nums := make([]uint64, len(parts))
	for i, part := range parts {
		n, ok := parseIPv4Number(part)
		if !ok || (n > 255 && i < len(parts)-1) {
			return 0, false
		}
		nums[i] = n
	}
	last := nums[len(nums)-1]
	if last >= 1<<(8*(5-len(nums))) {
		return 0, false
	}
	v := last
	for i, n := range nums[:len(nums)-1] {
		v += n << (8 * (3 - i))
	}
	return uint32(v), true
}

func serializeIPv4(v uint32) string {
	return strconv.Itoa(int(v>>24)) + "." + strconv.Itoa(int(v>>16&255)) + "." + strconv.Itoa(int(v>>8&255)) + "." + strconv.Itoa(int(v&255))
}

// parseIPv6 parses the address between the brackets.
func parseIPv6(in []rune) ([8]uint16, bool) {
	var a [8]uint16
	at := func(i int) rune {
		if i < len(in) {
			return in[i]
		}
		return eof
	}
	piece, compress, p := 0, -1, 0
	if at(p) == ':' {
		if at(p+1) != ':' {
			return a, false
		}
		p += 2
		piece++
		compress = piece
	}
	for at(p) != eof {
		if piece == 8 {
			return a, false
		}
		if at(p) == ':' {
			if compress != -1 {
				return a, false
			}
			p++
			piece++
			compress = piece
			continue
		}
		value, length := 0, 0
		for length < 4 && isHex(at(p)) {
			value = value*16 + int(hexValue(byte(at(p))))
			p++
			length++
		}
		switch at(p) {
		case '.':
			if length == 0 || piece > 6 {
				return a, false
			}
			p -= length
			seen := 0
			for at(p) != eof {
				part := -1
				if seen > 0 {
					if at(p) != '.' || seen >= 4 {
						return a, false
					}
					p++
				}
				if !isASCIIDigit(at(p)) {
					return a, false
				}
				for isASCIIDigit(at(p)) {
					n := int(at(p) - '0')
					switch part {
					case -1:
						part = n
					case 0:
						return a, false
					default:
						part = part*10 + n
					}
					if part > 255 {
						return a, false
					}
					p++
				}
				a[piece] = a[piece]<<8 | uint16(part)
				seen++
				if seen == 2 || seen == 4 {
					piece++
				}
			}
			if seen != 4 {
				return a, false
			}
			goto compressed
		case ':':
			p++
			if at(p) == eof {
				return a, false
			}
		case eof:
		default:
			return a, false
		}
		a[piece] = uint16(value)
		piece++
	}
compressed:
	if compress != -1 {
		swaps := piece - compress
		for piece = 7; piece != 0 && swaps > 0; piece, swaps = piece-1, swaps-1 {
			a[piece], a[compress+swaps-1] = a[compress+swaps-1], a[piece]
		}
	} else if piece != 8 {
		return a, false
	}
	return a, true
}

// serializeIPv6 writes the address in lowercase hex, compressing the
// first longest run of two or more zero pieces.
func serializeIPv6(a [8]uint16) string {
	compress, best := -1, 1
	for i := 0; i < 8; {
		if a[i] != 0 {
			i++
			continue
		}
		j := i
		for j < 8 && a[j] == 0 {
			j++
		}
		if j-i > best {
			compress, best = i, j-i
		}
		i = j
	}
	var b strings.Builder
	for i := 0; i < 8; i++ {
		if i == compress {
			if i == 0 {
				b.WriteString("::")
			} else {
				b.WriteByte(':')
			}
			i += best - 1
			continue
		}
		b.WriteString(strconv.FormatUint(uint64(a[i]), 16))
		if i != 7 {
			b.WriteByte(':')
		}
	}
	return b.String()
}
