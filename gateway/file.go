package gateway

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sort"
	"strings"
	"time"

	"github.com/codecall-go/codecall/internal/jsonpos"
	"github.com/codecall-go/codecall/presets"
)

// LoadServers reads a JSON file in the usual MCP client format,
// {"mcpServers": {"id": {...}}} (the key "servers" is accepted too), and
// returns its servers. Every problem in the file is reported at once, each
// naming its entry; see ParseServers.
func LoadServers(path string) (map[string]presets.Upstream, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("upstreams: %w", err)
	}
	servers, err := ParseServers(data)
	if err != nil {
		return nil, fmt.Errorf("upstreams file %s: %w", path, err)
	}
	return servers, nil
}

// entry is one server as written in a client configuration file. Timeout
// is a Go duration string ("30s"), as in the YAML configuration.
type entry struct {
	Type             string            `json:"type"`
	Command          string            `json:"command"`
	Args             []string          `json:"args"`
	Env              map[string]string `json:"env"`
	EnvAllowlist     []string          `json:"envAllowlist"`
	Cwd              string            `json:"cwd"`
	URL              string            `json:"url"`
	Headers          map[string]string `json:"headers"`
	Enabled          *bool             `json:"enabled"`
	Disabled         *bool             `json:"disabled"`
	Timeout          string            `json:"timeout"`
	IncludeTools     []string          `json:"includeTools"`
	ExcludeTools     []string          `json:"excludeTools"`
	RequiresApproval *bool             `json:"requiresApproval"`
	Prefix           *bool             `json:"prefix"`
	Sandbox          string            `json:"sandbox"`
	AllowNetwork     bool              `json:"allowNetwork"`
	Paths            []string          `json:"paths"`
	MaxMemory        json.RawMessage   `json:"maxMemory"`
	MaxProcesses     int               `json:"maxProcesses"`
	OAuth            json.RawMessage   `json:"oauth"`

	// Keys other clients write into the same file; accepted and ignored
	// so that an existing file can be used as it is.
	AutoApprove   json.RawMessage `json:"autoApprove"`
	AlwaysAllow   json.RawMessage `json:"alwaysAllow"`
	Description   json.RawMessage `json:"description"`
	TransportType json.RawMessage `json:"transportType"`
}

const entryKeys = "type, command, args, env, envAllowlist, cwd, url, headers, enabled (or disabled), timeout, includeTools, excludeTools, requiresApproval, prefix, sandbox, allowNetwork, paths, maxMemory, maxProcesses, oauth"

// oauthKeys are the keys of an entry's oauth object.
const oauthKeys = "clientId, clientSecretEnv, scopes, redirectPort, authServerMetadataUrl"

// ParseServers decodes a client configuration file. Unknown keys, wrong
// types and invalid entries are errors naming the entry, so a typo cannot
// silently drop a server; problems that show only at run time (a command
// that does not exist, a URL that does not answer) are reported by the
// Gateway for that server alone.
func ParseServers(data []byte) (map[string]presets.Upstream, error) {
	var top map[string]json.RawMessage
	if err := json.Unmarshal(data, &top); err != nil {
		return nil, fmt.Errorf("not a JSON object: %w", jsonpos.Locate(data, 0, err))
	}
	raw, ok := top["mcpServers"]
	key := "mcpServers"
	if !ok {
		raw, ok = top["servers"]
		key = "servers"
	}
	if !ok {
		return nil, errors.New(`no "mcpServers" key; the file must look like {"mcpServers": {"name": {"command": "...", "args": [...]}}}`)
	}
	var entries map[string]json.RawMessage
	if err := json.Unmarshal(raw, &entries); err != nil || entries == nil {
		return nil, fmt.Errorf("%q must be an object mapping server ids to their settings", key)
	}
	// Where each entry starts, so that a problem inside one has a line and
	// a column; the file is valid JSON by now, so this cannot fail.
	offsets, _ := jsonpos.MemberOffsets(data, key)
	ids := make([]string, 0, len(entries))
	for id := range entries {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	servers := make(map[string]presets.Upstream, len(entries))
	var problems []string
	for _, id := range ids {
		u, err := decodeEntry(entries[id])
		if err != nil {
			if off, ok := offsets[id]; ok {
				err = jsonpos.Locate(data, off, err)
			}
			problems = append(problems, fmt.Sprintf("mcpServers[%q]: %v", id, err))
			continue
		}
		for _, p := range presets.UpstreamIssues(id, u) {
			problems = append(problems, p.String())
		}
		servers[id] = u
	}
	switch len(problems) {
	case 0:
		return servers, nil
	case 1:
		return nil, errors.New(problems[0])
	default:
		return nil, fmt.Errorf("%d problems:\n  %s", len(problems), strings.Join(problems, "\n  "))
	}
}

func decodeEntry(raw json.RawMessage) (presets.Upstream, error) {
	var e entry
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&e); err != nil {
		if strings.Contains(err.Error(), "unknown field") {
			return presets.Upstream{}, fmt.Errorf("%v; allowed keys: %s", err, entryKeys)
		}
		return presets.Upstream{}, err
	}
	u := presets.Upstream{
		Type: e.Type, Command: e.Command, Args: e.Args, Env: e.Env, EnvAllowlist: e.EnvAllowlist,
		Cwd: e.Cwd, URL: e.URL, Headers: e.Headers, Enabled: e.Enabled,
		IncludeTools: e.IncludeTools, ExcludeTools: e.ExcludeTools, RequiresApproval: e.RequiresApproval,
		Prefix: e.Prefix, Sandbox: e.Sandbox, AllowNetwork: e.AllowNetwork, Paths: e.Paths, MaxProcesses: e.MaxProcesses,
	}
	if len(e.MaxMemory) > 0 {
		n, err := byteSize(e.MaxMemory)
		if err != nil {
			return u, fmt.Errorf("maxMemory: %w", err)
		}
		u.MaxMemory = n
	}
	if len(e.OAuth) > 0 && string(e.OAuth) != "null" {
		var o presets.UpstreamOAuth
		od := json.NewDecoder(bytes.NewReader(e.OAuth))
		od.DisallowUnknownFields()
		if err := od.Decode(&o); err != nil {
			if strings.Contains(err.Error(), "unknown field") {
				return u, fmt.Errorf("oauth: %v; allowed keys: %s", err, oauthKeys)
			}
			return u, fmt.Errorf("oauth: %w", err)
		}
		u.OAuth = &o
	}
	if e.Disabled != nil {
		if e.Enabled != nil && *e.Enabled == *e.Disabled {
			return u, errors.New("enabled and disabled contradict each other; keep one")
		}
		on := !*e.Disabled
		u.Enabled = &on
	}
	if e.Timeout != "" {
		d, err := time.ParseDuration(e.Timeout)
		if err != nil {
			return u, fmt.Errorf("timeout: %q is not a duration such as \"30s\" or \"2m\"", e.Timeout)
		}
		u.Timeout = d
	}
	return u, nil
}

// byteSize reads a byte size written as a JSON number of bytes or a
// string such as "512MiB".
func byteSize(raw json.RawMessage) (int64, error) {
	var n int64
	if err := json.Unmarshal(raw, &n); err == nil {
		return n, nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return 0, fmt.Errorf("%s is not a byte size; write a number of bytes or a string such as \"512MiB\"", raw)
	}
	return presets.ParseByteSize(s)
}
