package mcptest

import (
	"bytes"
	"sync"
)

// Buffer collects what is written to it, such as a logger's or a
// command's output, for a test to read while goroutines still write. The
// zero value is empty and ready; it is safe for concurrent use.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// String returns everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}
