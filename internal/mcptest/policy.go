package mcptest

import (
	"os"
	"path/filepath"
	"testing"
)

// WritePolicy writes rego, the text of a Rego module or of a data document
// beside one (.json, .yaml), to the file name under dir, creating the
// directories name goes through, and returns the file's path. It writes a
// temporary file and renames it into place, as editors and deploy tools
// do, so a policy watcher never reads half a file.
func WritePolicy(t testing.TB, dir, name, rego string) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	// The loader reads .rego, .json and .yaml files only; .tmp is none.
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(rego), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
	return path
}

// WritePolicies writes files (name → text) into a new temporary directory
// with WritePolicy and returns the directory.
func WritePolicies(t testing.TB, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for name, text := range files {
		WritePolicy(t, dir, name, text)
	}
	return dir
}
