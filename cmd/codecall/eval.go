package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/search/eval"
)

// missDepth is the rank within which an expected tool must appear for a
// query not to count as a miss in --misses.
const missDepth = 5

// evalCmd prints search quality on a tool corpus: the engine against a
// plain BM25 baseline over names and descriptions, on the project's own
// query set (whole, tune and held-out parts, by style and app-scoped), the
// corpus's dev set and any --queries file.
func evalCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	dir := fs.String("corpus", eval.CorpusDir(filepath.Join("..", "shared", "corpus")), "corpus `dir` holding tools.json and queries-dev.json")
	extra := fs.String("queries", "", "another query `file` ([{query, expected: [app/name]}]) to evaluate too")
	split := fs.String("split", "", "part of the own set to report: tune, heldout or all (default: all, tune and heldout)")
	misses := fs.Int("misses", 0, "print the first `N` own-set queries whose expected tool is not in the engine's top 5")
	explain := fs.Bool("explain", false, "with --misses: show how the hits and the expected tool were scored (coverage, BM25F, name and app factors, dense similarity, where each word matched)")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if _, err := eval.FilterSplit(nil, *split); err != nil {
		fmt.Fprintf(stderr, "codecall eval: --split: %v\n", err)
		return errUsage
	}
	corpus, err := eval.LoadCorpus(*dir)
	if err != nil {
		if errors.Is(err, os.ErrNotExist) {
			return fmt.Errorf("%w\n(the real-tool corpus lives beside the repository, at ../shared/corpus from its root; "+
				"point --corpus or $%s at a directory holding tools.json)", err, eval.CorpusDirEnv)
		}
		return fmt.Errorf("%w (point --corpus at a directory with tools.json)", err)
	}
	own, err := eval.LoadOwn()
	if err != nil {
		return err
	}
	if err := eval.CheckExpected(own, corpus.Tools); err != nil {
		fmt.Fprintf(stderr, "codecall eval: warning: %v\n", err)
	}
	var extraSet []eval.Query
	if *extra != "" {
		if extraSet, err = eval.LoadQueries(*extra); err != nil {
			return err
		}
	}

	engine, err := search.New(corpus.Tools)
	if err != nil {
		return err
	}
	defer engine.Close()
	baseline, err := eval.NewBaseline(corpus.Tools)
	if err != nil {
		return err
	}
	defer baseline.Close()
	rankers := []ranker{{"codecall", engine, true}, {"plain BM25", baseline, false}}

	// Every ranker runs each set once; the rows are parts of those runs.
	type runs struct{ own, dev, extra eval.Report }
	results := make([]runs, len(rankers))
	for i, r := range rankers {
		if results[i].own, err = eval.Evaluate(ctx, r.s, own); err != nil {
			return err
		}
		if results[i].dev, err = eval.Evaluate(ctx, r.s, corpus.Dev); err != nil {
			return err
		}
		if results[i].extra, err = eval.Evaluate(ctx, r.s, extraSet); err != nil {
			return err
		}
	}

	splits := []string{eval.SplitAll, eval.SplitTune, eval.SplitHeldout}
	if *split != "" {
		splits = []string{*split}
	}
	detail := splits[0] // the part the breakdowns and misses are about
	inSplit := func(s string) func(eval.Query) bool {
		return func(q eval.Query) bool { return s == eval.SplitAll || q.Split == s }
	}

	answerable, scoped := 0, 0
	for _, q := range own {
		if len(q.Expected) > 0 {
			answerable++
		}
		if q.AppScoped || len(q.AppIDs) > 0 {
			scoped++
		}
	}
	fmt.Fprintf(stdout, "%d tools in %s\n", len(corpus.Tools), *dir)
	fmt.Fprintf(stdout, "own set (%s): %d queries, %d answerable, %d unanswerable, %d app-scoped\n",
		eval.OwnSetName, len(own), answerable, len(own)-answerable, scoped)
	fmt.Fprintf(stdout, "rank metrics are over answerable queries; NEG-FLAGGED: share of unanswerable ones the engine flags (higher is better);\n"+
		"TOP1-FLAGGED: share of the queries right at rank 1 that are flagged all the same (lower is better)\n\n")

	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUERIES\tRANKER\tN\tR@1\tR@5\tR@10\tnDCG@10\tMRR\tNEG\tNEG-FLAGGED\tTOP1-FLAGGED")
	row := func(name string, r ranker, rep eval.Report) {
		m := rep.Metrics
		if m.Queries == 0 && m.Unanswerable == 0 {
			return
		}
		negFlagged, top1Flagged := "-", "-"
		if r.warns {
			top1Flagged = fmt.Sprintf("%.3f", m.Top1Flagged)
			if m.Unanswerable > 0 {
				negFlagged = fmt.Sprintf("%.3f", m.NegFlagged)
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\t%d\t%s\t%s\n", name, r.name, m.Queries,
			m.RecallAt1, m.RecallAt5, m.RecallAt10, m.NDCG10, m.MRR, m.Unanswerable, negFlagged, top1Flagged)
	}
	for _, s := range splits {
		for i, r := range rankers {
			row("own "+s, r, results[i].own.Subset(inSplit(s)))
		}
	}
	for i, r := range rankers {
		row("queries-dev.json", r, results[i].dev)
	}
	for i, r := range rankers {
		row(filepath.Base(*extra), r, results[i].extra)
	}
	// The breakdowns get a table of their own, so that a blank line sets
	// them apart.
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(stdout)
	tw = tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "BREAKDOWN\tRANKER\tN\tR@1\tR@5\tR@10\tnDCG@10\tMRR\tNEG\tNEG-FLAGGED\tTOP1-FLAGGED")
	for _, style := range []string{eval.StyleKeyword, eval.StyleTask, eval.StyleParaphrase} {
		for i, r := range rankers {
			part := results[i].own.Subset(func(q eval.Query) bool { return inSplit(detail)(q) && q.Style == style })
			row("own "+detail+" "+style, r, part)
		}
	}
	for i, r := range rankers {
		part := results[i].own.Subset(func(q eval.Query) bool { return inSplit(detail)(q) && (q.AppScoped || len(q.AppIDs) > 0) })
		row("own "+detail+" app-scoped", r, part)
	}
	for i, r := range rankers {
		part := results[i].own.Subset(func(q eval.Query) bool { return inSplit(detail)(q) && len(q.AppIDs) > 0 })
		row("own "+detail+" with appIds", r, part)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if *misses > 0 {
		var why explainer
		if *explain {
			why = func(q eval.Query) map[string]string { return explainQuery(ctx, engine, q) }
		}
		printMisses(stdout, results[0].own.Subset(inSplit(detail)), detail, *misses, why)
	}
	return nil
}

