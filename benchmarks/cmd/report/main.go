// Command report runs CodeCall's benchmark suite and reports it: a table
// of every benchmark's figures under the go test command that produces
// them, the in-run ratios against the performance goals, SVG charts, and
// the generated block at the top of BENCHMARKS.md. It exits non-zero when
// a benchmark fails, is skipped for a reason the suite does not expect,
// does not report, or cannot be built, and when an in-run ratio leaves its
// regression guard.
//
//	go run ./benchmarks/cmd/report            # the whole suite; writes docs/bench/*.svg and BENCHMARKS.md's block
//	go run ./benchmarks/cmd/report -short -out ''   # a quick pass, as CI runs it, writing nothing
//	go run ./benchmarks/cmd/report -only 'floor|isolation' -count 3
//
// Run it from anywhere inside the repository; the benchmarks run from
// their packages' directories, as go test runs them.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"time"

	"github.com/codecall-go/codecall/benchmarks/internal/report"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil {
		if !errors.Is(err, errFailed) {
			fmt.Fprintln(os.Stderr, "report:", err)
		}
		os.Exit(1)
	}
}

// errFailed is the error of a report that ran and found problems (they
// are already printed).
var errFailed = errors.New("the benchmark report found problems")

// run is the command, with its arguments and outputs as parameters so
// that tests run it in process.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("report", flag.ContinueOnError)
	fs.SetOutput(stderr)
	benchtime := fs.String("benchtime", "", "`d`uration or Nx for every benchmark, replacing each group's own (see -list)")
	count := fs.Int("count", 1, "run each benchmark `n` times; the table shows the median and the range")
	out := fs.String("out", "", "`dir`ectory to write docs/bench/*.svg and BENCHMARKS.md's block into (default: the repository root; '' with -short writes nothing)")
	only := fs.String("only", "", "run only the groups whose name or benchmarks match this `regexp` (see -list)")
	short := fs.Bool("short", false, "a quick pass: each group's short benchtime and -test.short; writes nothing unless -out is given")
	strict := fs.Bool("strict", false, "fail on every skip, the expected ones (no worker processes, no corpus) included")
	list := fs.Bool("list", false, "print the suite's groups and their commands, and exit")
	verbose := fs.Bool("v", false, "stream the benchmarks' own output to stderr as they run")
	timeout := fs.Duration("timeout", 20*time.Minute, "bound on each group's run")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: go run ./benchmarks/cmd/report [flags]\n\nRuns the benchmark suite, prints its figures and in-run ratios, draws the charts.\n\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q: every setting is a flag (see -h)", fs.Args())
	}
	if *count < 1 {
		return fmt.Errorf("-count %d: want at least 1", *count)
	}
	outSet := false
	fs.Visit(func(f *flag.Flag) { outSet = outSet || f.Name == "out" })

	if *list {
		for _, g := range report.Suite() {
			fmt.Fprintf(stdout, "%-10s %s\n           %s\n           -short: -benchtime %s\n", g.Name, g.Title, g.Command(g.Benchtime), g.Short)
		}
		return nil
	}
	groups, err := report.Select(report.Suite(), *only)
	if err != nil {
		return err
	}
	root, err := moduleRoot(ctx)
	if err != nil {
		return err
	}
	dir := *out
	if !outSet && !*short {
		dir = root
	}

	rep, err := report.Run(ctx, report.Options{Root: root, Groups: groups, Benchtime: *benchtime, Count: *count,
		Short: *short, Strict: *strict, Timeout: *timeout, Progress: stderr, Raw: rawWriter(*verbose, stderr)})
	if err != nil {
		return err
	}
	if err := rep.WriteText(stdout); err != nil {
		return fmt.Errorf("printing the report: %w", err)
	}
	if dir != "" {
		if err := write(rep, dir, stdout); err != nil {
			return err
		}
	}
	if rep.Failed() {
		return errFailed
	}
	return nil
}

// write puts the charts under dir and, when dir holds a BENCHMARKS.md with
// the report's markers, the generated block into it.
func write(rep *report.Report, dir string, stdout io.Writer) error {
	charts := rep.Charts()
	if err := report.WriteCharts(dir, charts); err != nil {
		return err
	}
	for _, c := range charts {
		fmt.Fprintf(stdout, "wrote %s\n", filepath.Join(dir, filepath.FromSlash(c.Path)))
	}
	md := filepath.Join(dir, "BENCHMARKS.md")
	doc, err := os.ReadFile(md)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	} else if err != nil {
		return fmt.Errorf("reading %s: %w", md, err)
	}
	updated, err := report.ReplaceBlock(doc, rep.Markdown(charts))
	if err != nil {
		return fmt.Errorf("%s: %w", md, err)
	}
	if err := os.WriteFile(md, updated, 0o644); err != nil {
		return fmt.Errorf("writing %s: %w", md, err)
	}
	fmt.Fprintf(stdout, "wrote the report's block of %s\n", md)
	return nil
}

func rawWriter(verbose bool, w io.Writer) io.Writer {
	if verbose {
		return w
	}
	return nil
}

// moduleRoot is the directory of the main module's go.mod.
func moduleRoot(ctx context.Context) (string, error) {
	out, err := exec.CommandContext(ctx, "go", "env", "GOMOD").Output()
	if err != nil {
		return "", fmt.Errorf("finding the module root with go env GOMOD: %w", err)
	}
	gomod := strings.TrimSpace(string(out))
	if gomod == "" || gomod == os.DevNull {
		return "", errors.New("run the report from inside the CodeCall repository (go env GOMOD names no go.mod here)")
	}
	return filepath.Dir(gomod), nil
}
