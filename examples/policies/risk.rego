# Side effects and approval
#
# Reads the tool's MCP annotations. A hint counts only as its author meant
# it: annotations.explicit says which hints were set on purpose. mcp-go's
# mcp.NewTool fills in the MCP defaults (destructiveHint: true,
# openWorldHint: true) when the author says nothing, so a tool is treated as
# harmless only when its author said so explicitly.
package codecall

# The MCP defaults of the four hints, used when a hint is missing.
mcp_defaults := {
	"readOnlyHint": false,
	"destructiveHint": true,
	"idempotentHint": false,
	"openWorldHint": true,
}

# The value of a hint, falling back to the MCP default when the input has no
# boolean for it.
hint(name) := value if {
	value := input.tool.annotations[name]
	is_boolean(value)
} else := mcp_defaults[name]

# The tool's author set the hint on purpose.
explicit(name) if input.tool.annotations.explicit[name] == true

# The tool only reads: its author said readOnlyHint: true.
read_only if {
	hint("readOnlyHint") == true
	explicit("readOnlyHint")
}

# The author said on purpose that the tool destroys nothing.
declared_not_destructive if {
	hint("destructiveHint") == false
	explicit("destructiveHint")
}

# The tool may destroy or overwrite data: it writes, and its author did not
# say that it is not destructive. A defaulted destructiveHint counts.
destructive if {
	not read_only
	not declared_not_destructive
}

# The author said on purpose that the tool stays inside the system.
declared_closed_world if {
	hint("openWorldHint") == false
	explicit("openWorldHint")
}

approval contains msg if {
	input.tool.requiresApproval == true
	msg := sprintf("%s requires approval (requiresApproval in its metadata or the CodeCall config)", [tool_name])
}

approval contains msg if {
	destructive
	explicit("destructiveHint")
	msg := sprintf("%s is destructive (its author set destructiveHint: true)", [tool_name])
}

approval contains msg if {
	destructive
	not explicit("destructiveHint")
	msg := sprintf("%s does not declare whether it is destructive (destructiveHint is only the MCP default), so it is treated as destructive", [tool_name])
}

# A plan is untrusted code: a write that leaves the system (an email, an
# invitation, a webhook) is how a plan would carry data out, so a person
# confirms it.
approval contains msg if {
	input.via == "execute"
	not read_only
	not declared_closed_world
	msg := sprintf("%s reaches outside the system (openWorldHint) and was called from a plan", [tool_name])
}
