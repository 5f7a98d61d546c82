package catalog

import (
	"context"
	"time"
)

// callTimeoutKey marks a call's context as bounded by its tool's timeout.
type callTimeoutKey struct{}

// WithCallTimeout bounds ctx by a tool's timeout d and records that it did,
// so a handler that has a ceiling of its own (the gateway's per-upstream
// timeout) leaves the bound to the caller: the operator's tools.<glob>
// timeout may be longer than the upstream's, and the caller's error names
// where it is configured.
func WithCallTimeout(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithTimeout(ctx, d)
	return context.WithValue(ctx, callTimeoutKey{}, d), cancel
}

// CallTimeout returns the tool's timeout WithCallTimeout put on ctx, and
// whether it did.
func CallTimeout(ctx context.Context) (time.Duration, bool) {
	d, ok := ctx.Value(callTimeoutKey{}).(time.Duration)
	return d, ok
}
