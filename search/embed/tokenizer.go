package embed

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// tokenizer is the part of a HuggingFace tokenizers pipeline that static
// embedding models need: normalizer, pre-tokenizer and a WordPiece or
// WordLevel model. Added tokens are not matched in the text: model2vec
// encodes without special tokens, and a user's text that spells "[CLS]"
// is words, not a control token.
type tokenizer struct {
	normalize []func(string) string
	preSplit  []func(string) []string
	vocab     map[string]int
	unk       int // -1 when the model has no unknown token
	wordPiece bool
	prefix    string // continuing-subword prefix, "##"
	maxChars  int    // longer words are unknown (WordPiece)
	// skip holds the ids that never count in a mean: the unknown token and
	// the special tokens ([PAD], [CLS], [SEP], [MASK]).
	skip map[int]bool
	// maxID is the largest id in the vocabulary or added tokens.
	maxID int
}

// tokenizerFile is the subset of tokenizer.json that is read.
type tokenizerFile struct {
	AddedTokens []struct {
		ID      int    `json:"id"`
		Content string `json:"content"`
		Special bool   `json:"special"`
	} `json:"added_tokens"`
	Normalizer   json.RawMessage `json:"normalizer"`
	PreTokenizer json.RawMessage `json:"pre_tokenizer"`
	Model        struct {
		Type                    string          `json:"type"`
		UnkToken                *string         `json:"unk_token"`
		ContinuingSubwordPrefix *string         `json:"continuing_subword_prefix"`
		MaxInputCharsPerWord    int             `json:"max_input_chars_per_word"`
		Vocab                   json.RawMessage `json:"vocab"`
	} `json:"model"`
}

// component is a normalizer or pre-tokenizer entry: a type and, for
// sequences, their parts.
type component struct {
	Type               string            `json:"type"`
	Lowercase          *bool             `json:"lowercase"`
	StripAccents       *bool             `json:"strip_accents"`
	CleanText          *bool             `json:"clean_text"`
	HandleChineseChars *bool             `json:"handle_chinese_chars"`
	Normalizers        []json.RawMessage `json:"normalizers"`
	PreTokenizers      []json.RawMessage `json:"pretokenizers"`
}

// parseTokenizer reads a tokenizer.json. A pipeline with a part this
// reader does not implement is refused by name, rather than tokenised
// differently from the model's own tokenizer, which would quietly give
// worse vectors.
func parseTokenizer(data []byte) (*tokenizer, error) {
	var f tokenizerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	t := &tokenizer{unk: -1, skip: map[int]bool{}, maxID: -1}
	switch f.Model.Type {
	case "WordPiece":
		t.wordPiece = true
		t.prefix = "##"
		if f.Model.ContinuingSubwordPrefix != nil {
			t.prefix = *f.Model.ContinuingSubwordPrefix
		}
		t.maxChars = f.Model.MaxInputCharsPerWord
		if t.maxChars <= 0 {
			t.maxChars = 100
		}
	case "WordLevel":
	case "":
		return nil, fmt.Errorf("tokenizer.json: no model type")
	default:
		return nil, fmt.Errorf("tokenizer.json: model type %q is not supported (supported: WordPiece, WordLevel)", f.Model.Type)
	}
	if err := json.Unmarshal(f.Model.Vocab, &t.vocab); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %s vocab: want an object of token ids: %w", f.Model.Type, err)
	}
	if len(t.vocab) == 0 {
		return nil, fmt.Errorf("tokenizer.json: empty vocabulary")
	}
	for tok, id := range t.vocab {
		if id < 0 {
			return nil, fmt.Errorf("tokenizer.json: token %q has negative id %d", tok, id)
		}
		t.maxID = max(t.maxID, id)
	}
	if f.Model.UnkToken != nil {
		id, ok := t.vocab[*f.Model.UnkToken]
		if !ok {
			return nil, fmt.Errorf("tokenizer.json: unknown token %q is not in the vocabulary", *f.Model.UnkToken)
		}
		t.unk = id
		t.skip[id] = true
	}
	for _, a := range f.AddedTokens {
		if a.ID < 0 {
			return nil, fmt.Errorf("tokenizer.json: added token %q has negative id %d", a.Content, a.ID)
		}
		t.maxID = max(t.maxID, a.ID)
		if a.Special {
			t.skip[a.ID] = true
		}
	}
	var err error
	if t.normalize, err = normalizers(f.Normalizer); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	if t.preSplit, err = preTokenizers(f.PreTokenizer); err != nil {
		return nil, fmt.Errorf("tokenizer.json: %w", err)
	}
	return t, nil
}

