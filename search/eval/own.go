package eval

import (
	_ "embed"
	"fmt"
	"strings"

	"github.com/codecall-go/codecall/catalog"
)

// ownQueries is the project's own evaluation set: requests written by hand
// from the corpus's tool definitions, before any tuning. It holds only the
// requests and tool ids, never the corpus's texts. docs/search.md describes
// it.
//
//go:embed queries.json
var ownQueries []byte

// OwnSetName is the name the reports give the project's own set.
const OwnSetName = "queries.json"

// LoadOwn returns the project's own evaluation set over the real-tool
// corpus (see CorpusDir): keyword, task and paraphrase requests, some with
// no answering tool, some naming their app, each marked SplitTune or
// SplitHeldout. Expected names are in catalog form ("app.name").
func LoadOwn() ([]Query, error) {
	return ParseQueries(ownQueries, OwnSetName)
}

// CheckExpected returns an error naming the expected tools of queries that
// are not among tools, or nil when every one is there.
func CheckExpected(queries []Query, tools []*catalog.Tool) error {
	have := make(map[string]bool, len(tools))
	for _, t := range tools {
		have[t.Name] = true
	}
	var missing []string
	for _, q := range queries {
		for _, e := range q.Expected {
			if !have[e] {
				missing = append(missing, fmt.Sprintf("%s (for %q)", e, q.Text))
			}
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("eval: %d expected tools are not in the corpus: %s", len(missing), strings.Join(missing, ", "))
	}
	return nil
}
