package whatwg

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		in, base string
		href     string // "" for a failure
		origin   string
	}{
		{in: "https://example.com", href: "https://example.com/", origin: "https://example.com"},
		{in: "HTTPS://EXAMPLE.COM:443/a/./b/../c?x=1#f", href: "https://example.com/a/c?x=1#f", origin: "https://example.com"},
		{in: "http://user:pa ss@host:8080/p", href: "http://user:pa%20ss@host:8080/p", origin: "http://host:8080"},
		{in: " \t http://ex.com/\n ", href: "http://ex.com/"},
		{in: "http:\\\\ex.com\\a\\b", href: "http://ex.com/a/b"},
		{in: "http://ex.com/a b<c>`{}", href: "http://ex.com/a%20b%3Cc%3E%60%7B%7D"},
		{in: "https://ex.com/ü?ü#ü", href: "https://ex.com/%C3%BC?%C3%BC#%C3%BC"},
		{in: "http://ex.com/?a=1&b='x'", href: "http://ex.com/?a=1&b=%27x%27"},
		{in: "foo://ex.com/?b='x'", href: "foo://ex.com/?b='x'"},
		{in: "http://ex.com/%2e%2E/a/.%2e/b", href: "http://ex.com/b"},
		{in: "http://ex.com/a/..", href: "http://ex.com/"},
		{in: "http://%41.com", href: "http://a.com/"},
		{in: "http://EXAMPLE.com./", href: "http://example.com./"},
		{in: "http://münchen.de/", href: "http://xn--mnchen-3ya.de/"},
		{in: "http://xn--mnchen-3ya.de/", href: "http://xn--mnchen-3ya.de/"},
		{in: "http://ＥＸＡＭＰＬＥ。com/", href: "http://example.com/"},
		{in: "http://[::1]:80/", href: "http://[::1]/", origin: "http://[::1]"},
		{in: "http://[2001:DB8:0:0:1:0:0:1]/", href: "http://[2001:db8::1:0:0:1]/"},
		{in: "http://[1:0:0:2::3:0]/", href: "http://[1::2:0:0:3:0]/"},
		{in: "http://[::ffff:192.168.0.1]/", href: "http://[::ffff:c0a8:1]/"},
		{in: "http://[0:0:0:0:0:0:0:0]/", href: "http://[::]/"},
		{in: "http://0x7f.1/", href: "http://127.0.0.1/"},
		{in: "http://2130706433/", href: "http://127.0.0.1/"},
		{in: "http://0177.0.0.1./", href: "http://127.0.0.1/"},
		{in: "http://192.168.0.257/"},
		{in: "http://1.2.3.4.5/"},
		{in: "http://4294967296/"},
		{in: "http://1.2.3.08/"},
		{in: "http://a.1.2/"},
		{in: "http://[::1/"},
		{in: "http://[1:2:3:4:5:6:7:8:9]/"},
		{in: "http://[::1.2.3]/"},
		{in: "http://ex ample.com"},
		{in: "http://ex%00ample"},
		{in: "http://ex%25ample"},
		{in: "http://user@/"},
		{in: "http://:80/"},
		{in: "http://ex.com:65536/"},
		{in: "http://ex.com:8a/"},
		{in: "http:"},
		{in: "not a url"},
		{in: ""},
		{in: "http://ex.com:0080/", href: "http://ex.com/"},
		{in: "http://ex.com:00081/", href: "http://ex.com:81/"},
		{in: "mailto:ada@example.com", href: "mailto:ada@example.com", origin: "null"},
		{in: "data:text/plain,hi there", href: "data:text/plain,hi there", origin: "null"},
		{in: "javascript:alert(1)", href: "javascript:alert(1)", origin: "null"},
		{in: "file:///C:/x/../y", href: "file:///C:/y", origin: "null"},
		{in: "file:///C|/x", href: "file:///C:/x"},
		{in: "file://localhost/etc/passwd", href: "file:///etc/passwd"},
		{in: "file://host/share", href: "file://host/share"},
		{in: "foo://bar/baz", href: "foo://bar/baz", origin: "null"},
		{in: "foo:/a/../b", href: "foo:/b"},
		{in: "foo://", href: "foo://"},
		{in: "foo://a b/"},
		{in: "web+demo:/.//not-a-host/", href: "web+demo:/.//not-a-host/"},
		{in: "blob:https://a.com/uuid", href: "blob:https://a.com/uuid", origin: "https://a.com"},
		{in: "wss://h:443/", href: "wss://h/", origin: "wss://h"},
		{in: "../d?q", base: "http://a/b/c/e", href: "http://a/b/d?q"},
		{in: "//x.org/p", base: "https://a/", href: "https://x.org/p"},
		{in: "?q", base: "http://a/b?x#y", href: "http://a/b?q"},
		{in: "#h", base: "http://a/b?x", href: "http://a/b?x#h"},
		{in: "", base: "http://a/b?x#y", href: "http://a/b?x"},
		{in: "/p", base: "http://u:p@a:81/b", href: "http://u:p@a:81/p"},
		{in: "https:p", base: "http://a/b", href: "https://p/"},
		{in: "http:p", base: "http://a/b/c", href: "http://a/b/p"},
		{in: "x", base: "mailto:a@b"},
		{in: "#f", base: "mailto:a@b", href: "mailto:a@b#f"},
		{in: "d", base: "file:///C:/a/b", href: "file:///C:/a/d"},
		{in: "/d", base: "file:///C:/a/b", href: "file:///C:/d"},
	}
	for _, c := range cases {
		var base *URL
		if c.base != "" {
			var ok bool
			if base, ok = Parse(c.base, nil); !ok {
				t.Fatalf("base %q does not parse", c.base)
			}
		}
		u, ok := Parse(c.in, base)
		switch {
		case c.href == "" && ok:
			t.Errorf("Parse(%q, %q) = %q, want a failure", c.in, c.base, u)
		case c.href == "":
		case !ok:
			t.Errorf("Parse(%q, %q) failed, want %q", c.in, c.base, c.href)
		case u.String() != c.href:
			t.Errorf("Parse(%q, %q) = %q, want %q", c.in, c.base, u, c.href)
		case c.origin != "" && u.Origin() != c.origin:
			t.Errorf("Parse(%q).Origin() = %q, want %q", c.in, u.Origin(), c.origin)
		}
		if ok {
			// A serialised URL parses to itself.
			if again, ok := Parse(u.String(), nil); !ok || again.String() != u.String() {
				t.Errorf("%q does not reparse to itself", u)
			}
		}
	}
}

