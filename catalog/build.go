package catalog

import (
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/presets"
)

// Info is what the Go include predicate sees of a tool: its settings after
// metadata and config are merged, before the mode applies.
type Info struct {
	Name        string
	Title       string
	Description string
	AppID       string
	Source      Source
	Tags        []string
	Annotations Annotations
}

// Options configure Build.
type Options struct {
	// Config supplies the mode, include/exclude globs and per-tool overrides.
	Config presets.Config
	// Include, when set, must return true for a tool to be reachable at all.
	Include func(Info) bool
	// DefaultAppID is the app of tools whose name has no `app.` or `app:`
	// prefix and whose settings name none; usually the server's name.
	DefaultAppID string
	// Reserved names (the meta-tools) are left out of the catalog.
	Reserved []string
	// Version numbers the snapshot; Build does not interpret it.
	Version uint64
	// TypeScript generates a tool's declaration on first use.
	TypeScript func(*Tool) string
}

// Problem is a tool that Build could not take as given. The tool is kept out
// of CodeCall (fail closed) and the problem is reported to the operator.
type Problem struct {
	Tool    string
	Message string
}

func (p Problem) String() string { return fmt.Sprintf("tool %q: %s", p.Tool, p.Message) }

// Snapshot is an immutable view of the catalog at one version.
type Snapshot struct {
	version uint64
	all     []*Tool
	byName  map[string]*Tool
	enabled []*Tool
	visible []*Tool
	apps    []string
}

// Version returns the number the snapshot was built with.
func (s *Snapshot) Version() uint64 { return s.version }

// Lookup returns the tool with exactly this name, enabled or not. Names are
// matched byte for byte, as mcp-go's dispatch matches them.
func (s *Snapshot) Lookup(name string) (*Tool, bool) {
	t, ok := s.byName[name]
	return t, ok
}

// All returns every tool, sorted by name. The slice must not be modified.
func (s *Snapshot) All() []*Tool { return s.all }

// Enabled returns the tools CodeCall may reach, sorted by name.
func (s *Snapshot) Enabled() []*Tool { return s.enabled }

// Visible returns the tools tools/list shows beside the meta-tools.
func (s *Snapshot) Visible() []*Tool { return s.visible }

// Apps returns the sorted app ids of the enabled tools.
func (s *Snapshot) Apps() []string { return s.apps }

// Build turns the server's tools into a snapshot, applying metadata, config
// overrides, include/exclude globs, the Go predicate and the mode, in that
// order. A tool whose settings cannot be read is kept out and reported.
func Build(tools []mcp.Tool, opts Options) (*Snapshot, []Problem, error) {
	rules, err := compileRules(opts.Config)
	if err != nil {
		return nil, nil, err
	}
	snap := &Snapshot{version: opts.Version, byName: make(map[string]*Tool, len(tools))}
	var problems []Problem
	apps := map[string]bool{}
	for _, mt := range tools {
		if slices.Contains(opts.Reserved, mt.Name) {
			continue
		}
		if _, dup := snap.byName[mt.Name]; dup {
			problems = append(problems, Problem{mt.Name, "registered twice; the second definition is ignored"})
			continue
		}
		t, err := newTool(mt, opts, rules)
		if err != nil {
			problems = append(problems, Problem{mt.Name, err.Error()})
			t = &Tool{Name: mt.Name, Description: mt.Description, InputSchema: json.RawMessage(`{"type":"object"}`)}
		}
		if opts.TypeScript != nil {
			t.SetTypeScript(opts.TypeScript)
		}
		snap.byName[t.Name] = t
		snap.all = append(snap.all, t)
	}
	sort.Slice(snap.all, func(i, j int) bool { return snap.all[i].Name < snap.all[j].Name })
	for _, t := range snap.all {
		if t.Enabled {
			snap.enabled = append(snap.enabled, t)
			apps[t.AppID] = true
		}
		if t.VisibleInList {
			snap.visible = append(snap.visible, t)
		}
	}
	for a := range apps {
		snap.apps = append(snap.apps, a)
	}
	sort.Strings(snap.apps)
	return snap, problems, nil
}

