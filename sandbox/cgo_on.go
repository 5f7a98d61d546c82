//go:build cgo

package sandbox

// addressReserve is the address space a worker's runtime takes beyond its
// heap: Go's arenas and stacks, and in a cgo binary the C library's thread
// stacks and malloc arenas. RLIMIT_AS is the memory budget plus this.
const addressReserve = 2560 << 20
