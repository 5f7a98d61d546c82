package catalog_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/presets"
)

type setup struct {
	name    string
	meta    *catalog.Meta
	tools   map[string]presets.ToolOverride
	include []string
	exclude []string
	pred    func(catalog.Info) bool
}

var (
	yes = catalog.Bool(true)
	no  = catalog.Bool(false)
)

// setups are the ways a tool can be configured; want gives, per mode, the
// expected (visible, enabled) pair from DESIGN.md's mode table.
var setups = []struct {
	setup
	want map[presets.Mode][2]bool
}{
	{setup{name: "no settings"}, modes(f, t, f, f, f, f)},
	{setup{name: "meta enabled", meta: &catalog.Meta{EnabledInCodeCall: yes}}, modes(f, t, f, t, f, t)},
	{setup{name: "meta disabled", meta: &catalog.Meta{EnabledInCodeCall: no}}, modes(f, f, f, f, f, f)},
	{setup{name: "meta visible", meta: &catalog.Meta{VisibleInListTools: yes}}, modes(t, t, t, f, t, f)},
	{setup{name: "meta visible and enabled", meta: &catalog.Meta{VisibleInListTools: yes, EnabledInCodeCall: yes}}, modes(t, t, t, t, t, t)},
	{setup{name: "config exact enabled", tools: map[string]presets.ToolOverride{"crm.find": {EnabledInCodeCall: yes}}}, modes(f, t, f, t, f, t)},
	{setup{name: "config glob enabled", tools: map[string]presets.ToolOverride{"crm.*": {EnabledInCodeCall: yes}}}, modes(f, t, f, t, f, f)},
	{setup{name: "config glob visible", tools: map[string]presets.ToolOverride{"crm.*": {VisibleInListTools: yes}}}, modes(t, t, t, f, f, f)},
	{setup{name: "config exact visible", tools: map[string]presets.ToolOverride{"crm.find": {VisibleInListTools: yes}}}, modes(t, t, t, f, t, f)},
	{setup{name: "config glob disabled", tools: map[string]presets.ToolOverride{"*": {EnabledInCodeCall: no}}}, modes(f, f, f, f, f, f)},
	{setup{name: "config overrides meta", meta: &catalog.Meta{EnabledInCodeCall: yes},
		tools: map[string]presets.ToolOverride{"crm.find": {EnabledInCodeCall: no}}}, modes(f, f, f, f, f, f)},
	{setup{name: "exact beats glob", tools: map[string]presets.ToolOverride{
		"crm.*": {EnabledInCodeCall: no}, "crm.find": {EnabledInCodeCall: yes}}}, modes(f, t, f, t, f, t)},
	{setup{name: "excluded", meta: &catalog.Meta{VisibleInListTools: yes, EnabledInCodeCall: yes}, exclude: []string{"crm.*"}}, modes(f, f, f, f, f, f)},
	{setup{name: "not included", meta: &catalog.Meta{VisibleInListTools: yes, EnabledInCodeCall: yes}, include: []string{"billing.*"}}, modes(f, f, f, f, f, f)},
	{setup{name: "included", meta: &catalog.Meta{EnabledInCodeCall: yes}, include: []string{"crm.*"}}, modes(f, t, f, t, f, t)},
	{setup{name: "predicate refuses", meta: &catalog.Meta{VisibleInListTools: yes, EnabledInCodeCall: yes},
		pred: func(i catalog.Info) bool { return i.AppID != "crm" }}, modes(f, f, f, f, f, f)},
	{setup{name: "predicate accepts", pred: func(i catalog.Info) bool { return i.AppID == "crm" }}, modes(f, t, f, f, f, f)},
}

const (
	t = true
	f = false
)

func modes(onlyVis, onlyEn, optVis, optEn, mdVis, mdEn bool) map[presets.Mode][2]bool {
	return map[presets.Mode][2]bool{
		presets.ModeCodeCallOnly:   {onlyVis, onlyEn},
		presets.ModeOptIn:          {optVis, optEn},
		presets.ModeMetadataDriven: {mdVis, mdEn},
	}
}

