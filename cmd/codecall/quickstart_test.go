package main

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
)

// TestReadmeQuickStart runs every command of the README's quick start
// (its ```sh blocks) as written: go install into a temporary GOBIN, each
// codecall command through the CLI, serve until it says it is serving.
// A command the test does not know how to run fails it, so the quick
// start cannot grow a step nobody runs.
func TestReadmeQuickStart(t *testing.T) {
	readme, err := os.ReadFile("../../README.md")
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(readme), "\n## Quick start\n")
	if !ok {
		t.Fatal("README has no Quick start section")
	}
	section, _, _ = strings.Cut(section, "\n## ")
	var cmds []string
	for rest := section; ; {
		var block string
		if _, rest, ok = strings.Cut(rest, "```sh\n"); !ok {
			break
		}
		block, rest, _ = strings.Cut(rest, "```")
		for _, line := range strings.Split(block, "\n") {
			if line = strings.TrimSpace(stripComment(line)); line != "" {
				cmds = append(cmds, line)
			}
		}
	}
	if len(cmds) < 4 {
		t.Fatalf("the quick start has %d commands; want the install, searches, a policy eval and serve", len(cmds))
	}
	for _, line := range cmds {
		t.Run(line, func(t *testing.T) {
			args := splitShell(t, line)
			switch {
			case len(args) >= 2 && args[0] == "go" && args[1] == "install":
				if testing.Short() {
					t.Skip("-short: go install is not run")
				}
				gobin := t.TempDir()
				cmd := exec.Command("go", args[1:]...)
				cmd.Dir = "../.."
				cmd.Env = append(os.Environ(), "GOBIN="+gobin)
				if out, err := cmd.CombinedOutput(); err != nil {
					t.Fatalf("%s: %v\n%s", line, err, out)
				}
				if _, err := os.Stat(filepath.Join(gobin, "codecall")); err != nil {
					t.Errorf("%s installed no codecall binary: %v", line, err)
				}
			case args[0] == "codecall" && len(args) > 1 && args[1] == "serve":
				runServe(t, args[1:])
			case args[0] == "codecall":
				var out, errb mcptest.Buffer
				// Paths in the README are relative to the repository.
				t.Chdir("../..")
				if code := run(context.Background(), args[1:], strings.NewReader(""), &out, &errb); code != 0 {
					t.Fatalf("%s: exit %d\n%s%s", line, code, out.String(), errb.String())
				}
				if strings.TrimSpace(out.String()) == "" {
					t.Errorf("%s printed nothing", line)
				}
			default:
				t.Fatalf("the quick start has a command this test cannot run: %s", line)
			}
		})
	}
}

// runServe starts codecall serve with args, waits until it says it
// serves, and stops it. An HTTP address already taken on this machine
// skips the command rather than fail on another program's port.
func runServe(t *testing.T, args []string) {
	for i, a := range args {
		if a == "--http" && i+1 < len(args) {
			l, err := net.Listen("tcp", args[i+1])
			if err != nil {
				t.Skipf("%s is taken on this machine: %v", args[i+1], err)
			}
			l.Close()
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var out, errb mcptest.Buffer
	// A reader that never ends, as a client's pipe: serve on stdio runs
	// until it is stopped.
	stdin, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	defer w.Close()
	done := make(chan int, 1)
	go func() { done <- run(ctx, args, stdin, &out, &errb) }()
	deadline := time.Now().Add(60 * time.Second)
	for !strings.Contains(errb.String(), "codecall: serving") {
		select {
		case code := <-done:
			t.Fatalf("serve %v exited %d before serving:\n%s", args, code, errb.String())
		default:
		}
		if time.Now().After(deadline) {
			t.Fatalf("serve %v did not say it serves within a minute:\n%s", args, errb.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if code := <-done; code != 0 {
		t.Errorf("serve %v exited %d after it was stopped:\n%s", args, code, errb.String())
	}
}

// stripComment removes a shell comment: a # outside quotes that starts
// a word.
func stripComment(line string) string {
	var quote rune
	for i, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			}
		case r == '\'' || r == '"':
			quote = r
		case r == '#' && (i == 0 || line[i-1] == ' '):
			return line[:i]
		}
	}
	return line
}

// splitShell splits a command line into words the way a POSIX shell does
// for the quoting the README uses: single and double quotes, no
// expansions.
func splitShell(t *testing.T, line string) []string {
	t.Helper()
	var words []string
	var cur strings.Builder
	inWord := false
	var quote rune
	for _, r := range line {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case r == '$' || r == '`' || r == '|' || r == ';' || r == '&':
			t.Fatalf("the quick start command %q uses the shell (%c); keep its commands plain", line, r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		t.Fatalf("unbalanced quote in %q", line)
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words
}
