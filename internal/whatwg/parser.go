package whatwg

import (
	"strconv"
	"strings"
	"unicode/utf8"
)

// state is a state of the basic URL parser.
type state int

const (
	noOverride state = iota
	schemeStart
	schemeState
	noScheme
	specialRelativeOrAuthority
	pathOrAuthority
	relativeState
	relativeSlash
	specialAuthoritySlashes
	specialAuthorityIgnoreSlashes
	authorityState
	hostState
	hostnameState
	portState
	fileState
	fileSlash
	fileHost
	pathStart
	pathState
	opaquePathState
	queryState
	fragmentState
)

const eof rune = -1

// parser is one run of the basic URL parser. Components that grow one
// code point at a time (userinfo, opaque path, fragment) are built in
// builders and stored when the run succeeds, so a long input costs time
// linear in its length.
type parser struct {
	in       []rune
	base     *URL
	url      *URL
	override state
	ptr      int

	buf                                    strings.Builder
	atSignSeen, insideBrackets, passSeen   bool
	user, pass, opaque, frag               strings.Builder
	userSet, passSet, opaqueSet, fragStart bool
}

func (p *parser) at(i int) rune {
	if i < 0 || i >= len(p.in) {
		return eof
	}
	return p.in[i]
}

// run runs the state machine from state s; override is noOverride for a
// whole URL, or the state a setter starts from. It reports whether the
// parse succeeded; on success the components are stored in p.url.
func (p *parser) run(s state, override state) bool {
	p.override = override
	p.fragStart = s == fragmentState
	ok := p.machine(s)
	if ok {
		u := p.url
		if p.userSet {
			u.Username = p.user.String()
		}
		if p.passSet {
			u.Password = p.pass.String()
		}
		if p.opaqueSet {
			u.OpaquePath += p.opaque.String()
		}
		if p.fragStart {
			u.Fragment += p.frag.String()
		}
	}
	return ok
}

func (p *parser) startQuery(next state) state {
	p.url.Query, p.url.HasQuery = "", true
	return next
}

func (p *parser) startFragment() state {
	p.url.Fragment, p.url.HasFragment = "", true
	p.fragStart = true
	return fragmentState
}