func isNull(raw json.RawMessage) bool {
	s := strings.TrimSpace(string(raw))
	return s == "" || s == "null"
}

func normalizers(raw json.RawMessage) ([]func(string) string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("normalizer: %w", err)
	}
	switch c.Type {
	case "BertNormalizer":
		lower := c.Lowercase == nil || *c.Lowercase
		// strip_accents null follows lowercase, as in the Rust library.
		strip := lower
		if c.StripAccents != nil {
			strip = *c.StripAccents
		}
		var out []func(string) string
		if c.CleanText == nil || *c.CleanText {
			out = append(out, cleanText)
		}
		if c.HandleChineseChars == nil || *c.HandleChineseChars {
			out = append(out, spaceCJK)
		}
		if strip {
			out = append(out, stripAccents)
		}
		if lower {
			out = append(out, strings.ToLower)
		}
		return out, nil
	case "Lowercase":
		return []func(string) string{strings.ToLower}, nil
	case "StripAccents":
		return []func(string) string{dropMarks}, nil
	case "NFD":
		return []func(string) string{norm.NFD.String}, nil
	case "NFKD":
		return []func(string) string{norm.NFKD.String}, nil
	case "NFC":
		return []func(string) string{norm.NFC.String}, nil
	case "NFKC":
		return []func(string) string{norm.NFKC.String}, nil
	case "Sequence":
		var out []func(string) string
		for _, n := range c.Normalizers {
			fs, err := normalizers(n)
			if err != nil {
				return nil, err
			}
			out = append(out, fs...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("normalizer type %q is not supported (supported: BertNormalizer, Lowercase, StripAccents, NFD, NFKD, NFC, NFKC, Sequence)", c.Type)
}

func preTokenizers(raw json.RawMessage) ([]func(string) []string, error) {
	if isNull(raw) {
		return nil, nil
	}
	var c component
	if err := json.Unmarshal(raw, &c); err != nil {
		return nil, fmt.Errorf("pre_tokenizer: %w", err)
	}
	switch c.Type {
	case "BertPreTokenizer":
		return []func(string) []string{bertSplit}, nil
	case "WhitespaceSplit":
		return []func(string) []string{strings.Fields}, nil
	case "Whitespace":
		return []func(string) []string{wordSplit}, nil
	case "Sequence":
		var out []func(string) []string
		for _, p := range c.PreTokenizers {
			fs, err := preTokenizers(p)
			if err != nil {
				return nil, err
			}
			out = append(out, fs...)
		}
		return out, nil
	}
	return nil, fmt.Errorf("pre_tokenizer type %q is not supported (supported: BertPreTokenizer, Whitespace, WhitespaceSplit, Sequence)", c.Type)
}

// cleanText drops NUL, U+FFFD and control characters and turns every
// whitespace character into a space, as BERT's normalizer does.
func cleanText(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == 0 || r == utf8.RuneError:
			return -1
		case r == '\t' || r == '\n' || r == '\r' || unicode.IsSpace(r):
			return ' '
		case unicode.IsControl(r) || unicode.In(r, unicode.Cf):
			return -1
		}
		return r
	}, s)
}

