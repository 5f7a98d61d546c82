package codecall

test_small_refund_runs if {
	d := decision with input as {"tool": {"name": "billing.refund_payment"}, "args": {"amountCents": 500}}
	d.allow
	not d.requireApproval
}

test_large_refund_asks if {
	d := decision with input as {"tool": {"name": "billing.refund_payment"}, "args": {"amountCents": 5000}}
	d.requireApproval
}
