// Package catalog is the snapshot of tools seen through CodeCall: what each
// tool is, which app it belongs to, whether tools/list shows it and whether
// CodeCall may reach it. A Snapshot is immutable and versioned, so a request
// keeps the tool set it started with while the server's tools change.
package catalog

import (
	"encoding/json"
	"sync"
	"time"
)

// Source says where a tool comes from.
type Source string

// The tool sources.
const (
	SourceInline   Source = "inline"   // written by hand in the server
	SourceOpenAPI  Source = "openapi"  // generated from an OpenAPI document
	SourceUpstream Source = "upstream" // proxied from another MCP server
)

// Sources lists every valid source.
var Sources = []Source{SourceInline, SourceOpenAPI, SourceUpstream}

// Example is an example call of a tool.
type Example struct {
	Description string         `json:"description,omitempty"`
	Input       map[string]any `json:"input"`
	Output      any            `json:"output,omitempty"`
}

// Annotations are a tool's behaviour hints as registered. A nil hint was not
// given. Defaulted is true when the four hints are exactly the values
// mcp.NewTool fills in when its caller sets none (readOnly false, destructive
// true, idempotent false, openWorld true): such hints are most likely not a
// deliberate statement by the tool's author, and policy treats them so.
type Annotations struct {
	Title           string `json:"title,omitempty"`
	ReadOnlyHint    *bool  `json:"readOnlyHint,omitempty"`
	DestructiveHint *bool  `json:"destructiveHint,omitempty"`
	IdempotentHint  *bool  `json:"idempotentHint,omitempty"`
	OpenWorldHint   *bool  `json:"openWorldHint,omitempty"`
	Defaulted       bool   `json:"-"`
}

// IsZero reports whether no hint and no title is set.
func (a Annotations) IsZero() bool {
	return a.Title == "" && a.ReadOnlyHint == nil && a.DestructiveHint == nil &&
		a.IdempotentHint == nil && a.OpenWorldHint == nil
}

// Tool is one tool as CodeCall sees it. Tools in a Snapshot are shared
// between goroutines and must not be modified.
type Tool struct {
	Name        string
	Title       string
	Description string
	AppID       string
	Source      Source
	Tags        []string
	// InputSchema and OutputSchema are the JSON Schemas as the server
	// publishes them; OutputSchema is nil when the tool declares none.
	InputSchema  json.RawMessage
	OutputSchema json.RawMessage
	Annotations  Annotations
	Examples     []Example
	// RequiresApproval is true when metadata or config asks for a human's
	// approval before each call.
	RequiresApproval bool
	// SandboxProfile is how the server behind the tool runs, from its
	// metadata (see Meta.SandboxProfile); "" when it does not say.
	SandboxProfile string
	// Timeout bounds one call of the tool (see Meta.TimeoutMs); zero means
	// the tool has none of its own, and only the client's deadline and a
	// plan's remaining time bound its calls. TimeoutFrom says where it is
	// configured.
	Timeout     time.Duration
	TimeoutFrom string
	// Cwd is the directory the server behind the tool runs in, from its
	// metadata (see Meta.Cwd); "" when it does not say.
	Cwd string
	// VisibleInList is true when tools/list shows the tool next to the
	// meta-tools.
	VisibleInList bool
	// Enabled is true when CodeCall may reach the tool: search, describe,
	// execute and invoke. The access gate reads nothing else.
	Enabled bool

	typescript func() string
}

// Info is what predicates given by the server's author see of the tool.
func (t *Tool) Info() Info {
	return Info{Name: t.Name, Title: t.Title, Description: t.Description, AppID: t.AppID,
		Source: t.Source, Tags: t.Tags, Annotations: t.Annotations}
}

// TypeScript returns the tool's TypeScript declaration, generated on first
// use and cached.
func (t *Tool) TypeScript() string {
	if t.typescript == nil {
		return ""
	}
	return t.typescript()
}

// SetTypeScript installs the generator used by TypeScript; it runs at most
// once. It is for Build and for tests that construct tools by hand.
func (t *Tool) SetTypeScript(gen func(*Tool) string) {
	t.typescript = sync.OnceValue(func() string { return gen(t) })
}
