# Tests of the decision document, the default and malformed input.
package codecall_test

import data.codecall

test_decision_always_has_three_typed_fields if {
	docs := [
		call(get_contact, {}, "direct"),
		call(delete_contact, {"contact_id": "con_001"}, "invoke"),
		call(refund_payment, {"payment_id": "pay_001", "amount_cents": 999999999}, "execute"),
		{},
		{"tool": "crm.get_contact", "via": "direct"},
	]
	every doc in docs {
		d := decide(doc, wednesday_afternoon)
		object.keys(d) == {"allow", "requireApproval", "reason"}
		is_boolean(d.allow)
		is_boolean(d.requireApproval)
		is_string(d.reason)
		d.reason != ""
	}
}

test_empty_input_is_denied if {
	d := decide({}, wednesday_afternoon)
	denied(d)
	contains(d.reason, "input.tool must be an object")
	contains(d.reason, "input.via must be execute, invoke or direct, not null")
}

test_input_that_is_not_an_object_is_denied if {
	every doc in [null, 1, "crm.get_contact", ["crm.get_contact"]] {
		d := decide(doc, wednesday_afternoon)
		denied(d)
		d.reason == "input.tool must be an object; input.via must be execute, invoke or direct, not null"
	}
}

test_missing_input_is_denied if {
	d := codecall.decision with time.now_ns as wednesday_afternoon
	denied(d)
	contains(d.reason, "input.tool must be an object")
}

test_tool_that_is_not_an_object_is_denied if {
	d := decide({"tool": "crm.get_contact", "via": "direct"}, wednesday_afternoon)
	denied(d)
	d.reason == "input.tool must be an object"
}

test_tool_without_name_is_denied if {
	d := decide(call(object.remove(get_contact, {"name"}), {}, "direct"), wednesday_afternoon)
	denied(d)
	contains(d.reason, "input.tool.name must be a non-empty string")
}

test_tool_with_empty_name_is_denied if {
	d := decide(call(object.union(get_contact, {"name": ""}), {}, "direct"), wednesday_afternoon)
	denied(d)
	contains(d.reason, "input.tool.name must be a non-empty string")
}

test_unknown_via_is_denied if {
	d := decide(call(get_contact, {}, "websocket"), wednesday_afternoon)
	denied(d)
	d.reason == `input.via must be execute, invoke or direct, not "websocket"`
}

test_args_that_are_not_an_object_are_denied if {
	d := decide(call(get_contact, "contact_id=con_001", "direct"), wednesday_afternoon)
	denied(d)
	d.reason == "input.args must be an object, not string"
}

test_call_without_args_is_decided_on_the_rest if {
	d := decide(object.remove(call(get_contact, {}, "direct"), {"args"}), wednesday_afternoon)
	allowed(d)
}

test_read_only_reason if {
	d := decide(call(get_contact, {"contact_id": "con_001"}, "direct"), wednesday_afternoon)
	d == {"allow": true, "requireApproval": false, "reason": "crm.get_contact is read-only"}
}

test_not_destructive_reason if {
	d := decide(call(create_contact, {"name": "Ada", "email": "ada@example.com"}, "invoke"), wednesday_afternoon)
	d == {
		"allow": true,
		"requireApproval": false,
		"reason": "crm.create_contact declares that it is not destructive, and app crm may be reached via invoke",
	}
}

# Every reason is reported, sorted, so the person approving sees all of them.
test_approval_reasons_are_joined_in_order if {
	d := decide(call(refund_payment, {"payment_id": "pay_001", "amount_cents": 5000}, "invoke"), wednesday_afternoon)
	needs_approval(d)
	d.reason == concat("; ", [
		"billing.refund_payment is destructive (its author set destructiveHint: true)",
		"billing.refund_payment requires approval (requiresApproval in its metadata or the CodeCall config)",
	])
}

# A denial wins, and its reason does not list the approvals that no longer
# matter.
test_denial_wins_over_approval if {
	d := decide(call(delete_account, {"user_id": "usr_003"}, "execute"), wednesday_afternoon)
	denied(d)
	d.reason == `users.delete_account is blocked by codecall_settings.apps["users"].deny_tools ("users.delete_account")`
}

test_several_denials_are_all_reported if {
	d := decide(call(delete_account, {"user_id": "usr_003"}, "direct"), wednesday_afternoon)
	denied(d)
	d.reason == concat("; ", [
		"app users may not be reached via direct, only via execute, invoke",
		`users.delete_account is blocked by codecall_settings.apps["users"].deny_tools ("users.delete_account")`,
	])
}

# Settings that no rule can read (an app without via) fall through to the
# default, which denies.
test_default_denies_when_no_rule_applies if {
	d := codecall.decision with input as call(get_contact, {}, "direct")
		with time.now_ns as wednesday_afternoon
		with data.codecall_settings as patched([{"op": "replace", "path": "/apps/crm", "value": {}}])
	d == {"allow": false, "requireApproval": false, "reason": "no rule of the codecall policy allows this call"}
}
