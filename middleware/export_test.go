package middleware

import "github.com/codecall-go/codecall/search"

// WithIndexBuild replaces search.New for background index builds, so a
// test can hold a build at a known point instead of racing a timer.
func WithIndexBuild(build search.BuildFunc) Option {
	return func(o *options) { o.indexBuild = build }
}
