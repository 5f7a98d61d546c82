package attacks

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// envWorker names the worker executable the suite's process mode starts;
// the test process builds it once and hands it to its child processes.
const envWorker = "CODECALLTEST_ATTACK_WORKER"

// envRaceWorker, set, builds the worker with the race detector when the
// suite runs under it. By default the worker is built without it.
const envRaceWorker = "CODECALLTEST_ATTACK_RACE_WORKER"

// workerCommand is the absolute path of a codecall-worker binary built for
// this run, or "" to re-execute the test binary. A dedicated worker
// initialises only what a plan needs, which keeps the suite's process mode
// fast (the test binary links the whole server, and under the race
// detector each re-execution is slow to start).
var workerCommand string

func TestMain(m *testing.M) {
	workerCommand = os.Getenv(envWorker)
	var dir string
	if workerCommand == "" {
		dir, workerCommand = buildWorker()
		if workerCommand != "" {
			os.Setenv(envWorker, workerCommand)
		}
	}
	code := m.Run()
	if dir != "" {
		os.RemoveAll(dir)
	}
	os.Exit(code)
}

// buildWorker builds cmd/codecall-worker into a temporary directory; it
// returns "" (and the suite re-executes its own binary) when the go
// command is not at hand or the build fails.
func buildWorker() (dir, path string) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		return "", ""
	}
	dir, err = os.MkdirTemp("", "codecall-attacks-")
	if err != nil {
		return "", ""
	}
	path = filepath.Join(dir, "codecall-worker")
	args := []string{"build", "-o", path}
	if raceEnabled && os.Getenv(envRaceWorker) != "" {
		args = append(args, "-race")
	}
	if out, err := exec.Command(goCmd, append(args, "../cmd/codecall-worker")...).CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "attacks: building codecall-worker failed, re-executing the test binary instead: %v\n%s", err, out)
		os.RemoveAll(dir)
		return "", ""
	}
	return dir, path
}
