package presets

import (
	"errors"
	"strings"
	"testing"
)

func TestNearest(t *testing.T) {
	keys := []string{"mode", "preset", "search", "timeout", "maxToolCalls", "topK", "vm"}
	tests := []struct {
		word, want string // want "" means no suggestion
	}{
		{"searhc", "search"},  // transposition
		{"serch", "search"},   // deletion
		{"timeot", "timeout"}, // deletion
		{"Mode", "mode"},      // case only
		{"MAX_TOOL_CALS", "maxToolCalls"},
		{"TOP_K", "topK"},     // underscores ignored
		{"presett", "preset"}, // insertion
		{"colour", ""},        // nothing close
		{"vn", ""},            // two letters: no typo budget
		{"xyzzy", ""},
		{"", ""},
	}
	for _, tt := range tests {
		got, ok := nearest(tt.word, keys)
		if !ok {
			got = ""
		}
		if got != tt.want {
			t.Errorf("nearest(%q) = %q, want %q", tt.word, got, tt.want)
		}
	}
}

// TestDidYouMean checks the suggestion in the problems of a YAML key and
// of an environment variable.
func TestDidYouMean(t *testing.T) {
	tests := []struct {
		name, yaml, env, want string
	}{
		{"yaml top level", "searhc: {topK: 3}\n", "", `(did you mean "search"?)`},
		{"yaml nested", "vm: {timeot: 2s}\n", "", `(did you mean "timeout"?)`},
		{"yaml case", "vm: {Timeout: 2s}\n", "", `(did you mean "timeout"?)`},
		{"env nested", "", "CODECALL_VM__TIMEOT=2s", "(did you mean CODECALL_VM__TIMEOUT?)"},
		{"env top level", "", "CODECALL_SEARHC__TOP_K=3", "(did you mean CODECALL_SEARCH__TOP_K?)"},
		{"env deep", "", "CODECALL_SEARCH__EMBEDINGS__WEIGHT=0.5", "(did you mean CODECALL_SEARCH__EMBEDDINGS__WEIGHT?)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var env []string
			if tt.env != "" {
				env = []string{tt.env}
			}
			_, err := Parse([]byte(tt.yaml), env)
			var ve *ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("want a *ValidationError, got %v", err)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Errorf("error does not suggest the key:\n%v\nwant %s", err, tt.want)
			}
		})
	}
	// Far from every key: no suggestion.
	if _, err := Parse([]byte("colour: red\n"), nil); err == nil || strings.Contains(err.Error(), "did you mean") {
		t.Errorf("a word far from every key got a suggestion: %v", err)
	}
}
