package presets

import (
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"
)

// UpstreamsConfig puts CodeCall in front of other MCP servers (codecall
// serve): each upstream server becomes an app whose tools CodeCall reaches
// as <serverId><separator><toolName>.
type UpstreamsConfig struct {
	// File is a JSON file in the usual client format, {"mcpServers": {...}};
	// a relative path is relative to the config file. Its servers are added
	// to Servers; a name in both is an error.
	File string `koanf:"file" json:"file,omitempty"`
	// Separator goes between the server id and the upstream's tool name
	// (default "."). Some clients reject dots in tool names; use "__" then.
	Separator string `koanf:"separator" json:"separator,omitempty"`
	// Start is "eager" (default: connect to every upstream at start-up) or
	// "lazy" (connect when the first client asks for tools). Either way the
	// handshake is answered at once and requests for tools wait until every
	// upstream has been tried.
	Start string `koanf:"start" json:"start,omitempty"`
	// StartTimeout bounds connecting to one upstream, including the
	// initialize handshake and the first tools/list (default 60s: npx may
	// download the server first).
	StartTimeout time.Duration `koanf:"startTimeout" json:"startTimeout,omitempty"`
	// PinDefinitions records each upstream tool's definition (name,
	// description, schemas, annotations) the first time it is seen, in
	// StateDir, and holds back a tool whose definition changes later
	// until an operator accepts it (codecall upstreams accept). Default
	// true; false serves every definition as it comes.
	PinDefinitions *bool `koanf:"pinDefinitions" json:"pinDefinitions,omitempty"`
	// NewTools is what happens to a tool that appears on an upstream seen
	// before: "accept" (default) pins and serves it, "quarantine" holds it
	// back like a changed one.
	NewTools string `koanf:"newTools" json:"newTools,omitempty"`
	// StateDir holds the pinned definitions (default
	// $XDG_STATE_HOME/codecall, else ~/.local/state/codecall).
	StateDir string `koanf:"stateDir" json:"stateDir,omitempty"`
	// TokenDir holds the OAuth tokens of HTTP and SSE upstreams, one file
	// per upstream with mode 0600 (default: the user's config directory,
	// codecall/tokens). It must not be a directory plans or stdio
	// upstreams are given.
	TokenDir string `koanf:"tokenDir" json:"tokenDir,omitempty"`
	// Servers are the upstream servers keyed by server id.
	Servers map[string]Upstream `koanf:"servers" json:"servers,omitempty"`
}