// spaceCJK puts spaces around CJK ideographs, so that each is a word: BERT
// vocabularies hold them one by one.
func spaceCJK(s string) string {
	if !strings.ContainsFunc(s, isCJK) {
		return s
	}
	var b strings.Builder
	for _, r := range s {
		if isCJK(r) {
			b.WriteByte(' ')
			b.WriteRune(r)
			b.WriteByte(' ')
		} else {
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isCJK(r rune) bool {
	return (r >= 0x4E00 && r <= 0x9FFF) || (r >= 0x3400 && r <= 0x4DBF) ||
		(r >= 0x20000 && r <= 0x2A6DF) || (r >= 0x2A700 && r <= 0x2B73F) ||
		(r >= 0x2B740 && r <= 0x2B81F) || (r >= 0x2B820 && r <= 0x2CEAF) ||
		(r >= 0xF900 && r <= 0xFAFF) || (r >= 0x2F800 && r <= 0x2FA1F)
}

// stripAccents decomposes s and drops the combining marks: "café" → "cafe".
func stripAccents(s string) string { return dropMarks(norm.NFD.String(s)) }

func dropMarks(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.Is(unicode.Mn, r) {
			return -1
		}
		return r
	}, s)
}

// isBertPunct is BERT's punctuation: every ASCII symbol, and Unicode
// punctuation.
func isBertPunct(r rune) bool {
	if (r >= 33 && r <= 47) || (r >= 58 && r <= 64) || (r >= 91 && r <= 96) || (r >= 123 && r <= 126) {
		return true
	}
	return unicode.IsPunct(r)
}

// bertSplit splits on whitespace and makes each punctuation character a
// word of its own.
func bertSplit(s string) []string {
	var out []string
	start := -1
	for i, r := range s {
		switch {
		case unicode.IsSpace(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
		case isBertPunct(r):
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			out = append(out, string(r))
		default:
			if start < 0 {
				start = i
			}
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// wordSplit is the Whitespace pre-tokenizer: runs of word characters
// (\w) and runs of other non-space characters.
func wordSplit(s string) []string {
	isWord := func(r rune) bool {
		return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)
	}
	var out []string
	start, kind := -1, false
	for i, r := range s {
		if unicode.IsSpace(r) {
			if start >= 0 {
				out = append(out, s[start:i])
				start = -1
			}
			continue
		}
		w := isWord(r)
		if start >= 0 && w != kind {
			out = append(out, s[start:i])
			start = -1
		}
		if start < 0 {
			start, kind = i, w
		}
	}
	if start >= 0 {
		out = append(out, s[start:])
	}
	return out
}

// tokens returns the ids of text's tokens, the unknown token included.
func (t *tokenizer) tokens(text string) []int {
	for _, n := range t.normalize {
		text = n(text)
	}
	words := []string{text}
	if len(t.preSplit) == 0 {
		words = strings.Fields(text)
	}
	for _, split := range t.preSplit {
		var next []string
		for _, w := range words {
			next = append(next, split(w)...)
		}
		words = next
	}
	var ids []int
	for _, w := range words {
		if t.wordPiece {
			ids = t.wordPieces(w, ids)
			continue
		}
		if id, ok := t.vocab[w]; ok {
			ids = append(ids, id)
		} else if t.unk >= 0 {
			ids = append(ids, t.unk)
		}
	}
	return ids
}

// wordPieces appends the ids of word's greedy longest-match-first pieces:
// "unaffable" → "un", "##aff", "##able". A word that cannot be covered is
// one unknown token, as in BERT.
func (t *tokenizer) wordPieces(word string, ids []int) []int {
	if utf8.RuneCountInString(word) > t.maxChars {
		if t.unk >= 0 {
			ids = append(ids, t.unk)
		}
		return ids
	}
	mark := len(ids)
	start := 0
	for start < len(word) {
		end := len(word)
		found := -1
		for end > start {
			piece := word[start:end]
			if start > 0 {
				piece = t.prefix + piece
			}
			if id, ok := t.vocab[piece]; ok {
				found = id
				break
			}
			// Step back one rune, not one byte.
			_, size := utf8.DecodeLastRuneInString(word[start:end])
			end -= size
		}
		if found < 0 {
			ids = ids[:mark]
			if t.unk >= 0 {
				ids = append(ids, t.unk)
			}
			return ids
		}
		ids = append(ids, found)
		start = end
	}
	return ids
}
