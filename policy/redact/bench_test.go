package redact

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
)

// benchArgs are typical tool arguments: a dozen keys, one secret.
var benchArgs = map[string]any{
	"customerId": "cus_8812", "amount": 1299.5, "currency": "EUR", "description": "Refund for order 4411",
	"metadata": map[string]any{"orderId": "ord_4411", "channel": "web", "apiKey": "sk_live_abc"},
	"items":    []any{map[string]any{"sku": "A-1", "qty": 2.0}, map[string]any{"sku": "B-7", "qty": 1.0}},
	"notify":   true, "email": "ann@example.com",
}

// benchResult is a tool result of 500 rows as JSON text, as MCP tools
// return it.
func benchResult() json.RawMessage {
	rows := make([]any, 500)
	for i := range rows {
		rows[i] = map[string]any{"id": fmt.Sprintf("usr_%d", i), "name": "User Name", "email": "user@example.com",
			"created": "2026-01-02T03:04:05Z", "plan": "pro", "seats": float64(i % 20), "active": i%3 == 0}
	}
	text, _ := json.Marshal(map[string]any{"users": rows, "nextToken": "abc"})
	b, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": string(text)}}})
	return b
}

func BenchmarkValueArgs(b *testing.B) {
	r := Default()
	b.ReportAllocs()
	for b.Loop() {
		r.Value(benchArgs, nil)
	}
}

func BenchmarkValueArgsWithSchema(b *testing.B) {
	r := Default()
	schema := json.RawMessage(`{"type":"object","properties":{"customerId":{"type":"string"},"pin":{"type":"string","format":"password"},"metadata":{"type":"object","additionalProperties":{"type":"string"}}}}`)
	b.ReportAllocs()
	for b.Loop() {
		r.Value(benchArgs, schema)
	}
}

func BenchmarkJSONResult500Rows(b *testing.B) {
	r := Default()
	raw := benchResult()
	b.SetBytes(int64(len(raw)))
	b.ReportAllocs()
	for b.Loop() {
		r.JSON(raw, nil)
	}
}

func BenchmarkStringShort(b *testing.B) {
	r := Default()
	s := "refund of 12.50 EUR refused: amount over the daily limit"
	b.ReportAllocs()
	for b.Loop() {
		r.String(s)
	}
}

func BenchmarkString64KiBText(b *testing.B) {
	r := Default()
	s := strings.Repeat("The quick brown fox jumps over the lazy dog; token counts: 12, id 4411. ", 64<<10/72)
	b.SetBytes(int64(len(s)))
	b.ReportAllocs()
	for b.Loop() {
		r.String(s)
	}
}

// BenchmarkStringHostile runs the patterns over 64 KiB strings built to
// make a search read far ahead from many starting points; the cost must
// stay linear (compare with BenchmarkString64KiBText).
func BenchmarkStringHostile(b *testing.B) {
	const n = 64 << 10
	inputs := map[string]string{
		"jwt-runs":     strings.Repeat("eyJ-", n/4),
		"scheme-runs":  strings.Repeat("a.", n/2) + "://x",
		"labels":       strings.Repeat("token=", n/6),
		"digits":       strings.Repeat("4 ", n/2),
		"gh":           strings.Repeat("gh ", n/3),
		"bearer-words": strings.Repeat("bearer ", n/7),
		"pem-headers":  strings.Repeat("-----BEGIN ", n/11),
	}
	r := Default()
	for name, s := range inputs {
		b.Run(name, func(b *testing.B) {
			b.SetBytes(int64(len(s)))
			for b.Loop() {
				r.String(s)
			}
		})
	}
}
