package embed

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"os"
	"path/filepath"
)

// Model2Vec limits.
const (
	// MaxModel2VecTokens is how many tokens of a text count, as in
	// model2vec's encode (max_length 512): beyond them a long description
	// shifts the mean little and costs time.
	MaxModel2VecTokens = 512
	// maxTokenizerBytes and maxConfigBytes bound the JSON files read; a
	// BERT vocabulary's tokenizer.json is under 1 MiB.
	maxTokenizerBytes = 64 << 20
	maxConfigBytes    = 1 << 20
)

// Model2Vec is a model2vec static embedding model: a vector per token, and
// a text's embedding is the mean of its tokens' vectors. It is read-only
// after loading and safe for concurrent use.
type Model2Vec struct {
	vecs      []float32 // rows × dim, row-major
	rows, dim int
	tok       *tokenizer
	normalize bool
}

// LoadModel2Vec loads a model2vec model from dir, as saved by model2vec's
// save_pretrained or downloaded from the Hugging Face hub (for example
// minishlab/potion-base-8M):
//
//   - model.safetensors holds the tensor "embeddings" of shape
//     [vocabulary, dimension] in F32, F16 or BF16;
//   - tokenizer.json is a HuggingFace tokenizers file with a WordPiece or
//     WordLevel model; BERT normalization and pre-tokenization (and the
//     common simpler ones) are supported, anything else is refused by name;
//   - config.json (optional) may set "normalize": true to L2-normalise
//     each embedding.
func LoadModel2Vec(dir string) (*Model2Vec, error) {
	tokData, err := readLimited(filepath.Join(dir, "tokenizer.json"), maxTokenizerBytes)
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	tok, err := parseTokenizer(tokData)
	if err != nil {
		return nil, fmt.Errorf("model2vec: %s: %w", dir, err)
	}
	m := &Model2Vec{tok: tok}

	cfg, err := readLimited(filepath.Join(dir, "config.json"), maxConfigBytes)
	switch {
	case errors.Is(err, fs.ErrNotExist):
	case err != nil:
		return nil, fmt.Errorf("model2vec: %w", err)
	default:
		var c struct {
			Normalize *bool `json:"normalize"`
		}
		if err := json.Unmarshal(cfg, &c); err != nil {
			return nil, fmt.Errorf("model2vec: %s: %w", filepath.Join(dir, "config.json"), err)
		}
		m.normalize = c.Normalize != nil && *c.Normalize
	}

	path := filepath.Join(dir, "model.safetensors")
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, fmt.Errorf("model2vec: %w", err)
	}
	m.vecs, m.rows, m.dim, err = readMatrix(f, st.Size(), "embeddings")
	if err != nil {
		return nil, fmt.Errorf("model2vec: %s: %w", path, err)
	}
	if tok.maxID >= m.rows {
		return nil, fmt.Errorf("model2vec: %s: the tokenizer has token id %d but the embeddings have %d rows; a model with a token mapping or weights tensor needs a newer loader", dir, tok.maxID, m.rows)
	}
	return m, nil
}

// readLimited reads a file of at most limit bytes.
func readLimited(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, limit)
	}
	return data, nil
}

// Dim returns the dimension of the model's vectors.
func (m *Model2Vec) Dim() int { return m.dim }

// VocabSize returns the number of token vectors.
func (m *Model2Vec) VocabSize() int { return m.rows }

// Normalize reports whether embeddings are L2-normalised (config.json).
func (m *Model2Vec) Normalize() bool { return m.normalize }

// Embed returns the embedding of each text: the mean of the vectors of its
// first MaxModel2VecTokens tokens, unknown and special tokens left out as
// model2vec does, L2-normalised when the model's config says so. A text
// with no known token embeds as the zero vector.
func (m *Model2Vec) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%64 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, err
			}
		}
		out[i] = m.embed(t)
	}
	return out, nil
}

func (m *Model2Vec) embed(text string) []float32 {
	sum := make([]float64, m.dim)
	n := 0
	for _, id := range m.tok.tokens(text) {
		if m.tok.skip[id] {
			continue
		}
		if n == MaxModel2VecTokens {
			break
		}
		row := m.vecs[id*m.dim : (id+1)*m.dim]
		for k, x := range row {
			sum[k] += float64(x)
		}
		n++
	}
	v := make([]float32, m.dim)
	if n == 0 {
		return v
	}
	var norm float64
	for k := range sum {
		sum[k] /= float64(n)
		norm += sum[k] * sum[k]
	}
	scale := 1.0
	if m.normalize && norm > 0 {
		scale = 1 / math.Sqrt(norm)
	}
	for k := range sum {
		v[k] = float32(sum[k] * scale)
	}
	return v
}
