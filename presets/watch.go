package presets

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"reflect"
	"sync"
	"time"

	"github.com/fsnotify/fsnotify"
)

// DefaultDebounce is how long a watcher waits after the last change to the
// file before reloading it: editors and deploy tools often write a file in
// several steps, and reading between them would see a half-written file.
const DefaultDebounce = 200 * time.Millisecond

// WatchOption configures Watch and NewWatcher.
type WatchOption func(*watchOptions)

type watchOptions struct {
	debounce   time.Duration
	env        []string
	envSet     bool
	initial    Config
	hasInitial bool
}

// WithDebounce sets how long the watcher waits for the file to settle
// (default DefaultDebounce). Zero or less reloads on every change.
func WithDebounce(d time.Duration) WatchOption {
	return func(o *watchOptions) { o.debounce = max(d, 0) }
}

// WithEnv sets the environment overrides applied on every reload, as
// "NAME=value" strings (default: os.Environ() when the watcher starts).
func WithEnv(env []string) WatchOption {
	return func(o *watchOptions) { o.env, o.envSet = env, true }
}

// WithInitial tells the watcher the configuration the caller already uses,
// typically what Load returned. The watcher checks the file once when it
// starts and calls onChange only if the file's configuration differs, so
// a change made between Load and the start of the watch is not lost, and
// an unchanged file costs no reload. Without it, the file's configuration at
// start, when valid, is delivered to onChange.
func WithInitial(cfg Config) WatchOption {
	return func(o *watchOptions) { o.initial, o.hasInitial = cfg, true }
}

// Watcher reloads a configuration file when it changes. It watches the
// file's directory rather than the file, so editors that save by writing a
// new file and renaming it over the old one, and Kubernetes ConfigMap
// volumes that swap a symlink, are seen too.
//
// Each reload reads and validates the whole file with the environment
// overrides (as LoadEnv does). A valid configuration that differs from the
// last one is passed to onChange; an invalid one is logged at warn level,
// with every problem, and the last good configuration stays in force
// (onChange is not called). An edit that leaves the bytes, or the resulting
// configuration, unchanged is ignored.
type Watcher struct {
	path     string
	env      []string
	debounce time.Duration
	onChange func(Config)
	logger   *slog.Logger
	fsw      *fsnotify.Watcher

	stop      chan struct{}
	done      chan struct{}
	closeOnce sync.Once
	closeErr  error

	// Owned by the run goroutine.
	readOK   bool   // the last read succeeded
	lastData []byte // and returned these bytes
	last     Config // the configuration in force
	haveLast bool
}

// NewWatcher starts watching the file at path; onChange is called from the
// watcher's goroutine, one call at a time, and should return promptly. The
// file's directory must exist; the file itself may be missing for a while.
// A nil logger discards the log. Close stops the watcher.
func NewWatcher(path string, onChange func(Config), logger *slog.Logger, opts ...WatchOption) (*Watcher, error) {
	o := watchOptions{debounce: DefaultDebounce}
	for _, opt := range opts {
		opt(&o)
	}
	if !o.envSet {
		o.env = os.Environ()
	}
	if logger == nil {
		logger = slog.New(slog.DiscardHandler)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("presets: watch %s: %w", path, err)
	}
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("presets: watch %s: %w", path, err)
	}
	if err := fsw.Add(filepath.Dir(abs)); err != nil {
		_ = fsw.Close()
		return nil, fmt.Errorf("presets: watch %s: %w", path, err)
	}
	w := &Watcher{
		path:     abs,
		env:      o.env,
		debounce: o.debounce,
		onChange: onChange,
		logger:   logger.With("path", abs),
		fsw:      fsw,
		stop:     make(chan struct{}),
		done:     make(chan struct{}),
		last:     o.initial,
		haveLast: o.hasInitial,
	}
	go w.run()
	return w, nil
}

// Close stops the watcher and waits for its goroutine, including a running
// onChange, to finish; so it must not be called from onChange. After Close
// returns, onChange is not called again. Close is safe to call more than
// once.
func (w *Watcher) Close() error {
	w.closeOnce.Do(func() {
		close(w.stop)
		w.closeErr = w.fsw.Close()
		<-w.done
	})
	return w.closeErr
}

// Watch watches the file at path until ctx is done, as a Watcher does, and
// then returns nil; it returns an error at once if watching cannot start.
func Watch(ctx context.Context, path string, onChange func(Config), logger *slog.Logger, opts ...WatchOption) error {
	w, err := NewWatcher(path, onChange, logger, opts...)
	if err != nil {
		return err
	}
	<-ctx.Done()
	return w.Close()
}

func (w *Watcher) run() {
	defer close(w.done)
	timer := time.NewTimer(time.Hour)
	timer.Stop()
	defer timer.Stop()

	w.reload()
	for {
		select {
		case <-w.stop:
			return
		case ev, ok := <-w.fsw.Events:
			if !ok {
				return
			}
			if w.relevant(ev) {
				timer.Reset(w.debounce)
			}
		case err, ok := <-w.fsw.Errors:
			if !ok {
				return
			}
			w.logger.Warn("presets: watching config file", "error", err)
		case <-timer.C:
			w.reload()
		}
	}
}

// relevant reports whether an event in the directory may have changed the
// file. When the file is a symlink every event counts, because the swap
// that changes its content renames another entry (Kubernetes' ..data).
func (w *Watcher) relevant(ev fsnotify.Event) bool {
	if filepath.Clean(ev.Name) == w.path {
		return true
	}
	fi, err := os.Lstat(w.path)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}

func (w *Watcher) reload() {
	data, err := os.ReadFile(w.path)
	// The same bytes give the same outcome (the environment is fixed), and
	// repeating a warning for an untouched file would only be noise.
	if err == nil && w.readOK && bytes.Equal(data, w.lastData) {
		return
	}
	w.readOK, w.lastData = err == nil, data
	var cfg Config
	if err == nil {
		cfg, err = parseFile(w.path, data, w.env)
	}
	if err != nil {
		w.logger.Warn("presets: config reload rejected; keeping the last good configuration", "error", err)
		return
	}
	if w.haveLast && reflect.DeepEqual(cfg, w.last) {
		w.logger.Debug("presets: config file changed but the configuration did not")
		return
	}
	w.last, w.haveLast = cfg, true
	w.logger.Info("presets: config reloaded", "mode", cfg.Mode, "preset", cfg.Preset)
	w.onChange(cfg)
}
