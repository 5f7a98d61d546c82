package ast_test

import (
	"errors"
	"fmt"

	"github.com/dop251/goja"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/presets"
)

func ExampleValidate() {
	rules, _ := ast.RulesForPreset(presets.Secure)

	// A plan that breaks rules: every violation is reported with its
	// location.
	_, err := ast.Validate("const f = (() => 1).constructor;\nfor (const x of [1]) {}", rules)
	var illegal *ast.IllegalError
	if errors.As(err, &illegal) {
		for _, v := range illegal.Violations {
			fmt.Printf("%s at %d:%d\n", v.Kind, v.Location.Line, v.Location.Column)
		}
	}

	// A valid plan compiles to a program that evaluates to the plan's
	// async function.
	checked, err := ast.Validate("const x = await Promise.resolve(6);\nreturn x * 7;", rules)
	if err != nil {
		panic(err)
	}
	rt := goja.New()
	fn, err := rt.RunProgram(checked.Program)
	if err != nil {
		panic(err)
	}
	call, _ := goja.AssertFunction(fn)
	promise, err := call(goja.Undefined())
	if err != nil {
		panic(err)
	}
	fmt.Println(promise.Export().(*goja.Promise).Result())
	// Output:
	// banned_member at 1:21
	// loop at 2:1
	// 42
}
