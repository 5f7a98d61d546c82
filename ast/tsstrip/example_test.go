package tsstrip_test

import (
	"errors"
	"fmt"

	"github.com/codecall-go/codecall/ast"
	"github.com/codecall-go/codecall/ast/tsstrip"
	"github.com/codecall-go/codecall/presets"
)

func ExampleValidate() {
	rules, _ := ast.RulesForPreset(presets.Secure)

	// A TypeScript plan is validated as the JavaScript its types are
	// stripped to.
	checked, err := tsstrip.Validate("const n: number = 6;\nreturn (n * 7) as number;", rules)
	if err != nil {
		panic(err)
	}
	fmt.Println(checked.TypeScript())
	fmt.Print(checked.Source())

	// Errors are located in the script as sent.
	_, err = tsstrip.Validate("interface Row { id: string }\nenum E { A }\nconst rows: Row[] = [];\nreturn eval('1');", rules)
	var illegal *ast.IllegalError
	if errors.As(err, &illegal) {
		v := illegal.Violations[0]
		fmt.Printf("%s at %d:%d\n", v.Kind, v.Location.Line, v.Location.Column)
	}
	// Output:
	// true
	//   const n = 6;
	//   return n * 7;
	// banned_identifier at 4:8
}
