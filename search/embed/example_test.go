package embed_test

import (
	"context"
	"fmt"
	"log"
	"os"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/search/embed"
)

// An index whose search also uses an embedding model served by Ollama
// ("ollama pull nomic-embed-text"; llama.cpp's server and vLLM speak the
// same API). If the server is down when the index is built, the index is
// lexical only and DenseErr says why.
func ExampleNewOpenAI() {
	e, err := embed.NewOpenAI("http://localhost:11434", "nomic-embed-text",
		embed.WithAPIKey(os.Getenv("EMBEDDINGS_API_KEY")))
	if err != nil {
		log.Fatal(err)
	}
	tools := []*catalog.Tool{
		{Name: "billing.create_refund", AppID: "billing", Description: "Refund a charge to the customer's card."},
		{Name: "slack.post_message", AppID: "slack", Description: "Post a message to a Slack channel."},
	}
	ctx := context.Background()
	ix, err := search.NewContext(ctx, tools, search.WithEmbedder(e, 0.3))
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
	if err := ix.DenseErr(); err != nil {
		log.Printf("warning: %v", err)
	}
	res, err := ix.Search(ctx, search.Query{Text: "indemnify the purchaser", TopK: 1})
	if err != nil {
		log.Fatal(err)
	}
	for _, h := range res.Hits {
		fmt.Printf("%s %.2f\n", h.Tool.Name, h.Score)
	}
}

// A model2vec static model runs in process, with no server: download a
// model directory such as minishlab/potion-base-8M from the Hugging Face hub
// (model.safetensors, tokenizer.json, config.json) and point to it.
func ExampleLoadModel2Vec() {
	m, err := embed.LoadModel2Vec("models/potion-base-8M")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("dimension", m.Dim())
	ix, err := search.New([]*catalog.Tool{{Name: "github.create_issue", Description: "Create an issue."}},
		search.WithEmbedder(m, search.DefaultDenseWeight))
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()
}
