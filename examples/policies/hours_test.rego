# Tests of the business-hours rule (hours.rego).
package codecall_test

import data.codecall

delete_con := call(delete_contact, {"contact_id": "con_001"}, "invoke")

test_destructive_call_in_business_hours_needs_approval_only if {
	every now in [wednesday_opening, wednesday_afternoon, wednesday_last_minute] {
		d := decide(delete_con, now)
		needs_approval(d)
		not contains(d.reason, "business hours")
	}
}

test_destructive_call_before_opening_and_at_closing_is_denied if {
	every now in [wednesday_early, wednesday_closing] {
		denied(decide(delete_con, now))
	}
}

test_destructive_call_on_the_weekend_is_denied if {
	d := decide(delete_con, saturday_morning)
	d == {
		"allow": false,
		"requireApproval": false,
		"reason": "crm.delete_contact is destructive and runs only in business hours (Monday, Tuesday, Wednesday, Thursday, Friday 09:00-18:00 America/New_York, except holidays); it is Saturday 2026-11-21 11:00 there now",
	}
}

test_destructive_call_on_a_holiday_is_denied if {
	d := decide(delete_con, thanksgiving)
	denied(d)
	contains(d.reason, "it is Thursday 2026-11-26 11:00 there now")
}

test_tool_without_hints_counts_as_destructive_at_night if {
	denied(decide(call(merge_contacts, {}, "invoke"), saturday_morning))
}

test_harmless_calls_run_at_any_time if {
	every now in [saturday_morning, thanksgiving, wednesday_early] {
		allowed(decide(call(get_contact, {"contact_id": "con_001"}, "direct"), now))
		allowed(decide(call(create_contact, {"name": "Ada", "email": "ada@example.com"}, "direct"), now))
	}
}

# 02:30 on Thursday in New York is 16:30 in Tokyo: the configured zone
# decides.
test_business_hours_follow_the_configured_time_zone if {
	denied(decide(delete_con, thursday_night))
	d := decide(delete_con, thursday_night) with data.codecall_settings as patched([{"op": "replace", "path": "/business_hours/timezone", "value": "Asia/Tokyo"}])
	needs_approval(d)
}

test_outside_hours_can_require_approval_instead if {
	d := decide(delete_con, saturday_morning) with data.codecall_settings as patched([{"op": "replace", "path": "/business_hours/outside", "value": "approve"}])
	needs_approval(d)
	contains(d.reason, "crm.delete_contact is destructive and it is outside business hours")
	contains(d.reason, "Saturday 2026-11-21 11:00")
}

test_misspelt_or_missing_outside_denies if {
	every ops in [
		[{"op": "replace", "path": "/business_hours/outside", "value": "Approve"}],
		[{"op": "remove", "path": "/business_hours/outside"}],
	] {
		denied(decide(delete_con, saturday_morning)) with data.codecall_settings as patched(ops)
	}
}

test_rule_is_off_without_business_hours if {
	d := decide(delete_con, saturday_morning) with data.codecall_settings as patched([{"op": "remove", "path": "/business_hours"}])
	needs_approval(d)
}

test_holidays_are_optional if {
	needs_approval(decide(delete_con, thanksgiving)) with data.codecall_settings as patched([{"op": "remove", "path": "/business_hours/holidays"}])
}

test_minute_of_day if {
	codecall.minute_of_day("00:00") == 0
	codecall.minute_of_day("09:30") == 570
	codecall.minute_of_day("23:59") == 1439
}

# The shipped settings are readable: an edit to data.yaml that this rule
# cannot read fails here instead of silently switching the rule off.
test_business_hours_are_consistent if {
	hours := data.codecall_settings.business_hours
	count(time.clock([0, hours.timezone])) == 3
	count(hours.days) > 0
	every day in hours.days {
		day in {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}
	}
	regex.match(`^([01][0-9]|2[0-3]):[0-5][0-9]$`, hours.start)
	regex.match(`^([01][0-9]|2[0-3]):[0-5][0-9]$`, hours.end)
	codecall.minute_of_day(hours.start) < codecall.minute_of_day(hours.end)
	every day in hours.holidays {
		time.parse_ns("2006-01-02", day) > 0
	}
	hours.outside in {"deny", "approve"}
}
