package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/typescript"
	"github.com/codecall-go/codecall/vm"
)

// UnwrapCodeMode applies Code Mode's unwrapping rules (§5.3.2) to a tool
// result: its structuredContent when present (content ignored); else a
// single text block's text, as a string; else the whole result, whose
// image and audio data MCP already carries as base64 strings.
func UnwrapCodeMode(res *mcp.CallToolResult) (json.RawMessage, error) {
	if len(res.RawStructuredContent) > 0 {
		return res.RawStructuredContent, nil
	}
	if res.StructuredContent != nil {
		return json.Marshal(res.StructuredContent)
	}
	if len(res.Content) == 1 {
		if tc, ok := mcp.AsTextContent(res.Content[0]); ok {
			return json.Marshal(tc.Text)
		}
	}
	return json.Marshal(res)
}

// explainMismatch gives a validation failure of a Code Mode call an
// example input (§7.2): the tool's own example, or one made from its
// schema's required properties.
func (p *planHost) explainMismatch(name string, err error) {
	te := toolerr.As(err)
	if te == nil || te.Code != toolerr.Validation {
		return
	}
	t, ok := p.st.Catalog.Lookup(name)
	if !ok {
		return
	}
	if te.Mismatch == nil {
		te.Mismatch = &toolerr.Mismatch{Expected: "an input the tool's schema accepts", Received: "an input it refused"}
	}
	if b, err := json.Marshal(exampleValues(t)); err == nil && len(b) <= maxEventInput {
		te.Mismatch.Example = b
	}
}

// ServerInfo is a server as @codemode/discovery lists it (§4.2.1), with
// the number of its tools and its module's specifier.
type ServerInfo struct {
	ServerID     string   `json:"serverId"`
	ServerName   string   `json:"serverName"`
	Capabilities []string `json:"capabilities,omitempty"`
	ToolCount    int      `json:"toolCount"`
	ModulePath   string   `json:"modulePath"`
}

// ServerDescription is describeServer's answer (§4.2.2).
type ServerDescription struct {
	ServerInfo
	Description string `json:"description,omitempty"`
	Version     string `json:"version,omitempty"`
}

// ToolDefinition is a tool as @codemode/discovery describes it (§4.2.4),
// with as much as the detail level asks for; ServerID is set in search
// results.
type ToolDefinition struct {
	ServerID     string          `json:"serverId,omitempty"`
	ToolName     string          `json:"toolName"`
	ExportName   string          `json:"exportName"`
	Description  string          `json:"description,omitempty"`
	Annotations  map[string]any  `json:"annotations,omitempty"`
	InputSchema  json.RawMessage `json:"inputSchema,omitempty"`
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Declaration is the tool's TypeScript declaration, at detail "full".
	Declaration string `json:"declaration,omitempty"`
}

// SearchResults is searchTools' answer (§4.2.5).
type SearchResults struct {
	Query   string           `json:"query"`
	Results []ToolDefinition `json:"results"`
}

func (s *ServerModule) info() ServerInfo {
	return ServerInfo{ServerID: s.Path, ServerName: s.AppID, Capabilities: []string{"tools"}, ToolCount: len(s.Tools), ModulePath: s.Specifier()}
}

// definition describes a tool at a detail level.
func (t *moduleTool) definition(detail string) ToolDefinition {
	d := ToolDefinition{ToolName: t.tool.Name, ExportName: t.export}
	if detail == "name" {
		return d
	}
	d.Description = t.tool.Description
	d.Annotations = annotationsOf(t.tool)
	if detail == "full" {
		d.InputSchema, d.OutputSchema = t.tool.InputSchema, t.tool.OutputSchema
		d.Declaration = typescript.DeclareModule(typescript.Module{Specifier: t.server.Specifier(), ServerID: t.server.Path,
			ServerName: t.server.AppID, Tools: []typescript.ModuleTool{{Export: t.export, Function: TypeScriptFunction(t.tool)}}})
	}
	return d
}

