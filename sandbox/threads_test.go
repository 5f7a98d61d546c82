//go:build linux

package sandbox

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestWorkerThreadsConfined starts real workers and reads what the kernel
// says of every one of their threads in /proc: no capability in any set,
// no_new_privs, seccomp in filter mode, and a Landlock domain in force
// wherever the kernel has Landlock. It does so for the test binary (built
// with cgo when a C compiler is at hand, as a plain go build is) and for
// cmd/codecall-worker built both with cgo and with CGO_ENABLED=0, since the
// two confine their threads in different ways.
func TestWorkerThreadsConfined(t *testing.T) {
	workers := map[string]string{"test binary": "/proc/self/exe"}
	if testing.Short() {
		t.Log("-short: only the test binary, no worker builds")
	} else if _, err := exec.LookPath("go"); err != nil {
		t.Log("the go command is not on PATH: only the test binary")
	} else {
		dir := t.TempDir()
		for _, cgo := range []string{"1", "0"} {
			if cgo == "1" && !haveCCompiler() {
				t.Log("no C compiler: no cgo build of the worker")
				continue
			}
			bin := filepath.Join(dir, "codecall-worker-cgo"+cgo)
			cmd := exec.Command("go", "build", "-o", bin, "github.com/codecall-go/codecall/cmd/codecall-worker")
			cmd.Env = append(os.Environ(), "CGO_ENABLED="+cgo)
			if out, err := cmd.CombinedOutput(); err != nil {
				t.Fatalf("building the worker with CGO_ENABLED=%s: %v\n%s", cgo, err, out)
			}
			workers["codecall-worker CGO_ENABLED="+cgo] = bin
		}
	}
	abi := landlockABI()
	for name, bin := range workers {
		t.Run(name, func(t *testing.T) {
			p := newTestPool(t, WithCommand(bin), WithSize(1))
			w, tk, _, err := p.acquire(context.Background(), "")
			if err != nil {
				t.Fatal(err)
			}
			defer p.release(tk)
			defer func() {
				w.kill("test")
				p.retire(w)
			}()
			tasks, err := os.ReadDir("/proc/" + strconv.Itoa(w.pid) + "/task")
			if err != nil {
				t.Fatal(err)
			}
			if len(tasks) < 2 {
				t.Errorf("the worker runs %d thread(s); a Go runtime runs several", len(tasks))
			}
			for _, task := range tasks {
				b, err := os.ReadFile("/proc/" + strconv.Itoa(w.pid) + "/task/" + task.Name() + "/status")
				if err != nil {
					continue // the thread ended
				}
				f := parseStatus(string(b))
				for _, k := range []string{"CapEff", "CapPrm", "CapInh", "CapAmb", "CapBnd"} {
					if strings.Trim(f[k], "0") != "" || f[k] == "" {
						t.Errorf("thread %s: %s is %q, want all zero", task.Name(), k, f[k])
					}
				}
				if f["NoNewPrivs"] != "1" {
					t.Errorf("thread %s: NoNewPrivs is %q, want 1", task.Name(), f["NoNewPrivs"])
				}
				if f["Seccomp"] != "2" {
					t.Errorf("thread %s: Seccomp is %q, want 2 (filter)", task.Name(), f["Seccomp"])
				}
			}
			c := p.Confinement()
			if !c.CapabilitiesDropped || !c.NoNewPrivs || !c.Seccomp || !c.EmptyRoot || c.CheckedThreads < 1 {
				t.Errorf("confinement %+v", c)
			}
			if abi < 1 {
				t.Logf("this kernel has no Landlock (or it is disabled): no Landlock domain to check")
			} else if !c.Landlock || c.LandlockABI != abi {
				t.Errorf("Landlock: %v at ABI %d, want a domain at the kernel's ABI %d", c.Landlock, c.LandlockABI, abi)
			}
			t.Logf("%d threads; %s", len(tasks), c)
		})
	}
}

// haveCCompiler reports whether go build can use cgo here.
func haveCCompiler() bool {
	out, err := exec.Command("go", "env", "CC").Output()
	if err != nil {
		return false
	}
	cc := strings.Fields(string(out))
	if len(cc) == 0 {
		return false
	}
	_, err = exec.LookPath(cc[0])
	return err == nil
}
