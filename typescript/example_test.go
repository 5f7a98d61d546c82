package typescript_test

import (
	"encoding/json"
	"fmt"

	"github.com/codecall-go/codecall/typescript"
)

func ExampleDeclare() {
	no := false
	fmt.Print(typescript.Declare(typescript.Function{
		Name:        "billing.create_invoice",
		Description: "Create an invoice for a customer.",
		Effects:     typescript.Effects{ReadOnly: &no, Destructive: &no, Idempotent: &no},
		// A person confirms each call.
		RequiresApproval: true,
		InputSchema: json.RawMessage(`{
			"type": "object",
			"properties": {
				"customerId": {"type": "string", "description": "Customer id"},
				"amount": {"type": "number"},
				"currency": {"enum": ["EUR", "USD"]}
			},
			"required": ["customerId", "amount"]
		}`),
		OutputSchema: json.RawMessage(`{"type":"object","properties":{"id":{"type":"string"},"total":{"type":"number"}},"required":["id","total"]}`),
	}))
	// Output:
	// /**
	//  * Create an invoice for a customer.
	//  * Requires approval: a person confirms each call; a denial is final.
	//  * @remarks non-destructive, not idempotent
	//  */
	// declare function callTool(name: "billing.create_invoice", input: Billing_CreateInvoiceInput): Promise<Billing_CreateInvoiceOutput>;
	// type Billing_CreateInvoiceInput = {
	//   /** Customer id */
	//   customerId: string;
	//   amount: number;
	//   currency?: "EUR" | "USD";
	// };
	// type Billing_CreateInvoiceOutput = {
	//   id: string;
	//   total: number;
	// };
}

func ExampleTypeOf() {
	t, err := typescript.TypeOf(json.RawMessage(`{"type":"array","items":{"type":["string","null"]}}`))
	if err != nil {
		panic(err)
	}
	fmt.Println(t)
	// Output:
	// (string | null)[]
}

func ExampleTypeName() {
	fmt.Println(typescript.TypeName("billing.create_invoice"))
	fmt.Println(typescript.TypeName("create_invoice"))
	fmt.Println(typescript.TypeName("get-weather"))
	// Output:
	// Billing_CreateInvoice
	// CreateInvoice
	// GetWeather_041aeb16
}
