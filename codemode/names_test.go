package codemode

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

func TestModulePath(t *testing.T) {
	for _, tc := range []struct{ id, want string }{
		{"google-drive", "google-drive"},
		{"Google Drive", "google-drive"},
		{"GitHub", "github"},
		{"my.server.v2", "my-server-v2"},
		{"a--b---c", "a-b-c"},
		{"--a--", "a"},
		{"-_.a_.-", "a"},
		{"123", "123"},
		{"1password", "1password"},
		{"ÉCOLE", "cole"},
		{"café-au-lait", "caf-au-lait"},
		{"日本", "server"},
		{"日本 mcp", "mcp"},
		{"", "server"},
		{"!!!", "server"},
		{"---", "server"},
		{"x--2", "x-2"},
		{"\u212Aelvin", "kelvin"}, // KELVIN SIGN lowercases to k
		{"a\xffb", "a-b"},
		{"UPPER_case", "upper-case"},
	} {
		if got := ModulePath(tc.id); got != tc.want {
			t.Errorf("ModulePath(%q) = %q, want %q", tc.id, got, tc.want)
		}
	}
}

func TestModulePaths(t *testing.T) {
	for _, tc := range []struct {
		ids, want []string
	}{
		{nil, []string{}},
		{[]string{"a", "b"}, []string{"a", "b"}},
		{[]string{"My.Server", "my-server"}, []string{"my-server", "my-server--2"}},
		{[]string{"x", "X", "x!"}, []string{"x", "x--2", "x--3"}},
		{[]string{"X", "x--2", "x"}, []string{"x", "x-2", "x--2"}},
		{[]string{"", "!!", "server"}, []string{"server", "server--2", "server--3"}},
		{[]string{"a.b", "c", "A B", "c"}, []string{"a-b", "c", "a-b--2", "c--2"}},
	} {
		got := ModulePaths(tc.ids)
		if !slices.Equal(got, tc.want) {
			t.Errorf("ModulePaths(%q) = %q, want %q", tc.ids, got, tc.want)
		}
	}
}

func TestDisambiguateSkipsTakenNames(t *testing.T) {
	// ModulePath never gives a path with "--", so the skip cannot happen
	// through ModulePaths; the rule holds for disambiguate itself.
	got := disambiguate([]string{"x", "x", "x--2", "x"}, "--", nil)
	if want := []string{"x", "x--3", "x--2", "x--4"}; !slices.Equal(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
}

func TestExportName(t *testing.T) {
	for _, tc := range []struct{ name, want string }{
		{"list_repos", "list_repos"},
		{"listRepos", "listRepos"},
		{"$ref", "$ref"},
		{"files.list", "files_list"},
		{"get-file", "get_file"},
		{"a b", "a_b"},
		{"123tool", "_123tool"},
		{"9", "_9"},
		{"", "_"},
		{"_", "_"},
		{"café", "caf_"},
		{"日本", "__"},
		{"😀x", "_x"},
		{"a\xffb", "a_b"},
		{"delete", "delete_"},
		{"default", "default_"},
		{"enum", "enum_"},
		{"eval", "eval_"},
		{"arguments", "arguments_"},
		{"constructor", "constructor_"},
		{"__proto__", "__proto___"},
		{"prototype", "prototype_"},
		{"Delete", "Delete"},
		{"delete_", "delete_"},
		{"__meta__", "__meta__"},
		{"undefined", "undefined"},
	} {
		if got := ExportName(tc.name); got != tc.want {
			t.Errorf("ExportName(%q) = %q, want %q", tc.name, got, tc.want)
		}
	}
	spec := []string{"break", "case", "class", "const", "continue", "debugger", "default", "delete", "do",
		"else", "export", "extends", "false", "finally", "for", "function", "if", "import", "in",
		"instanceof", "new", "null", "return", "super", "switch", "this", "throw", "true", "try",
		"typeof", "var", "void", "while", "with", "yield", "let", "static", "await",
		"enum", "implements", "interface", "package", "private", "protected", "public", "eval", "arguments"}
	for _, w := range spec {
		if got := ExportName(w); got != w+"_" {
			t.Errorf("ExportName(%q) = %q, want %q", w, got, w+"_")
		}
		if !reservedWords[w] {
			t.Errorf("%q is not a reserved word", w)
		}
	}
	if len(reservedWords) != len(spec) {
		t.Errorf("%d reserved words, want %d", len(reservedWords), len(spec))
	}
}

func TestExportNames(t *testing.T) {
	tools := []Tool{
		{"srv/files.list", "files.list"},
		{"srv/files-list", "files-list"},
		{"srv/files_list", "files_list"},
		{"srv/files_list__2", "files_list__2"},
		{"srv/meta", "__meta__"},
		{"srv/class", "class"},
		{"srv/class_", "class_"},
		{"srv/1a", "1a"},
	}
	want := map[string]string{
		// In byte order of the canonical names: files-list, files.list,
		// files_list, files_list__2. files_list__2 is a tool's own name, so
		// the second collision skips it.
		"srv/files-list":    "files_list",
		"srv/files.list":    "files_list__3",
		"srv/files_list":    "files_list__4",
		"srv/files_list__2": "files_list__2",
		"srv/meta":          "__meta____2",
		"srv/class":         "class_",
		"srv/class_":        "class___2",
		"srv/1a":            "_1a",
	}
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 20 {
		in := slices.Clone(tools)
		if i > 0 {
			rng.Shuffle(len(in), func(a, b int) { in[a], in[b] = in[b], in[a] })
		}
		got := ExportNames(in)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("order %v:\n got %v\nwant %v", in, got, want)
		}
	}
	if got := ExportNames(nil); len(got) != 0 {
		t.Errorf("no tools: %v", got)
	}
	// The same canonical name twice keeps the first in order.
	got := ExportNames([]Tool{{"a", "y"}, {"a", "x"}})
	if len(got) != 1 || got["a"] != "x" {
		t.Errorf("repeated canonical name: %v", got)
	}
}
