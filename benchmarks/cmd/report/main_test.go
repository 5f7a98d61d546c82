package main

import (
	"bytes"
	"context"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/benchmarks/internal/report"
)

// TestReportShort runs the whole suite as CI does (-short: every group at
// its short benchtime), so that a benchmark that fails, skips for a reason
// the suite does not expect, stops reporting, or leaves its ratio's
// regression guard fails this test. It writes the charts and the
// BENCHMARKS.md block into a temporary copy, and checks them.
func TestReportShort(t *testing.T) {
	if testing.Short() || os.Getenv("CODECALLTEST_REPORT") == "" {
		t.Skip("runs the benchmark suite once (a minute or two on 2 cores, builds every benchmark package again); set CODECALLTEST_REPORT=1 to run it (.ci/run does)")
	}
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("the go command is not on PATH: the report builds the benchmarks' test binaries with it")
	}
	out := t.TempDir()
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "BENCHMARKS.md"), doc, 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-short", "-out", out}, &stdout, &stderr); err != nil {
		t.Fatalf("the report failed (%v):\n%s\n%s", err, stdout.String(), stderr.String())
	}
	t.Log(stdout.String())
	// Every chart the report says it wrote is well-formed XML; the search
	// charts are always there (their benchmarks need nothing).
	var charts []string
	for _, line := range strings.Split(stdout.String(), "\n") {
		if path, ok := strings.CutPrefix(line, "wrote "); ok && strings.HasSuffix(path, ".svg") {
			charts = append(charts, path)
		}
	}
	for _, name := range []string{"search-latency.svg", "search-memory.svg"} {
		if !slices.Contains(charts, filepath.Join(out, report.ChartDir, name)) {
			t.Errorf("no %s among the charts written: %q", name, charts)
		}
	}
	for _, path := range charts {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(bytes.NewReader(b))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s: %v", path, err)
			}
		}
	}
	updated, err := os.ReadFile(filepath.Join(out, "BENCHMARKS.md"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(updated), "Measured by `go run ./benchmarks/cmd/report -short`") {
		t.Errorf("the report's block of BENCHMARKS.md was not written:\n%s", updated)
	}
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-count", "0"}, "-count 0: want at least 1"},
		{[]string{"floor"}, `unexpected arguments ["floor"]: every setting is a flag`},
		{[]string{"-only", "("}, "is not a regular expression"},
		{[]string{"-only", "no-such-group"}, "matches no group of the suite (groups: floor, execute"},
		{[]string{"-benchtime"}, "flag needs an argument"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			err := run(context.Background(), tc.args, &stdout, &stderr)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestList(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(context.Background(), []string{"-list"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	for _, g := range report.Suite() {
		if !strings.Contains(stdout.String(), g.Command(g.Benchtime)) {
			t.Errorf("-list does not print the command of %s", g.Name)
		}
	}
}
