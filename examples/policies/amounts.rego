# Amount limits
#
# Checks money amounts in a tool's arguments against settings.amount_limits:
# above approve_above a person approves, above deny_above the call is
# refused, and when_missing decides a call that leaves the amount out.
package codecall

# The amount limit of the called tool; undefined for tools without one.
amount_limit := settings.amount_limits[tool_name]

# The amount the call asks for; undefined when the argument is left out.
amount := args[amount_limit.arg]

# x is a whole, non-negative number of cents.
whole_cents(x) if {
	is_number(x)
	x == floor(x)
	x >= 0
}

# cents written as dollars, e.g. 123456 as $1234.56.
dollars(cents) := sprintf("$%d.%02d", [(cents - (cents % 100)) / 100, cents % 100])

deny contains msg if {
	value := amount
	not whole_cents(value)
	msg := sprintf("%s: args.%s must be a whole, non-negative number of cents, not %s", [tool_name, amount_limit.arg, json.marshal(value)])
}

deny contains msg if {
	whole_cents(amount)
	amount > amount_limit.deny_above
	msg := sprintf("%s: %s is above the limit of %s (codecall_settings.amount_limits)", [tool_name, dollars(amount), dollars(amount_limit.deny_above)])
}

approval contains msg if {
	whole_cents(amount)
	amount > amount_limit.approve_above
	amount <= amount_limit.deny_above
	msg := sprintf("%s: %s is above %s, which needs approval", [tool_name, dollars(amount), dollars(amount_limit.approve_above)])
}

deny contains msg if {
	amount_limit.when_missing == "deny"
	not amount_limit.arg in object.keys(args)
	msg := sprintf("%s: args.%s is required by this policy", [tool_name, amount_limit.arg])
}

# Anything but an explicit allow or deny (approve, a typo, nothing) asks.
approval contains msg if {
	amount_limit
	not missing_amount_settled
	not amount_limit.arg in object.keys(args)
	msg := sprintf("%s was called without args.%s, so the amount is not known before the call", [tool_name, amount_limit.arg])
}

# when_missing itself decides a call without the amount.
missing_amount_settled if amount_limit.when_missing in {"allow", "deny"}

# A limit the rules above cannot read would let every amount through, so
# the tool is refused until the settings are fixed.
deny contains msg if {
	amount_limit
	not readable_limit
	msg := sprintf("%s: codecall_settings.amount_limits[%q] needs arg (a string), approve_above and deny_above (whole cents)", [tool_name, tool_name])
}

readable_limit if {
	is_string(amount_limit.arg)
	whole_cents(amount_limit.approve_above)
	whole_cents(amount_limit.deny_above)
}
