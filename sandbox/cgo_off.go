//go:build !cgo

package sandbox

// addressReserve is the address space a worker's runtime takes beyond its
// heap (Go's arenas and stacks). RLIMIT_AS is the memory budget plus this.
const addressReserve = 1536 << 20
