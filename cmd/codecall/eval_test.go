package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEvalReportLayout runs eval on a two-tool corpus, so it needs no real
// one: the own set's expected tools are absent (a warning), but every row
// and flag must still be there.
func TestEvalReportLayout(t *testing.T) {
	dir := t.TempDir()
	tools := `[{"id":"git/git_add","app":"git","name":"git_add","description":"Stage files.","input_schema":{"type":"object"}},
		{"id":"time/get_current_time","app":"time","name":"get_current_time","description":"Current time in a zone.","input_schema":{"type":"object"}}]`
	dev := `[{"query":"stage files","expected":["git/git_add"]}]`
	for name, content := range map[string]string{"tools.json": tools, "queries-dev.json": dev} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	extra := writeFile(t, "mine.json", `[{"query":"what time is it","expected":["time/get_current_time"]},{"query":"book a flight","expected":[]}]`)

	tests := []struct {
		name      string
		args      []string
		code      int
		want, not []string
	}{
		{
			name: "default",
			args: []string{"--queries", extra},
			want: []string{"2 tools", "own set (queries.json)", "own all", "own tune", "own heldout", "queries-dev.json", "mine.json",
				"own all keyword", "own all task", "own all paraphrase", "own all app-scoped", "codecall", "plain BM25",
				"NEG-FLAGGED", "TOP1-FLAGGED"},
			not: []string{"MISSES"},
		},
		{
			name: "one split with misses",
			args: []string{"--split", "heldout", "--misses", "2"},
			want: []string{"own heldout", "own heldout paraphrase", "MISSES (codecall, own heldout", "expected:", "got:"},
			not:  []string{"own tune", "own all"},
		},
		{
			name: "misses explained",
			args: []string{"--split", "tune", "--misses", "40", "--explain"},
			want: []string{"MISSES (codecall, own tune", "coverage ", "× bm25f ", "=name"},
		},
		{name: "bad split", args: []string{"--split", "test"}, code: 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"eval", "--corpus", dir}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d: %s", code, tt.code, errOut)
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.not {
				if strings.Contains(out, w) {
					t.Errorf("output has %q:\n%s", w, out)
				}
			}
			if code == 0 && !strings.Contains(errOut, "not in the corpus") {
				t.Errorf("no warning about the own set's missing tools: %q", errOut)
			}
		})
	}
}

func TestEvalMissingCorpus(t *testing.T) {
	code, _, errOut := runCLI(t, "eval", "--corpus", filepath.Join(t.TempDir(), "nowhere"))
	if code != 1 {
		t.Errorf("exit %d, want 1", code)
	}
	for _, w := range []string{"tools.json", "../shared/corpus", "--corpus", "CODECALLTEST_CORPUS_DIR"} {
		if !strings.Contains(errOut, w) {
			t.Errorf("error lacks %q: %s", w, errOut)
		}
	}
}
