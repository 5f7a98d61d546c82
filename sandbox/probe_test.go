//go:build linux

package sandbox

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// probeArg makes the test binary a probe: it confines itself exactly as a
// worker does (the same confine, with the same arguments, started the same
// way), then tries what a plan that escaped the runtime would try, and
// reports what succeeded.
const probeArg = "-codecall-sandbox-probe"

// envSecret is set in the test process; a worker must not see it.
const envSecret = "CODECALLTEST_SANDBOX_SECRET"

func TestMain(m *testing.M) {
	if len(os.Args) >= 2 {
		switch os.Args[1] {
		case probeArg:
			os.Exit(probeMain())
		case badWorkerArg:
			os.Exit(badWorkerMain())
		}
	}
	os.Exit(m.Run())
}

// probeResult is what a probe found; every field must be false or empty.
type probeResult struct {
	Confinement Confinement `json:"confinement"`
	Escapes     []string    `json:"escapes"` // what worked that must not
	Checked     []string    `json:"checked"` // what was tried
}

func probeMain() int {
	args := os.Args[2:]
	leaked := -1
	var rest []string
	for _, a := range args {
		if v, ok := strings.CutPrefix(a, "leakedfd="); ok {
			leaked, _ = strconv.Atoi(v)
			continue
		}
		rest = append(rest, a)
	}
	conf, err := confine(parseWorkerArgs(rest))
	if err != nil {
		fmt.Fprintln(os.Stderr, "confine:", err)
		return 3
	}
	out := bufio.NewWriter(os.Stdout)
	res := probeResult{Confinement: conf}
	try := func(what string, escaped bool) {
		res.Checked = append(res.Checked, what)
		if escaped {
			res.Escapes = append(res.Escapes, what)
		}
	}

	// Network.
	c, err := net.DialTimeout("tcp", "1.1.1.1:53", time.Second)
	if c != nil {
		c.Close()
	}
	try("tcp connect to 1.1.1.1:53", err == nil)
	c, err = net.DialTimeout("tcp", "127.0.0.1:1", time.Second)
	if c != nil {
		c.Close()
	}
	try("tcp connect to 127.0.0.1", err == nil)
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM, 0)
	try("socket(AF_INET)", err == nil)
	if err == nil {
		unix.Close(fd)
	}
	fd, err = unix.Socket(unix.AF_UNIX, unix.SOCK_STREAM, 0)
	try("socket(AF_UNIX)", err == nil)
	if err == nil {
		unix.Close(fd)
	}

	// Files.
	for _, p := range []string{"/etc/passwd", "/etc/hostname", "/proc/self/environ", "/proc/1/environ", "/dev/null", os.Args[0]} {
		f, err := os.Open(p)
		try("open "+p, err == nil)
		if f != nil {
			f.Close()
		}
	}
	_, err = os.ReadDir("/")
	try("list /", err == nil)
	err = os.WriteFile("/codecall-probe", []byte("x"), 0o600)
	try("create /codecall-probe", err == nil)
	err = os.WriteFile("/tmp/codecall-probe", []byte("x"), 0o600)
	try("create /tmp/codecall-probe", err == nil)
	err = os.Mkdir("/d", 0o700)
	try("mkdir /d", err == nil)

	// Processes.
	err = exec.Command("/bin/sh", "-c", "true").Run()
	try("exec /bin/sh", err == nil)
	err = syscall.Exec("/proc/self/exe", []string{"x"}, nil)
	try("execve /proc/self/exe", err == nil)
	pid, _, errno := unix.RawSyscall(unix.SYS_CLONE, uintptr(unix.SIGCHLD), 0, 0)
	if errno == 0 && pid == 0 {
		unix.RawSyscall(unix.SYS_EXIT, 0, 0, 0)
	}
	try("clone a process (fork)", errno == 0)
	err = unix.Kill(1, 0)
	try("signal to pid 1 (itself in its pid namespace) from outside its process", os.Getpid() != 1 && err == nil)
	try("signal the server (parent) process", unix.Kill(os.Getppid(), 0) == nil && os.Getppid() != 0)

	// Privileges and namespaces.
	try("mount tmpfs", unix.Mount("x", "/", "tmpfs", 0, "") == nil)
	try("unshare", unix.Unshare(unix.CLONE_NEWNS) == nil)
	try("ptrace", unix.PtraceAttach(1) == nil)
	try("setuid(0) → 1", unix.Setuid(1) == nil)
	try("chroot", unix.Chroot("/") == nil)
	_, err = unix.Open("/", unix.O_RDONLY|unix.O_DIRECTORY, 0)
	try("open / as a directory", err == nil)

	// Environment: nothing of the server's.
	for _, kv := range os.Environ() {
		try("environment holds "+strings.SplitN(kv, "=", 2)[0], true)
	}
	try("secret environment variable", os.Getenv(envSecret) != "")

	// Descriptors: the one the server leaked on purpose, and any regular
	// file at all.
	if leaked >= 0 {
		_, err := unix.FcntlInt(uintptr(leaked), unix.F_GETFD, 0)
		try("the server's leaked descriptor "+strconv.Itoa(leaked), err == nil)
	}
	for fd := 3; fd < 1024; fd++ {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			try("an open regular file at descriptor "+strconv.Itoa(fd), true)
		}
	}
	b, _ := json.Marshal(res)
	_ = writeFrame(out, &message{T: msgReady, Confinement: &conf})
	_ = writeFrame(out, &message{T: msgResult, Data: b})
	_ = out.Flush()
	return 0
}

// TestProbeWorker runs the probe in a process started and confined as a
// worker is, and checks that every escape attempt failed.
func TestProbeWorker(t *testing.T) {
	p := newTestPool(t) // skips where workers cannot start
	t.Setenv(envSecret, "s3cr3t")

	// A descriptor without close-on-exec, as careless code in the server
	// might hold: it is inherited by exec and must not reach the worker.
	secret := filepath.Join(t.TempDir(), "secret.txt")
	if err := os.WriteFile(secret, []byte("s3cr3t"), 0o600); err != nil {
		t.Fatal(err)
	}
	leaked, err := syscall.Open(secret, syscall.O_RDONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer syscall.Close(leaked)

	args := append([]string{probeArg, "leakedfd=" + strconv.Itoa(leaked)}, p.workerLimits().args()...)
	w, err := spawn(context.Background(), "/proc/self/exe", args, env(), DefaultReadyTimeout, nil)
	if err != nil {
		t.Fatalf("probe did not start: %v", err)
	}
	defer w.reap(exitGrace)
	m, err := readFrame(w.out, maxFrameFromWorker)
	if err != nil {
		t.Fatalf("probe result: %v (stderr: %s)", err, w.errs.String())
	}
	var res probeResult
	if err := json.Unmarshal(m.Data, &res); err != nil {
		t.Fatal(err)
	}
	t.Logf("confinement: %+v", res.Confinement)
	t.Logf("%d escape attempts checked", len(res.Checked))
	for _, e := range res.Escapes {
		t.Errorf("inside the worker, this worked: %s", e)
	}
	if len(res.Checked) < 25 {
		t.Errorf("only %d checks ran: %v", len(res.Checked), res.Checked)
	}
	c := res.Confinement
	if !c.EmptyRoot || !c.Seccomp || !c.NoNewPrivs || len(c.Namespaces) != 6 {
		t.Errorf("confinement incomplete: %+v", c)
	}
	if !raceEnabled && c.AddressSpaceBytes == 0 {
		t.Errorf("no RLIMIT_AS: %+v", c)
	}
}
