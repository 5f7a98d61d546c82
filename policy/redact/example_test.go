package redact_test

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/policy/redact"
	"github.com/codecall-go/codecall/presets"
)

func Example() {
	r, err := redact.New(presets.RedactionConfig{
		Keys:     []string{"ssn"},
		Patterns: []presets.RedactionPattern{{Name: "ticket", Regex: `TKT-[0-9]{6}`}},
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	args := map[string]any{
		"user":     "bob",
		"password": "hunter2",
		"SSN":      "078-05-1120",
		"note":     "see TKT-004211, Authorization: Bearer mF_9.B5f-4.1JqM",
		"pin":      "1234",
	}
	schema := json.RawMessage(`{"properties": {"pin": {"type": "string", "format": "password"}}}`)
	out, _ := json.Marshal(r.Value(args, schema))
	fmt.Println(string(out))
	fmt.Println(args["password"]) // the input is never modified
	// Output:
	// {"SSN":"[REDACTED]","note":"see [REDACTED], Authorization: Bearer [REDACTED]","password":"[REDACTED]","pin":"[REDACTED]","user":"bob"}
	// hunter2
}

func ExampleRedactor_String() {
	r := redact.Default()
	fmt.Println(r.String("connect to postgres://app:s3cr3t@db/shop with key AKIAIOSFODNN7EXAMPLE"))
	// Output:
	// connect to postgres://app:[REDACTED]@db/shop with key [REDACTED]
}

func ExampleRedactor_JSON() {
	r := redact.Default()
	result := json.RawMessage(`{"access_token": "ya29.a0Af", "expires_in": 3599, "token_type": "Bearer"}`)
	fmt.Println(string(r.JSON(result, nil)))
	// Output:
	// {"access_token":"[REDACTED]","expires_in":3599,"token_type":"Bearer"}
}

func ExampleRedactor_ToolResult() {
	res := mcp.NewToolResultText(`{"user": "ann", "session_token": "c2Vzc2lvbi0xMjM0"}`)
	shown := redact.Default().ToolResult(res, nil)
	fmt.Println(shown.Content[0].(mcp.TextContent).Text)
	fmt.Println(res.Content[0].(mcp.TextContent).Text) // unchanged
	// Output:
	// {"session_token":"[REDACTED]","user":"ann"}
	// {"user": "ann", "session_token": "c2Vzc2lvbi0xMjM0"}
}
