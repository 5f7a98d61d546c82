package editdist

import (
	"testing"
	"unicode/utf8"
)

func TestDistance(t *testing.T) {
	tests := []struct {
		a, b string
		max  int
		want int
	}{
		{"search", "search", 2, 0},
		{"searhc", "search", 2, 1}, // a transposition is one edit
		{"serach", "search", 2, 1},
		{"timeot", "timeout", 2, 1},
		{"maxtoolcals", "maxtoolcalls", 2, 1},
		{"", "abc", 5, 3},
		{"abc", "", 5, 3},
		{"kitten", "sitting", 5, 3},
		{"kitten", "sitting", 2, 3}, // beyond max: max+1
		{"a", "abcdef", 2, 3},       // lengths alone exceed max
		{"héllo", "hello", 2, 1},    // runes, not bytes
		{"ab", "ba", 2, 1},
		{"", "", 2, 0},
	}
	for _, tt := range tests {
		if got := Distance(tt.a, tt.b, tt.max); got != tt.want {
			t.Errorf("Distance(%q, %q, %d) = %d, want %d", tt.a, tt.b, tt.max, got, tt.want)
		}
	}
}

func FuzzDistance(f *testing.F) {
	f.Add("search", "searhc")
	f.Add("", "x")
	f.Fuzz(func(t *testing.T, a, b string) {
		if !utf8.ValidString(a) || !utf8.ValidString(b) {
			return
		}
		d, r := Distance(a, b, 3), Distance(b, a, 3)
		if d != r || d < 0 || d > 4 {
			t.Fatalf("Distance(%q, %q) = %d, reversed %d", a, b, d, r)
		}
		if Distance(a, a, 3) != 0 {
			t.Fatalf("Distance(%q, itself) != 0", a)
		}
	})
}
