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

func ExampleDeclareModule() {
	yes, no := true, false
	fmt.Print(typescript.DeclareModule(typescript.Module{
		Specifier:  "@codemode/servers/shop",
		ServerID:   "shop",
		ServerName: "Shop",
		Tools: []typescript.ModuleTool{
			{Export: "get_order", Function: typescript.Function{
				Name:        "shop.get_order",
				Description: "Fetch one order.",
				Effects:     typescript.Effects{ReadOnly: &yes, OpenWorld: &no},
				InputSchema: json.RawMessage(`{"type":"object","properties":{"orderId":{"type":"string"}},"required":["orderId"]}`),
				OutputSchema: json.RawMessage(`{
					"type": "object",
					"properties": {
						"id": {"type": "string"},
						"status": {"enum": ["open", "shipped"]},
						"note": {"type": "string", "nullable": true}
					},
					"required": ["id", "status"]
				}`),
			}},
			{Export: "ping", Function: typescript.Function{
				Name:        "shop.ping",
				InputSchema: json.RawMessage(`{"type":"object","properties":{}}`),
			}},
		},
	}))
	// Output:
	// /** Tools of the MCP server Shop (serverId "shop"). */
	// declare module "@codemode/servers/shop" {
	//   /**
	//    * Fetch one order.
	//    * Canonical MCP tool: shop.get_order
	//    * @remarks read-only
	//    * @annotations readOnlyHint: true, openWorldHint: false
	//    */
	//   export function get_order(input: Shop_GetOrderInput): Promise<Shop_GetOrderOutput>;
	//   type Shop_GetOrderInput = { orderId: string };
	//   type Shop_GetOrderOutput = {
	//     id: string;
	//     status: "open" | "shipped";
	//     note?: string | null;
	//   };
	//   /**
	//    * Canonical MCP tool: shop.ping
	//    * Resolves to the result's structuredContent if it has one, else to a lone text block as a string, else to the whole MCP result object (binary content base64-encoded).
	//    */
	//   export function ping(input?: Record<string, never>): Promise<unknown>;
	//   /** This module's server, and the canonical MCP name and export name of each of its tools. */
	//   export const __meta__: {
	//     readonly serverId: string;
	//     readonly serverName: string;
	//     readonly serverVersion?: string;
	//     readonly tools: ReadonlyArray<{ readonly toolName: string; readonly exportName: string; readonly description?: string }>;
	//   };
	// }
}
