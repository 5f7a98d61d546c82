# METADATA
# title: CodeCall example policy
# description: |
#   Decides every tool call CodeCall forwards: a client's direct tools/call,
#   codecall.invoke and each callTool of a codecall.execute plan. CodeCall
#   queries data.codecall.decision with the input document described in
#   README.md. The rules live in one file each (apps.rego, amounts.rego,
#   hours.rego, risk.rego) and add reasons to two sets: deny and approval.
package codecall

# The policy's settings, from data.yaml next to this file.
settings := data.codecall_settings

# The paths a call can take to a tool.
paths := {"execute", "invoke", "direct"}

# No rule allows the call: deny. The default keeps the decision defined for
# any input, so CodeCall never has to guess.
default decision := {
	"allow": false,
	"requireApproval": false,
	"reason": "no rule of the codecall policy allows this call",
}

# Any denial wins over approvals; approvals turn an allowed call into one a
# person must confirm. Reasons are sorted so the same call always gets the
# same text.
decision := {"allow": false, "requireApproval": false, "reason": concat("; ", sort(deny))} if {
	count(deny) > 0
} else := {"allow": true, "requireApproval": true, "reason": concat("; ", sort(approval))} if {
	permitted
	count(approval) > 0
} else := {"allow": true, "requireApproval": false, "reason": allow_reason} if {
	permitted
}

# The tool's name, or a placeholder for messages when the input has none.
tool_name := input.tool.name if {
	is_string(input.tool.name)
	input.tool.name != ""
} else := "(unnamed tool)"

# The tool's app, or "" when the input has none.
app_id := input.tool.appId if {
	is_string(input.tool.appId)
} else := ""

# The call's arguments. CodeCall passes them unredacted so that rules can
# check amounts; a call without arguments has none.
args := input.args if {
	is_object(input.args)
} else := {}

# Malformed input is denied with a reason that says which field is wrong.
# Input that is not an object at all has no tool and no via, and is denied
# for both.
#
# The checks go through helper rules because OPA evaluates the arguments of
# a call before `not`: `not is_object(input.tool)` is undefined, not true,
# when input.tool is missing.
tool_is_object if is_object(input.tool)

via_is_known if input.via in paths

deny contains "input.tool must be an object" if not tool_is_object

deny contains "input.tool.name must be a non-empty string" if {
	tool_is_object
	tool_name == "(unnamed tool)"
}

deny contains msg if {
	not via_is_known
	msg := sprintf("input.via must be execute, invoke or direct, not %s", [json.marshal(given_via)])
}

# input.via as given, for messages; null when missing.
given_via := via if {
	via := input.via
} else := null

deny contains msg if {
	given := input.args
	not is_object(given)
	msg := sprintf("input.args must be an object, not %s", [type_name(given)])
}

# Why an allowed call needs no approval.
allow_reason := sprintf("%s is read-only", [tool_name]) if {
	read_only
} else := sprintf("%s declares that it is not destructive, and app %s may be reached via %s", [tool_name, app_id, input.via])