// annotationsOf is a tool's annotations as its server stated them (§6.3);
// hints an SDK filled in are not the author's and are left out.
func annotationsOf(t *catalog.Tool) map[string]any {
	a := t.Annotations
	out := map[string]any{}
	if a.Title != "" {
		out["title"] = a.Title
	}
	if !a.Defaulted {
		for k, v := range map[string]*bool{"readOnlyHint": a.ReadOnlyHint, "destructiveHint": a.DestructiveHint,
			"idempotentHint": a.IdempotentHint, "openWorldHint": a.OpenWorldHint} {
			if v != nil {
				out[k] = *v
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}

// discoverCodeMode answers @codemode/discovery's requests from the
// generation's modules; searchTools runs through the same index and gate
// as codecall.search, so a script finds exactly what it may call.
func (p *planHost) discoverCodeMode(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	var in struct {
		ServerID string `json:"serverId"`
		ToolName string `json:"toolName"`
		Detail   string `json:"detail"`
		Query    string `json:"query"`
		Limit    *int   `json:"limit"`
	}
	if err := json.Unmarshal(args, &in); err != nil {
		return nil, &toolerr.Error{Code: toolerr.Validation, Message: "the discovery request cannot be read"}
	}
	mods := p.codeMode
	server := func() (*ServerModule, error) {
		s, ok := mods.Server(in.ServerID)
		if !ok {
			return nil, &toolerr.Error{Code: toolerr.ServerNotFound, Tool: in.ServerID,
				Message: fmt.Sprintf("no connected server has the id %q (connected: %s)", in.ServerID, mods.modulePathsOf(10)),
				Hint:    "Server ids are exact: list the connected servers with listServers()."}
		}
		return s, nil
	}
	switch op {
	case vm.DiscoverListServers:
		out := make([]ServerInfo, 0, len(mods.Servers()))
		for _, s := range mods.Servers() {
			out = append(out, s.info())
		}
		return json.Marshal(out)
	case vm.DiscoverDescribeServe:
		s, err := server()
		if err != nil {
			return nil, err
		}
		return json.Marshal(ServerDescription{ServerInfo: s.info(), Description: serverSummary(s)})
	case vm.DiscoverListTools:
		s, err := server()
		if err != nil {
			return nil, err
		}
		out := make([]ToolDefinition, 0, len(s.Tools))
		for _, t := range s.Tools {
			out = append(out, t.definition(in.Detail))
		}
		return json.Marshal(out)
	case vm.DiscoverGetTool:
		s, err := server()
		if err != nil {
			return nil, err
		}
		t, ok := s.byExport[in.ToolName]
		if !ok {
			if mt, found := mods.tool(in.ToolName); found && mt.server == s {
				t, ok = mt, true
			}
		}
		if !ok {
			return nil, &toolerr.Error{Code: toolerr.NotFound, Tool: in.ToolName,
				Message: fmt.Sprintf("server %q has no tool %q", s.Path, in.ToolName),
				Hint:    fmt.Sprintf("Tool names are exact: listTools(%q, {detail: \"name\"}) lists them.", s.Path)}
		}
		return json.Marshal(t.definition("full"))
	case vm.DiscoverSearchTools:
		search := SearchInput{Query: in.Query, TopK: in.Limit}
		if in.ServerID != "" {
			s, err := server()
			if err != nil {
				return nil, err
			}
			search.Filter = &SearchFilter{AppIDs: []string{s.AppID}}
		}
		if search.TopK != nil && *search.TopK > p.st.Config.Search.MaxTopK {
			limit := p.st.Config.Search.MaxTopK
			search.TopK = &limit
		}
		out, field, err := p.st.search(ctx, search, func(ctx context.Context, name string) bool {
			_, err := p.st.Gate.Access(ctx, p.st.Catalog, policy.Call{Tool: name, Via: policy.ViaExecute})
			return err == nil
		}, p.progressFunc())
		switch {
		case field != "":
			return nil, &toolerr.Error{Code: toolerr.Validation, Tool: "searchTools", Message: "searchTools: " + err.Error(),
				Hint: "Call searchTools(query, {detail?, serverId?, limit?})."}
		case err != nil:
			return nil, err
		}
		res := SearchResults{Query: in.Query, Results: make([]ToolDefinition, 0, len(out.Tools))}
		for _, hit := range out.Tools {
			if mt, ok := mods.tool(hit.Name); ok {
				d := mt.definition(in.Detail)
				d.ServerID = mt.server.Path
				res.Results = append(res.Results, d)
			}
		}
		return json.Marshal(res)
	}
	return nil, &toolerr.Error{Code: toolerr.Validation, Message: "unknown discovery operation"}
}

// serverSummary describes a server by its tools.
func serverSummary(s *ServerModule) string {
	names := make([]string, 0, 8)
	for i, t := range s.Tools {
		if i == 8 {
			names = append(names, fmt.Sprintf("and %d more", len(s.Tools)-8))
			break
		}
		names = append(names, t.export)
	}
	return fmt.Sprintf("%d tools: %s", len(s.Tools), strings.Join(names, ", "))
}
