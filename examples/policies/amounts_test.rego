# Tests of the amount limits (amounts.rego).
package codecall_test

import data.codecall

payment(cents) := call(record_payment, {"invoice_id": "inv_001", "amount_cents": cents}, "execute")

refund(cents) := call(refund_payment, {"payment_id": "pay_001", "amount_cents": cents}, "invoke")

test_payment_below_threshold_is_allowed if {
	allowed(decide(payment(500), wednesday_afternoon))
	allowed(decide(payment(1000000), wednesday_afternoon))
}

test_payment_above_threshold_needs_approval if {
	d := decide(payment(1000001), wednesday_afternoon)
	d == {
		"allow": true,
		"requireApproval": true,
		"reason": "billing.record_payment: $10000.01 is above $10000.00, which needs approval",
	}
	needs_approval(decide(payment(10000000), wednesday_afternoon))
}

test_payment_far_above_threshold_is_denied if {
	d := decide(payment(10000001), wednesday_afternoon)
	denied(d)
	d.reason == "billing.record_payment: $100000.01 is above the limit of $100000.00 (codecall_settings.amount_limits)"
}

test_payment_without_amount_is_allowed if {
	allowed(decide(call(record_payment, {"invoice_id": "inv_001"}, "execute"), wednesday_afternoon))
}

test_refund_above_threshold_names_the_amount if {
	d := decide(refund(10001), wednesday_afternoon)
	needs_approval(d)
	contains(d.reason, "billing.refund_payment: $100.01 is above $100.00, which needs approval")
}

# The refund still needs approval below the threshold: the tool is
# destructive and asks for approval itself; only the amount reason goes.
test_refund_below_threshold_has_no_amount_reason if {
	d := decide(refund(10000), wednesday_afternoon)
	needs_approval(d)
	not contains(d.reason, "$")
}

test_refund_above_limit_is_denied if {
	denied(decide(refund(100001), wednesday_afternoon))
	needs_approval(decide(refund(100000), wednesday_afternoon))
}

test_refund_without_amount_needs_approval if {
	d := decide(call(refund_payment, {"payment_id": "pay_001"}, "invoke"), wednesday_afternoon)
	needs_approval(d)
	contains(d.reason, "billing.refund_payment was called without args.amount_cents, so the amount is not known before the call")
}

test_refund_without_args_needs_approval if {
	d := decide(object.remove(call(refund_payment, {}, "invoke"), {"args"}), wednesday_afternoon)
	needs_approval(d)
	contains(d.reason, "without args.amount_cents")
}

test_missing_amount_can_be_denied if {
	settings := patched([{"op": "replace", "path": "/amount_limits/billing.refund_payment/when_missing", "value": "deny"}])
	d := decide(call(refund_payment, {"payment_id": "pay_001"}, "invoke"), wednesday_afternoon) with data.codecall_settings as settings
	denied(d)
	d.reason == "billing.refund_payment: args.amount_cents is required by this policy"
}

test_misspelt_or_missing_when_missing_asks if {
	every ops in [
		[{"op": "replace", "path": "/amount_limits/billing.record_payment/when_missing", "value": "alow"}],
		[{"op": "remove", "path": "/amount_limits/billing.record_payment/when_missing"}],
	] {
		d := decide(call(record_payment, {"invoice_id": "inv_001"}, "execute"), wednesday_afternoon) with data.codecall_settings as patched(ops)
		needs_approval(d)
		contains(d.reason, "without args.amount_cents")
	}
}

test_unreadable_limit_denies_the_tool if {
	broken := [
		[{"op": "remove", "path": "/amount_limits/billing.record_payment/approve_above"}],
		[{"op": "replace", "path": "/amount_limits/billing.record_payment/deny_above", "value": "100000"}],
		[{"op": "remove", "path": "/amount_limits/billing.record_payment/arg"}],
	]
	every ops in broken {
		d := decide(payment(500), wednesday_afternoon) with data.codecall_settings as patched(ops)
		denied(d)
		contains(d.reason, `codecall_settings.amount_limits["billing.record_payment"] needs arg`)
	}
}

test_amount_that_is_not_whole_cents_is_denied if {
	cases := [
		["1500", `"1500"`],
		[12.5, "12.5"],
		[-100, "-100"],
		[null, "null"],
		[true, "true"],
		[{"value": 1}, `{"value":1}`],
	]
	every c in cases {
		d := decide(payment(c[0]), wednesday_afternoon)
		denied(d)
		d.reason == sprintf("billing.record_payment: args.amount_cents must be a whole, non-negative number of cents, not %s", [c[1]])
	}
}

test_whole_number_written_as_float_is_accepted if {
	allowed(decide(payment(1500.0), wednesday_afternoon))
}

test_tools_without_limit_ignore_amount_arguments if {
	allowed(decide(call(create_contact, {"name": "Ada", "email": "ada@example.com", "amount_cents": "lots"}, "execute"), wednesday_afternoon))
}

test_dollars if {
	codecall.dollars(0) == "$0.00"
	codecall.dollars(5) == "$0.05"
	codecall.dollars(100) == "$1.00"
	codecall.dollars(123456) == "$1234.56"
	codecall.dollars(100000000) == "$1000000.00"
}

# The shipped settings are readable: an edit to data.yaml that this rule
# cannot read fails here instead of silently switching the rule off.
test_amount_limits_are_consistent if {
	count(data.codecall_settings.amount_limits) > 0
	every name, limit in data.codecall_settings.amount_limits {
		is_string(name)
		is_string(limit.arg)
		codecall.whole_cents(limit.approve_above)
		codecall.whole_cents(limit.deny_above)
		limit.approve_above < limit.deny_above
		limit.when_missing in {"allow", "approve", "deny"}
	}
}
