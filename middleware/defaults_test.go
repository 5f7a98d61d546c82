package middleware

import (
	"testing"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/search"
)

// TestDefaultsAgree: the config's default low-relevance threshold is the
// search package's, which is calibrated with the rule it goes with
// (presets does not import search, so the number is written twice).
func TestDefaultsAgree(t *testing.T) {
	if got := presets.Default().Search.LowRelevance; got != search.DefaultLowRelevance {
		t.Fatalf("presets' default search.lowRelevance is %v, search.DefaultLowRelevance is %v", got, search.DefaultLowRelevance)
	}
}
