package policy

import (
	"context"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"
)

// ReloadDebounce is how long WatchPolicies waits after the last change
// before reloading: editors and deploy tools write files in several steps.
const ReloadDebounce = 200 * time.Millisecond

// WatchPolicies reloads the policy under paths into p whenever a file
// there changes, until ctx ends. Each reload loads, compiles and prepares
// the whole policy; a good one is swapped in atomically (calls already
// deciding finish on the old one), a broken one is logged with every
// problem and the last good policy keeps serving. onSwap, when not nil, is
// called after each swap.
//
// The watches are in place when WatchPolicies returns; the returned run
// function does the watching until ctx ends. A change made after the
// policy in force was loaded and before the watches were set is picked up
// at once.
func WatchPolicies(ctx context.Context, paths []string, query string, p *Policies, logger *slog.Logger, onSwap func(*Engine)) (run func(), err error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, err
	}
	for _, dir := range watchDirs(paths) {
		if err := fsw.Add(dir); err != nil {
			logger.Warn("codecall: cannot watch policy directory", "dir", dir, "error", err)
		}
	}
	var loadedAt time.Time
	if e := p.Engine(); e != nil {
		loadedAt = e.loadedAt
	}
	missed := changedSince(paths, loadedAt)
	return func() {
		defer fsw.Close()
		watchLoop(ctx, fsw, paths, query, p, logger, onSwap, missed)
	}, nil
}

// changedSince reports whether a policy file under paths was modified at
// or after t.
func changedSince(paths []string, t time.Time) bool {
	changed := false
	for _, root := range paths {
		_ = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() || !policyFile(d.Name()) {
				return nil
			}
			if info, err := d.Info(); err == nil && !info.ModTime().Before(t) {
				changed = true
			}
			return nil
		})
	}
	return changed
}

func watchLoop(ctx context.Context, fsw *fsnotify.Watcher, paths []string, query string, p *Policies, logger *slog.Logger, onSwap func(*Engine), missed bool) {
	var timer *time.Timer
	var fire <-chan time.Time
	if missed {
		timer = time.NewTimer(0)
		fire = timer.C
	}
	for {
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-fsw.Events:
			if !ok {
				return
			}
			if ev.Op.Has(fsnotify.Create) {
				if info, err := os.Stat(ev.Name); err == nil && info.IsDir() {
					_ = fsw.Add(ev.Name) // a new policy subdirectory
				}
			}
			if !policyFile(filepath.Base(ev.Name)) && !ev.Op.Has(fsnotify.Remove) && !ev.Op.Has(fsnotify.Rename) {
				continue
			}
			if timer == nil {
				timer = time.NewTimer(ReloadDebounce)
			} else {
				timer.Reset(ReloadDebounce)
			}
			fire = timer.C
		case err, ok := <-fsw.Errors:
			if !ok {
				return
			}
			logger.Warn("codecall: policy watch error", "error", err)
		case <-fire:
			fire = nil
			e, err := LoadEngine(ctx, paths, query)
			if err != nil {
				logger.Warn("codecall: policy change not applied; the last good policy keeps serving", "error", err)
				continue
			}
			p.Swap(e)
			logger.Info("codecall: policy reloaded", "files", len(e.Files()), "query", query)
			if onSwap != nil {
				onSwap(e)
			}
		}
	}
}

// watchDirs lists the directories to watch: each directory path with its
// subdirectories, and the parent of each file path (editors replace files
// by renaming, which a watch on the file itself would lose).
func watchDirs(paths []string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(d string) {
		if !seen[d] {
			seen[d] = true
			out = append(out, d)
		}
	}
	for _, p := range paths {
		info, err := os.Stat(p)
		if err != nil {
			add(filepath.Dir(p))
			continue
		}
		if !info.IsDir() {
			add(filepath.Dir(p))
			continue
		}
		_ = filepath.WalkDir(p, func(path string, d fs.DirEntry, err error) error {
			if err == nil && d.IsDir() {
				add(path)
			}
			return nil
		})
	}
	return out
}