// Upstream is one upstream MCP server: a command speaking MCP on stdio, or
// a URL speaking streamable HTTP or SSE. Values of env and headers may hold
// ${VAR} placeholders, resolved from the environment when the server starts.
type Upstream struct {
	// Type is "stdio", "http" (streamable HTTP) or "sse"; when empty it is
	// stdio for a command and http for a URL.
	Type string `koanf:"type" json:"type,omitempty"`
	// Command starts a stdio server; Args are its arguments.
	Command string   `koanf:"command" json:"command,omitempty"`
	Args    []string `koanf:"args" json:"args,omitempty"`
	// Env are variables set for the child process.
	Env map[string]string `koanf:"env" json:"env,omitempty"`
	// EnvAllowlist names variables of CodeCall's own environment passed on
	// to the child, on top of a small baseline (PATH, HOME, ...). Nothing
	// else of CodeCall's environment reaches the child.
	EnvAllowlist []string `koanf:"envAllowlist" json:"envAllowlist,omitempty"`
	// Cwd is the child's working directory (default: CodeCall's).
	Cwd string `koanf:"cwd" json:"cwd,omitempty"`
	// URL is the endpoint of an HTTP or SSE server; Headers are sent with
	// every request.
	URL     string            `koanf:"url" json:"url,omitempty"`
	Headers map[string]string `koanf:"headers" json:"headers,omitempty"`
	// Enabled false keeps the server out without deleting its entry.
	Enabled *bool `koanf:"enabled" json:"enabled,omitempty"`
	// Timeout is the ceiling of one call to this server (default 60s); a
	// client's shorter deadline wins.
	Timeout time.Duration `koanf:"timeout" json:"timeout,omitempty"`
	// IncludeTools and ExcludeTools are globs over the upstream's own tool
	// names; exclude wins. Empty include means every tool.
	IncludeTools []string `koanf:"includeTools" json:"includeTools,omitempty"`
	ExcludeTools []string `koanf:"excludeTools" json:"excludeTools,omitempty"`
	// RequiresApproval is the default of requiresApproval for every tool of
	// this server; tools: overrides still win.
	RequiresApproval *bool `koanf:"requiresApproval" json:"requiresApproval,omitempty"`
	// Prefix false serves the upstream's tool and prompt names unchanged
	// instead of <serverId><separator><name> (default true), for a gateway
	// that must look like the server behind it. The gateway refuses to start
	// such an upstream when one of its names is already served by another.
	Prefix *bool `koanf:"prefix" json:"prefix,omitempty"`

	// The keys below make the entry an OpenAPI app (type openapi); see
	// OpenAPIAuth and openapi.go for what they mean.

	// OpenAPI is an OpenAPI 3.0/3.1 or Swagger 2.0 document, a file
	// (relative to the config file) or an http(s) URL: each operation
	// becomes a tool <serverId><separator><operationId>.
	OpenAPI string `koanf:"openapi" json:"openapi,omitempty"`
	// BaseURL is where the app's requests go (default: the document's
	// first server).
	BaseURL string `koanf:"baseUrl" json:"baseUrl,omitempty"`
	// Auth are credentials added to every request, besides Headers.
	Auth OpenAPIAuth `koanf:"auth" json:"auth,omitzero"`
	// Operations are per-operation settings keyed by operationId (or tool
	// name).
	Operations map[string]OperationOverride `koanf:"operations" json:"operations,omitempty"`
	// AllowPrivateNetwork lets the app connect to loopback, private and
	// link-local addresses other than a base URL written as one.
	AllowPrivateNetwork bool `koanf:"allowPrivateNetwork" json:"allowPrivateNetwork,omitempty"`
	// MaxResponseBytes caps one response body (default 4 MiB).
	MaxResponseBytes int64 `koanf:"maxResponseBytes" json:"maxResponseBytes,omitempty" unit:"bytes"`
	// Sandbox is how a stdio server is confined: "default" (also when
	// empty) runs it in namespaces of its own with no network, a view of
	// the system's runtime directories read-only plus Cwd and Paths, and
	// resource caps; "none" runs it as CodeCall's user with everything
	// CodeCall can reach, and must be written out.
	Sandbox string `koanf:"sandbox" json:"sandbox,omitempty"`
	// AllowNetwork gives a sandboxed server the host's network.
	AllowNetwork bool `koanf:"allowNetwork" json:"allowNetwork,omitempty"`
	// Paths are further files and directories a sandboxed server sees,
	// read-write, or read-only with a ":ro" suffix; absolute, or "~/..."
	// for the user's home directory.
	Paths []string `koanf:"paths" json:"paths,omitempty"`
	// MaxMemory caps a sandboxed server's writable memory per process (a
	// byte size; default 4GiB).
	MaxMemory int64 `koanf:"maxMemory" json:"maxMemory,omitempty" unit:"bytes"`
	// MaxProcesses caps a sandboxed server's processes and threads
	// (default 512).
	MaxProcesses int `koanf:"maxProcesses" json:"maxProcesses,omitempty"`
	// OAuth makes CodeCall the OAuth 2.1 client of an HTTP or SSE server
	// (see UpstreamOAuth); tokens come from codecall auth login.
	OAuth *UpstreamOAuth `koanf:"oauth" json:"oauth,omitempty"`
}

// The sandbox settings of a stdio upstream, and SandboxProfile's values.
const (
	SandboxDefault = "default"
	SandboxNone    = "none"
	// SandboxDefaultNetwork is the profile of a server with sandbox
	// default and allowNetwork: confined, with the host's network.
	SandboxDefaultNetwork = "default+network"
	// SandboxRemote is the profile of an HTTP or SSE server: it runs
	// elsewhere, and CodeCall confines nothing of it.
	SandboxRemote = "remote"
)

