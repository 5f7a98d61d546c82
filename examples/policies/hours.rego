# Business hours
#
# Destructive tools run only in business hours (settings.business_hours),
# when someone is around to notice and undo a mistake. Outside them a
# destructive call is denied or needs approval, as business_hours.outside
# says. Without business_hours in the settings the rule is off.
package codecall

hours := settings.business_hours

# The evaluation's clock. Tests replace it with `with time.now_ns as ...`.
now_ns := time.now_ns()

# The weekday, date and time of day in the configured time zone.
local_day := time.weekday([now_ns, hours.timezone])

local_date := sprintf("%04d-%02d-%02d", time.date([now_ns, hours.timezone]))

local_clock := time.clock([now_ns, hours.timezone])

local_minute := (local_clock[0] * 60) + local_clock[1]

local_time := sprintf("%02d:%02d", [local_clock[0], local_clock[1]])

# Minutes since midnight of an "HH:MM" string.
minute_of_day(hhmm) := (to_number(parts[0]) * 60) + to_number(parts[1]) if parts := split(hhmm, ":")

in_business_hours if {
	local_day in hours.days
	not local_date in object.get(hours, "holidays", [])
	local_minute >= minute_of_day(hours.start)
	local_minute < minute_of_day(hours.end)
}

# When business hours are, for messages.
hours_text := sprintf("%s %s-%s %s, except holidays", [concat(", ", hours.days), hours.start, hours.end, hours.timezone])

# Anything but outside: approve (deny, a typo, nothing) denies.
outside_hours_approves if hours.outside == "approve"

deny contains msg if {
	destructive
	hours
	not outside_hours_approves
	not in_business_hours
	msg := sprintf("%s is destructive and runs only in business hours (%s); it is %s %s %s there now", [tool_name, hours_text, local_day, local_date, local_time])
}

approval contains msg if {
	destructive
	outside_hours_approves
	not in_business_hours
	msg := sprintf("%s is destructive and it is outside business hours (%s): %s %s %s", [tool_name, hours_text, local_day, local_date, local_time])
}