type override struct {
	pattern string
	exact   bool
	match   presets.Glob
	set     presets.ToolOverride
}

type rules struct {
	include, exclude presets.Globs
	overrides        []override
}

func compileRules(cfg presets.Config) (*rules, error) {
	r := &rules{}
	var err error
	if r.include, err = presets.CompileGlobs(cfg.Include); err != nil {
		return nil, fmt.Errorf("include%w", err)
	}
	if r.exclude, err = presets.CompileGlobs(cfg.Exclude); err != nil {
		return nil, fmt.Errorf("exclude%w", err)
	}
	// Globs apply first, most general first (shorter pattern), exact names
	// last, so the most specific setting wins.
	keys := make([]string, 0, len(cfg.Tools))
	for k := range cfg.Tools {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		ei, ej := isLiteral(keys[i]), isLiteral(keys[j])
		if ei != ej {
			return ej
		}
		if len(keys[i]) != len(keys[j]) {
			return len(keys[i]) < len(keys[j])
		}
		return keys[i] < keys[j]
	})
	for _, k := range keys {
		g, err := presets.CompileGlob(k)
		if err != nil {
			return nil, fmt.Errorf("tools: key %q: %w", k, err)
		}
		r.overrides = append(r.overrides, override{pattern: k, exact: g.Literal(), match: g, set: cfg.Tools[k]})
	}
	return r, nil
}

// isLiteral reports whether a tools: key names one tool rather than a
// pattern; a key that does not compile sorts as a pattern and fails later.
func isLiteral(k string) bool {
	g, err := presets.CompileGlob(k)
	return err == nil && g.Literal()
}

// settings are a tool's CodeCall settings after metadata and config merge;
// explicit records whether a flag came from the tool itself or an exact-name
// config entry, which metadata_driven mode requires.
type settings struct {
	Meta
	visibleExplicit, enabledExplicit bool
}

func newTool(mt mcp.Tool, opts Options, r *rules) (*Tool, error) {
	meta, _, err := ReadMeta(mt)
	if err != nil {
		return nil, err
	}
	s := settings{Meta: meta, visibleExplicit: meta.VisibleInListTools != nil, enabledExplicit: meta.EnabledInCodeCall != nil}
	for _, o := range r.overrides {
		if o.match.Match(mt.Name) {
			applyOverride(&s, o)
		}
	}
	in, err := inputSchema(mt)
	if err != nil {
		return nil, err
	}
	out, err := outputSchema(mt)
	if err != nil {
		return nil, err
	}
	t := &Tool{
		Name:         mt.Name,
		Title:        firstNonEmpty(mt.Title, mt.Annotations.Title),
		Description:  mt.Description,
		AppID:        firstNonEmpty(s.AppID, appFromName(mt.Name), opts.DefaultAppID),
		Source:       s.Source,
		Tags:         s.Tags,
		InputSchema:  in,
		OutputSchema: out,
		Annotations:  annotationsOf(mt.Annotations),
		Examples:     s.Examples,

		SandboxProfile: s.SandboxProfile,
		Cwd:            s.Cwd,
	}
	if s.TimeoutMs > 0 {
		t.Timeout = time.Duration(s.TimeoutMs) * time.Millisecond
		t.TimeoutFrom = s.TimeoutFrom
		if t.TimeoutFrom == "" {
			t.TimeoutFrom = "the tool's _meta.codecall.timeoutMs"
		}
	}
	if t.Source == "" {
		t.Source = SourceInline
	}
	if !slices.Contains(Sources, t.Source) {
		return nil, fmt.Errorf("source %q is not one of %v", t.Source, Sources)
	}
	t.RequiresApproval = s.RequiresApproval != nil && *s.RequiresApproval
	reachable := (len(r.include) == 0 || r.include.Match(t.Name)) && !r.exclude.Match(t.Name)
	if reachable && opts.Include != nil {
		reachable = opts.Include(t.Info())
	}
	if reachable {
		t.VisibleInList, t.Enabled = decide(opts.Config.Mode, s)
	}
	return t, nil
}

