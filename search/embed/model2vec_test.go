package embed

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const tinyDim = 8

// tinyVocab is a WordPiece vocabulary of 30 tokens: the BERT special
// tokens, whole words, "##" continuations and punctuation.
var tinyVocab = []string{
	"[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", // 0-4
	"create", "issue", "un", "##aff", "##able", // 5-9
	"cafe", ".", ",", "!", "the", // 10-14
	"refund", "##s", "money", "a", "b", // 15-19
	"send", "message", "to", "team", "##ing", // 20-24
	"ticket", "close", "open", "list", "user", // 25-29
}

// tinyRow is the vector of token i: i in dimension i mod 8, 1 in the next.
func tinyRow(i int) []float32 {
	v := make([]float32, tinyDim)
	v[i%tinyDim] = float32(i)
	v[(i+1)%tinyDim] += 1
	return v
}

func tinyTokenizer(model string) map[string]any {
	vocab := map[string]int{}
	for i, t := range tinyVocab {
		vocab[t] = i
	}
	var added []map[string]any
	for i := range 5 {
		added = append(added, map[string]any{"id": i, "content": tinyVocab[i], "special": true})
	}
	return map[string]any{
		"version":      "1.0",
		"added_tokens": added,
		"normalizer": map[string]any{"type": "BertNormalizer", "clean_text": true,
			"handle_chinese_chars": true, "strip_accents": nil, "lowercase": true},
		"pre_tokenizer": map[string]any{"type": "BertPreTokenizer"},
		"model": map[string]any{"type": model, "unk_token": "[UNK]",
			"continuing_subword_prefix": "##", "max_input_chars_per_word": 100, "vocab": vocab},
	}
}

// safetensorsFile encodes one tensor named name with the given header
// entry and data.
func safetensorsFile(t testing.TB, header map[string]any, data []byte) []byte {
	t.Helper()
	h, err := json.Marshal(header)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	_ = binary.Write(&b, binary.LittleEndian, uint64(len(h)))
	b.Write(h)
	b.Write(data)
	return b.Bytes()
}

func f32Bytes(vs []float32) []byte {
	out := make([]byte, 4*len(vs))
	for i, v := range vs {
		binary.LittleEndian.PutUint32(out[4*i:], math.Float32bits(v))
	}
	return out
}

func tinyMatrix(rows int) []float32 {
	var m []float32
	for i := range rows {
		m = append(m, tinyRow(i)...)
	}
	return m
}

