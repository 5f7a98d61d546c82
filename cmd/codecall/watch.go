package main

import (
	"context"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/codecall-go/codecall/presets"
)

// watchUpstreams reloads the upstreams when the config file, an upstreams
// file or an OpenAPI app's document file changes, and on SIGHUP (hup)
// (which also re-fetches documents read from URLs), until ctx ends.
func watchUpstreams(ctx context.Context, src source, b *built, hup <-chan struct{}, logger *slog.Logger) {
	files := map[string]bool{}
	if src.upstreamsFile != "" {
		files[abs(src.upstreamsFile)] = true
	}
	if cfg, servers, _, err := src.upstreams(); err == nil {
		if cfg.File != "" {
			p := cfg.File
			if !filepath.IsAbs(p) && src.configFile != "" {
				p = filepath.Join(filepath.Dir(src.configFile), p)
			}
			files[abs(p)] = true
		}
		// An edited OpenAPI document reloads its app.
		for _, p := range openapiFiles(servers) {
			files[p] = true
		}
	}
	if src.configFile != "" {
		files[abs(src.configFile)] = true
	}
	var events <-chan fsnotify.Event
	var errs <-chan error
	if fsw, err := watchDirs(files); err != nil {
		// SIGHUP still works.
		logger.Warn("codecall: upstream files are not watched; reload with SIGHUP", "error", err)
	} else {
		defer fsw.Close()
		events, errs = fsw.Events, fsw.Errors
	}
	var debounce <-chan time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-hup:
			src.reload(ctx, b, logger)
		case ev, ok := <-events:
			if !ok {
				events, errs = nil, nil
				continue
			}
			if files[abs(ev.Name)] {
				debounce = time.After(presets.DefaultDebounce)
			}
		case err, ok := <-errs:
			if !ok {
				events, errs = nil, nil
				continue
			}
			logger.Warn("codecall: watching upstream files", "error", err)
		case <-debounce:
			debounce = nil
			src.reload(ctx, b, logger)
		}
	}
}

// watchDirs watches the directories of files, not the files: editors
// replace a file by renaming a new one over it.
func watchDirs(files map[string]bool) (*fsnotify.Watcher, error) {
	fsw, err := fsnotify.NewWatcher()
	if err != nil {
		return nil, fmt.Errorf("watching upstream files: %w", err)
	}
	dirs := map[string]bool{}
	for f := range files {
		if d := filepath.Dir(f); !dirs[d] {
			dirs[d] = true
			if err := fsw.Add(d); err != nil {
				_ = fsw.Close()
				return nil, fmt.Errorf("watching %s: %w", d, err)
			}
		}
	}
	return fsw, nil
}

func abs(p string) string {
	if a, err := filepath.Abs(p); err == nil {
		return a
	}
	return p
}