func TestComponents(t *testing.T) {
	u, _ := Parse("https://u:p@Example.com:8443/a/b?q=1#frag", nil)
	got := []string{u.Scheme, u.Username, u.Password, u.Host, u.HostPort(), u.Pathname(), u.Query, u.Fragment}
	want := []string{"https", "u", "p", "example.com", "example.com:8443", "/a/b", "q=1", "frag"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("components %q, want %q", got, want)
	}
}

func TestSetters(t *testing.T) {
	cases := []struct {
		start string
		set   func(u *URL)
		want  string
	}{
		{"http://a.com/p?q#h", func(u *URL) { u.SetHost("b.com:81") }, "http://b.com:81/p?q#h"},
		{"http://a.com/p", func(u *URL) { u.SetHost("") }, "http://a.com/p"},
		{"http://a.com/p", func(u *URL) { u.SetHost("b c") }, "http://a.com/p"},
		{"http://a.com:81/p", func(u *URL) { u.SetHostname("c.com") }, "http://c.com:81/p"},
		{"http://a.com/p", func(u *URL) { u.SetHostname("c.com:99") }, "http://a.com/p"},
		{"http://a.com/p", func(u *URL) { u.SetPort("8080x") }, "http://a.com:8080/p"},
		{"http://a.com:81/p", func(u *URL) { u.SetPort("80") }, "http://a.com/p"},
		{"http://a.com:81/p", func(u *URL) { u.SetPort("") }, "http://a.com/p"},
		{"http://a.com/p", func(u *URL) { u.SetPort("x") }, "http://a.com/p"},
		{"http://a.com/p", func(u *URL) { u.SetPort("70000") }, "http://a.com/p"},
		{"http://a.com:8080/p", func(u *URL) { u.SetProtocol("https:x") }, "https://a.com:8080/p"},
		{"http://a.com/p", func(u *URL) { u.SetProtocol("foo") }, "http://a.com/p"},
		{"foo://a.com/p", func(u *URL) { u.SetProtocol("bar") }, "bar://a.com/p"},
		{"http://a.com:443/p", func(u *URL) { u.SetProtocol("https") }, "https://a.com/p"},
		{"http://u@a.com/p", func(u *URL) { u.SetProtocol("file") }, "http://u@a.com/p"},
		{"http://a.com/p", func(u *URL) { u.SetPathname("/x y/../z") }, "http://a.com/z"},
		{"http://a.com/p", func(u *URL) { u.SetPathname("q?#") }, "http://a.com/q%3F%23"},
		{"http://a.com/p?x", func(u *URL) { u.SetSearch("?a b#") }, "http://a.com/p?a%20b%23"},
		{"http://a.com/p?x", func(u *URL) { u.SetSearch("") }, "http://a.com/p"},
		{"http://a.com/p", func(u *URL) { u.SetSearch("?") }, "http://a.com/p?"},
		{"http://a.com/p", func(u *URL) { u.SetHash("x y") }, "http://a.com/p#x%20y"},
		{"http://a.com/p#x", func(u *URL) { u.SetHash("") }, "http://a.com/p"},
		{"http://a.com/p", func(u *URL) { u.SetHash("#") }, "http://a.com/p#"},
		{"http://a.com/p", func(u *URL) { u.SetUsername("u@:"); u.SetPassword("p/w") }, "http://u%40%3A:p%2Fw@a.com/p"},
		{"file:///p", func(u *URL) { u.SetUsername("u"); u.SetPort("8") }, "file:///p"},
		{"file:///p", func(u *URL) { u.SetHost("server") }, "file://server/p"},
		{"file://server/p", func(u *URL) { u.SetHost("localhost") }, "file:///p"},
		{"mailto:a@b", func(u *URL) { u.SetHost("x"); u.SetPathname("/y") }, "mailto:a@b"},
		{"data:a  ?q", func(u *URL) { u.SetSearch("") }, "data:a"},
		{"http://a.com/p", func(u *URL) {
			if u.SetHref("not a url") {
				panic("accepted")
			}
		}, "http://a.com/p"},
		{"http://a.com/p", func(u *URL) { u.SetHref("https://b/") }, "https://b/"},
	}
	for _, c := range cases {
		u, ok := Parse(c.start, nil)
		if !ok {
			t.Fatalf("%q does not parse", c.start)
		}
		c.set(u)
		if u.String() != c.want {
			t.Errorf("from %q: %q, want %q", c.start, u, c.want)
		}
	}
}

