package middleware

import (
	"context"
	"slices"

	"github.com/codecall-go/codecall/meta"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
)

// pythonKey is what a Python worker pool is built from: the JavaScript
// pool's key and the interpreter asked for.
type pythonKey struct {
	pool   poolKey
	python string
}

// pythonRunner returns the runner of Python plans the config asks for
// (vm.languages lists python), starting or replacing the Python worker
// pool as needed, or nil and why Python plans cannot run. Python never
// falls back to the server's process: without a worker pool, Python
// plans are refused, with the reason.
func (iso *isolation) pythonRunner(cfg *presets.Config) (meta.PythonRunner, string) {
	iso.mu.Lock()
	defer iso.mu.Unlock()
	if !slices.Contains(cfg.VM.Languages, presets.LanguagePython) {
		iso.retirePythonLocked()
		iso.pyOff = ""
		return nil, ""
	}
	if cfg.VM.Isolation != presets.IsolationProcess || iso.pool == nil {
		iso.retirePythonLocked()
		iso.pyOff = "Python plans run only in sandboxed worker processes, and this server runs plans in process"
		if iso.fallback != "" {
			iso.pyOff += " (" + iso.fallback + ")"
		}
		return nil, iso.pyOff
	}
	key := pythonKey{pool: keyOf(cfg), python: cfg.Sandbox.Python}
	if iso.pyPool != nil && iso.pyKey == key {
		return iso.pyPool, ""
	}
	py, err := sandbox.FindPython(context.Background(), cfg.Sandbox.Python)
	if err != nil {
		iso.pyOff = err.Error()
		iso.log.Warn("codecall: Python plans are off: no usable interpreter", "error", err)
		return nil, iso.pyOff
	}
	opts := append(iso.poolOptions(cfg), sandbox.WithPython(py))
	pool, err := sandbox.New(context.Background(), opts...)
	if err != nil {
		if iso.pyPool != nil {
			iso.log.Warn("codecall: new Python pool settings not applied; keeping the running pool", "error", err)
			return iso.pyPool, ""
		}
		iso.pyOff = "the Python worker cannot start here: " + err.Error()
		iso.log.Warn("codecall: Python plans are off: the Python worker cannot start", "error", err)
		return nil, iso.pyOff
	}
	iso.retirePythonLocked()
	iso.pyPool, iso.pyKey, iso.pyOff = pool, key, ""
	return pool, ""
}

// retirePythonLocked closes the Python pool once its running plans end.
func (iso *isolation) retirePythonLocked() {
	if iso.pyPool == nil {
		return
	}
	old := iso.pyPool
	iso.pyPool = nil
	iso.closing.Add(1)
	go func() {
		defer iso.closing.Done()
		_ = old.Close()
	}()
}
