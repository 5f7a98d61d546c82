package ast

import (
	"strings"
	"testing"

	"github.com/dop251/goja"
)

// realisticPlans are plans an LLM writes, one per preset, using what the
// preset allows.
var realisticPlans = map[string]string{
	// No loops, no console, no regular expressions.
	string(LD): `// Top customers by order total.
const users = await callTool("users.list", {limit: 50});
const active = users.items.filter(u => u.active && u.email.endsWith("@example.com"));
const orders = await Promise.all(
  active.slice(0, 5).map(u => callTool("orders.list", {userId: u.id}))
);
const totals = active.slice(0, 5).map((u, i) => ({
  id: u.id,
  name: u.name,
  total: orders[i].items.reduce((sum, o) => sum + o.amount, 0),
}));
totals.sort((a, b) => b.total - a.total);
return {count: active.length, top: totals.slice(0, 3)};`,

	// Console and RE2-safe regular expression literals.
	string(SE): benchPlan,

	// Loops and any regular expression.
	string(BA): `const {items} = await callTool("tickets.search", {query: "status:open"});
const byOwner = {};
for (const t of items) {
  const owner = t.owner ?? "unassigned";
  (byOwner[owner] ??= []).push(t.id);
}
let i = 0;
while (i < 3) { i++; }
const words = items.map(t => t.title).join(" ");
const repeated = /(\b\w+\b).*\1/.test(words);   // a backreference
console.info("owners", Object.keys(byOwner).length);
return {byOwner, repeated, i};`,

	// Everything the sandbox offers.
	string(EX): `class Counter {
  #n = 0;
  inc() { return ++this.#n; }
}
function* ids(n) { for (let i = 0; i < n; i++) yield "u" + i; }
const c = new Counter();
const results = [];
for (const id of ids(3)) {
  const r = await callTool("users.get", {id}, {throwOnError: false});
  if (r.ok) { results.push(r.data); c.inc(); }
}
do { c.inc(); } while (c.inc() < 6);
const m = "2024-05-06".match(/(?<y>\d{4})-(?<m>\d{2})/);
return {results, count: c.inc(), year: m.groups.y};`,
}

// benchPlan is a typical 30-line plan for the secure preset.
const benchPlan = `// Find open invoices of EU customers and summarise them per country.
const customers = await callTool("crm.customers.list", {region: "EU", limit: 200});
const ids = customers.items
  .filter(c => c.active && /^[A-Z]{2}-\d+$/.test(c.code))
  .map(c => c.id);
console.log("customers", ids.length);

const invoices = await Promise.all(
  ids.slice(0, 20).map(id => callTool("billing.invoices.list", {customerId: id, status: "open"}))
);

const byCountry = {};
invoices.forEach((res, i) => {
  const customer = customers.items.find(c => c.id === ids[i]);
  const country = customer?.country ?? "unknown";
  const total = res.items.reduce((sum, inv) => sum + inv.amount, 0);
  byCountry[country] = (byCountry[country] ?? 0) + total;
});

const ranking = Object.entries(byCountry)
  .map(([country, total]) => ({country, total: Math.round(total * 100) / 100}))
  .sort((a, b) => b.total - a.total);

const overdue = invoices.flatMap(r => r.items).filter(inv => new Date(inv.due) < new Date("2024-01-01"));
if (overdue.length > 0) {
  console.warn("overdue invoices", overdue.length);
}

return {countries: ranking.length, ranking: ranking.slice(0, 5), overdue: overdue.length, checkedAt: codecallContext.now};`

// stubRuntime is a goja runtime with fake CodeCall globals, enough to run
// the realistic plans.
func stubRuntime() *goja.Runtime {
	rt := goja.New()
	item := func(id int) map[string]any {
		return map[string]any{
			"id": id, "active": true, "email": "a@example.com", "name": "n", "code": "DE-1", "country": "DE",
			"amount": 10.5, "due": "2023-12-01", "owner": nil, "title": "the the bug",
		}
	}
	_ = rt.Set("callTool", func(name string, input map[string]any, opts ...map[string]any) *goja.Promise {
		p, resolve, _ := rt.NewPromise()
		data := map[string]any{"items": []any{item(1), item(2), item(3)}}
		if len(opts) > 0 {
			_ = resolve(map[string]any{"ok": true, "data": data})
		} else {
			_ = resolve(data)
		}
		return p
	})
	console := rt.NewObject()
	for _, level := range []string{"log", "info", "warn", "error", "debug"} {
		_ = console.Set(level, func(goja.FunctionCall) goja.Value { return goja.Undefined() })
	}
	_ = rt.Set("console", console)
	_ = rt.Set("codecallContext", map[string]any{"now": "2024-06-01"})
	return rt
}

func TestRealisticPlans(t *testing.T) {
	for preset, plan := range realisticPlans {
		t.Run(preset, func(t *testing.T) {
			r := presetRules(t, presetName(preset))
			c, err := Validate(plan, r)
			if err != nil {
				t.Fatalf("Validate: %s", describe(err))
			}
			rt := stubRuntime()
			fnv, err := rt.RunProgram(c.Program)
			if err != nil {
				t.Fatal(err)
			}
			fn, _ := goja.AssertFunction(fnv)
			res, err := fn(goja.Undefined())
			if err != nil {
				t.Fatal(err)
			}
			p := res.Export().(*goja.Promise)
			if p.State() != goja.PromiseStateFulfilled {
				t.Fatalf("plan %v: %v", p.State(), p.Result())
			}
			if out := p.Result().Export(); out == nil {
				t.Error("no result")
			}
		})
	}
	// The balanced and experimental plans use what the stricter presets
	// refuse.
	for _, tc := range []struct{ plan, preset string }{{string(BA), string(SE)}, {string(EX), string(SE)}, {string(SE), string(LD)}} {
		if _, err := Validate(realisticPlans[tc.plan], presetRules(t, presetName(tc.preset))); err == nil {
			t.Errorf("the %s plan passes the %s preset", tc.plan, tc.preset)
		} else if !strings.Contains(err.Error(), "preset") {
			t.Errorf("the %s plan under %s: %v", tc.plan, tc.preset, err)
		}
	}
}
