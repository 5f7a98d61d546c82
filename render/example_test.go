package render_test

import (
	"fmt"

	"github.com/codecall-go/codecall/render"
)

const order = `{
  "id": 1042,
  "customer": {"name": "Ada Lovelace", "email": "ada@example.org"},
  "status": "shipped: 2 of 3",
  "tags": ["priority", "gift"],
  "lines": [
    {"sku": "A1", "qty": 2, "price": 9.50},
    {"sku": "B7", "qty": 1, "price": 14}
  ]
}`

func ExampleValue_json() {
	text, err := render.Value(render.JSON, []byte(order))
	if err != nil {
		panic(err)
	}
	fmt.Println(text)
	// Output:
	// {"id":1042,"customer":{"name":"Ada Lovelace","email":"ada@example.org"},"status":"shipped: 2 of 3","tags":["priority","gift"],"lines":[{"sku":"A1","qty":2,"price":9.50},{"sku":"B7","qty":1,"price":14}]}
}

func ExampleValue_compact() {
	text, err := render.Value(render.Compact, []byte(order))
	if err != nil {
		panic(err)
	}
	fmt.Println(text)
	// Output:
	// id: 1042
	// customer:
	//   name: Ada Lovelace
	//   email: ada@example.org
	// status: "shipped: 2 of 3"
	// tags: priority, gift
	// lines:
	//   - sku: A1
	//     qty: 2
	//     price: 9.50
	//   - sku: B7
	//     qty: 1
	//     price: 14
}

func ExampleValue_toon() {
	text, err := render.Value(render.TOON, []byte(order))
	if err != nil {
		panic(err)
	}
	fmt.Println(text)
	// Output:
	// id: 1042
	// customer:
	//   name: Ada Lovelace
	//   email: ada@example.org
	// status: "shipped: 2 of 3"
	// tags[2]: priority,gift
	// lines[2]{sku,qty,price}:
	//   A1,2,9.5
	//   B7,1,14
}

func ExampleParseFormat() {
	f, err := render.ParseFormat("toon")
	fmt.Println(f, err)
	_, err = render.ParseFormat("yaml")
	fmt.Println(err)
	// Output:
	// toon <nil>
	// render: unknown format "yaml": want one of "json", "compact", "toon"
}
