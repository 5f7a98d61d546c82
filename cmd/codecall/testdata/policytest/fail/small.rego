package codecall

default decision := {"allow": true, "requireApproval": true, "reason": "ask by default"}

decision := {"allow": true, "requireApproval": false, "reason": "small refund"} if {
	input.tool.name == "billing.refund_payment"
	input.args.amountCents <= 1000
}
