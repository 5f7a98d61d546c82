package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/codemode"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/typescript"
	"github.com/codecall-go/codecall/vm"
)

// The Code Mode module specifiers.
const (
	specDiscovery     = "@codemode/discovery"
	specErrors        = "@codemode/errors"
	specServersPrefix = "@codemode/servers/"
)

// Modules is the Code Mode view of one catalog snapshot: a server module
// per app (for the gateway, per upstream) holding the tools a script may
// call, with their export names. It is built with the generation, so a
// script sees the modules of the catalog its request acquired, and a
// tools/list_changed shows at the next run (§8).
type Modules struct {
	servers []*ServerModule          // in order of Path
	byPath  map[string]*ServerModule // by Path, the id a script sees
	byApp   map[string]*ServerModule // by catalog app id
	byTool  map[string]*moduleTool   // by canonical tool name
}

// ServerModule is one @codemode/servers/<path> module.
type ServerModule struct {
	// Path is the module path segment, which is also the serverId scripts
	// see (§5.0.1).
	Path string
	// AppID is the catalog's app id the module was made from.
	AppID string
	// Tools are the module's tools, in order of canonical name.
	Tools []*moduleTool

	byExport map[string]*moduleTool
	meta     json.RawMessage
	declare  func() string
	// linked is the module as a run receives it, made once per generation.
	linked vm.Module
}

// Specifier is the module's import specifier.
func (m *ServerModule) Specifier() string { return specServersPrefix + m.Path }

// Declaration is the module's TypeScript declaration, rendered on first
// use.
func (m *ServerModule) Declaration() string { return m.declare() }

// moduleTool is a tool as a server module exports it.
type moduleTool struct {
	tool   *catalog.Tool
	export string
	server *ServerModule
}

// NewModules builds the Code Mode modules of st's catalog: every tool the
// gate offers to plans, grouped by app.
func NewModules(st *State) *Modules {
	byApp := map[string][]*catalog.Tool{}
	var apps []string
	for _, t := range st.Catalog.Enabled() {
		if _, err := st.Gate.Authorize(context.Background(), st.Catalog, policy.Request{Tool: t.Name, Via: policy.ViaExecute}); err != nil {
			continue
		}
		if _, ok := byApp[t.AppID]; !ok {
			apps = append(apps, t.AppID)
		}
		byApp[t.AppID] = append(byApp[t.AppID], t)
	}
	// An app whose id is already a clean module path keeps it; the others
	// follow in order of id, so colliding ids get --2, --3 the same way on
	// every start.
	slices.SortFunc(apps, func(a, b string) int {
		ca, cb := codemode.ModulePath(a) == a, codemode.ModulePath(b) == b
		switch {
		case ca && !cb:
			return -1
		case cb && !ca:
			return 1
		}
		return strings.Compare(a, b)
	})
	paths := codemode.ModulePaths(apps)
	m := &Modules{byPath: map[string]*ServerModule{}, byApp: map[string]*ServerModule{}, byTool: map[string]*moduleTool{}}
	for i, app := range apps {
		sm := &ServerModule{Path: paths[i], AppID: app, byExport: map[string]*moduleTool{}}
		tools := byApp[app]
		named := make([]codemode.Tool, len(tools))
		for j, t := range tools {
			named[j] = codemode.Tool{Canonical: t.Name, Local: localName(app, t.Name)}
		}
		exports := codemode.ExportNames(named)
		slices.SortFunc(tools, func(a, b *catalog.Tool) int { return strings.Compare(a.Name, b.Name) })
		for _, t := range tools {
			mt := &moduleTool{tool: t, export: exports[t.Name], server: sm}
			sm.Tools = append(sm.Tools, mt)
			sm.byExport[mt.export] = mt
			m.byTool[t.Name] = mt
		}
		sm.meta = sm.metaJSON()
		sm.declare = sync.OnceValue(sm.render)
		sm.linked = vm.Module{Specifier: sm.Specifier(), Kind: vm.ModuleServer, ServerID: sm.Path, Meta: sm.meta,
			Exports: make([]vm.Export, len(sm.Tools))}
		for i, t := range sm.Tools {
			sm.linked.Exports[i] = vm.Export{Name: t.export, Tool: t.tool.Name}
		}
		m.servers = append(m.servers, sm)
		m.byPath[sm.Path] = sm
		m.byApp[app] = sm
	}
	slices.SortFunc(m.servers, func(a, b *ServerModule) int { return strings.Compare(a.Path, b.Path) })
	return m
}

// localName is a tool's name as its server knows it: without its app id
// and the separator after it ("shop.get_order" in app shop is
// "get_order"), the name itself otherwise.
func localName(app, name string) string {
	if rest, ok := strings.CutPrefix(name, app); ok && len(rest) > 1 && strings.ContainsRune(".:/_-", rune(rest[0])) {
		return rest[1:]
	}
	return name
}

// Servers lists the server modules in order of path.
func (m *Modules) Servers() []*ServerModule { return m.servers }

