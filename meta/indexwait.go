package meta

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/search"
	"github.com/codecall-go/codecall/toolerr"
)

const (
	// indexWait bounds how long a search waits for an index still being
	// built: long enough for a large catalog's build to end in most
	// cases, short enough that the client hears why, and that it may
	// retry, before its own timeout (60 s in the common SDKs) gives it
	// nothing to act on.
	indexWait = 20 * time.Second
	// indexProgressEvery is how often a waiting search tells a client
	// that asked for progress that it is still waiting.
	indexProgressEvery = time.Second
)

// buildingIndex is an index built in the background (search.AsyncIndex)
// that may not answer yet.
type buildingIndex interface {
	// Serving reports whether a search answers without waiting.
	Serving() bool
	// Wait blocks until the build ends or ctx ends.
	Wait(ctx context.Context) error
	// Len is the number of tools being indexed.
	Len() int
	// Started is when the build began.
	Started() time.Time
}

// awaitIndex waits, for at most indexWait, until st.Index can answer,
// calling progress (when not nil) at once and then every
// indexProgressEvery with a sentence saying how the build goes. An index
// that already answers costs nothing here. The error is a *toolerr.Error
// a model can act on: retry later, or the build's failure.
func (st *State) awaitIndex(ctx context.Context, progress func(message string)) error {
	b, ok := st.Index.(buildingIndex)
	if !ok || b.Serving() {
		return nil
	}
	wctx, cancel := context.WithTimeout(ctx, indexWait)
	defer cancel()
	for {
		if progress != nil {
			progress(fmt.Sprintf("waiting for the search index of %d tools, being built for %s", b.Len(),
				time.Since(b.Started()).Round(100*time.Millisecond)))
		}
		step, stop := context.WithTimeout(wctx, indexProgressEvery)
		err := b.Wait(step)
		stop()
		var be *search.BuildingError
		switch {
		case err == nil:
			return nil
		case !errors.As(err, &be):
			return &toolerr.Error{Code: toolerr.Execution, Message: "search failed: " + err.Error()}
		case wctx.Err() != nil:
			return indexError(ctx, be)
		}
	}
}

// indexError is the refusal of a search whose index was not ready in
// time: retryable unless the client itself cancelled.
func indexError(ctx context.Context, be *search.BuildingError) *toolerr.Error {
	if errors.Is(ctx.Err(), context.Canceled) {
		return &toolerr.Error{Code: toolerr.Cancelled, Message: "the search was cancelled while " + be.Error()}
	}
	return &toolerr.Error{Code: toolerr.Timeout, Message: be.Error(), Retryable: true,
		Hint: "Call the same search again in a few seconds; the index is built once for the whole catalog."}
}

// progressNotifier returns a function that sends a request's client a
// progress notification with a message, or nil when the request carried
// no progress token or has no client session. count numbers the
// notifications; it is shared with whatever else reports progress on the
// same request, since progress must increase.
func progressNotifier(ctx context.Context, token mcp.ProgressToken, count *atomic.Int64) func(message string) {
	srv := server.ServerFromContext(ctx)
	if token == nil || srv == nil || server.ClientSessionFromContext(ctx) == nil {
		return nil
	}
	return func(message string) {
		_ = srv.SendNotificationToClient(ctx, string(mcp.MethodNotificationProgress),
			map[string]any{"progressToken": token, "progress": count.Add(1), "message": message})
	}
}

// progressFunc reports a plan's wait for the index as progress of the
// request that runs the plan, numbered with its call events.
func (p *planHost) progressFunc() func(string) {
	return progressNotifier(p.reqCtx, p.progress, &p.events)
}
