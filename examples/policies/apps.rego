# Per-app allowlist
#
# Only apps listed in settings.apps can be reached, each only by the paths
# its entry names; deny_tools blocks single tools of an allowed app.
package codecall

# The allowlist entry of the tool's app; undefined when the app is not listed.
app := settings.apps[app_id]

# The call may go ahead as far as the allowlist is concerned.
permitted if input.via in app.via

deny contains msg if {
	tool_is_object
	not app
	msg := sprintf("app %q of tool %s is not in the allowlist (codecall_settings.apps in data.yaml)", [app_id, tool_name])
}

deny contains msg if {
	app
	via_is_known
	not input.via in app.via
	msg := sprintf("app %s may not be reached via %s, only via %s", [app_id, input.via, concat(", ", app.via)])
}

deny contains msg if {
	some pattern in object.get(app, "deny_tools", [])
	glob.match(pattern, ["."], tool_name)
	msg := sprintf("%s is blocked by codecall_settings.apps[%q].deny_tools (%q)", [tool_name, app_id, pattern])
}

# Whether codecall.search and codecall.describe may show the tool when
# policy.filterDiscovery is on: CodeCall asks this rule, next to the
# decision, with only input.tool set. A tool of an app missing from the
# allowlist, or blocked by deny_tools, is denied on every path whatever
# its arguments, so it is hidden.
default discoverable := false

discoverable if {
	app
	not blocked
}

blocked if {
	some pattern in object.get(app, "deny_tools", [])
	glob.match(pattern, ["."], tool_name)
}
