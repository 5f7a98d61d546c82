package search

import (
	"cmp"
	"container/heap"
	"math"
	"slices"
	"sync"
)

// BM25F constants. k1 saturates a term's frequency; b is how much a long
// field is discounted, per field: a tool name is short by nature and
// should not be punished for being a little longer than its neighbours,
// while descriptions vary from a line to pages.
const bm25K1 = 1.2

var fieldB = [numFields]float32{
	fName:      0.3,
	fApp:       0,
	fTitle:     0.5,
	fTags:      0.3,
	fSummary:   0.5,
	fDesc:      0.75,
	fParams:    0.5,
	fParamDesc: 0.75,
}

// posting is one tool's share of one term. The BM25F weight is computed at
// build time because the field boosts and lengths are fixed then: the query
// only multiplies it by the term's idf and query weight. narrow is the same
// weight counting only the fields where related words are looked for (see
// fieldSpec.expand).
type posting struct {
	doc    uint32
	full   float32
	narrow float32
}

// termFreq is one term's frequency in each field of the tool being built.
type termFreq struct {
	id uint32
	tf [numFields]uint16
}

// postingsBuilder collects term frequencies while tools are added, and
// turns them into BM25F postings once every field's average length is
// known.
type postingsBuilder struct {
	lens  [][numFields]uint16
	freqs [][]termFreq
	// current tool
	cur map[uint32]*[numFields]uint16
}

func (pb *postingsBuilder) begin() {
	if pb.cur == nil {
		pb.cur = map[uint32]*[numFields]uint16{}
	}
	clear(pb.cur)
	pb.lens = append(pb.lens, [numFields]uint16{})
}

// count records one occurrence of term id in field f of the current tool.
func (pb *postingsBuilder) count(id uint32, f int) {
	l := &pb.lens[len(pb.lens)-1]
	if l[f] < math.MaxUint16 {
		l[f]++
	}
	tf := pb.cur[id]
	if tf == nil {
		tf = new([numFields]uint16)
		pb.cur[id] = tf
	}
	if tf[f] < math.MaxUint16 {
		tf[f]++
	}
}

func (pb *postingsBuilder) end() {
	fs := make([]termFreq, 0, len(pb.cur))
	for id, tf := range pb.cur {
		fs = append(fs, termFreq{id: id, tf: *tf})
	}
	pb.freqs = append(pb.freqs, fs)
}

// build returns the postings of every term, by term id, each list in
// document order.
func (pb *postingsBuilder) build(numTerms int, boost [numFields]float64, df []uint32) [][]posting {
	var avg [numFields]float64
	for _, l := range pb.lens {
		for f := range avg {
			avg[f] += float64(l[f])
		}
	}
	for f := range avg {
		avg[f] /= float64(max(1, len(pb.lens)))
	}
	// One backing array for all postings: a slice per term would cost a
	// header and an allocation's slack for every word of the catalog.
	total := 0
	for _, fs := range pb.freqs {
		total += len(fs)
	}
	backing := make([]posting, total)
	lists := make([][]posting, numTerms)
	off := 0
	for id := range lists {
		n := int(df[id])
		lists[id] = backing[off : off : off+n]
		off += n
	}
	for doc, fs := range pb.freqs {
		l := pb.lens[doc]
		for _, tf := range fs {
			var full, narrow float64
			for f := range numFields {
				if tf.tf[f] == 0 {
					continue
				}
				norm := 1.0
				if avg[f] > 0 {
					b := float64(fieldB[f])
					norm = 1 - b + b*float64(l[f])/avg[f]
				}
				w := boost[f] * float64(tf.tf[f]) / norm
				full += w
				if fieldSpecs[f].expand {
					narrow += w
				}
			}
			p := posting{doc: uint32(doc), full: float32(saturate(full)), narrow: float32(saturate(narrow))}
			lists[tf.id] = append(lists[tf.id], p)
		}
	}
	for _, l := range lists {
		slices.SortFunc(l, func(a, b posting) int { return cmp.Compare(a.doc, b.doc) })
	}
	pb.lens, pb.freqs, pb.cur = nil, nil, nil
	return lists
}

// saturate is BM25's term-frequency curve on a BM25F pseudo-frequency.
func saturate(tf float64) float64 {
	if tf <= 0 {
		return 0
	}
	return tf * (bm25K1 + 1) / (tf + bm25K1)
}

// weightedTerm is one query term with its weight in a BM25F sum: the
// term's idf times the query's weight for it.
type weightedTerm struct {
	id     uint32
	weight float64
	// narrow is true for related words and weak words: they are looked for
	// only in the fields where such words help (see fieldSpec.expand).
	narrow bool
}

// accumulator is the per-search scratch space of a BM25F query: a score
// per tool and the list of tools touched. Pooled per index, since a
// search at 10k tools would otherwise allocate 40 KB each time.
type accumulator struct {
	score   []float32
	touched []uint32
}

type accPool struct{ p sync.Pool }

func (ap *accPool) get(n int) *accumulator {
	if a, ok := ap.p.Get().(*accumulator); ok && len(a.score) == n {
		return a
	}
	return &accumulator{score: make([]float32, n)}
}

func (ap *accPool) put(a *accumulator) {
	for _, d := range a.touched {
		a.score[d] = 0
	}
	a.touched = a.touched[:0]
	ap.p.Put(a)
}

// bm25Candidates scores every tool that holds at least one of the terms
// and returns the best n that pass keep, best first, ties in catalog
// order.
func (ix *Index) bm25Candidates(terms []weightedTerm, n int, keep func(doc int) bool) []scored {
	acc := ix.acc.get(len(ix.tools))
	defer ix.acc.put(acc)
	for _, t := range terms {
		w := float32(t.weight)
		for _, p := range ix.postings[t.id] {
			v := p.full
			if t.narrow {
				v = p.narrow
			}
			if v == 0 {
				continue
			}
			if acc.score[p.doc] == 0 {
				acc.touched = append(acc.touched, p.doc)
			}
			acc.score[p.doc] += w * v
		}
	}
	h := make(candidateHeap, 0, min(n, len(acc.touched)))
	for _, d := range acc.touched {
		s := float64(acc.score[d])
		if s <= 0 || (keep != nil && !keep(int(d))) {
			continue
		}
		c := scored{doc: int(d), score: s}
		if len(h) < n {
			heap.Push(&h, c)
		} else if worse(h[0], c) {
			h[0] = c
			heap.Fix(&h, 0)
		}
	}
	out := []scored(h)
	slices.SortFunc(out, byScore)
	return out
}

// byScore orders by descending score, then catalog order.
func byScore(a, b scored) int {
	if c := cmp.Compare(b.score, a.score); c != 0 {
		return c
	}
	return cmp.Compare(a.doc, b.doc)
}

// worse reports whether a ranks below b.
func worse(a, b scored) bool { return byScore(a, b) > 0 }

// candidateHeap keeps the n best candidates with the worst on top.
type candidateHeap []scored

func (h candidateHeap) Len() int           { return len(h) }
func (h candidateHeap) Less(i, j int) bool { return worse(h[i], h[j]) }
func (h candidateHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *candidateHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *candidateHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}