// SandboxProfile names how the server runs, as discovery and codecall
// check show it: default, default+network, none or remote.
func (u Upstream) SandboxProfile() string {
	switch {
	case u.Transport() != UpstreamStdio:
		return SandboxRemote
	case u.Sandbox == SandboxNone:
		return SandboxNone
	case u.AllowNetwork:
		return SandboxDefaultNetwork
	default:
		return SandboxDefault
	}
}

// ViewPath is one entry of Paths, decoded.
type ViewPath struct {
	Path     string
	ReadOnly bool
}

// ViewPaths decodes Paths: the ":ro" suffix, and "~/" as home (the
// user's home directory). Entries Validate refused are left out.
func (u Upstream) ViewPaths(home string) []ViewPath {
	var out []ViewPath
	for _, p := range u.Paths {
		v, ok := parseViewPath(p, home)
		if ok {
			out = append(out, v)
		}
	}
	return out
}

func parseViewPath(p, home string) (ViewPath, bool) {
	var v ViewPath
	if s, ok := strings.CutSuffix(p, ":ro"); ok {
		p, v.ReadOnly = s, true
	}
	if rest, ok := strings.CutPrefix(p, "~/"); ok {
		if home == "" {
			return v, false
		}
		p = home + "/" + rest
	}
	if !strings.HasPrefix(p, "/") || p == "/" {
		return v, false
	}
	v.Path = p
	return v, true
}

// The upstream transport types.
const (
	UpstreamStdio = "stdio"
	UpstreamHTTP  = "http"
	UpstreamSSE   = "sse"
	// UpstreamOpenAPI is a REST API described by an OpenAPI document,
	// served by CodeCall itself (no MCP server behind it).
	UpstreamOpenAPI = "openapi"
)

// The values of UpstreamsConfig.NewTools.
const (
	NewToolsAccept     = "accept"
	NewToolsQuarantine = "quarantine"
)

// Pinning reports whether tool definitions are pinned (PinDefinitions
// unset means yes).
func (c UpstreamsConfig) Pinning() bool { return c.PinDefinitions == nil || *c.PinDefinitions }

// The upstream start modes.
const (
	StartEager = "eager"
	StartLazy  = "lazy"
)

// serverIDPattern is what a server id may look like: it becomes an app id
// and the start of tool names.
var serverIDPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// envNamePattern is a portable environment variable name.
var envNamePattern = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// IsEnabled reports whether the server is served (Enabled unset means yes).
func (u Upstream) IsEnabled() bool { return u.Enabled == nil || *u.Enabled }

// IsPrefixed reports whether the server's tool and prompt names get the
// server id in front (Prefix unset means yes).
func (u Upstream) IsPrefixed() bool { return u.Prefix == nil || *u.Prefix }

// Transport returns the transport type, inferring it when Type is empty.
func (u Upstream) Transport() string {
	switch {
	case u.Type == "streamable-http" || u.Type == "streamableHttp":
		return UpstreamHTTP
	case u.Type != "":
		return u.Type
	case u.OpenAPI != "":
		return UpstreamOpenAPI
	case u.URL != "":
		return UpstreamHTTP
	default:
		return UpstreamStdio
	}
}

// UpstreamIssues checks one entry of an {"mcpServers": ...} file the way
// Validate checks upstreams.servers; keys read mcpServers["id"].key.
// Package gateway uses it for entries read from a JSON file.
func UpstreamIssues(id string, u Upstream) []Problem {
	var out []Problem
	for _, is := range u.issues(id, keyPath{}.field("mcpServers").key(id)) {
		out = append(out, Problem{Key: is.path.String(), Message: is.msg})
	}
	return out
}

