package presets

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
)

// deadline bounds every wait; the waits poll, so a passing test takes only
// as long as the watcher does.
const deadline = 10 * time.Second

type watchFixture struct {
	path    string
	logs    *mcptest.Buffer
	logger  *slog.Logger
	changes chan Config
}

func newWatchFixture(t *testing.T, initial string) *watchFixture {
	t.Helper()
	f := &watchFixture{
		path:    filepath.Join(t.TempDir(), "codecall.yaml"),
		logs:    &mcptest.Buffer{},
		changes: make(chan Config, 16),
	}
	f.logger = slog.New(slog.NewTextHandler(f.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	if initial != "" {
		f.write(t, initial)
	}
	return f
}

func (f *watchFixture) onChange(c Config) { f.changes <- c }

// write replaces the file atomically, so the watcher never reads half of it.
func (f *watchFixture) write(t *testing.T, content string) {
	t.Helper()
	tmp, err := os.CreateTemp(filepath.Dir(f.path), ".tmp-*")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tmp.WriteString(content); err != nil {
		t.Fatal(err)
	}
	if err := tmp.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp.Name(), f.path); err != nil {
		t.Fatal(err)
	}
}

func (f *watchFixture) start(t *testing.T, opts ...WatchOption) *Watcher {
	t.Helper()
	opts = append([]WatchOption{WithDebounce(20 * time.Millisecond), WithEnv(nil)}, opts...)
	w, err := NewWatcher(f.path, f.onChange, f.logger, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	return w
}

// waitPreset waits for a delivered configuration with the given preset.
func (f *watchFixture) waitPreset(t *testing.T, want Name) Config {
	t.Helper()
	timeout := time.After(deadline)
	for {
		select {
		case c := <-f.changes:
			if c.Preset == want {
				return c
			}
			// An in-place write can be read half-done under heavy load;
			// what matters is that the final content arrives.
			t.Logf("delivered preset %q while waiting for %q", c.Preset, want)
		case <-timeout:
			t.Fatalf("no configuration with preset %q within %v; log:\n%s", want, deadline, f.logs)
		}
	}
}

// waitLog waits until the log contains s.
func (f *watchFixture) waitLog(t *testing.T, s string) {
	t.Helper()
	for end := time.Now().Add(deadline); time.Now().Before(end); time.Sleep(5 * time.Millisecond) {
		if strings.Contains(f.logs.String(), s) {
			return
		}
	}
	t.Fatalf("log never contained %q; log:\n%s", s, f.logs)
}

func (f *watchFixture) expectNoChange(t *testing.T) {
	t.Helper()
	select {
	case c := <-f.changes:
		t.Fatalf("unexpected onChange with preset %q", c.Preset)
	default:
	}
}

func TestWatchReloadsAndKeepsLastGood(t *testing.T) {
	f := newWatchFixture(t, "preset: secure\n")
	initial, err := LoadEnv(f.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.start(t, WithInitial(initial))

	f.write(t, "preset: balanced\nvm: {timeout: 7s}\n")
	if c := f.waitPreset(t, Balanced); c.VM.Timeout != 7*time.Second {
		t.Errorf("timeout = %v, want 7s", c.VM.Timeout)
	}

	// A broken edit is logged with its problem and changes nothing.
	f.write(t, "preset: experimental\nvm:\n  timout: 1s\n")
	f.waitLog(t, "vm.timout: unknown key")
	f.waitLog(t, "level=WARN")
	f.expectNoChange(t)

	// Malformed YAML likewise.
	f.write(t, "preset: [\n")
	f.waitLog(t, "invalid YAML")
	f.expectNoChange(t)

	f.write(t, "preset: experimental\n")
	f.waitPreset(t, Experimental)

	// An in-place write (truncate and write), as many editors do.
	if err := os.WriteFile(f.path, []byte("preset: locked_down\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	f.waitPreset(t, LockedDown)

	// A change that leaves the configuration as it was is not delivered.
	f.write(t, "# same settings\npreset: locked_down\n")
	f.waitLog(t, "configuration did not")
	f.expectNoChange(t)
}

func TestWatchRemovedAndRecreated(t *testing.T) {
	f := newWatchFixture(t, "preset: secure\n")
	f.start(t)
	f.waitPreset(t, Secure) // without WithInitial the starting config is delivered

	if err := os.Remove(f.path); err != nil {
		t.Fatal(err)
	}
	f.waitLog(t, "level=WARN")
	f.expectNoChange(t)

	f.write(t, "preset: balanced\n")
	f.waitPreset(t, Balanced)
}

// A change made between Load and the start of the watch is delivered.
func TestWatchInitialDiffers(t *testing.T) {
	f := newWatchFixture(t, "preset: balanced\n")
	f.start(t, WithInitial(Default()))
	f.waitPreset(t, Balanced)
}

func TestWatchAppliesEnv(t *testing.T) {
	f := newWatchFixture(t, "preset: secure\n")
	f.start(t, WithEnv([]string{"CODECALL_VM__MAXTOOLCALLS=3"}))
	if c := f.waitPreset(t, Secure); c.VM.MaxToolCalls != 3 {
		t.Errorf("maxToolCalls = %d, want the environment's 3", c.VM.MaxToolCalls)
	}
}

func TestWatchStopsWithContext(t *testing.T) {
	f := newWatchFixture(t, "preset: secure\n")
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		errc <- Watch(ctx, f.path, f.onChange, f.logger, WithDebounce(time.Millisecond), WithEnv(nil))
	}()
	f.waitPreset(t, Secure)
	cancel()
	select {
	case err := <-errc:
		if err != nil {
			t.Errorf("Watch returned %v after cancel, want nil", err)
		}
	case <-time.After(deadline):
		t.Fatal("Watch did not return after its context was cancelled")
	}
}

func TestWatchCloseIsFinal(t *testing.T) {
	f := newWatchFixture(t, "preset: secure\n")
	w := f.start(t)
	f.waitPreset(t, Secure)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	select {
	case <-w.done:
	default:
		t.Fatal("Close returned before the watcher goroutine ended")
	}
}

func TestWatchErrors(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "no", "such", "dir", "c.yaml")
	if _, err := NewWatcher(missing, func(Config) {}, nil); err == nil {
		t.Error("NewWatcher on a missing directory succeeded")
	}
	if err := Watch(context.Background(), missing, func(Config) {}, nil); err == nil {
		t.Error("Watch on a missing directory succeeded")
	}
}

// TestWatchResolvesPolicyPaths checks that a reload resolves relative
// policy paths against the config file's directory, as Load does.
func TestWatchResolvesPolicyPaths(t *testing.T) {
	f := newWatchFixture(t, "preset: secure\n")
	initial, err := LoadEnv(f.path, nil)
	if err != nil {
		t.Fatal(err)
	}
	f.start(t, WithInitial(initial))
	f.write(t, "preset: balanced\npolicy: {paths: [policies]}\n")
	c := f.waitPreset(t, Balanced)
	if want := filepath.Join(filepath.Dir(f.path), "policies"); len(c.Policy.Paths) != 1 || c.Policy.Paths[0] != want {
		t.Fatalf("reloaded policy.paths = %q, want [%q]", c.Policy.Paths, want)
	}
}
