// Package statetest starts what tests of the state stores need: a real
// Redis (or Valkey) server from the distribution's packages.
package statetest

import (
	"bufio"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// RedisServer finds redis-server or valkey-server on PATH, "" when neither
// is installed.
func RedisServer() string {
	for _, name := range []string{"redis-server", "valkey-server"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	return ""
}

// StartRedis starts a private Redis server on a free loopback port, in a
// temporary directory and without persistence, and returns its URL. The
// server is killed when the test ends. The test is skipped, with the
// reason, when no server is installed.
func StartRedis(t testing.TB) string {
	t.Helper()
	bin := RedisServer()
	if bin == "" {
		t.Skip("redis-server (or valkey-server) is not installed: apt-get install redis-server; .ci/run installs it")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	dir := t.TempDir()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, bin, "--port", fmt.Sprint(port), "--bind", "127.0.0.1",
		"--dir", dir, "--save", "", "--appendonly", "no", "--protected-mode", "yes", "--daemonize", "no")
	logPath := filepath.Join(dir, "redis.log")
	logFile, err := os.Create(logPath)
	if err != nil {
		cancel()
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = logFile, logFile
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("starting %s: %v", bin, err)
	}
	t.Cleanup(func() {
		cancel()
		_ = cmd.Wait()
		_ = logFile.Close()
	})
	addr := fmt.Sprintf("127.0.0.1:%d", port)
	deadline := time.Now().Add(20 * time.Second)
	for {
		if pingRedis(addr) {
			return "redis://" + addr + "/0"
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(logPath)
			t.Fatalf("%s did not answer PING on %s within 20 s; its log:\n%s", bin, addr, b)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func pingRedis(addr string) bool {
	c, err := net.DialTimeout("tcp", addr, time.Second)
	if err != nil {
		return false
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(time.Second))
	if _, err := c.Write([]byte("PING\r\n")); err != nil {
		return false
	}
	line, err := bufio.NewReader(c).ReadString('\n')
	return err == nil && strings.HasPrefix(line, "+PONG")
}