func TestModeTable(t *testing.T) {
	for _, s := range setups {
		for _, mode := range presets.Modes {
			t.Run(fmt.Sprintf("%s/%s", mode, s.name), func(t *testing.T) {
				tool := mcp.NewTool("crm.find", mcp.WithDescription("Find contacts"))
				if s.meta != nil {
					tool = catalog.SetMeta(tool, *s.meta)
				}
				cfg := presets.Default()
				cfg.Mode, cfg.Tools, cfg.Include, cfg.Exclude = mode, s.tools, s.include, s.exclude
				snap, problems, err := catalog.Build([]mcp.Tool{tool}, catalog.Options{Config: cfg, Include: s.pred})
				if err != nil || len(problems) > 0 {
					t.Fatalf("Build: %v %v", err, problems)
				}
				got, ok := snap.Lookup("crm.find")
				if !ok {
					t.Fatal("tool missing from snapshot")
				}
				want := s.want[mode]
				if got.VisibleInList != want[0] || got.Enabled != want[1] {
					t.Errorf("visible, enabled = %v, %v; want %v, %v", got.VisibleInList, got.Enabled, want[0], want[1])
				}
				if len(snap.Enabled()) != btoi(want[1]) || len(snap.Visible()) != btoi(want[0]) {
					t.Errorf("Enabled()/Visible() lengths %d/%d disagree with the tool's flags", len(snap.Enabled()), len(snap.Visible()))
				}
			})
		}
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func TestBuildSettings(t *testing.T) {
	cfg := presets.Default()
	cfg.Tools = map[string]presets.ToolOverride{
		"billing.*":     {AppID: "payments", Tags: []string{"money"}, Source: "openapi"},
		"billing.nuke":  {RequiresApproval: no},
		"users:delete":  {RequiresApproval: yes},
		"billing.quote": {Examples: []presets.ToolExample{{Description: "a quote", Input: map[string]any{"amount": 3}}}},
	}
	tools := []mcp.Tool{
		mcp.NewTool("billing.charge"),
		catalog.SetMeta(mcp.NewTool("billing.nuke"), catalog.Meta{RequiresApproval: yes}),
		mcp.NewTool("billing.quote"),
		mcp.NewTool("users:delete"),
		mcp.NewTool("health", mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false)),
		mcp.NewTool("codecall.search"),
	}
	snap, problems, err := catalog.Build(tools, catalog.Options{Config: cfg, DefaultAppID: "shop", Reserved: []string{"codecall.search"}})
	if err != nil || len(problems) > 0 {
		t.Fatalf("Build: %v %v", err, problems)
	}
	if _, ok := snap.Lookup("codecall.search"); ok {
		t.Error("a reserved name entered the catalog")
	}
	tests := []struct {
		name, app  string
		source     catalog.Source
		approval   bool
		defaulted  bool
		tags, exms int
	}{
		{"billing.charge", "payments", catalog.SourceOpenAPI, false, true, 1, 0},
		{"billing.nuke", "payments", catalog.SourceOpenAPI, true, true, 1, 0}, // config cannot waive the tool's own approval
		{"billing.quote", "payments", catalog.SourceOpenAPI, false, true, 1, 1},
		{"users:delete", "users", catalog.SourceInline, true, true, 0, 0},
		{"health", "shop", catalog.SourceInline, false, false, 0, 0},
	}
	for _, tt := range tests {
		got, ok := snap.Lookup(tt.name)
		if !ok {
			t.Fatalf("%s missing", tt.name)
		}
		if got.AppID != tt.app || got.Source != tt.source || got.RequiresApproval != tt.approval ||
			got.Annotations.Defaulted != tt.defaulted || len(got.Tags) != tt.tags || len(got.Examples) != tt.exms {
			t.Errorf("%s: app %q source %q approval %v defaulted %v tags %v examples %d; want %q %q %v %v %d %d",
				tt.name, got.AppID, got.Source, got.RequiresApproval, got.Annotations.Defaulted, got.Tags, len(got.Examples),
				tt.app, tt.source, tt.approval, tt.defaulted, tt.tags, tt.exms)
		}
	}
	if got := snap.Apps(); fmt.Sprint(got) != "[payments shop users]" {
		t.Errorf("Apps() = %v", got)
	}
}

func TestBuildKeepsBadToolsOut(t *testing.T) {
	bad := mcp.NewTool("crm.bad")
	bad.Meta = mcp.NewMetaFromMap(map[string]any{catalog.MetaKey: "not an object"})
	badSchema := mcp.NewToolWithRawSchema("crm.schema", "", []byte(`{"type":`))
	badSource := catalog.SetMeta(mcp.NewTool("crm.source"), catalog.Meta{Source: "ftp"})
	snap, problems, err := catalog.Build([]mcp.Tool{bad, badSchema, badSource, mcp.NewTool("crm.good")}, catalog.Options{Config: presets.Default()})
	if err != nil {
		t.Fatal(err)
	}
	if len(problems) != 3 {
		t.Fatalf("problems = %v, want 3", problems)
	}
	for _, name := range []string{"crm.bad", "crm.schema", "crm.source"} {
		tool, ok := snap.Lookup(name)
		if !ok || tool.Enabled || tool.VisibleInList {
			t.Errorf("%s: a tool with unreadable settings must be kept out (fail closed), got %+v", name, tool)
		}
	}
	if len(snap.Enabled()) != 1 {
		t.Errorf("enabled = %d, want 1", len(snap.Enabled()))
	}
}

func TestBuildRejectsBadGlobs(t *testing.T) {
	for _, cfg := range []func(*presets.Config){
		func(c *presets.Config) { c.Include = []string{"[a"} },
		func(c *presets.Config) { c.Exclude = []string{"{a"} },
		func(c *presets.Config) { c.Tools = map[string]presets.ToolOverride{"[": {}} },
	} {
		c := presets.Default()
		cfg(&c)
		if _, _, err := catalog.Build(nil, catalog.Options{Config: c}); err == nil {
			t.Errorf("config %+v: want an error for a bad glob", c)
		}
	}
}

func TestReadMetaRoundTrip(t *testing.T) {
	tool := catalog.SetMeta(mcp.NewTool("x"), catalog.Meta{AppID: "a", Tags: []string{"t"}, EnabledInCodeCall: yes})
	tool.Meta.AdditionalFields["other"] = 1
	tool = catalog.SetMeta(tool, catalog.Meta{AppID: "b"})
	m, ok, err := catalog.ReadMeta(tool)
	if err != nil || !ok || m.AppID != "b" {
		t.Fatalf("ReadMeta = %+v %v %v", m, ok, err)
	}
	if tool.Meta.AdditionalFields["other"] != 1 {
		t.Error("SetMeta dropped other _meta fields")
	}
	// A tool received over the wire carries a plain JSON object.
	wire := mcp.NewTool("y")
	wire.Meta = mcp.NewMetaFromMap(map[string]any{catalog.MetaKey: map[string]any{"appId": "c", "visibleInListTools": true}})
	m, ok, err = catalog.ReadMeta(wire)
	if err != nil || !ok || m.AppID != "c" || m.VisibleInListTools == nil || !*m.VisibleInListTools {
		t.Fatalf("ReadMeta(wire) = %+v %v %v", m, ok, err)
	}
}

// TestBuildTimeouts checks where a tool's timeout comes from: its own
// _meta.codecall.timeoutMs, replaced by the operator's tools: entries, the
// most specific one winning, shorter or longer.
func TestBuildTimeouts(t *testing.T) {
	cfg := presets.Default()
	cfg.Tools = map[string]presets.ToolOverride{
		"gh.*":      {Timeout: 30 * time.Second},
		"gh.search": {Timeout: 5 * time.Minute},
		"gh.*e*":    {AppID: "github"}, // no timeout: leaves the glob's
	}
	own := catalog.Meta{TimeoutMs: 2000, TimeoutFrom: "the timeout of upstream \"gh\""}
	tools := []mcp.Tool{
		catalog.SetMeta(mcp.NewTool("gh.search"), own),
		catalog.SetMeta(mcp.NewTool("gh.create_issue"), own),
		catalog.SetMeta(mcp.NewTool("slack.post"), own),
		catalog.SetMeta(mcp.NewTool("db.query"), catalog.Meta{TimeoutMs: 1500}),
		mcp.NewTool("health"),
	}
	snap, problems, err := catalog.Build(tools, catalog.Options{Config: cfg, DefaultAppID: "x"})
	if err != nil || len(problems) > 0 {
		t.Fatalf("Build: %v %v", err, problems)
	}
	for _, tt := range []struct {
		name    string
		timeout time.Duration
		from    string
	}{
		{"gh.search", 5 * time.Minute, `tools."gh.search".timeout in the config`},
		{"gh.create_issue", 30 * time.Second, `tools."gh.*".timeout in the config`},
		{"slack.post", 2 * time.Second, `the timeout of upstream "gh"`},
		{"db.query", 1500 * time.Millisecond, "the tool's _meta.codecall.timeoutMs"},
		{"health", 0, ""},
	} {
		got, ok := snap.Lookup(tt.name)
		if !ok {
			t.Fatalf("%s missing", tt.name)
		}
		if got.Timeout != tt.timeout || got.TimeoutFrom != tt.from {
			t.Errorf("%s: timeout %v from %q, want %v from %q", tt.name, got.Timeout, got.TimeoutFrom, tt.timeout, tt.from)
		}
	}
}
