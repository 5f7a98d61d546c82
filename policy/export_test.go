package policy

import "time"

// WithDownGrace shortens how long a waiting call reads a failing shared
// store before it ends, so tests need not wait the default.
func WithDownGrace(d time.Duration) OutOfBandOption { return func(o *OutOfBand) { o.downGrace = d } }

// WithLease shortens the lease of a waiting call's entry in a shared
// queue.
func WithLease(d time.Duration) OutOfBandOption { return func(o *OutOfBand) { o.lease = d } }