func (c UpstreamsConfig) issues(p keyPath) []issue {
	var out []issue
	add := func(p keyPath, format string, args ...any) { out = append(out, newIssue(p, format, args...)) }
	if msg := checkSeparator(c.Separator); msg != "" {
		add(p.field("separator"), "%s", msg)
	}
	if c.Start != "" && c.Start != StartEager && c.Start != StartLazy {
		add(p.field("start"), "unknown start mode %q; allowed: %s, %s", c.Start, StartEager, StartLazy)
	}
	if c.NewTools != "" && c.NewTools != NewToolsAccept && c.NewTools != NewToolsQuarantine {
		add(p.field("newTools"), "unknown rule %q; allowed: %s (pin and serve a new tool of a known upstream), %s (hold it back until accepted)", c.NewTools, NewToolsAccept, NewToolsQuarantine)
	}
	if c.StateDir != "" && !strings.HasPrefix(c.StateDir, "/") {
		add(p.field("stateDir"), "%q must be an absolute path", c.StateDir)
	}
	if c.TokenDir != "" && !strings.HasPrefix(c.TokenDir, "/") {
		add(p.field("tokenDir"), "%q must be an absolute path", c.TokenDir)
	}
	if c.StartTimeout < 0 {
		add(p.field("startTimeout"), "must not be negative, got %v", c.StartTimeout)
	}
	ids := make([]string, 0, len(c.Servers))
	for id := range c.Servers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		out = append(out, c.Servers[id].issues(id, p.field("servers").key(id))...)
	}
	return out
}

// checkSeparator returns why sep cannot join server ids and tool names.
func checkSeparator(sep string) string {
	if sep == "" {
		return ""
	}
	for _, r := range sep {
		if !isToolNameRune(r) && r != ':' && r != '/' {
			return fmt.Sprintf("%q contains %q; use ASCII punctuation such as \".\", \"__\", \"-\", \":\" or \"/\"", sep, r)
		}
	}
	if len(sep) > 4 {
		return fmt.Sprintf("%q is longer than 4 characters", sep)
	}
	return ""
}

func (u Upstream) issues(id string, p keyPath) []issue {
	var out []issue
	add := func(p keyPath, format string, args ...any) { out = append(out, newIssue(p, format, args...)) }
	if !serverIDPattern.MatchString(id) {
		add(p, "server id %q must start with a letter or digit and use only ASCII letters, digits, '_' and '-' (it becomes an app id and a tool-name prefix)", id)
	}
	kinds := []string{UpstreamStdio, UpstreamHTTP, UpstreamSSE, UpstreamOpenAPI}
	t := u.Transport()
	if !slices.Contains(kinds, t) {
		add(p.field("type"), "unknown type %q; allowed: %s (or leave it out: command means stdio, url means http, openapi means openapi)", u.Type, strings.Join(kinds, ", "))
	}
	out = append(out, u.openapiIssues(p)...)
	switch {
	case t == UpstreamOpenAPI:
		// Checked by openapiIssues.
	case u.Command != "" && u.URL != "":
		add(p, "has both command and url; a server is either a command (stdio) or a url (http, sse)")
	case t == UpstreamStdio && u.Command == "":
		add(p.field("command"), "required for a stdio server (or give url for an HTTP server)")
	case (t == UpstreamHTTP || t == UpstreamSSE) && u.URL == "":
		add(p.field("url"), "required for a %s server", t)
	}
	if u.URL != "" {
		if parsed, err := url.Parse(u.URL); err != nil || (parsed.Scheme != "http" && parsed.Scheme != "https") || parsed.Host == "" {
			add(p.field("url"), "%q is not an http:// or https:// URL", u.URL)
		}
	}
	if t != UpstreamStdio {
		what := "this one has a url"
		if t == UpstreamOpenAPI {
			what = "this one is an OpenAPI app"
		}
		for _, k := range []struct {
			key string
			set bool
		}{{"args", len(u.Args) > 0}, {"env", len(u.Env) > 0}, {"envAllowlist", len(u.EnvAllowlist) > 0}, {"cwd", u.Cwd != ""}} {
			if k.set {
				add(p.field(k.key), "only applies to stdio servers (%s)", what)
			}
		}
	} else if len(u.Headers) > 0 {
		add(p.field("headers"), "only applies to HTTP and SSE servers (this one has a command)")
	}
	for _, name := range sortedMapKeys(u.Env) {
		if !envNamePattern.MatchString(name) {
			add(p.field("env").key(name), "%q is not an environment variable name", name)
		}
		if msg := CheckPlaceholders(u.Env[name]); msg != "" {
			add(p.field("env").key(name), "%s", msg)
		}
	}
	for i, name := range u.EnvAllowlist {
		if !envNamePattern.MatchString(name) {
			add(p.field("envAllowlist").index(i), "%q is not an environment variable name", name)
		}
	}
	for _, name := range sortedMapKeys(u.Headers) {
		if msg := CheckPlaceholders(u.Headers[name]); msg != "" {
			add(p.field("headers").key(name), "%s", msg)
		}
	}
	if u.Timeout < 0 {
		add(p.field("timeout"), "must not be negative, got %v", u.Timeout)
	}
	out = append(out, u.sandboxIssues(p)...)
	out = append(out, u.oauthIssues(p)...)
	out = append(out, globIssues(p.field("includeTools"), u.IncludeTools)...)
	out = append(out, globIssues(p.field("excludeTools"), u.ExcludeTools)...)
	return out
}

