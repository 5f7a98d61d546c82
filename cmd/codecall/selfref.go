package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"

	"github.com/codecall-go/codecall/presets"
)

// A gateway whose upstream runs codecall on the gateway's own upstreams
// starts itself again, and that copy does the same. selfReference catches
// the direct case before anything starts (serve, search and check call it);
// gateway.MaxDepth stops the cases it cannot see (a chain of files naming
// each other, a wrapper script, go run).

// ownedFiles are the files a gateway reads its upstreams from: the
// --upstreams file, the config's upstreams.file, and the config itself
// when it defines upstreams. Paths are as given; they are compared by
// identity (sameFile), not by spelling.
type ownedFiles []string

func ownedBy(upstreamsFile, configFile string, cfg presets.UpstreamsConfig) ownedFiles {
	var own ownedFiles
	if upstreamsFile != "" {
		own = append(own, upstreamsFile)
	}
	if configFile != "" && (cfg.File != "" || len(cfg.Servers) > 0) {
		own = append(own, configFile)
	}
	if cfg.File != "" {
		p := cfg.File
		if !filepath.IsAbs(p) && configFile != "" {
			p = filepath.Join(filepath.Dir(configFile), p)
		}
		own = append(own, p)
	}
	return own
}

// selfReference returns an error naming every enabled stdio upstream that
// would start this gateway again: its command is this executable or one
// named codecall, and its arguments give one of own with --upstreams or
// --config (paths resolved from the upstream's working directory).
func selfReference(servers map[string]presets.Upstream, own ownedFiles) error {
	if len(own) == 0 {
		return nil
	}
	var problems []string
	for id, u := range servers {
		if !u.IsEnabled() || u.Transport() != presets.UpstreamStdio {
			continue
		}
		dir := u.Cwd
		if dir == "" {
			dir = "."
		}
		if !isCodeCall(u.Command, dir) {
			continue
		}
		for _, named := range filesNamed(u.Args) {
			p := named.path
			if !filepath.IsAbs(p) {
				p = filepath.Join(dir, p)
			}
			if own.has(p) {
				problems = append(problems, fmt.Sprintf("upstream %q starts this gateway again: its command %s is given %s %s, which this gateway serves its upstreams from, so every copy would start another without end; remove the entry or point it at other servers",
					id, u.Command, named.flag, named.path))
				break
			}
		}
	}
	switch sort.Strings(problems); len(problems) {
	case 0:
		return nil
	case 1:
		return fmt.Errorf("%s", problems[0])
	default:
		return fmt.Errorf("%d upstreams start this gateway again:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
}

type namedFile struct{ flag, path string }

// filesNamed returns the files codecall arguments give to --upstreams and
// --config, in the forms the flag package accepts: -name value, --name
// value, -name=value, --name=value.
func filesNamed(args []string) []namedFile {
	var out []namedFile
	for i := 0; i < len(args); i++ {
		name, value, hasValue := strings.Cut(strings.TrimLeft(args[i], "-"), "=")
		if !strings.HasPrefix(args[i], "-") || name != "upstreams" && name != "config" {
			continue
		}
		if !hasValue {
			if i+1 >= len(args) {
				break
			}
			i++
			value = args[i]
		}
		out = append(out, namedFile{"--" + name, value})
	}
	return out
}

func (own ownedFiles) has(path string) bool {
	for _, o := range own {
		if sameFile(o, path) {
			return true
		}
	}
	return false
}

// isCodeCall reports whether command, run from dir, is this executable or
// a program named codecall.
func isCodeCall(command, dir string) bool {
	base := strings.TrimSuffix(filepath.Base(command), ".exe")
	if base == "codecall" {
		return true
	}
	self, err := os.Executable()
	if err != nil {
		return false
	}
	path := command
	switch {
	case !strings.ContainsRune(command, filepath.Separator) && !strings.ContainsRune(command, '/'):
		if path, err = exec.LookPath(command); err != nil {
			return false
		}
	case !filepath.IsAbs(command):
		path = filepath.Join(dir, command)
	}
	return sameFile(self, path)
}

// sameFile reports whether a and b are one file: the same inode when both
// exist (through symlinks, hard links and any spelling), else the same
// absolute path.
func sameFile(a, b string) bool {
	sa, errA := os.Stat(a)
	sb, errB := os.Stat(b)
	if errA == nil && errB == nil {
		return os.SameFile(sa, sb)
	}
	absA, errA := filepath.Abs(a)
	absB, errB := filepath.Abs(b)
	return errA == nil && errB == nil && absA == absB
}
