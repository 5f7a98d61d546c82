package codemode

import (
	"errors"
	"regexp"
	"testing"

	"github.com/codecall-go/codecall/ast"
)

// FuzzLink checks that Link never fails by itself, that its errors are
// located, and that what it links keeps the module's lines, maps inside
// both texts, and holds no import or export the validator finds.
func FuzzLink(f *testing.F) {
	for _, tc := range allRewrites() {
		f.Add(tc.src)
	}
	for _, tc := range linkFailures {
		f.Add(tc.src)
	}
	f.Add("import{a as b,}from'@codemode/withdefault'\nexport default function(){}(1)")
	f.Add("export default class extends (import.meta) {}")
	f.Add("x = a\n/import/g\nexport {}")
	rules, _ := ast.RulesForPreset("balanced")
	f.Fuzz(func(t *testing.T, src string) {
		if len(src) > 4096 {
			// Link's caller bounds size and nesting first.
			return
		}
		l, err := Link(src, modules)
		if err != nil {
			var le *LinkError
			if !errors.As(err, &le) {
				t.Fatalf("Link(%q): %v", src, err)
			}
			if le.Code != CodeSyntaxError && le.Code != CodeImportFailure || le.Offset < 0 || le.Offset > len(src) {
				t.Fatalf("Link(%q): %+v", src, le)
			}
			if line, col := newLineIndex(src).at(le.Offset); line != le.Line || col != le.Column {
				t.Fatalf("Link(%q): offset %d is %d:%d, not %d:%d", src, le.Offset, line, col, le.Line, le.Column)
			}
			return
		}
		if got, want := len(newLineIndex(l.JavaScript).starts), len(newLineIndex(src).starts); got != want {
			t.Fatalf("Link(%q) = %q: %d lines, want %d", src, l.JavaScript, got, want)
		}
		for i, m := range l.Mappings {
			if m.JavaScript < 0 || m.JavaScript > len(l.JavaScript) || m.Script < 0 || m.Script > len(src) ||
				i > 0 && m.JavaScript <= l.Mappings[i-1].JavaScript {
				t.Fatalf("Link(%q): mappings %v", src, l.Mappings)
			}
		}
		_, err = ast.Validate(l.JavaScript, rules)
		var ill *ast.IllegalError
		if errors.As(err, &ill) {
			for _, v := range ill.Violations {
				if v.Kind == ast.KindImport {
					t.Fatalf("Link(%q) = %q: %v", src, l.JavaScript, v)
				}
			}
		}
	})
}

var modulePathPattern = regexp.MustCompile(`^[a-z0-9]+(-[a-z0-9]+)*$`)

// FuzzNames checks the shape of module paths and export names.
func FuzzNames(f *testing.F) {
	for _, s := range []string{"", "Google Drive", "a--b", "123", "delete", "日本", "__meta__", "\xff", "constructor", "x--2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p := ModulePath(s)
		if p != defaultModulePath && !modulePathPattern.MatchString(p) || ModulePath(p) != p {
			t.Fatalf("ModulePath(%q) = %q", s, p)
		}
		e := ExportName(s)
		if !isIdentifier(e) || exportReserved[e] || ExportName(e) != e {
			t.Fatalf("ExportName(%q) = %q", s, e)
		}
		paths := ModulePaths([]string{s, p, s})
		if paths[0] == paths[2] || paths[1] == paths[2] || paths[0] == paths[1] {
			t.Fatalf("ModulePaths(%q) = %q", s, paths)
		}
	})
}