// placeholderPattern finds ${VAR} placeholders.
var placeholderPattern = regexp.MustCompile(`\$\{([^}]*)\}`)

// CheckPlaceholders returns why a value's ${VAR} placeholders are malformed,
// or "". It never looks at the environment.
func CheckPlaceholders(value string) string {
	for _, m := range placeholderPattern.FindAllStringSubmatch(value, -1) {
		if !envNamePattern.MatchString(m[1]) {
			return fmt.Sprintf("placeholder %q does not name an environment variable; write ${NAME} with letters, digits and '_'", m[0])
		}
	}
	if strings.Count(value, "${") != len(placeholderPattern.FindAllString(value, -1)) {
		return "has a \"${\" without its closing \"}\""
	}
	return ""
}

// ExpandPlaceholders replaces every ${VAR} in value using lookup. It
// returns the names of variables that are not set; their placeholders are
// left empty. The result may hold secrets: never log it.
func ExpandPlaceholders(value string, lookup func(string) (string, bool)) (string, []string) {
	var missing []string
	out := placeholderPattern.ReplaceAllStringFunc(value, func(m string) string {
		name := m[2 : len(m)-1]
		v, ok := lookup(name)
		if !ok {
			missing = append(missing, name)
		}
		return v
	})
	return out, missing
}

func sortedMapKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// Validate checks an upstreams section on its own, as Config.Validate
// does; keys read upstreams.servers["id"].key.
func (c UpstreamsConfig) Validate() error {
	var problems []Problem
	for _, is := range c.issues(keyPath{}.field("upstreams")) {
		problems = append(problems, Problem{Key: is.path.String(), Message: is.msg})
	}
	return validationError(problems)
}

// sandboxIssues checks the sandbox settings of one server.
func (u Upstream) sandboxIssues(p keyPath) []issue {
	var out []issue
	add := func(p keyPath, format string, args ...any) { out = append(out, newIssue(p, format, args...)) }
	if u.Sandbox != "" && u.Sandbox != SandboxDefault && u.Sandbox != SandboxNone {
		add(p.field("sandbox"), "unknown sandbox %q; allowed: %s (confined, the default), %s (runs with CodeCall's own rights)", u.Sandbox, SandboxDefault, SandboxNone)
	}
	settings := []struct {
		key string
		set bool
	}{{"allowNetwork", u.AllowNetwork}, {"paths", len(u.Paths) > 0}, {"maxMemory", u.MaxMemory != 0}, {"maxProcesses", u.MaxProcesses != 0}}
	if u.Transport() != UpstreamStdio {
		if u.Sandbox != "" {
			settings = append(settings, struct {
				key string
				set bool
			}{"sandbox", true})
		}
		for _, k := range settings {
			if k.set {
				add(p.field(k.key), "only applies to stdio servers (this one has a url and runs elsewhere)")
			}
		}
		return out
	}
	if u.Sandbox == SandboxNone {
		for _, k := range settings {
			if k.set {
				add(p.field(k.key), "has no effect with sandbox: none; remove it, or remove sandbox: none to confine the server")
			}
		}
		return out
	}
	for i, path := range u.Paths {
		if _, ok := parseViewPath(path, "/home"); !ok {
			add(p.field("paths").index(i), "%q must be an absolute path other than / (or start with ~/), with :ro at the end for read-only", path)
		}
	}
	if u.MaxMemory < 0 {
		add(p.field("maxMemory"), "must not be negative, got %d", u.MaxMemory)
	}
	if u.MaxProcesses < 0 {
		add(p.field("maxProcesses"), "must not be negative, got %d", u.MaxProcesses)
	}
	return out
}
