package mcptest

import (
	"fmt"
	"os"
)

// RunWithStateDir runs a package's tests with XDG_STATE_HOME set to a
// temporary directory, removed afterwards, and returns their exit code:
// gateways started by the tests (and the servers they start) pin tool
// definitions there, never in the user's state directory, so one run
// cannot hold back a tool in the next. Call it from TestMain.
func RunWithStateDir(run func() int) int {
	dir, err := os.MkdirTemp("", "codecall-test-state-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	os.Setenv("XDG_STATE_HOME", dir)
	return run()
}
