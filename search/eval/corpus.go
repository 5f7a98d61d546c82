package eval

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/codecall-go/codecall/catalog"
)

// CorpusDirEnv names the environment variable that points at the real-tool
// corpus directory (tools.json, queries-dev.json).
const CorpusDirEnv = "CODECALLTEST_CORPUS_DIR"

// CorpusDir returns the corpus directory: $CODECALLTEST_CORPUS_DIR when set,
// else fallback. The corpus lives outside the repository (its texts are
// other projects' words), so callers must cope with it being absent.
func CorpusDir(fallback string) string {
	if d := os.Getenv(CorpusDirEnv); d != "" {
		return d
	}
	return fallback
}

// Corpus is the real-tool corpus: tools from public MCP servers and the dev
// queries over them.
type Corpus struct {
	Tools []*catalog.Tool
	// Dev are the queries of queries-dev.json (nil when the file is
	// missing).
	Dev []Query
}

type corpusTool struct {
	ID          string          `json:"id"`
	App         string          `json:"app"`
	Name        string          `json:"name"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	InputSchema json.RawMessage `json:"input_schema"`
	Annotations struct {
		Title string `json:"title"`
	} `json:"annotations"`
}

// ToolName maps a corpus id ("app/name") to the tool name a served catalog
// uses ("app.name").
func ToolName(id string) string {
	app, name, ok := strings.Cut(id, "/")
	if !ok {
		return id
	}
	return app + "." + name
}

// LoadCorpus reads tools.json and, when present, queries-dev.json from dir.
// It returns an error wrapping fs.ErrNotExist when tools.json is missing.
func LoadCorpus(dir string) (*Corpus, error) {
	b, err := os.ReadFile(filepath.Join(dir, "tools.json"))
	if err != nil {
		return nil, fmt.Errorf("eval: read corpus: %w", err)
	}
	var raw []corpusTool
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("eval: decode %s: %w", filepath.Join(dir, "tools.json"), err)
	}
	c := &Corpus{Tools: make([]*catalog.Tool, 0, len(raw))}
	for _, r := range raw {
		t := &catalog.Tool{
			Name:        r.App + "." + r.Name,
			Title:       r.Title,
			Description: r.Description,
			AppID:       r.App,
			Source:      catalog.SourceUpstream,
			InputSchema: r.InputSchema,
			Enabled:     true,
		}
		t.Annotations.Title = r.Annotations.Title
		c.Tools = append(c.Tools, t)
	}
	dev, err := LoadQueries(filepath.Join(dir, "queries-dev.json"))
	switch {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return nil, err
	default:
		c.Dev = dev
	}
	return c, nil
}

// LoadQueries reads a JSON array of queries (see ParseQueries) from path.
func LoadQueries(path string) ([]Query, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: read queries: %w", err)
	}
	return ParseQueries(b, path)
}

// ParseQueries decodes a JSON array of {"query", "expected", "appIds"?,
// "style"?, "split"?, "appScoped"?}; name is for errors. Expected entries in
// corpus form ("app/name") become tool names ("app.name"); plain names are
// kept.
func ParseQueries(b []byte, name string) ([]Query, error) {
	var qs []Query
	if err := json.Unmarshal(b, &qs); err != nil {
		return nil, fmt.Errorf("eval: decode %s: %w", name, err)
	}
	for i := range qs {
		for j, e := range qs[i].Expected {
			qs[i].Expected[j] = ToolName(e)
		}
	}
	return qs, nil
}
