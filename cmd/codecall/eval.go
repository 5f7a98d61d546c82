package main

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"text/tabwriter"

	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/search/eval"
)

// evalCmd prints search quality on a tool corpus: the engine against a
// plain BM25 baseline over names and descriptions.
func evalCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("eval", stderr)
	dir := fs.String("corpus", eval.CorpusDir(filepath.Join("..", "shared", "corpus")), "corpus `dir` holding tools.json and queries-dev.json")
	extra := fs.String("queries", "", "another query `file` ([{query, expected: [app/name]}]) to evaluate too")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	corpus, err := eval.LoadCorpus(*dir)
	if err != nil {
		return fmt.Errorf("%w (point --corpus at a directory with tools.json)", err)
	}
	sets := []struct {
		name    string
		queries []eval.Query
	}{{"queries-dev.json", corpus.Dev}}
	if *extra != "" {
		qs, err := eval.LoadQueries(*extra)
		if err != nil {
			return err
		}
		sets = append(sets, struct {
			name    string
			queries []eval.Query
		}{filepath.Base(*extra), qs})
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

	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "%d tools\n", len(corpus.Tools))
	fmt.Fprintln(tw, "QUERIES\tRANKER\tN\tR@1\tR@5\tR@10\tnDCG@10\tMRR")
	for _, set := range sets {
		if len(set.queries) == 0 {
			continue
		}
		for _, r := range []struct {
			name string
			s    eval.Searcher
		}{{"codecall", engine}, {"plain BM25", baseline}} {
			m, err := eval.Run(ctx, r.s, set.queries)
			if err != nil {
				return err
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.3f\t%.3f\t%.3f\t%.3f\t%.3f\n", set.name, r.name, m.Queries, m.RecallAt1, m.RecallAt5, m.RecallAt10, m.NDCG10, m.MRR)
		}
	}
	return tw.Flush()
}
