# Tests of the per-app allowlist (apps.rego).
package codecall_test

import data.codecall

test_read_only_tool_is_allowed_on_every_listed_path if {
	every via in ["execute", "invoke", "direct"] {
		allowed(decide(call(get_contact, {"contact_id": "con_001"}, via), wednesday_afternoon))
	}
}

test_unlisted_app_is_denied_on_every_path if {
	journal := tool("erp.post_journal", "erp", read_only_hints)
	every via in ["execute", "invoke", "direct"] {
		d := decide(call(journal, {}, via), wednesday_afternoon)
		denied(d)
		d.reason == `app "erp" of tool erp.post_journal is not in the allowlist (codecall_settings.apps in data.yaml)`
	}
}

test_tool_without_app_is_denied if {
	d := decide(call(object.remove(get_contact, {"appId"}), {}, "direct"), wednesday_afternoon)
	denied(d)
	contains(d.reason, `app "" of tool crm.get_contact is not in the allowlist`)
}

# The app, not the name prefix, decides: a tool that calls itself crm.* but
# belongs to another app gets that app's rules.
test_app_id_decides_not_the_name if {
	d := decide(call(tool("crm.export", "exporter", read_only_hints), {}, "direct"), wednesday_afternoon)
	denied(d)
	contains(d.reason, `app "exporter"`)
}

test_billing_is_not_reachable_directly if {
	d := decide(call(list_invoices, {}, "direct"), wednesday_afternoon)
	denied(d)
	d.reason == "app billing may not be reached via direct, only via execute, invoke"
}

test_billing_is_reachable_from_plans_and_invoke if {
	allowed(decide(call(list_invoices, {}, "execute"), wednesday_afternoon))
	allowed(decide(call(list_invoices, {}, "invoke"), wednesday_afternoon))
}

test_users_are_not_reachable_directly if {
	denied(decide(call(list_users, {}, "direct"), wednesday_afternoon))
	allowed(decide(call(list_users, {}, "invoke"), wednesday_afternoon))
}

test_denied_tool_is_refused_on_every_path_and_at_any_time if {
	every via in ["execute", "invoke"] {
		d := decide(call(delete_account, {"user_id": "usr_003"}, via), wednesday_afternoon)
		denied(d)
		d.reason == `users.delete_account is blocked by codecall_settings.apps["users"].deny_tools ("users.delete_account")`
	}
}

test_deny_tools_are_glob_patterns if {
	settings := patched([{"op": "add", "path": "/apps/crm/deny_tools", "value": ["crm.delete_*"]}])
	d := decide(call(delete_contact, {"contact_id": "con_001"}, "invoke"), wednesday_afternoon) with data.codecall_settings as settings
	denied(d)
	contains(d.reason, `("crm.delete_*")`)
	allowed(decide(call(get_contact, {"contact_id": "con_001"}, "invoke"), wednesday_afternoon)) with data.codecall_settings as settings
}

# "." separates glob segments, so * does not reach into another app.
test_deny_tools_star_stays_in_one_segment if {
	settings := patched([{"op": "replace", "path": "/apps/users/deny_tools", "value": ["users*"]}])
	allowed(decide(call(list_users, {}, "invoke"), wednesday_afternoon)) with data.codecall_settings as settings
	denied(decide(call(list_users, {}, "invoke"), wednesday_afternoon)) with data.codecall_settings as patched([{"op": "replace", "path": "/apps/users/deny_tools", "value": ["users.*"]}])
}

test_health_tool_of_the_demo_server_is_allowed if {
	d := decide(call(health, {}, "direct"), saturday_morning)
	d == {"allow": true, "requireApproval": false, "reason": "health is read-only"}
}

# The shipped settings are readable: an edit to data.yaml that this rule
# cannot read fails here instead of silently switching the rule off.
test_every_app_lists_known_paths if {
	count(data.codecall_settings.apps) > 0
	every name, app in data.codecall_settings.apps {
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
	demo_apps == object.keys(data.codecall_settings.apps)
}

test_listed_tool_is_discoverable if {
	codecall.discoverable with input as {"tool": get_contact}
}

test_blocked_tool_is_not_discoverable if {
	not codecall.discoverable with input as {"tool": tool("users.delete_account", "users", read_only_hints)}
}

test_tool_of_unlisted_app_is_not_discoverable if {
	not codecall.discoverable with input as {"tool": tool("erp.post_journal", "erp", read_only_hints)}
}
