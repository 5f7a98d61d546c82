package gateway

import (
	"fmt"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/codecall-go/codecall/openapi"
	"github.com/codecall-go/codecall/presets"
)

// BaselineEnv are the variables of CodeCall's own environment that every
// stdio upstream receives when they are set, because interpreters and
// package runners (node, npx, uvx, python) do not start without them. The
// list follows the official TypeScript SDK's default environment. Anything
// else must be listed in envAllowlist or set in env.
func BaselineEnv() []string {
	if runtime.GOOS == "windows" {
		return []string{"APPDATA", "HOMEDRIVE", "HOMEPATH", "LOCALAPPDATA", "PATH", "PATHEXT", "PROCESSOR_ARCHITECTURE",
			"SYSTEMDRIVE", "SYSTEMROOT", "TEMP", "TMP", "USERNAME", "USERPROFILE", "PROGRAMFILES"}
	}
	return []string{"HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "TMPDIR", "LANG"}
}

// resolved is an upstream's settings with its placeholders filled in. It
// holds secrets: it is never logged or put in an error.
type resolved struct {
	env     []string          // the child's whole environment, NAME=value
	headers map[string]string // HTTP headers
	query   map[string]string // query parameters of an OpenAPI app's requests
	// clientCreds is an OpenAPI app's OAuth client, placeholders filled in.
	clientCreds *openapi.ClientCredentials
	secrets     []string // every value that came from a placeholder
}

// resolve fills in ${VAR} placeholders from lookup and builds the child's
// environment, which tells the child that depth gateways run above it
// (this one included). Errors name variables, never values.
func resolve(u presets.Upstream, lookup func(string) (string, bool), depth int) (resolved, error) {
	var r resolved
	var missing []string
	expand := func(v string) string {
		out, miss := presets.ExpandPlaceholders(v, lookup)
		missing = append(missing, miss...)
		if out != v {
			for _, m := range placeholderValues(v, lookup) {
				r.secrets = append(r.secrets, m)
			}
		}
		return out
	}
	if u.Transport() == presets.UpstreamStdio {
		vars := map[string]string{}
		for _, name := range append(BaselineEnv(), u.EnvAllowlist...) {
			if v, ok := lookup(name); ok && !strings.HasPrefix(v, "()") {
				vars[name] = v
			}
		}
		for name, v := range u.Env {
			vars[name] = expand(v)
		}
		// Last, so that neither env nor envAllowlist can reset the count.
		vars[presets.EnvGatewayDepth] = strconv.Itoa(depth)
		names := make([]string, 0, len(vars))
		for n := range vars {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			r.env = append(r.env, n+"="+vars[n])
		}
	} else {
		r.headers = make(map[string]string, len(u.Headers))
		for name, v := range u.Headers {
			r.headers[name] = expand(v)
		}
		resolveOpenAPIAuth(u, &r, expand)
	}
	if len(missing) > 0 {
		slices.Sort(missing)
		missing = slices.Compact(missing)
		refs := make([]string, len(missing))
		for i, m := range missing {
			refs[i] = "${" + m + "}"
		}
		return r, fmt.Errorf("%s: environment variable not set; export it before starting codecall, or reload after setting it", strings.Join(refs, ", "))
	}
	return r, nil
}

// placeholderValues returns the values the placeholders of v resolve to.
func placeholderValues(v string, lookup func(string) (string, bool)) []string {
	var out []string
	for {
		i := strings.Index(v, "${")
		if i < 0 {
			return out
		}
		j := strings.IndexByte(v[i:], '}')
		if j < 0 {
			return out
		}
		if val, ok := lookup(v[i+2 : i+j]); ok && val != "" {
			out = append(out, val)
		}
		v = v[i+j+1:]
	}
}

// redactor removes secret values from text CodeCall produces about an
// upstream (errors, the child's stderr, tool descriptions), so a server
// that echoes its token cannot leak it into logs or discovery.
//
// learnt, when set, holds the secrets of an OAuth upstream learnt while it
// runs (tokens, which change with every refresh); copies of a redactor
// share it.
type redactor struct {
	r      *strings.Replacer
	learnt *learnt
}

func newRedactor(secrets []string) redactor {
	var pairs []string
	// Longest first, so a secret containing another is removed whole.
	sort.Slice(secrets, func(i, j int) bool { return len(secrets[i]) > len(secrets[j]) })
	for _, s := range secrets {
		if len(s) >= 3 {
			pairs = append(pairs, s, "[redacted]")
		}
	}
	if len(pairs) == 0 {
		return redactor{}
	}
	return redactor{r: strings.NewReplacer(pairs...)}
}

func (r redactor) String(s string) string {
	if r.r != nil {
		s = r.r.Replace(s)
	}
	if r.learnt != nil {
		s = r.learnt.String(s)
	}
	return s
}

// active reports whether the redactor removes anything.
func (r redactor) active() bool { return r.r != nil || (r.learnt != nil && r.learnt.any()) }

// learnt are secrets learnt while an upstream runs: every OAuth token the
// gateway reads or receives for it. Safe for concurrent use.
type learnt struct {
	mu   sync.RWMutex
	seen map[string]bool
	r    *strings.Replacer
}

// add learns values; like configured secrets, values shorter than 3 bytes
// are ignored (replacing them would mangle ordinary text).
func (l *learnt) add(vals ...string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	changed := false
	for _, v := range vals {
		if len(v) < 3 || l.seen[v] {
			continue
		}
		if l.seen == nil {
			l.seen = map[string]bool{}
		}
		l.seen[v] = true
		changed = true
	}
	if !changed {
		return
	}
	all := make([]string, 0, len(l.seen))
	for v := range l.seen {
		all = append(all, v)
	}
	sort.Slice(all, func(i, j int) bool {
		return len(all[i]) > len(all[j]) || (len(all[i]) == len(all[j]) && all[i] < all[j])
	})
	pairs := make([]string, 0, 2*len(all))
	for _, v := range all {
		pairs = append(pairs, v, "[redacted]")
	}
	l.r = strings.NewReplacer(pairs...)
}

func (l *learnt) any() bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return l.r != nil
}

func (l *learnt) String(s string) string {
	l.mu.RLock()
	r := l.r
	l.mu.RUnlock()
	if r == nil {
		return s
	}
	return r.Replace(s)
}
