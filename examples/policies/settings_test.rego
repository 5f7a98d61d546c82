# Checks of data.yaml itself, so an edit that the rules cannot read fails the
# tests instead of silently switching a rule off.
package codecall_test

import data.codecall

settings := data.codecall_settings

weekdays := {"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

test_settings_have_every_section if {
	object.keys(settings) == {"apps", "amount_limits", "business_hours"}
}

test_every_app_lists_known_paths if {
	count(settings.apps) > 0
	every name, app in settings.apps {
		is_string(name)
		count(app.via) > 0
		every via in app.via {
			via in codecall.paths
		}
		every pattern in object.get(app, "deny_tools", []) {
			is_string(pattern)
		}
	}
}

# The demo server's apps are all listed, so the policy runs in front of it.
test_demo_apps_are_listed if {
	demo_apps := {"analytics", "billing", "codecall-demo", "crm", "inventory", "notifications", "support", "users"}
	demo_apps == object.keys(settings.apps)
}

test_amount_limits_are_consistent if {
	count(settings.amount_limits) > 0
	every name, limit in settings.amount_limits {
		is_string(name)
		is_string(limit.arg)
		codecall.whole_cents(limit.approve_above)
		codecall.whole_cents(limit.deny_above)
		limit.approve_above < limit.deny_above
		limit.when_missing in {"allow", "approve", "deny"}
	}
}

test_business_hours_are_consistent if {
	hours := settings.business_hours
	count(time.clock([0, hours.timezone])) == 3
	count(hours.days) > 0
	every day in hours.days {
		day in weekdays
	}
	regex.match(`^([01][0-9]|2[0-3]):[0-5][0-9]$`, hours.start)
	regex.match(`^([01][0-9]|2[0-3]):[0-5][0-9]$`, hours.end)
	codecall.minute_of_day(hours.start) < codecall.minute_of_day(hours.end)
	every day in hours.holidays {
		time.parse_ns("2006-01-02", day) > 0
	}
	hours.outside in {"deny", "approve"}
}
