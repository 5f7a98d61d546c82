package search_test

import (
	"context"
	"fmt"
	"log"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/search"
)

func Example() {
	tools := []*catalog.Tool{
		{Name: "github.create_issue", AppID: "github", Description: "Create a new issue in a repository."},
		{Name: "github.list_pull_requests", AppID: "github", Description: "List pull requests of a repository."},
		{Name: "slack.post_message", AppID: "slack", Description: "Post a message to a Slack channel."},
		{Name: "billing.create_refund", AppID: "billing", Description: "Refund a charge to the customer's card."},
	}
	ix, err := search.New(tools)
	if err != nil {
		log.Fatal(err)
	}
	defer ix.Close()

	ctx := context.Background()
	for _, q := range []search.Query{
		{Text: "open a ticket for the login bug", TopK: 1},
		{Text: "give the customer their money back", TopK: 1},
		{Text: "which PRs are open?", TopK: 1},
		{Text: "tell the team in chat", TopK: 1, AppIDs: []string{"slack"}},
		{Text: "book a flight to Lisbon", TopK: 1},
	} {
		res, err := ix.Search(ctx, q)
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("%q:", q.Text)
		for _, h := range res.Hits {
			fmt.Printf(" %s", h.Tool.Name)
		}
		for _, w := range res.Warnings {
			fmt.Printf(" [%s]", w.Type)
		}
		fmt.Println()
	}
	// Output:
	// "open a ticket for the login bug": github.create_issue
	// "give the customer their money back": billing.create_refund
	// "which PRs are open?": github.list_pull_requests
	// "tell the team in chat": slack.post_message
	// "book a flight to Lisbon": [no_results]
}
