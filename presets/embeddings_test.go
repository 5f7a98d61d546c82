package presets

import (
	"os"
	"path/filepath"
	"testing"
)

func TestEmbeddingsConfig(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "codecall.yaml")
	write := func(s string) {
		t.Helper()
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}

	write("search:\n  embeddings:\n    provider: model2vec\n    path: models/potion-base-8M\n")
	cfg, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	e := cfg.Search.Embeddings
	if e.Provider != EmbeddingsModel2Vec || e.Path != filepath.Join(dir, "models/potion-base-8M") || e.Weight != DefaultEmbeddingsWeight {
		t.Errorf("model2vec config = %+v; the path is relative to the file, the weight defaults to %v", e, DefaultEmbeddingsWeight)
	}

	write("search:\n  embeddings: {provider: openai, url: 'http://localhost:11434/v1', model: nomic-embed-text, apiKeyEnv: EMBED_KEY, weight: 0.5}\n")
	if cfg, err = Load(file); err != nil {
		t.Fatal(err)
	}
	if e := cfg.Search.Embeddings; e.Provider != EmbeddingsOpenAI || e.APIKeyEnv != "EMBED_KEY" || e.Weight != 0.5 {
		t.Errorf("openai config = %+v", e)
	}

	// Off by default; keys of a provider not chosen yet are accepted.
	if d := Default().Search.Embeddings; d.Provider != EmbeddingsOff || Default().Validate() != nil {
		t.Errorf("default embeddings %+v", d)
	}
	c := Default()
	c.Search.Embeddings.URL = "http://h"
	if err := c.Validate(); err != nil {
		t.Errorf("url with provider off: %v", err)
	}
	for _, s := range []string{"A", "_x", "EMBED_KEY_2"} {
		if !isEnvName(s) {
			t.Errorf("isEnvName(%q) = false", s)
		}
	}
	for _, s := range []string{"", "2X", "sk-abc", "A B"} {
		if isEnvName(s) {
			t.Errorf("isEnvName(%q) = true", s)
		}
	}
}
