package codemode

import (
	"reflect"
	"strings"

	sast "github.com/grafana/sobek/ast"
)

// problem is something found in the tree that keeps a module from being
// linked, at a byte offset of the source.
type problem struct {
	off  int
	what string // dynamicImport, importMeta or reservedName
	// specifier is the argument of an import() that is a string literal.
	specifier string
}

const (
	dynamicImport = "dynamic import"
	importMeta    = "import.meta"
	reservedName  = "reserved name"
)

var (
	astPackage        = reflect.TypeFor[sast.Program]().PkgPath()
	callExpression    = reflect.TypeFor[*sast.CallExpression]()
	dynamicImportExpr = reflect.TypeFor[*sast.DynamicImportExpression]()
	metaProperty      = reflect.TypeFor[*sast.MetaProperty]()
	identifier        = reflect.TypeFor[*sast.Identifier]()
	stringLiteral     = reflect.TypeFor[*sast.StringLiteral]()
)

// findProblems walks every node of the tree and returns the first problem
// in source order, or ok false: a dynamic import(), import.meta, or an
// identifier naming ModulesName (written with escapes, since the source
// does not hold the name's text).
//
// The walk goes through every pointer, interface, slice and struct of
// sobek's ast package by reflection, so that no kind of node is missed,
// including any a later version of the parser adds. It uses a stack of its
// own rather than recursion, and visits each node with children once.
func findProblems(prog *sast.Program, src string) (first problem, ok bool) {
	note := func(p problem) {
		if !ok || p.off < first.off {
			first, ok = p, true
		}
	}
	// A node can be reached by two paths (a function's DeclarationList
	// holds declarations its body holds too), and such sharing nests, so
	// following every path could take exponential time: each node with
	// children is visited once. Leaves (identifiers, literals) may be
	// visited twice, which costs less than remembering them.
	type visit struct {
		p uintptr
		t reflect.Type
	}
	seen := make(map[visit]bool, len(src)/16)
	inner := make(map[reflect.Type]bool)
	stack := []reflect.Value{reflect.ValueOf(prog)}
	for len(stack) > 0 {
		v := stack[len(stack)-1]
		stack = stack[:len(stack)-1]
		switch v.Kind() {
		case reflect.Pointer:
			if v.IsNil() || v.Type().Elem().Kind() != reflect.Struct || v.Type().Elem().PkgPath() != astPackage {
				continue
			}
			hasChildren, known := inner[v.Type()]
			if !known {
				hasChildren = holdsNodes(v.Type().Elem())
				inner[v.Type()] = hasChildren
			}
			if hasChildren {
				key := visit{v.Pointer(), v.Type()}
				if seen[key] {
					continue
				}
				seen[key] = true
			}
			switch v.Type() {
			case callExpression:
				if callee := v.Elem().FieldByName("Callee"); callee.IsValid() && !callee.IsNil() && callee.Elem().Type() == dynamicImportExpr {
					// The node of import itself has no position; the
					// keyword is the last "import" before the parenthesis.
					lp := int(v.Elem().FieldByName("LeftParenthesis").Int()) - 1
					off := lp
					if lp >= 0 && lp <= len(src) {
						if i := strings.LastIndex(src[:lp], "import"); i >= 0 {
							off = i
						}
					}
					p := problem{off: off, what: dynamicImport}
					if args := v.Elem().FieldByName("ArgumentList"); args.Len() == 1 && !args.Index(0).IsNil() && args.Index(0).Elem().Type() == stringLiteral {
						p.specifier = args.Index(0).Elem().Elem().FieldByName("Value").String()
					}
					note(p)
				}
			case metaProperty:
				if meta := v.Elem().FieldByName("Meta"); !meta.IsNil() && meta.Elem().FieldByName("Name").String() == "import" {
					note(problem{off: int(v.Elem().FieldByName("Idx").Int()) - 1, what: importMeta})
				}
			case identifier:
				if v.Elem().FieldByName("Name").String() == ModulesName {
					note(problem{off: int(v.Elem().FieldByName("Idx").Int()) - 1, what: reservedName})
				}
			}
			stack = append(stack, v.Elem())
		case reflect.Interface:
			if !v.IsNil() {
				stack = append(stack, v.Elem())
			}
		case reflect.Slice:
			switch v.Type().Elem().Kind() {
			case reflect.Pointer, reflect.Interface, reflect.Struct:
			default:
				continue
			}
			for i := v.Len() - 1; i >= 0; i-- {
				stack = append(stack, v.Index(i))
			}
		case reflect.Struct:
			if v.Type().PkgPath() != astPackage {
				continue
			}
			for i := range v.NumField() {
				switch f := v.Field(i); f.Kind() {
				case reflect.Pointer, reflect.Interface, reflect.Slice, reflect.Struct:
					stack = append(stack, f)
				}
			}
		}
	}
	return first, ok
}

// holdsNodes reports whether a struct of sobek's ast package has fields
// that may lead to other nodes.
func holdsNodes(t reflect.Type) bool {
	for i := range t.NumField() {
		switch t.Field(i).Type.Kind() {
		case reflect.Pointer, reflect.Interface, reflect.Slice:
			return true
		case reflect.Struct:
			if holdsNodes(t.Field(i).Type) {
				return true
			}
		}
	}
	return false
}