// Server returns the module whose path (the serverId scripts see) or app
// id is id.
func (m *Modules) Server(id string) (*ServerModule, bool) {
	if s, ok := m.byPath[id]; ok {
		return s, true
	}
	s, ok := m.byApp[id]
	return s, ok
}

// Tool returns the export of a tool by canonical name.
func (m *Modules) tool(name string) (*moduleTool, bool) {
	t, ok := m.byTool[name]
	return t, ok
}

// Exports implements codemode.Resolver.
func (m *Modules) Exports(specifier string) ([]string, bool) {
	switch specifier {
	case specDiscovery:
		return []string{"specVersion", "listServers", "describeServer", "listTools", "getTool", "searchTools"}, true
	case specErrors:
		return []string{"CodemodeError", "SchemaValidationError", "ToolNotFoundError", "ServerNotFoundError",
			"ToolCallError", "AuthenticationError", "SandboxLimitError"}, true
	}
	path, ok := strings.CutPrefix(specifier, specServersPrefix)
	if !ok {
		return nil, false
	}
	s, ok := m.byPath[path]
	if !ok {
		return nil, false
	}
	out := make([]string, 0, len(s.Tools)+1)
	for _, t := range s.Tools {
		out = append(out, t.export)
	}
	return append(out, "__meta__"), true
}

// link describes the modules a linked script imports, in the linker's
// order, for the run.
func (m *Modules) link(imports []string) *vm.CodeMode {
	cm := &vm.CodeMode{Modules: make([]vm.Module, 0, len(imports))}
	for _, spec := range imports {
		switch spec {
		case specDiscovery:
			cm.Modules = append(cm.Modules, vm.Module{Specifier: spec, Kind: vm.ModuleDiscovery})
		case specErrors:
			cm.Modules = append(cm.Modules, vm.Module{Specifier: spec, Kind: vm.ModuleErrors})
		default:
			cm.Modules = append(cm.Modules, m.byPath[strings.TrimPrefix(spec, specServersPrefix)].linked)
		}
	}
	return cm
}

// metaJSON is the module's __meta__ (§5.2).
func (m *ServerModule) metaJSON() json.RawMessage {
	type toolMeta struct {
		ToolName    string `json:"toolName"`
		ExportName  string `json:"exportName"`
		Description string `json:"description,omitempty"`
	}
	meta := struct {
		ServerID   string     `json:"serverId"`
		ServerName string     `json:"serverName"`
		Tools      []toolMeta `json:"tools"`
	}{ServerID: m.Path, ServerName: m.AppID, Tools: make([]toolMeta, len(m.Tools))}
	for i, t := range m.Tools {
		meta.Tools[i] = toolMeta{ToolName: t.tool.Name, ExportName: t.export, Description: shortDescription(t.tool.Description)}
	}
	b, err := json.Marshal(meta)
	if err != nil {
		return nil
	}
	return b
}

// shortDescription is the first sentence or line of a description, at most
// 200 bytes: __meta__ and discovery at detail "description" list many
// tools, and the whole text is one getTool away.
func shortDescription(d string) string {
	d = strings.TrimSpace(d)
	if i := strings.IndexAny(d, "\n"); i >= 0 {
		d = d[:i]
	}
	if i := strings.Index(d, ". "); i >= 0 {
		d = d[:i+1]
	}
	if len(d) > 200 {
		cut := 200
		for cut > 0 && d[cut]&0xC0 == 0x80 {
			cut--
		}
		d = d[:cut] + "…"
	}
	return d
}

// render is the module's TypeScript declaration.
func (m *ServerModule) render() string {
	mod := typescript.Module{Specifier: m.Specifier(), ServerID: m.Path, ServerName: m.AppID}
	for _, t := range m.Tools {
		mod.Tools = append(mod.Tools, typescript.ModuleTool{Export: t.export, Function: TypeScriptFunction(t.tool)})
	}
	return typescript.DeclareModule(mod)
}

// TypeScriptFunction describes a catalog tool for package typescript: its
// side-effect hints only when its server stated them.
func TypeScriptFunction(t *catalog.Tool) typescript.Function {
	f := typescript.Function{Name: t.Name, Title: t.Title, Description: t.Description,
		InputSchema: t.InputSchema, OutputSchema: t.OutputSchema, RequiresApproval: t.RequiresApproval}
	if !t.Annotations.Defaulted {
		a := t.Annotations
		f.Effects = typescript.Effects{ReadOnly: a.ReadOnlyHint, Destructive: a.DestructiveHint, Idempotent: a.IdempotentHint, OpenWorld: a.OpenWorldHint}
	}
	return f
}

// modulePathsOf names servers for messages: up to max paths and how many
// more.
func (m *Modules) modulePathsOf(max int) string {
	var names []string
	for i, s := range m.servers {
		if i == max {
			names = append(names, fmt.Sprintf("and %d more", len(m.servers)-max))
			break
		}
		names = append(names, s.Path)
	}
	return strings.Join(names, ", ")
}