// writeTinyModel writes a model directory and returns its path.
func writeTinyModel(t *testing.T, normalize *bool, st []byte, tok map[string]any) string {
	t.Helper()
	dir := t.TempDir()
	if st == nil {
		data := f32Bytes(tinyMatrix(len(tinyVocab)))
		st = safetensorsFile(t, map[string]any{
			"__metadata__": map[string]string{"format": "pt"},
			"embeddings":   map[string]any{"dtype": "F32", "shape": []int{len(tinyVocab), tinyDim}, "data_offsets": []int{0, len(data)}},
		}, data)
	}
	if tok == nil {
		tok = tinyTokenizer("WordPiece")
	}
	tj, _ := json.Marshal(tok)
	must(t, os.WriteFile(filepath.Join(dir, "model.safetensors"), st, 0o600))
	must(t, os.WriteFile(filepath.Join(dir, "tokenizer.json"), tj, 0o600))
	if normalize != nil {
		cj, _ := json.Marshal(map[string]any{"model_type": "model2vec", "normalize": *normalize})
		must(t, os.WriteFile(filepath.Join(dir, "config.json"), cj, 0o600))
	}
	return dir
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func TestModel2VecTokenize(t *testing.T) {
	m, err := LoadModel2Vec(writeTinyModel(t, nil, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		text string
		want []int
	}{
		// Lowercase, accents stripped, punctuation split off.
		{"Create the UNAFFABLE Café!", []int{5, 14, 7, 8, 9, 10, 13}},
		// Subwords: "issues" = issue ##s, "sending" = send ##ing.
		{"issues,sending", []int{6, 16, 12, 20, 24}},
		// A word that cannot be covered is one [UNK]; so is an over-long word.
		{"xyz refund", []int{1, 15}},
		{"\t open\u00a0ticket\x00\n", []int{27, 25}},
		// Special tokens in the text are words, not control tokens.
		{"[CLS]", []int{1, 1, 1}},
		{"", nil},
	} {
		if got := m.tok.tokens(c.text); !slices.Equal(got, c.want) {
			t.Errorf("tokens(%q) = %v, want %v", c.text, got, c.want)
		}
	}
	long := strings.Repeat("a", 101)
	if got := m.tok.tokens(long); !slices.Equal(got, []int{1}) {
		t.Errorf("over-long word: %v", got)
	}
	if got := m.tok.tokens("中a"); !slices.Equal(got, []int{1, 18}) {
		t.Errorf("CJK split: %v", got)
	}
}

func TestModel2VecEmbed(t *testing.T) {
	ctx := context.Background()
	m, err := LoadModel2Vec(writeTinyModel(t, nil, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	if m.Dim() != tinyDim || m.VocabSize() != len(tinyVocab) || m.Normalize() {
		t.Fatalf("dim %d vocab %d normalize %v", m.Dim(), m.VocabSize(), m.Normalize())
	}
	vecs, err := m.Embed(ctx, []string{"Create issue", "xyz [PAD]", "refunds!"})
	if err != nil {
		t.Fatal(err)
	}
	// "create" (5): 5 in dim 5, 1 in dim 6; "issue" (6): 6 in dim 6, 1 in
	// dim 7. Mean: dim 5 = 2.5, dim 6 = 3.5, dim 7 = 0.5.
	want := []float32{0, 0, 0, 0, 0, 2.5, 3.5, 0.5}
	if !slices.Equal(vecs[0], want) {
		t.Errorf("mean = %v, want %v", vecs[0], want)
	}
	// Only unknown words: the zero vector, as model2vec gives.
	if !slices.Equal(vecs[1], make([]float32, tinyDim)) {
		t.Errorf("unknown-only text = %v, want zeros", vecs[1])
	}
	// "refund" (15) "##s" (16) "!" (13): dims 7:15+0, 0:1+16, 1:1, 5:13, 6:1.
	want = []float32{17.0 / 3, 1.0 / 3, 0, 0, 0, 13.0 / 3, 1.0 / 3, 15.0 / 3}
	for k := range want {
		if math.Abs(float64(vecs[2][k]-want[k])) > 1e-6 {
			t.Errorf("refunds! dim %d = %v, want %v", k, vecs[2][k], want[k])
		}
	}

	yes := true
	mn, err := LoadModel2Vec(writeTinyModel(t, &yes, nil, nil))
	if err != nil {
		t.Fatal(err)
	}
	v, _ := mn.Embed(ctx, []string{"Create issue"})
	n := math.Sqrt(2.5*2.5 + 3.5*3.5 + 0.5*0.5)
	for k, x := range []float64{0, 0, 0, 0, 0, 2.5 / n, 3.5 / n, 0.5 / n} {
		if math.Abs(float64(v[0][k])-x) > 1e-6 {
			t.Errorf("normalised dim %d = %v, want %v", k, v[0][k], x)
		}
	}

	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := m.Embed(cctx, []string{"a"}); err == nil {
		t.Error("cancelled context ignored")
	}
}

func TestModel2VecHalfPrecision(t *testing.T) {
	for _, c := range []struct {
		h    uint16
		want float32
	}{
		{0x3C00, 1}, {0xC000, -2}, {0x7BFF, 65504}, {0x3800, 0.5},
		{0x0001, float32(math.Ldexp(1, -24))}, {0x0000, 0}, {0x8000, float32(math.Copysign(0, -1))},
		{0x7C00, float32(math.Inf(1))}, {0xFC00, float32(math.Inf(-1))},
	} {
		if got := halfToFloat(c.h); got != c.want || math.Signbit(float64(got)) != math.Signbit(float64(c.want)) {
			t.Errorf("halfToFloat(%#04x) = %v, want %v", c.h, got, c.want)
		}
	}
	if !math.IsNaN(float64(halfToFloat(0x7E00))) {
		t.Error("0x7e00 is not NaN")
	}

	// A model stored in F16 and in BF16 loads to the same values: every
	// tinyRow value is a small integer, exact in both.
	mat := tinyMatrix(len(tinyVocab))
	f16 := make([]byte, 2*len(mat))
	bf16 := make([]byte, 2*len(mat))
	for i, x := range mat {
		binary.LittleEndian.PutUint16(f16[2*i:], floatToHalf(x))
		binary.LittleEndian.PutUint16(bf16[2*i:], uint16(math.Float32bits(x)>>16))
	}
	for dtype, data := range map[string][]byte{"F16": f16, "BF16": bf16} {
		st := safetensorsFile(t, map[string]any{
			"embeddings": map[string]any{"dtype": dtype, "shape": []int{len(tinyVocab), tinyDim}, "data_offsets": []int{0, len(data)}},
		}, data)
		m, err := LoadModel2Vec(writeTinyModel(t, nil, st, nil))
		if err != nil {
			t.Fatalf("%s: %v", dtype, err)
		}
		if !slices.Equal(m.vecs, mat) {
			t.Errorf("%s: decoded values differ", dtype)
		}
	}
}

// floatToHalf converts small integers (the test's values) to half.
func floatToHalf(f float32) uint16 {
	if f == 0 {
		return 0
	}
	b := math.Float32bits(f)
	sign := uint16(b>>16) & 0x8000
	exp := int((b>>23)&0xff) - 127 + 15
	frac := uint16((b >> 13) & 0x3ff)
	return sign | uint16(exp)<<10 | frac
}

func TestModel2VecMalformed(t *testing.T) {
	good := f32Bytes(tinyMatrix(len(tinyVocab)))
	entry := func(dtype string, shape []int, end int) map[string]any {
		return map[string]any{"embeddings": map[string]any{"dtype": dtype, "shape": shape, "data_offsets": []int{0, end}}}
	}
	huge := make([]byte, 8)
	binary.LittleEndian.PutUint64(huge, 200_000_000)
	truncated := safetensorsFile(t, entry("F32", []int{30, 8}, len(good)), good)[:40]
	shortData := safetensorsFile(t, entry("F32", []int{30, 8}, len(good)), good[:100])
	cases := []struct {
		name string
		st   []byte
		tok  map[string]any
		want string
	}{
		{"tiny file", []byte{1, 2}, nil, "shorter than the 8-byte header length"},
		{"truncated header", truncated, nil, "truncated: the header is"},
		{"truncated data", shortData, nil, "truncated: data ends at byte 960"},
		{"header too big", append(huge, '{', '}'), nil, "header of 200000000 bytes is larger than the 100000000 allowed"},
		{"header not json", safetensorsRaw([]byte("not json")), nil, "header is not a JSON object"},
		{"wrong dtype", safetensorsFile(t, entry("I32", []int{30, 8}, len(good)), good), nil, "dtype I32; supported: F32, F16, BF16"},
		{"unknown dtype", safetensorsFile(t, entry("Q4", []int{30, 8}, len(good)), good), nil, `unknown dtype "Q4"`},
		{"shape mismatch", safetensorsFile(t, entry("F32", []int{30, 7}, len(good)), good), nil, "shape [30 7] of F32 needs 840 bytes, data offsets give 960"},
		{"not a matrix", safetensorsFile(t, entry("F32", []int{240}, len(good)), good), nil, "want [vocabulary, dimension]"},
		{"no embeddings", safetensorsFile(t, map[string]any{"emb": entry("F32", []int{30, 8}, len(good))["embeddings"]}, good), nil, `no tensor "embeddings"`},
		{"fewer rows than tokens", safetensorsFile(t, entry("F32", []int{20, 8}, 640), good[:640]), nil, "token id 29 but the embeddings have 20 rows"},
		{"unigram", nil, tokWith("model", map[string]any{"type": "Unigram", "vocab": [][]any{{"a", -1.0}}}), `model type "Unigram" is not supported`},
		{"bpe", nil, tokWith("model", map[string]any{"type": "BPE", "vocab": map[string]int{"a": 0}}), `model type "BPE" is not supported`},
		{"precompiled", nil, tokWith("normalizer", map[string]any{"type": "Precompiled"}), `normalizer type "Precompiled" is not supported`},
		{"metaspace", nil, tokWith("pre_tokenizer", map[string]any{"type": "Metaspace"}), `pre_tokenizer type "Metaspace" is not supported`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := c.st
			if st == nil {
				st = safetensorsFile(t, entry("F32", []int{30, 8}, len(good)), good)
			}
			_, err := LoadModel2Vec(writeTinyModel(t, nil, st, c.tok))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want it to contain %q", err, c.want)
			}
		})
	}
	if _, err := LoadModel2Vec(t.TempDir()); err == nil || !strings.Contains(err.Error(), "tokenizer.json") {
		t.Errorf("empty directory: %v", err)
	}
}

func tokWith(key string, v any) map[string]any {
	tok := tinyTokenizer("WordPiece")
	tok[key] = v
	return tok
}

func safetensorsRaw(header []byte) []byte {
	out := make([]byte, 8, 8+len(header))
	binary.LittleEndian.PutUint64(out, uint64(len(header)))
	return append(out, header...)
}

func TestModel2VecWordLevel(t *testing.T) {
	tok := tinyTokenizer("WordLevel")
	tok["normalizer"] = map[string]any{"type": "Sequence", "normalizers": []any{
		map[string]any{"type": "NFD"}, map[string]any{"type": "StripAccents"}, map[string]any{"type": "Lowercase"}}}
	tok["pre_tokenizer"] = map[string]any{"type": "Whitespace"}
	m, err := LoadModel2Vec(writeTinyModel(t, nil, nil, tok))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := m.tok.tokens("Café, issues!"), []int{10, 12, 1, 13}; !slices.Equal(got, want) {
		t.Errorf("tokens = %v, want %v", got, want)
	}
}

func FuzzSafetensorsHeader(f *testing.F) {
	data := f32Bytes(tinyMatrix(4))
	f.Add(safetensorsFile(f, map[string]any{"embeddings": map[string]any{"dtype": "F32", "shape": []int{4, 8}, "data_offsets": []int{0, len(data)}}}, data))
	f.Add(safetensorsRaw([]byte(`{"a":{"dtype":"F16","shape":[2,2],"data_offsets":[0,8]},"__metadata__":{}}`)))
	f.Add(safetensorsRaw([]byte(`{"a":{"dtype":"F16","shape":[4294967296,4294967296],"data_offsets":[0,0]}}`)))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, b []byte) {
		tensors, start, err := safetensorsHeader(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			return
		}
		for name, ti := range tensors {
			if start+ti.Offsets[1] > int64(len(b)) || ti.Offsets[0] < 0 || ti.Offsets[0] > ti.Offsets[1] {
				t.Fatalf("tensor %q accepted with offsets %v outside %d bytes", name, ti.Offsets, len(b))
			}
		}
		if vecs, rows, cols, err := readMatrix(bytes.NewReader(b), int64(len(b)), "embeddings"); err == nil && len(vecs) != rows*cols {
			t.Fatal(fmt.Sprintf("%d values for %d×%d", len(vecs), rows, cols))
		}
	})
}
