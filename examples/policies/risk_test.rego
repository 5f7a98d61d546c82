# Tests of the side-effect and approval rules (risk.rego).
package codecall_test

test_explicitly_harmless_write_needs_no_approval if {
	every via in ["execute", "invoke", "direct"] {
		allowed(decide(call(create_contact, {"name": "Ada", "email": "ada@example.com"}, via), wednesday_afternoon))
	}
}

test_explicitly_destructive_tool_needs_approval if {
	every via in ["execute", "invoke", "direct"] {
		d := decide(call(delete_contact, {"contact_id": "con_001"}, via), wednesday_afternoon)
		d == {
			"allow": true,
			"requireApproval": true,
			"reason": "crm.delete_contact is destructive (its author set destructiveHint: true)",
		}
	}
}

# mcp.NewTool without hints reports destructiveHint: true, but only as the
# MCP default: the tool still needs approval, and the reason says why.
test_defaulted_destructive_hint_needs_approval if {
	d := decide(call(merge_contacts, {}, "invoke"), wednesday_afternoon)
	d == {
		"allow": true,
		"requireApproval": true,
		"reason": "crm.merge_contacts does not declare whether it is destructive (destructiveHint is only the MCP default), so it is treated as destructive",
	}
}

test_missing_annotations_count_as_the_mcp_defaults if {
	d := decide(call(object.remove(create_contact, {"annotations"}), {}, "invoke"), wednesday_afternoon)
	needs_approval(d)
	contains(d.reason, "does not declare whether it is destructive")
}

# destructiveHint: false counts only when its author set it on purpose.
test_destructive_false_without_explicit_flag_is_not_trusted if {
	annotations := object.union(additive_hints, {"explicit": none_explicit})
	d := decide(call(tool("crm.tidy", "crm", annotations), {}, "invoke"), wednesday_afternoon)
	needs_approval(d)
	contains(d.reason, "does not declare whether it is destructive")
}

# readOnlyHint: true counts only when set on purpose; the tool is then judged
# by its other hints.
test_read_only_without_explicit_flag_is_not_trusted if {
	annotations := object.union(read_only_hints, {"explicit": object.union(all_explicit, {"readOnlyHint": false})})
	d := decide(call(tool("crm.peek", "crm", annotations), {}, "invoke"), wednesday_afternoon)
	d.reason == "crm.peek declares that it is not destructive, and app crm may be reached via invoke"
	allowed(d)
	unsure := object.union(annotations, {"destructiveHint": true})
	needs_approval(decide(call(tool("crm.peek", "crm", unsure), {}, "invoke"), wednesday_afternoon))
}

test_hint_that_is_not_a_boolean_counts_as_the_default if {
	annotations := object.union(additive_hints, {"destructiveHint": "no"})
	d := decide(call(tool("crm.tidy", "crm", annotations), {}, "invoke"), wednesday_afternoon)
	needs_approval(d)
	contains(d.reason, "crm.tidy is destructive")
}

# A read-only tool ignores destructiveHint, as the MCP specification says.
test_read_only_tool_ignores_destructive_hint if {
	annotations := object.union(read_only_hints, {"destructiveHint": true})
	allowed(decide(call(tool("crm.peek", "crm", annotations), {}, "direct"), saturday_morning))
}

test_requires_approval_is_honoured if {
	t := object.union(get_contact, {"requiresApproval": true})
	d := decide(call(t, {"contact_id": "con_001"}, "direct"), wednesday_afternoon)
	d == {
		"allow": true,
		"requireApproval": true,
		"reason": "crm.get_contact requires approval (requiresApproval in its metadata or the CodeCall config)",
	}
}

test_requires_approval_must_be_true_not_truthy if {
	t := object.union(get_contact, {"requiresApproval": "yes"})
	allowed(decide(call(t, {"contact_id": "con_001"}, "direct"), wednesday_afternoon))
}

test_plan_writing_outside_the_system_needs_approval if {
	d := decide(call(send_email, {"to": "ada@example.com", "subject": "Hi", "body": "Hello"}, "execute"), wednesday_afternoon)
	d == {
		"allow": true,
		"requireApproval": true,
		"reason": "notifications.send_email reaches outside the system (openWorldHint) and was called from a plan",
	}
}

test_person_writing_outside_the_system_needs_no_approval if {
	allowed(decide(call(send_email, {"to": "ada@example.com", "subject": "Hi", "body": "Hello"}, "invoke"), wednesday_afternoon))
	allowed(decide(call(send_email, {"to": "ada@example.com", "subject": "Hi", "body": "Hello"}, "direct"), wednesday_afternoon))
}

test_plan_reading_from_outside_needs_no_approval if {
	search_web := tool("crm.enrich_company", "crm", hints(true, false, true, true))
	allowed(decide(call(search_web, {"company": "Acme"}, "execute"), wednesday_afternoon))
}

# Without an explicit openWorldHint: false a plan's write may leave the
# system, on top of being destructive by default.
test_plan_calling_tool_without_hints_collects_both_reasons if {
	d := decide(call(merge_contacts, {}, "execute"), wednesday_afternoon)
	needs_approval(d)
	contains(d.reason, "does not declare whether it is destructive")
	contains(d.reason, "reaches outside the system")
}
