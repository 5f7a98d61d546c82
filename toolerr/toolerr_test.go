package toolerr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/codecall-go/codecall/toolerr"
)

func TestAsAndCodeOf(t *testing.T) {
	denied := &toolerr.Error{Code: toolerr.AccessDenied, Tool: "billing.refund", Message: "policy denied billing.refund: over limit"}
	cases := []struct {
		name string
		err  error
		code toolerr.Code
	}{
		{"direct", denied, toolerr.AccessDenied},
		{"wrapped", fmt.Errorf("invoke: %w", denied), toolerr.AccessDenied},
		{"joined", errors.Join(context.Canceled, denied), toolerr.AccessDenied},
		{"plain Go error", errors.New("NOT_FOUND: looks like a code"), ""},
		{"nil", nil, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := toolerr.CodeOf(c.err); got != c.code {
				t.Fatalf("CodeOf = %q, want %q", got, c.code)
			}
			if got := toolerr.As(c.err); (got != nil) != (c.code != "") {
				t.Fatalf("As = %v, want an *Error: %v", got, c.code != "")
			}
		})
	}
}

func TestErrorText(t *testing.T) {
	e := &toolerr.Error{Code: toolerr.NotFound, Tool: "x", Message: `no tool named "x"`}
	if got, want := e.Error(), `NOT_FOUND: no tool named "x"`; got != want {
		t.Fatalf("Error() = %q, want %q", got, want)
	}
}

func ExampleCodeOf() {
	err := fmt.Errorf("calling a tool: %w", &toolerr.Error{Code: toolerr.ApprovalDenied, Tool: "crm.delete_contact",
		Message: "the user declined the call of crm.delete_contact"})
	switch toolerr.CodeOf(err) {
	case toolerr.ApprovalDenied:
		fmt.Println("declined; do not retry")
	case toolerr.Timeout:
		fmt.Println("try again later")
	}
	// Output: declined; do not retry
}

func TestHintForEveryCode(t *testing.T) {
	for _, c := range []toolerr.Code{toolerr.NotFound, toolerr.AccessDenied, toolerr.ApprovalRequired, toolerr.ApprovalDenied, toolerr.ApprovalExpired,
		toolerr.Validation, toolerr.Execution, toolerr.Timeout, toolerr.Limit, toolerr.SelfReference, toolerr.Cancelled} {
		if toolerr.HintFor(c) == "" {
			t.Errorf("HintFor(%s) is empty", c)
		}
	}
	if h := toolerr.HintFor("NO_SUCH_CODE"); h != "" {
		t.Errorf("HintFor of an unknown code = %q, want empty", h)
	}
}
