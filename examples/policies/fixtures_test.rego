# Shared fixtures of the Rego tests: demo tools as CodeCall describes them in
# the input document, moments in the configured time zone, and helpers that
# evaluate the decision.
package codecall_test

import data.codecall

# Moments in America/New_York (UTC-5 in November).

# Wednesday 18 November 2026, 15:00: business hours.
wednesday_afternoon := time.parse_rfc3339_ns("2026-11-18T15:00:00-05:00")

# The first and the last minute of that Wednesday's business hours.
wednesday_opening := time.parse_rfc3339_ns("2026-11-18T09:00:00-05:00")

wednesday_last_minute := time.parse_rfc3339_ns("2026-11-18T17:59:59-05:00")

# One minute before opening and the moment of closing.
wednesday_early := time.parse_rfc3339_ns("2026-11-18T08:59:00-05:00")

wednesday_closing := time.parse_rfc3339_ns("2026-11-18T18:00:00-05:00")

# Saturday 21 November 2026, 11:00: a weekend.
saturday_morning := time.parse_rfc3339_ns("2026-11-21T11:00:00-05:00")

# Thursday 26 November 2026, 11:00: Thanksgiving, a configured holiday.
thanksgiving := time.parse_rfc3339_ns("2026-11-26T11:00:00-05:00")

# Thursday 19 November 2026, 02:30 in New York is still Wednesday 23:30 in
# Los Angeles and already Thursday 08:30 in Berlin: the time zone matters.
thursday_night := time.parse_rfc3339_ns("2026-11-19T02:30:00-05:00")

# All four hints set by the tool's author, as the demo does for every tool.
all_explicit := {"readOnlyHint": true, "destructiveHint": true, "idempotentHint": true, "openWorldHint": true}

none_explicit := {"readOnlyHint": false, "destructiveHint": false, "idempotentHint": false, "openWorldHint": false}

hints(read_only, destructive, idempotent, open_world) := {
	"readOnlyHint": read_only,
	"destructiveHint": destructive,
	"idempotentHint": idempotent,
	"openWorldHint": open_world,
	"explicit": all_explicit,
}

# The demo's hint combinations (examples/demo/demo.go).
read_only_hints := hints(true, false, true, false)

additive_hints := hints(false, false, false, false)

overwrite_hints := hints(false, true, true, false)

outbound_hints := hints(false, false, false, true)

# What mcp.NewTool reports for a tool whose author set no hint.
defaulted_hints := {
	"readOnlyHint": false,
	"destructiveHint": true,
	"idempotentHint": false,
	"openWorldHint": true,
	"explicit": none_explicit,
}

tool(name, app, annotations) := {
	"name": name,
	"title": name,
	"appId": app,
	"source": "inline",
	"tags": [],
	"annotations": annotations,
	"requiresApproval": false,
}

get_contact := tool("crm.get_contact", "crm", read_only_hints)

create_contact := tool("crm.create_contact", "crm", additive_hints)

delete_contact := tool("crm.delete_contact", "crm", overwrite_hints)

send_email := tool("notifications.send_email", "notifications", outbound_hints)

list_invoices := object.union(tool("billing.list_invoices", "billing", read_only_hints), {"tags": ["payments"]})

record_payment := object.union(tool("billing.record_payment", "billing", additive_hints), {"tags": ["payments"]})

# billing.refund_payment: destructive, not idempotent, closed-world, and its
# metadata asks for approval.
refund_payment := object.union(tool("billing.refund_payment", "billing", hints(false, true, false, false)), {
	"tags": ["payments", "refunds"],
	"requiresApproval": true,
})

list_users := tool("users.list", "users", read_only_hints)

delete_account := tool("users.delete_account", "users", overwrite_hints)

health := tool("health", "codecall-demo", read_only_hints)

# A tool registered with mcp.NewTool and no hints at all.
merge_contacts := tool("crm.merge_contacts", "crm", defaulted_hints)

# The input document of a call.
call(t, args, via) := {
	"tool": t,
	"args": args,
	"via": via,
	"session": {"id": "sess-1"},
	"run": run(via),
	"context": {},
}

run("execute") := {"id": "run-1", "scriptSha256": "9f86d081884c7d659a2feb70fd8bc0e4e6e1d9c7c5c8cd5a66e0e57d5a2f7a5b", "callIndex": 0}

run(via) := {} if via != "execute"

# The settings of data.yaml with JSON Patch operations applied. Tests replace
# data.codecall_settings as a whole: OPA's `with` on a path below it would
# not reach rules that read data.codecall_settings itself.
patched(ops) := json.patch(data.codecall_settings, ops)

# The decision for an input at a moment.
decide(doc, now) := d if {
	d := codecall.decision with input as doc with time.now_ns as now
}

# The three outcomes a decision can have.
allowed(d) if {
	d.allow == true
	d.requireApproval == false
}

needs_approval(d) if {
	d.allow == true
	d.requireApproval == true
}

denied(d) if {
	d.allow == false
	d.requireApproval == false
}
