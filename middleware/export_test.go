package middleware

import (
	"context"
	"time"

	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/search"
)

// WithIndexBuild replaces search.New for background index builds, so a
// test can hold a build at a known point instead of racing a timer.
func WithIndexBuild(build search.BuildFunc) Option {
	return func(o *options) { o.indexBuild = build }
}

// SweepPaused runs one sweep of paused plans as if the clock read now.
func (c *CodeCall) SweepPaused(now time.Time) int { return c.sweepOnce(context.Background(), now) }

// WithDurableOptions passes opts to meta.NewDurable (a test's clock).
func WithDurableOptions(opts ...meta.DurableOption) Option {
	return func(o *options) { o.durableOpts = append(o.durableOpts, opts...) }
}
