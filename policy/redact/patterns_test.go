package redact

import (
	"slices"
	"testing"

	"github.com/codecall-go/codecall/presets"
)

// Test secrets. They are well-known documentation examples or random
// strings, never live credentials.
const (
	ghToken   = "ghp_0123456789abcdefghijABCDEFGHIJ012345"
	ghPAT     = "github_pat_11ABCDEFG0123456789_abcdefghijklmnopqrstuvwxyz"
	awsKey    = "AKIAIOSFODNN7EXAMPLE"
	jwtToken  = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U"
	slack     = "xoxb-123456789012-abcdefghijklmn"
	visa      = "4111111111111111"
	pemBlock  = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA7\nabc==\n-----END RSA PRIVATE KEY-----"
	bearerTok = "mF_9.B5f-4.1JqM"
)

func TestBuiltinPatterns(t *testing.T) {
	const R = DefaultPlaceholder
	tests := []struct {
		name, in, want string
	}{
		{"github token", "use " + ghToken + " now", "use " + R + " now"},
		{"github fine-grained", ghPAT, R},
		{"github too short", "ghp_abc", "ghp_abc"},
		{"aws key", "key=" + awsKey, "key=" + R},
		{"aws key in text", "id " + awsKey + ".", "id " + R + "."},
		{"aws lookalike", "AKIAIOSFODNN7EXAMPLEX", "AKIAIOSFODNN7EXAMPLEX"},
		{"jwt", "session " + jwtToken, "session " + R},
		{"jwt without signature", "eyJhbGciOiJub25lIn0.eyJzdWIiOiJ4In0.", R},
		{"bearer", "Authorization: Bearer " + bearerTok, "Authorization: Bearer " + R},
		{"bearer lower case", "bearer " + bearerTok + " rest", "bearer " + R + " rest"},
		{"bearer jwt", "Bearer " + jwtToken, "Bearer " + R},
		{"bearer prose", "the bearer authentication scheme", "the bearer authentication scheme"},
		{"basic auth header", "Authorization: Basic dXNlcjpwYXNzd29yZA==", "Authorization: Basic " + R},
		{"url credentials", "postgres://app:s3cr3t@db:5432/shop", "postgres://app:" + R + "@db:5432/shop"},
		{"url without credentials", "https://example.com:8080/a@b", "https://example.com:8080/a@b"},
		{"slack", "token " + slack, "token " + R},
		{"assignment", "login failed: password=hunter2&user=bob", "login failed: password=" + R + "&user=bob"},
		{"assignment colon", "db_password: hunter2", "db_password: " + R},
		{"assignment json text", `{"apiKey": "abc123", "name": "x"}`, `{"apiKey": "` + R + `", "name": "x"}`},
		{"assignment escaped json", `{\"client_secret\":\"abc\"}`, `{\"client_secret\":\"` + R + `\"}`},
		{"assignment not a label", "max_tokens=5 tokenizer=bert", "max_tokens=5 tokenizer=bert"},
		{"card", "card " + visa + " exp", "card " + R + " exp"},
		{"card spaced", "4111 1111 1111 1111", R},
		{"card dashed mastercard", "5500-0000-0000-0004", R},
		{"card amex", "378282246310005", R},
		{"card failing luhn", "4111111111111112", "4111111111111112"},
		{"epoch millis", "1700000000000", "1700000000000"},
		{"long digit run", "41111111111111110000000", "41111111111111110000000"},
		{"private key", "key:\n" + pemBlock + "\nend", "key:\n" + R + "\nend"},
		{"truncated private key", "-----BEGIN PRIVATE KEY-----\nMIIE", R},
		{"public key kept", "-----BEGIN PUBLIC KEY-----\nMIIB", "-----BEGIN PUBLIC KEY-----\nMIIB"},
		{"plain text", "nothing to see here: just words = fine", "nothing to see here: just words = fine"},
		{"empty", "", ""},
	}
	r := Default()
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := r.String(tt.in); got != tt.want {
				t.Errorf("String(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

// TestBuiltinNamesMatchPresets keeps the list the configuration validates
// against in step with the patterns this package applies.
func TestBuiltinNamesMatchPresets(t *testing.T) {
	var names []string
	for _, p := range builtinPatterns {
		names = append(names, p.name)
	}
	if want := presets.RedactionBuiltinPatterns(); !slices.Equal(names, want) {
		t.Errorf("built-in patterns %v, presets lists %v", names, want)
	}
}

func TestLuhn(t *testing.T) {
	for _, s := range []string{"4111111111111111", "4111 1111 1111 1111", "378282246310005", "6011111111111117", "5555555555554444"} {
		if !luhn(s) {
			t.Errorf("luhn(%q) = false", s)
		}
	}
	for _, s := range []string{"4111111111111112", "1234", "0000000000000000000000"} {
		if luhn(s) {
			t.Errorf("luhn(%q) = true", s)
		}
	}
}

func TestFinders(t *testing.T) {
	fold := foldWords("bearer", "key")
	for _, tt := range []struct {
		s    string
		want int
	}{{"xx BeArEr", 3}, {"bear", -1}, {"", -1}, {"a KEY", 2}} {
		if got := fold(tt.s, 0); got != tt.want {
			t.Errorf("foldWords(%q) = %d, want %d", tt.s, got, tt.want)
		}
	}
	for _, tt := range []struct {
		s          string
		from, want int
	}{{"see https://x", 0, 4}, {"see https://x", 5, -1}, {"1+x.y://", 0, 2}, {"://", 0, -1}, {"a:// b://", 2, 5}, {"ab.cd://", 0, 0}, {"ab.cd://", 1, 3}} {
		if got := findScheme(tt.s, tt.from); got != tt.want {
			t.Errorf("findScheme(%q, %d) = %d, want %d", tt.s, tt.from, got, tt.want)
		}
	}
}

// TestFastSearchMatchesReference checks the two-step search of every
// built-in pattern against its plain regular expression on the test
// strings; FuzzString does the same on random ones.
func TestFastSearchMatchesReference(t *testing.T) {
	inputs := []string{
		"Bearer " + bearerTok + " and xbearer " + bearerTok, "a_AKIAIOSFODNN7EXAMPLE AKIAIOSFODNN7EXAMPLE", ghToken + " x" + ghToken,
		"1postgres://a:b@c x.y+z://u:p@h", "_4111111111111111 4111111111111111", jwtToken + "." + jwtToken, pemBlock + pemBlock,
		"password=1 PASSWORD: 2 api-key=3 apikey=\"4\" token bearer x", slack + "-" + slack,
	}
	for _, s := range inputs {
		for _, p := range builtinPatterns {
			if got, want := fastSpans(&p, s), refSpans(&p, s); !slices.Equal(got, want) {
				t.Errorf("%s on %q: fast %v, reference %v", p.name, s, got, want)
			}
		}
	}
}

func fastSpans(p *pattern, s string) []int {
	var out []int
	p.each(s, func(start, end int) { out = append(out, start, end) })
	return out
}

func refSpans(p *pattern, s string) []int {
	var out []int
	for _, loc := range p.ref.FindAllStringSubmatchIndex(s, -1) {
		if loc[2*p.group] >= 0 {
			out = append(out, loc[2*p.group], loc[2*p.group+1])
		}
	}
	return out
}
