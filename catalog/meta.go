package catalog

import (
	"encoding/json"
	"fmt"

	"github.com/mark3labs/mcp-go/mcp"
)

// MetaKey is the key under a tool's `_meta` that holds its CodeCall settings.
const MetaKey = "codecall"

// Meta is a tool's own CodeCall settings, stored under `_meta.codecall`.
// Unset fields take the mode's defaults; the operator's `tools:` config
// overrides any of them.
type Meta struct {
	VisibleInListTools *bool     `json:"visibleInListTools,omitempty"`
	EnabledInCodeCall  *bool     `json:"enabledInCodeCall,omitempty"`
	AppID              string    `json:"appId,omitempty"`
	Tags               []string  `json:"tags,omitempty"`
	Source             Source    `json:"source,omitempty"`
	Examples           []Example `json:"examples,omitempty"`
	RequiresApproval   *bool     `json:"requiresApproval,omitempty"`
	// SandboxProfile says how the server behind the tool runs, for a
	// client to show before a call: for an upstream's tool, the gateway
	// sets it from the upstream's sandbox (default, default+network,
	// none, remote), and the upstream cannot.
	SandboxProfile string `json:"sandboxProfile,omitempty"`
	// TimeoutMs, when positive, bounds one call of the tool in
	// milliseconds, on every path: the access gate ends a call past it
	// with a TIMEOUT error. For an upstream's tool the gateway sets it
	// from the upstream's timeout, and the upstream cannot; the
	// operator's tools.<glob>.timeout replaces either.
	TimeoutMs int64 `json:"timeoutMs,omitempty"`
	// TimeoutFrom says where TimeoutMs is configured, so that the error
	// of a call past it tells the operator what to change.
	TimeoutFrom string `json:"timeoutFrom,omitempty"`
	// Cwd is the directory the server behind the tool runs in, as a
	// person approving a call should read it; the gateway sets it for a
	// stdio upstream, and the upstream cannot.
	Cwd string `json:"cwd,omitempty"`
}

// SetMeta stores m under the tool's `_meta.codecall`, keeping any other
// `_meta` fields, and returns the tool for chaining:
//
//	srv.AddTool(catalog.SetMeta(mcp.NewTool("health", ...), catalog.Meta{VisibleInListTools: catalog.Bool(true)}), h)
func SetMeta(tool mcp.Tool, m Meta) mcp.Tool {
	fields := map[string]any{}
	if tool.Meta != nil {
		for k, v := range tool.Meta.AdditionalFields {
			fields[k] = v
		}
	}
	fields[MetaKey] = m
	meta := &mcp.Meta{AdditionalFields: fields}
	if tool.Meta != nil {
		meta.ProgressToken = tool.Meta.ProgressToken
	}
	tool.Meta = meta
	return tool
}

// ReadMeta returns the tool's `_meta.codecall` settings. ok is false when the
// tool has none. The value may be a Meta (set by SetMeta) or any JSON object
// of the same shape (set by hand or received from an upstream server).
func ReadMeta(tool mcp.Tool) (m Meta, ok bool, err error) {
	if tool.Meta == nil || tool.Meta.AdditionalFields == nil {
		return Meta{}, false, nil
	}
	raw, present := tool.Meta.AdditionalFields[MetaKey]
	if !present || raw == nil {
		return Meta{}, false, nil
	}
	switch v := raw.(type) {
	case Meta:
		return v, true, nil
	case *Meta:
		return *v, true, nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return Meta{}, false, fmt.Errorf("tool %q: _meta.%s cannot be encoded: %w", tool.Name, MetaKey, err)
	}
	if err := json.Unmarshal(b, &m); err != nil {
		return Meta{}, false, fmt.Errorf("tool %q: _meta.%s is not a CodeCall settings object: %w", tool.Name, MetaKey, err)
	}
	return m, true, nil
}

// Bool returns a pointer to b, for Meta's optional flags.
func Bool(b bool) *bool { return &b }
