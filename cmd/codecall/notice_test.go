package main

import (
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// modulePathLine is a NOTICE line that names a module: two spaces, then a
// path whose first element is a host name.
var modulePathLine = regexp.MustCompile(`^  ([a-z0-9.-]+\.[a-z]+/[^\s]+)$`)

// TestNoticeListsEveryLinkedModule keeps NOTICE true as dependencies come
// and go: every module a package of this repository builds with (test
// files aside) is listed under its licence, and nothing is listed that is
// no longer linked. A new dependency fails this test until its licence is
// checked and written down.
func TestNoticeListsEveryLinkedModule(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH")
	}
	cmd := exec.Command(goCmd, "list", "-deps", "-f", "{{with .Module}}{{if not .Main}}{{.Path}}{{end}}{{end}}", "./...")
	cmd.Dir = "../.."
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	var linked []string
	for _, m := range strings.Fields(string(out)) {
		if !slices.Contains(linked, m) {
			linked = append(linked, m)
		}
	}
	notice, err := os.ReadFile("../../NOTICE")
	if err != nil {
		t.Fatal(err)
	}
	var listed []string
	for _, line := range strings.Split(string(notice), "\n") {
		if m := modulePathLine.FindStringSubmatch(line); m != nil {
			listed = append(listed, m[1])
		}
	}
	for _, m := range linked {
		if !slices.Contains(listed, m) {
			t.Errorf("NOTICE does not list %s, which the packages link: add it under its licence (go mod download -json %s shows where its licence file is)", m, m)
		}
	}
	for _, m := range listed {
		if !slices.Contains(linked, m) {
			t.Errorf("NOTICE lists %s, which no package links any more: remove it", m)
		}
	}
}
