package presets

import (
	"errors"
	"strings"
	"testing"

	"github.com/gobwas/glob"
)

func TestGlob(t *testing.T) {
	tests := []struct {
		pattern string
		match   []string
		noMatch []string
		literal bool
	}{
		{"billing.*", []string{"billing.list", "billing.invoices.list", "billing."}, []string{"billing", "users.billing.x"}, false},
		{"*.delete", []string{"users.delete", "a.b.delete"}, []string{"users.deleted"}, false},
		{"users.delete", []string{"users.delete"}, []string{"users.deletex", "usersxdelete"}, true},
		{"{users,orgs}.get", []string{"users.get", "orgs.get"}, []string{"teams.get"}, false},
		{"tool-?", []string{"tool-1"}, []string{"tool-12", "tool-"}, false},
		{"[!a]*", []string{"billing"}, []string{"apps"}, false},
		{`a\*`, []string{"a*"}, []string{"ab"}, false},
		{"*", []string{"anything.at.all", ""}, nil, false},
	}
	for _, tt := range tests {
		g, err := CompileGlob(tt.pattern)
		if err != nil {
			t.Fatalf("CompileGlob(%q): %v", tt.pattern, err)
		}
		for _, s := range tt.match {
			if !g.Match(s) {
				t.Errorf("%q does not match %q", tt.pattern, s)
			}
		}
		for _, s := range tt.noMatch {
			if g.Match(s) {
				t.Errorf("%q matches %q", tt.pattern, s)
			}
		}
		if g.Literal() != tt.literal || g.String() != tt.pattern {
			t.Errorf("%q: Literal() = %v, String() = %q", tt.pattern, g.Literal(), g.String())
		}
	}

	var zero Glob
	if zero.Match("") || zero.Match("x") || zero.Literal() || zero.String() != "" {
		t.Error("the zero Glob must match nothing")
	}
}

func TestCompileGlobErrors(t *testing.T) {
	for _, p := range []string{"", "a.{b", "[a", "x[", "{"} {
		if _, err := CompileGlob(p); err == nil {
			t.Errorf("CompileGlob(%q) succeeded", p)
		}
	}
	_, err := CompileGlob("a.{b")
	var se *glob.SyntaxError
	if !errors.As(err, &se) {
		t.Errorf("err = %v, want it to wrap a *glob.SyntaxError", err)
	}
}

func TestGlobs(t *testing.T) {
	gs, err := CompileGlobs([]string{"a.*", "b"})
	if err != nil {
		t.Fatal(err)
	}
	if !gs.Match("a.x") || !gs.Match("b") || gs.Match("c") {
		t.Error("Globs.Match is not an any-match")
	}
	if (Globs{}).Match("a") {
		t.Error("an empty Globs matched")
	}
	_, err = CompileGlobs([]string{"ok", "[x", "{"})
	if err == nil || !strings.Contains(err.Error(), "[1]: ") || !strings.Contains(err.Error(), "[2]: ") {
		t.Errorf("err = %v, want both bad patterns named", err)
	}
}