//nolint:gocyclo // the standard's state machine, state by state
func (p *parser) machine(s state) bool {
	u, base := p.url, p.base
	for p.ptr = 0; ; p.ptr++ {
		c := p.at(p.ptr)
		switch s {
		case schemeStart:
			switch {
			case isASCIIAlpha(c):
				p.buf.WriteRune(lower(c))
				s = schemeState
			case p.override == noOverride:
				s = noScheme
				p.ptr--
			default:
				return false
			}

		case schemeState:
			switch {
			case isASCIIAlpha(c) || isASCIIDigit(c) || c == '+' || c == '-' || c == '.':
				p.buf.WriteRune(lower(c))
			case c == ':':
				scheme := p.buf.String()
				if p.override != noOverride {
					if IsSpecial(u.Scheme) != IsSpecial(scheme) ||
						((u.IncludesCredentials() || u.Port >= 0) && scheme == "file") ||
						(u.Scheme == "file" && u.HasHost && u.Host == "") {
						return true
					}
				}
				u.Scheme = scheme
				if p.override != noOverride {
					if u.Port == defaultPort(u.Scheme) {
						u.Port = -1
					}
					return true
				}
				p.buf.Reset()
				switch {
				case u.Scheme == "file":
					s = fileState
				case u.Special() && base != nil && base.Scheme == u.Scheme:
					s = specialRelativeOrAuthority
				case u.Special():
					s = specialAuthoritySlashes
				case p.at(p.ptr+1) == '/':
					s = pathOrAuthority
					p.ptr++
				default:
					u.Opaque, u.OpaquePath, u.Path = true, "", nil
					p.opaqueSet = true
					s = opaquePathState
				}
			case p.override == noOverride:
				p.buf.Reset()
				s = noScheme
				p.ptr = -1
			default:
				return false
			}

		case noScheme:
			switch {
			case base == nil || (base.Opaque && c != '#'):
				return false
			case base.Opaque:
				u.Scheme, u.Opaque, u.OpaquePath = base.Scheme, true, base.OpaquePath
				u.Query, u.HasQuery = base.Query, base.HasQuery
				s = p.startFragment()
			case base.Scheme != "file":
				s = relativeState
				p.ptr--
			default:
				s = fileState
				p.ptr--
			}

		case specialRelativeOrAuthority:
			if c == '/' && p.at(p.ptr+1) == '/' {
				s = specialAuthorityIgnoreSlashes
				p.ptr++
			} else {
				s = relativeState
				p.ptr--
			}

		case pathOrAuthority:
			if c == '/' {
				s = authorityState
			} else {
				s = pathState
				p.ptr--
			}

		case relativeState:
			u.Scheme = base.Scheme
			if c == '/' || (u.Special() && c == '\\') {
				s = relativeSlash
				break
			}
			u.Username, u.Password, u.Host, u.HasHost, u.Port = base.Username, base.Password, base.Host, base.HasHost, base.Port
			u.Path = append([]string(nil), base.Path...)
			u.Query, u.HasQuery = base.Query, base.HasQuery
			switch {
			case c == '?':
				s = p.startQuery(queryState)
			case c == '#':
				s = p.startFragment()
			case c != eof:
				u.Query, u.HasQuery = "", false
				u.shortenPath()
				s = pathState
				p.ptr--
			}

		case relativeSlash:
			switch {
			case u.Special() && (c == '/' || c == '\\'):
				s = specialAuthorityIgnoreSlashes
			case c == '/':
				s = authorityState
			default:
				u.Username, u.Password, u.Host, u.HasHost, u.Port = base.Username, base.Password, base.Host, base.HasHost, base.Port
				s = pathState
				p.ptr--
			}

		case specialAuthoritySlashes:
			s = specialAuthorityIgnoreSlashes
			if c == '/' && p.at(p.ptr+1) == '/' {
				p.ptr++
			} else {
				p.ptr--
			}

		case specialAuthorityIgnoreSlashes:
			if c != '/' && c != '\\' {
				s = authorityState
				p.ptr--
			}

		case authorityState:
			switch {
			case c == '@':
				buffer := p.buf.String()
				if p.atSignSeen {
					buffer = "%40" + buffer
				}
				p.atSignSeen = true
				for _, r := range buffer {
					if r == ':' && !p.passSeen {
						p.passSeen = true
						continue
					}
					if p.passSeen {
						p.passSet = true
						percentEncode(&p.pass, r, userinfoSet)
					} else {
						p.userSet = true
						percentEncode(&p.user, r, userinfoSet)
					}
				}
				p.buf.Reset()
			case c == eof || c == '/' || c == '?' || c == '#' || (u.Special() && c == '\\'):
				if p.atSignSeen && p.buf.Len() == 0 {
					return false
				}
				p.ptr -= utf8.RuneCountInString(p.buf.String()) + 1
				p.buf.Reset()
				s = hostState
			default:
				p.buf.WriteRune(c)
			}

		case hostState, hostnameState:
			switch {
			case p.override != noOverride && u.Scheme == "file":
				p.ptr--
				s = fileHost
			case c == ':' && !p.insideBrackets:
				if p.buf.Len() == 0 || p.override == hostnameState {
					return false
				}
				h, ok := parseHost(p.buf.String(), !u.Special())
				if !ok {
					return false
				}
				u.Host, u.HasHost = h, true
				p.buf.Reset()
				s = portState
			case c == eof || c == '/' || c == '?' || c == '#' || (u.Special() && c == '\\'):
				p.ptr--
				if p.buf.Len() == 0 && (u.Special() || (p.override != noOverride && (u.IncludesCredentials() || u.Port >= 0))) {
					return false
				}
				h, ok := parseHost(p.buf.String(), !u.Special())
				if !ok {
					return false
				}
				u.Host, u.HasHost = h, true
				p.buf.Reset()
				s = pathStart
				if p.override != noOverride {
					return true
				}
			default:
				if c == '[' {
					p.insideBrackets = true
				} else if c == ']' {
					p.insideBrackets = false
				}
				p.buf.WriteRune(c)
			}

		case portState:
			switch {
			case isASCIIDigit(c):
				p.buf.WriteRune(c)
			case c == eof || c == '/' || c == '?' || c == '#' || (u.Special() && c == '\\') || p.override != noOverride:
				if p.buf.Len() > 0 {
					port, ok := parsePort(p.buf.String())
					if !ok {
						return false
					}
					if port == defaultPort(u.Scheme) {
						port = -1
					}
					u.Port = port
					p.buf.Reset()
				}
				if p.override != noOverride {
					return true
				}
				s = pathStart
				p.ptr--
			default:
				return false
			}

		case fileState:
			u.Scheme, u.Host, u.HasHost = "file", "", true
			switch {
			case c == '/' || c == '\\':
				s = fileSlash
			case base != nil && base.Scheme == "file":
				u.Host, u.HasHost = base.Host, base.HasHost
				u.Path = append([]string(nil), base.Path...)
				u.Query, u.HasQuery = base.Query, base.HasQuery
				switch {
				case c == '?':
					s = p.startQuery(queryState)
				case c == '#':
					s = p.startFragment()
				case c != eof:
					u.Query, u.HasQuery = "", false
					if !startsWithWindowsDriveLetter(p.in[p.ptr:]) {
						u.shortenPath()
					} else {
						u.Path = nil
					}
					s = pathState
					p.ptr--
				}
			default:
				s = pathState
				p.ptr--
			}

		case fileSlash:
			if c == '/' || c == '\\' {
				s = fileHost
				break
			}
			if base != nil && base.Scheme == "file" {
				u.Host, u.HasHost = base.Host, base.HasHost
				if !startsWithWindowsDriveLetter(p.in[p.ptr:]) && len(base.Path) > 0 && isNormalizedWindowsDriveLetter(base.Path[0]) {
					u.Path = append(u.Path, base.Path[0])
				}
			}
			s = pathState
			p.ptr--

		case fileHost:
			if c != eof && c != '/' && c != '\\' && c != '?' && c != '#' {
				p.buf.WriteRune(c)
				break
			}
			p.ptr--
			switch buffer := p.buf.String(); {
			case p.override == noOverride && isWindowsDriveLetter(buffer):
				s = pathState // the buffer is the path's first segment
			case buffer == "":
				u.Host, u.HasHost = "", true
				if p.override != noOverride {
					return true
				}
				s = pathStart
			default:
				h, ok := parseHost(buffer, !u.Special())
				if !ok {
					return false
				}
				if h == "localhost" {
					h = ""
				}
				u.Host, u.HasHost = h, true
				if p.override != noOverride {
					return true
				}
				p.buf.Reset()
				s = pathStart
			}

		case pathStart:
			switch {
			case u.Special():
				s = pathState
				if c != '/' && c != '\\' {
					p.ptr--
				}
			case p.override == noOverride && c == '?':
				s = p.startQuery(queryState)
			case p.override == noOverride && c == '#':
				s = p.startFragment()
			case c != eof:
				s = pathState
				if c != '/' {
					p.ptr--
				}
			case p.override != noOverride && !u.HasHost:
				u.Path = append(u.Path, "")
			}

		case pathState:
			slash := c == '/' || (u.Special() && c == '\\')
			if c != eof && !slash && (p.override != noOverride || (c != '?' && c != '#')) {
				percentEncode(&p.buf, c, pathSet)
				break
			}
			buffer := p.buf.String()
			switch {
			case isDoubleDot(buffer):
				u.shortenPath()
				if !slash {
					u.Path = append(u.Path, "")
				}
			case isSingleDot(buffer):
				if !slash {
					u.Path = append(u.Path, "")
				}
			default:
				if u.Scheme == "file" && len(u.Path) == 0 && isWindowsDriveLetter(buffer) {
					buffer = buffer[:1] + ":"
				}
				u.Path = append(u.Path, buffer)
			}
			p.buf.Reset()
			switch c {
			case '?':
				s = p.startQuery(queryState)
			case '#':
				s = p.startFragment()
			}

		case opaquePathState:
			switch {
			case c == '?':
				s = p.startQuery(queryState)
			case c == '#':
				s = p.startFragment()
			case c != eof:
				percentEncode(&p.opaque, c, c0ControlSet)
			}

		case queryState:
			if (p.override == noOverride && c == '#') || c == eof {
				set := querySet
				if u.Special() {
					set = specialQuerySet
				}
				var q strings.Builder
				q.WriteString(u.Query)
				for _, r := range p.buf.String() {
					percentEncode(&q, r, set)
				}
				u.Query = q.String()
				p.buf.Reset()
				if c == '#' {
					s = p.startFragment()
				}
			} else {
				p.buf.WriteRune(c)
			}

		case fragmentState:
			if c != eof {
				percentEncode(&p.frag, c, fragmentSet)
			}
		}
		if p.ptr >= len(p.in) {
			return true
		}
	}
}

// parsePort parses a port's digits; more than 65535 is a failure.
func parsePort(digits string) (int, bool) {
	digits = strings.TrimLeft(digits, "0")
	if len(digits) > 5 {
		return 0, false
	}
	if digits == "" {
		return 0, true
	}
	n, err := strconv.Atoi(digits)
	return n, err == nil && n <= 65535
}
