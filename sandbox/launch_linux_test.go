//go:build linux

package sandbox

import (
	"bytes"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// launchable skips the test when this host cannot make the namespaces a
// launched program needs.
func launchable(t *testing.T) {
	t.Helper()
	cmd := exec.Command("/bin/true")
	cmd.SysProcAttr = launchAttr(false)
	if err := cmd.Run(); err != nil {
		t.Skipf("this host refuses user, pid, net and mount namespaces (%v): launched programs cannot be confined here", err)
	}
}

// runLaunched runs a bash script under p and returns its output and exit
// error.
func runLaunched(t *testing.T, p Profile, script string) (string, error) {
	t.Helper()
	cmd, err := p.Command("bash", []string{"-c", script}, []string{"PATH=/usr/bin:/bin", "HOME=/nonexistent"})
	if err != nil {
		t.Fatalf("Command: %v", err)
	}
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.WaitDelay = 10 * time.Second
	err = cmd.Run()
	return out.String(), err
}

func TestLaunchConfines(t *testing.T) {
	launchable(t)
	base := t.TempDir()
	work := filepath.Join(base, "work")
	ro := filepath.Join(base, "ro")
	for _, d := range []string{work, ro} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(base, "secret.txt")
	for f, s := range map[string]string{secret: "the gateway's own file", filepath.Join(ro, "in.txt"): "readable"} {
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	port := strconv.Itoa(ln.Addr().(*net.TCPAddr).Port)
	prof := Profile{Dir: work, Paths: []ViewPath{{Path: ro}}}

	tests := []struct {
		name    string
		profile Profile
		script  string
		wantOK  bool
		want    string // in the output
	}{
		{"runs from the runtime directories", prof, "echo hello", true, "hello"},
		{"writes in its working directory", prof, "echo x > out.txt && pwd", true, work},
		{"reads a read-only path", prof, "cat " + ro + "/in.txt", true, "readable"},
		{"cannot write a read-only path", prof, "echo x > " + ro + "/new.txt", false, "Read-only file system"},
		{"cannot read a host file outside the view", prof, "cat " + secret, false, "No such file"},
		{"cannot see /etc/shadow", prof, "cat /etc/shadow", false, "No such file"},
		{"is not the host's pid 1 and holds no capability", prof, "echo pid=$$; grep -E '^(CapEff|CapBnd|NoNewPrivs)' /proc/self/status", true, "CapBnd:\t0000000000000000"},
		{"has no_new_privs", prof, "grep NoNewPrivs /proc/self/status", true, "NoNewPrivs:\t1"},
		{"cannot connect out without network", prof, "echo > /dev/tcp/127.0.0.1/" + port, false, "/dev/tcp/127.0.0.1/" + port + ": "}, // refused (own loopback) or denied (Landlock)
		{"connects with network", Profile{Network: true}, "echo > /dev/tcp/127.0.0.1/" + port + " && echo connected", true, "connected"},
	}
	if os.Geteuid() != 0 {
		// The kernel exempts processes of the host's root from
		// RLIMIT_NPROC, in any user namespace.
		tests = append(tests, struct {
			name    string
			profile Profile
			script  string
			wantOK  bool
			want    string
		}{"hits the process cap", Profile{MaxProcesses: 3}, "for i in 1 2 3 4 5; do sleep 1 & done; wait", false, "fork"})
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out, err := runLaunched(t, tc.profile, tc.script)
			if (err == nil) != tc.wantOK || !strings.Contains(out, tc.want) {
				t.Fatalf("err %v, output %q; want success %v and %q in the output", err, out, tc.wantOK, tc.want)
			}
		})
	}
	if b, err := os.ReadFile(filepath.Join(work, "out.txt")); err != nil || string(b) != "x\n" {
		t.Errorf("the file written in the working directory: %q, %v", b, err)
	}
	if _, err := os.Stat(filepath.Join(ro, "new.txt")); err == nil {
		t.Error("a file was written in the read-only path")
	}
}

func TestLaunchRefusesOutsideView(t *testing.T) {
	dir := t.TempDir()
	prog := filepath.Join(dir, "server")
	if err := os.WriteFile(prog, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	data := filepath.Join(dir, "data")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin"}
	tests := []struct {
		name    string
		profile Profile
		cmd     string
		args    []string
		want    string // in the error; "" for none
	}{
		{"a command outside the view", Profile{}, prog, nil, `the command "` + prog + `" is outside the upstream's file-system view (add "` + dir + `" to paths`},
		{"a command shown by paths", Profile{Paths: []ViewPath{{Path: dir}}}, prog, nil, ""},
		{"an argument outside the view", Profile{}, "bash", []string{data}, `argument 1 "` + data + `" is outside`},
		{"an argument in the working directory", Profile{Dir: dir}, "bash", []string{data}, ""},
		{"a missing argument is the program's business", Profile{}, "bash", []string{"/no/such/file"}, ""},
		{"a command not on PATH", Profile{}, "no-such-command", nil, `"no-such-command" is not on the upstream's PATH`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := tc.profile.Command(tc.cmd, tc.args, env)
			if tc.want == "" {
				if err != nil {
					t.Fatalf("Command: %v", err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Command: %v; want %q", err, tc.want)
			}
			var ve *ViewError
			if strings.Contains(tc.want, "outside") && !errors.As(err, &ve) {
				t.Errorf("the error is a %T, not a *ViewError", err)
			}
		})
	}
}

// The launcher's marker must not be taken for a plan worker's by the cgo
// pre-confinement, which confines any process whose first argument starts
// with the worker prefix before the Go runtime starts.
func TestLauncherMarkerIsNotAWorkers(t *testing.T) {
	if strings.HasPrefix(launcherArg, "-codecall-sandbox-") || strings.HasPrefix(launcherArg, workerArg) {
		t.Fatalf("launcherArg %q starts with the worker prefix", launcherArg)
	}
}
