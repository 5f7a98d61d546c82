package render

import (
	"encoding/json"
	"fmt"
	"testing"
)

// benchDocs are two shapes of tool result: a table of uniform records, where
// TOON is at its best, and an irregular nested document.
func benchDocs(b *testing.B) map[string][]byte {
	type line struct {
		SKU   string  `json:"sku"`
		Name  string  `json:"name"`
		Qty   int     `json:"qty"`
		Price float64 `json:"price"`
		Ok    bool    `json:"inStock"`
	}
	var rows []line
	for i := range 200 {
		rows = append(rows, line{fmt.Sprintf("SKU-%04d", i), fmt.Sprintf("Widget model %d", i), i % 7, float64(i) * 1.25, i%3 != 0})
	}
	table, err := json.Marshal(map[string]any{"items": rows, "total": len(rows)})
	if err != nil {
		b.Fatal(err)
	}
	var issues []map[string]any
	for i := range 50 {
		issue := map[string]any{
			"number": i, "title": fmt.Sprintf("Crash when opening file %d, sometimes", i),
			"labels": []string{"bug", "p1"},
			"user":   map[string]any{"login": fmt.Sprintf("user%d", i), "site_admin": false},
		}
		if i%2 == 0 {
			issue["assignee"] = map[string]any{"login": "ada"}
			issue["body"] = "Steps:\n1. open\n2. crash"
		}
		issues = append(issues, issue)
	}
	nested, err := json.MarshalIndent(map[string]any{"issues": issues, "page": map[string]any{"next": nil, "size": 50}}, "", "  ")
	if err != nil {
		b.Fatal(err)
	}
	return map[string][]byte{"table": table, "nested": nested}
}

func BenchmarkValue(b *testing.B) {
	docs := benchDocs(b)
	for _, name := range []string{"table", "nested"} {
		doc := docs[name]
		for _, f := range formats {
			b.Run(name+"/"+string(f), func(b *testing.B) {
				b.SetBytes(int64(len(doc)))
				b.ReportAllocs()
				var out string
				for b.Loop() {
					var err error
					if out, err = Value(f, doc); err != nil {
						b.Fatal(err)
					}
				}
				b.ReportMetric(float64(len(out)), "out-bytes")
			})
		}
	}
}