// explainer returns the explanations of a query's hits by tool name.
type explainer func(eval.Query) map[string]string

// explainQuery runs q again on the engine, asking for explanations.
func explainQuery(ctx context.Context, engine *search.Index, q eval.Query) map[string]string {
	res, err := engine.Search(ctx, search.Query{Text: q.Text, TopK: eval.Depth, AppIDs: q.AppIDs, Explain: true})
	if err != nil {
		return nil
	}
	why := make(map[string]string, len(res.Hits))
	for _, h := range res.Hits {
		why[h.Tool.Name] = h.Explain.String()
	}
	return why
}

// ranker is a searcher under evaluation; warns says whether it produces
// warnings, so that its flag rates mean something.
type ranker struct {
	name  string
	s     eval.Searcher
	warns bool
}

// printMisses prints the first n answerable queries of rep whose expected
// tools are all outside the top missDepth, with the top three hits instead.
func printMisses(w io.Writer, rep eval.Report, split string, n int, why explainer) {
	var missed []eval.Outcome
	for _, o := range rep.Outcomes {
		if o.Miss(missDepth) {
			missed = append(missed, o)
		}
	}
	fmt.Fprintf(w, "\nMISSES (codecall, own %s: no expected tool in the top %d): %d of %d answerable queries",
		split, missDepth, len(missed), rep.Metrics.Queries)
	if len(missed) > n {
		fmt.Fprintf(w, ", first %d", n)
		missed = missed[:n]
	}
	fmt.Fprintln(w)
	for _, o := range missed {
		q := o.Query
		tags := []string{q.Style, q.Split}
		if len(q.AppIDs) > 0 {
			tags = append(tags, "appIds="+strings.Join(q.AppIDs, ","))
		}
		fmt.Fprintf(w, "  %q [%s]\n", q.Text, strings.Join(tags, " "))
		fmt.Fprintf(w, "    expected: %s", strings.Join(q.Expected, ", "))
		if o.FirstRank > 0 {
			fmt.Fprintf(w, " (first at rank %d)", o.FirstRank)
		}
		fmt.Fprintln(w)
		got := make([]string, 0, 3)
		for i := range min(3, len(o.Got)) {
			got = append(got, fmt.Sprintf("%s %.3f", o.Got[i], o.Scores[i]))
		}
		if len(got) == 0 {
			got = append(got, "nothing")
		}
		fmt.Fprintf(w, "    got:      %s", strings.Join(got, ", "))
		if len(o.Warnings) > 0 {
			fmt.Fprintf(w, " [%s]", strings.Join(o.Warnings, ", "))
		}
		fmt.Fprintln(w)
		if why == nil {
			continue
		}
		explained := why(q)
		for i := range min(3, len(o.Got)) {
			fmt.Fprintf(w, "      %s: %s\n", o.Got[i], explained[o.Got[i]])
		}
		if o.FirstRank > 3 {
			name := o.Got[o.FirstRank-1]
			fmt.Fprintf(w, "      expected %s: %s\n", name, explained[name])
		}
	}
}
