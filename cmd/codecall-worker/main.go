// Command codecall-worker is a small executable that runs CodeCall plans in
// a sandboxed worker process, for servers that name it as their worker
// command (sandbox.command in the configuration, or sandbox.WithCommand).
//
// Any binary that imports package sandbox can serve as its own worker, and
// that is the default; a dedicated worker links only what a plan needs, so
// each worker starts faster than a re-executed server that also
// initialises a search index library and the rest of the server. A server
// starts one worker per plan, so start-up is what bounds throughput.
//
// It is started by the server, with its arguments; run by hand it does
// nothing and says so.
package main

import (
	"fmt"
	"os"

	"github.com/codecall-go/codecall/sandbox"
)

func main() {
	sandbox.Main()
	fmt.Fprintln(os.Stderr, "codecall-worker runs plans for a CodeCall server, which starts it; "+
		"set sandbox.command to its absolute path in the server's configuration instead of running it by hand")
	os.Exit(2)
}
