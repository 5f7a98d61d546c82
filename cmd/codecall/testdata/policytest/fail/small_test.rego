package codecall

test_small_refund_runs if {
	d := decision with input as {"tool": {"name": "billing.refund_payment"}, "args": {"amountCents": 500}}
	d.allow
}

# Wrong on purpose: a large refund asks, it is not waved through.
test_large_refund_runs_unasked if {
	d := decision with input as {"tool": {"name": "billing.refund_payment"}, "args": {"amountCents": 5000}}
	not d.requireApproval
}