// decide applies DESIGN.md's mode table. In metadata_driven mode only
// explicit settings count: the tool's own _meta.codecall or an exact-name
// entry under tools:, never a glob.
func decide(mode presets.Mode, s settings) (visible, enabled bool) {
	isTrue := func(b *bool) bool { return b != nil && *b }
	switch mode {
	case presets.ModeOptIn:
		return isTrue(s.VisibleInListTools), isTrue(s.EnabledInCodeCall)
	case presets.ModeMetadataDriven:
		return s.visibleExplicit && isTrue(s.VisibleInListTools), s.enabledExplicit && isTrue(s.EnabledInCodeCall)
	default: // codecall_only, and the zero value
		return isTrue(s.VisibleInListTools), s.EnabledInCodeCall == nil || *s.EnabledInCodeCall
	}
}

func applyOverride(s *settings, o override) {
	set := o.set
	if set.VisibleInListTools != nil {
		s.VisibleInListTools = set.VisibleInListTools
		s.visibleExplicit = o.exact
	}
	if set.EnabledInCodeCall != nil {
		s.EnabledInCodeCall = set.EnabledInCodeCall
		s.enabledExplicit = o.exact
	}
	if set.AppID != "" {
		s.AppID = set.AppID
	}
	if set.Tags != nil {
		s.Tags = set.Tags
	}
	if set.Source != "" {
		s.Source = Source(set.Source)
	}
	if set.Examples != nil {
		s.Examples = make([]Example, len(set.Examples))
		for i, e := range set.Examples {
			s.Examples[i] = Example{Description: e.Description, Input: e.Input, Output: e.Output}
		}
	}
	if set.Timeout > 0 {
		s.TimeoutMs = set.Timeout.Milliseconds()
		s.TimeoutFrom = fmt.Sprintf("tools.%q.timeout in the config", o.pattern)
	}
	if set.RequiresApproval != nil {
		// Config may ask for approval but never waive what the tool's own
		// metadata requires.
		if *set.RequiresApproval || s.RequiresApproval == nil {
			s.RequiresApproval = set.RequiresApproval
		}
	}
}

// AppFromName is the app id implied by a tool name: the part before the
// first '.' or ':', or "" when there is none.
func appFromName(name string) string {
	if i := strings.IndexAny(name, ".:"); i > 0 {
		return name[:i]
	}
	return ""
}

func firstNonEmpty(ss ...string) string {
	for _, s := range ss {
		if s != "" {
			return s
		}
	}
	return ""
}

func annotationsOf(a mcp.ToolAnnotation) Annotations {
	is := func(p *bool, v bool) bool { return p != nil && *p == v }
	return Annotations{
		Title: a.Title, ReadOnlyHint: a.ReadOnlyHint, DestructiveHint: a.DestructiveHint,
		IdempotentHint: a.IdempotentHint, OpenWorldHint: a.OpenWorldHint,
		Defaulted: is(a.ReadOnlyHint, false) && is(a.DestructiveHint, true) &&
			is(a.IdempotentHint, false) && is(a.OpenWorldHint, true),
	}
}

func inputSchema(mt mcp.Tool) (json.RawMessage, error) {
	if len(mt.RawInputSchema) > 0 {
		if !json.Valid(mt.RawInputSchema) {
			return nil, fmt.Errorf("input schema is not valid JSON")
		}
		return mt.RawInputSchema, nil
	}
	b, err := json.Marshal(mt.InputSchema)
	if err != nil {
		return nil, fmt.Errorf("input schema cannot be encoded: %w", err)
	}
	return b, nil
}

func outputSchema(mt mcp.Tool) (json.RawMessage, error) {
	if len(mt.RawOutputSchema) > 0 {
		if !json.Valid(mt.RawOutputSchema) {
			return nil, fmt.Errorf("output schema is not valid JSON")
		}
		return mt.RawOutputSchema, nil
	}
	if mt.OutputSchema.Type == "" {
		return nil, nil
	}
	b, err := json.Marshal(mt.OutputSchema)
	if err != nil {
		return nil, fmt.Errorf("output schema cannot be encoded: %w", err)
	}
	return b, nil
}