func TestForm(t *testing.T) {
	pairs, ok := ParseForm("a=1&b=2+3&c=%zz&&d&e=%C3%A9%FF&=x&f==", 100)
	want := []Pair{{"a", "1"}, {"b", "2 3"}, {"c", "%zz"}, {"d", ""}, {"e", "é\uFFFD"}, {"", "x"}, {"f", "="}}
	if !ok || len(pairs) != len(want) {
		t.Fatalf("ParseForm = %q, %v", pairs, ok)
	}
	for i := range want {
		if pairs[i] != want[i] {
			t.Errorf("pair %d = %q, want %q", i, pairs[i], want[i])
		}
	}
	if _, ok := ParseForm("a&b&c", 2); ok {
		t.Error("ParseForm read more pairs than allowed")
	}
	if got := SerializeForm([]Pair{{"a b", "c&d=e"}, {"é", "~*-._!'()"}}); got != "a+b=c%26d%3De&%C3%A9=%7E*-._%21%27%28%29" {
		t.Errorf("SerializeForm = %q", got)
	}
}

func TestCompareUTF16(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"a", "b", -1}, {"b", "a", 1}, {"a", "a", 0}, {"a", "ab", -1}, {"", "", 0},
		{"\U0001F600", "\uFFFD", -1}, {"\uD7FF", "\U0001F600", -1}, {"\U0001F600", "\U0001F601", -1},
	} {
		if got := CompareUTF16(c.a, c.b); got != c.want {
			t.Errorf("CompareUTF16(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
}

func TestDecoder(t *testing.T) {
	for _, c := range []struct {
		in   string
		want string
	}{
		{"plain", "plain"},
		{"\xF0\x9F\x98", "\uFFFD"},
		{"\xF0\x9F\x98A", "\uFFFDA"},
		{"\xED\xA0\x80", "\uFFFD\uFFFD\uFFFD"},
		{"\xC0\x80", "\uFFFD\uFFFD"},
		{"\xE2\x82\xAC\xFF", "€\uFFFD"},
		{"\xEF\xBB\xBFx", "\uFEFFx"},
		{"\xF4\x90\x80\x80", "\uFFFD\uFFFD\uFFFD\uFFFD"},
	} {
		if got := string(DecodeUTF8(nil, []byte(c.in))); got != c.want {
			t.Errorf("DecodeUTF8(%q) = %q, want %q", c.in, got, c.want)
		}
	}
	var d Decoder
	out, _ := d.Decode(nil, []byte("a\xE2\x82"), false)
	out, _ = d.Decode(out, []byte("\xAC"), true)
	if string(out) != "a€" {
		t.Errorf("streamed: %q", out)
	}
	out, _ = d.Decode(nil, []byte("\xE2\x82"), false)
	out, _ = d.Decode(out, nil, true)
	if string(out) != "\uFFFD" {
		t.Errorf("truncated stream: %q", out)
	}
	f := Decoder{Fatal: true}
	if _, ok := f.Decode(nil, []byte("a\xFFb"), true); ok {
		t.Error("fatal decoder accepted an invalid byte")
	}
	if out, ok := f.Decode(nil, []byte("ok"), true); !ok || string(out) != "ok" {
		t.Errorf("fatal decoder after an error: %q %v", out, ok)
	}
}

// TestHostileInputs checks that long and repetitive inputs parse in
// linear time.
func TestHostileInputs(t *testing.T) {
	n := 1 << 20
	for _, in := range []string{
		"http://" + strings.Repeat("a@", n/2) + "x/",
		"http://x/" + strings.Repeat("../", n/3),
		"http://x/" + strings.Repeat("%25", n/3),
		"http://" + strings.Repeat("a.", n/2) + "com/",
		"http://" + strings.Repeat("1", n) + "/",
		"http://[" + strings.Repeat(":", n) + "]/",
		"foo:" + strings.Repeat("\x01", n),
		"http://x/#" + strings.Repeat("é", n/2),
		"http://x/?" + strings.Repeat("&a=b", n/4),
		"http://" + cjk(n/8) + "/",
		"http://xn--" + strings.Repeat("a", n/2) + "/",
	} {
		Parse(in, nil)
	}
	if _, ok := Parse("http://"+cjk(4000)+"/", nil); ok {
		t.Error("a domain of 4000 CJK characters (12000 bytes) was accepted")
	}
	if u, ok := Parse("http://"+cjk(1000)+"/", nil); !ok || !strings.HasPrefix(u.Host, "xn--") {
		t.Errorf("a domain of 1000 CJK characters: %v", ok)
	}
	ParseForm(strings.Repeat("a=%25%32%35&", n/12), n)
}

// cjk is n distinct CJK ideographs: the worst case for punycode.
func cjk(n int) string {
	r := make([]rune, n)
	for i := range r {
		r[i] = rune(0x4E00 + i%20000)
	}
	return string(r)
}
