package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/codecall-go/codecall/gateway"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
	"github.com/codecall-go/codecall/staticcatalog"
	"github.com/codecall-go/codecall/tokenstore"
)

func checkCmd(args []string, stdout, stderr io.Writer) error {
	fs := newFlags("check", stderr)
	configFile := fs.String("config", "", "CodeCall YAML config `file` to validate")
	catalogFile := fs.String("catalog", "", "static catalog `file` to validate")
	upstreamsFile := fs.String("upstreams", "", "upstream servers `file` ({\"mcpServers\": ...}) to validate")
	addr := fs.String("http", "", "report who could reach serve --http `addr` with the token flags given")
	var auth httpAuth
	auth.register(fs)
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if *configFile == "" && *catalogFile == "" && *upstreamsFile == "" && *addr == "" {
		return fmt.Errorf("check needs --config FILE, --catalog FILE, --upstreams FILE and/or --http ADDR")
	}
	problems := 0
	// The config as serve would read it: the file, or the defaults, with
	// the CODECALL_ variables on top either way.
	cfg, cfgErr := loadConfig(*configFile)
	// What serve would read its upstreams from, so that an upstream of
	// either file starting the gateway again on the other is caught too.
	own := ownedBy(*upstreamsFile, *configFile, cfg.Upstreams)
	switch {
	case *configFile != "":
		problems += checkConfig(*configFile, cfg, cfgErr, own, stdout)
	case cfgErr != nil:
		fmt.Fprintf(stdout, "environment: INVALID (CODECALL_ variables)\n%v\n", cfgErr)
		problems++
	case len(codecallVars()) > 0:
		fmt.Fprintf(stdout, "environment: ok (%s)\n", strings.Join(codecallVars(), ", "))
	}
	if *catalogFile != "" {
		tools, err := staticcatalog.Load(*catalogFile)
		if err != nil {
			fmt.Fprintf(stdout, "%s: INVALID\n%v\n", *catalogFile, err)
			problems++
		} else {
			fmt.Fprintf(stdout, "%s: ok (%d tools)\n", *catalogFile, len(tools))
		}
	}
	if *upstreamsFile != "" {
		servers, err := gateway.LoadServers(*upstreamsFile)
		if err == nil {
			err = selfReference(servers, own)
		}
		if err != nil {
			fmt.Fprintf(stdout, "%s: INVALID\n%v\n", *upstreamsFile, err)
			problems++
		} else {
			r := checkUpstreams(servers, *configFile, cfg.Upstreams.TokenDir)
			problems += r.write(stdout, *upstreamsFile, fmt.Sprintf("%d %s", len(servers), plural(len(servers), "server", "servers")))
		}
	}
	if *addr != "" && !checkHTTP(*addr, auth, stdout) {
		problems++
	}
	if problems > 0 {
		return fmt.Errorf("check found %d %s", problems, plural(problems, "problem", "problems"))
	}
	return nil
}

// checkConfig reports on a config file. Its header line says ok only when
// no section below has a problem; it returns the number of problems.
func checkConfig(file string, cfg presets.Config, err error, own ownedFiles, stdout io.Writer) int {
	if err != nil {
		fmt.Fprintf(stdout, "%s: INVALID\n%v\n", file, err)
		return 1
	}
	var r report
	if cfg.Upstreams.File != "" || len(cfg.Upstreams.Servers) > 0 {
		servers, err := gateway.ServersOf(cfg.Upstreams, filepath.Dir(file))
		if err == nil {
			err = selfReference(servers, own)
		}
		if err != nil {
			r.problem("upstreams", "INVALID\n%v", err)
		} else {
			r.merge(checkUpstreams(servers, file, cfg.Upstreams.TokenDir))
		}
	}
	r.line("transport: a request body or stdin line may hold up to %d bytes", cfg.Transport.MaxRequestBytes)
	r.line("embeddings: %s", embeddingsLine(cfg.Search.Embeddings))
	if line, ok := policyLine(cfg); ok {
		r.line("policy: %s", line)
	} else {
		r.problem("policy", "%s", line)
	}
	if line, ok := isolationLine(cfg); ok {
		r.line("isolation: %s", line)
	} else {
		r.problem("isolation", "%s", line)
	}
	if line, ok := pythonLine(cfg); ok {
		r.line("python: %s", line)
	} else {
		r.problem("python", "%s", line)
	}
	if line, ok := stateLine(cfg.State); ok {
		r.line("state: %s", line)
	} else {
		r.problem("state", "%s", line)
	}
	return r.write(stdout, file, fmt.Sprintf("mode %s, surfaces %v, preset %s, timeout %s, %d tool calls per run",
		cfg.Mode, cfg.Surfaces, cfg.Preset, cfg.VM.Timeout, cfg.VM.MaxToolCalls))
}

// report collects the lines of one checked file, so that its header,
// printed first, can say whether any of them is a problem.
type report struct {
	lines    []string
	problems []string // the sections with a problem
	warnings int
}

func (r *report) line(format string, args ...any) {
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

func (r *report) problem(section, format string, args ...any) {
	r.problems = append(r.problems, section)
	r.line(section+": "+format, args...)
}

func (r *report) warning(format string, args ...any) {
	r.warnings++
	r.line("warning: "+format, args...)
}

func (r *report) merge(o report) {
	r.lines = append(r.lines, o.lines...)
	r.problems = append(r.problems, o.problems...)
	r.warnings += o.warnings
}

// write prints the header, "FILE: ok (summary)" or "FILE: N problems
// (sections)", then the lines, and returns the number of problems.
func (r report) write(w io.Writer, name, summary string) int {
	switch {
	case len(r.problems) > 0:
		fmt.Fprintf(w, "%s: %d %s (%s)\n", name, len(r.problems), plural(len(r.problems), "PROBLEM", "PROBLEMS"), strings.Join(r.problems, ", "))
	case r.warnings > 0:
		fmt.Fprintf(w, "%s: ok with %d %s (%s)\n", name, r.warnings, plural(r.warnings, "warning", "warnings"), summary)
	default:
		fmt.Fprintf(w, "%s: ok (%s)\n", name, summary)
	}
	for _, l := range r.lines {
		fmt.Fprintf(w, "  %s\n", strings.ReplaceAll(l, "\n", "\n  "))
	}
	return len(r.problems)
}

// checkUpstreams looks for what would keep an upstream from starting
// without starting it: a stdio command that is not on PATH (or not an
// executable file), and ${VAR} placeholders whose variable is not set
// (serve would report the upstream unavailable until they are).
func checkUpstreams(servers map[string]presets.Upstream, configFile, tokenDir string) report {
	var r report
	ids := make([]string, 0, len(servers))
	for id := range servers {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		u := servers[id]
		if !u.IsEnabled() {
			r.line("%s: disabled", id)
			continue
		}
		if u.Transport() == presets.UpstreamStdio {
			path, err := lookCommand(u)
			if err != nil {
				r.problem(id, "command %q cannot be started: %v", u.Command, err)
			} else {
				r.line("%s: stdio, command %s, sandbox %s", id, path, u.SandboxProfile())
			}
			switch {
			case err != nil:
			case u.SandboxProfile() == presets.SandboxNone:
				r.warning("%s: sandbox: none runs the server with CodeCall's own rights: every file and the network CodeCall can reach", id)
			default:
				if view, err := gateway.CheckSandbox(u, os.Getenv("PATH")); err != nil {
					r.problem(id, "%v", err)
				} else {
					r.line("%s: sees %s", id, describeView(view, u.AllowNetwork))
				}
			}
		} else if u.Transport() == presets.UpstreamOpenAPI {
			// Reading the document is local for a file; a URL is fetched,
			// as serve would at start.
			if summary, skipped, err := checkOpenAPI(u); err != nil {
				r.problem(id, "%v", err)
			} else {
				r.line("%s: openapi, %s", id, summary)
				for _, s := range skipped {
					r.warning("%s: operation %s %s (%s) is not served: %s", id, s.Method, s.Path, s.Name, s.Reason)
				}
			}
		} else {
			r.line("%s: %s, %s, sandbox %s", id, u.Transport(), u.URL, u.SandboxProfile())
			checkOAuth(&r, id, u, tokenDir)
		}
		var missing []string
		for _, v := range u.Env {
			_, m := presets.ExpandPlaceholders(v, os.LookupEnv)
			missing = append(missing, m...)
		}
		for _, v := range append(slices.Collect(maps.Values(u.Headers)), slices.Collect(maps.Values(u.Auth.Query))...) {
			_, m := presets.ExpandPlaceholders(v, os.LookupEnv)
			missing = append(missing, m...)
		}
		_, m := presets.ExpandPlaceholders(u.Auth.Bearer, os.LookupEnv)
		missing = append(missing, m...)
		sort.Strings(missing)
		for _, m := range slices.Compact(missing) {
			r.warning("%s: ${%s} is not set in this environment; serve would report upstream %q as unavailable until it is (export it, then start or reload)", id, m, id)
		}
	}
	return r
}

// describeView says in one line what a sandboxed upstream can reach: the
// writable paths, the read-only paths that are not the runtime's, and the
// network.
func describeView(view []sandbox.ViewPath, network bool) string {
	var rw, ro []string
	for _, v := range view {
		switch {
		case v.Write:
			rw = append(rw, v.Path)
		case !strings.HasPrefix(v.Path, "/usr") && !strings.HasPrefix(v.Path, "/etc/") && !slices.Contains([]string{"/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/nix/store"}, v.Path):
			ro = append(ro, v.Path)
		}
	}
	none := func(l []string) string {
		if len(l) == 0 {
			return "none"
		}
		return strings.Join(l, ", ")
	}
	net := "network off"
	if network {
		net = "the host's network"
	}
	return fmt.Sprintf("the runtime directories read-only, read-write: %s, read-only: %s, %s", none(rw), none(ro), net)
}

// lookCommand finds an upstream's command as the gateway would start it:
// a bare name on PATH, a relative path from the upstream's cwd.
func lookCommand(u presets.Upstream) (string, error) {
	cmd := u.Command
	if strings.ContainsRune(cmd, filepath.Separator) || strings.ContainsRune(cmd, '/') {
		if !filepath.IsAbs(cmd) && u.Cwd != "" {
			cmd = filepath.Join(u.Cwd, cmd)
		}
	}
	return exec.LookPath(cmd)
}

// codecallVars lists the CODECALL_ variables that configure CodeCall.
func codecallVars() []string {
	var out []string
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		if strings.HasPrefix(name, presets.EnvPrefix) && name != presets.EnvGatewayDepth {
			out = append(out, name)
		}
	}
	sort.Strings(out)
	return out
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// checkHTTP reports who could reach serve --http addr with these flags,
// by the rule serve obeys; it is not ok when serve would refuse.
func checkHTTP(addr string, auth httpAuth, stdout io.Writer) bool {
	bearer, err := auth.bearer()
	if err == nil {
		var e exposure
		if e, err = decideExposure(addr, bearer, auth.insecure); err == nil {
			fmt.Fprintf(stdout, "http %s: %s\n", addr, e)
			return true
		}
	}
	fmt.Fprintf(stdout, "http %s: REFUSED: serve would not start: %v\n", addr, err)
	return false
}

// embeddingsLine says whether search would use an embedding model, by
// making it as serve would and embedding one text. A model that does not
// work is reported, not failed: serve would search lexically.
func embeddingsLine(cfg presets.EmbeddingsConfig) string {
	if cfg.Provider == presets.EmbeddingsOff {
		return "off (lexical search)"
	}
	e, err := middleware.NewEmbedder(cfg)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
		defer cancel()
		var vecs [][]float32
		if vecs, err = e.Embed(ctx, []string{"create an issue"}); err == nil && len(vecs) != 1 {
			err = fmt.Errorf("got %d vectors for 1 text", len(vecs))
		}
		if err == nil {
			return fmt.Sprintf("ok (%s, dimension %d, weight %v)", cfg.Provider, len(vecs[0]), cfg.Weight)
		}
	}
	return fmt.Sprintf("UNAVAILABLE (serve would log a warning and search lexically): %v", err)
}

// policyLine loads and compiles the configured Rego policy as serve
// would, and describes it, or its problems with file and line.
func policyLine(cfg presets.Config) (string, bool) {
	if len(cfg.Policy.Paths) == 0 {
		return "built-in default (read-only tools run, and non-destructive tools that do not act on the open world; every other tool asks for approval)", true
	}
	e, err := policy.LoadEngine(context.Background(), cfg.Policy.Paths, cfg.Policy.Query)
	if err != nil {
		return fmt.Sprintf("INVALID\n%v", err), false
	}
	return fmt.Sprintf("ok (%d modules, query %s)", len(e.Files()), e.Query()), true
}

// isolationLine says where plans would run under cfg on this host, by
// starting one sandboxed worker when the config asks for process
// isolation. It is not ok when locked_down could not start.
func isolationLine(cfg presets.Config) (string, bool) {
	if cfg.VM.Isolation != presets.IsolationProcess {
		return "inprocess (as configured: plans run in the server's own process)", true
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := []sandbox.Option{sandbox.WithLimits(cfg.VM), sandbox.WithLogger(quiet), sandbox.WithCgroup(sandbox.CgroupMode(cfg.Sandbox.Cgroup))}
	if cfg.Sandbox.Command != "" {
		opts = append(opts, sandbox.WithCommand(cfg.Sandbox.Command))
	}
	conf, err := sandbox.Check(context.Background(), opts...)
	switch {
	case err == nil:
		return "process (" + conf.String() + ")", true
	case cfg.Preset == presets.LockedDown:
		return fmt.Sprintf("UNAVAILABLE: locked_down needs sandboxed worker processes and the server would refuse to start: %v", err), false
	}
	return fmt.Sprintf("inprocess (FALLBACK: vm.isolation is process, but sandboxed worker processes cannot start here: %v)", err), true
}

// pythonLine says whether Python plans would run under cfg on this host:
// the interpreter found (3.11 or later), and the confinement of a Python
// worker, which it starts once; or why Python plans are off. It is not ok
// when vm.languages lists python and no Python worker can start.
func pythonLine(cfg presets.Config) (string, bool) {
	py, err := sandbox.FindPython(context.Background(), cfg.Sandbox.Python)
	if !slices.Contains(cfg.VM.Languages, presets.LanguagePython) {
		if err != nil {
			return fmt.Sprintf("off (vm.languages does not list python; and no usable interpreter here: %v)", err), true
		}
		return fmt.Sprintf("off (vm.languages does not list python; CPython %s at %s would run them)", py.Version, py.Executable), true
	}
	if err != nil {
		return fmt.Sprintf("UNAVAILABLE: vm.languages lists python, and Python plans would be refused: %v", err), false
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	opts := []sandbox.Option{sandbox.WithLimits(cfg.VM), sandbox.WithLogger(quiet), sandbox.WithCgroup(sandbox.CgroupMode(cfg.Sandbox.Cgroup)),
		sandbox.WithPython(py)}
	if cfg.Sandbox.Command != "" {
		opts = append(opts, sandbox.WithCommand(cfg.Sandbox.Command))
	}
	conf, err := sandbox.Check(context.Background(), opts...)
	if err != nil {
		return fmt.Sprintf("UNAVAILABLE: vm.languages lists python, and CPython %s at %s cannot start in a sandboxed worker here, "+
			"so Python plans would be refused: %v", py.Version, py.Executable, err), false
	}
	return fmt.Sprintf("on (CPython %s at %s, in process isolation: %s)", py.Version, py.Executable, conf.String()), true
}

// checkOAuth reports the login state of an HTTP or SSE upstream: a line
// when a token is stored for it, a warning when its entry asks for OAuth
// and none is (serve would report it unauthenticated) or its client
// secret's variable is not set. It reads the token file, never prints it.
func checkOAuth(r *report, id string, u presets.Upstream, tokenDir string) {
	if _, err := u.OAuthSecret(os.LookupEnv); err != nil {
		r.warning("%s: %v; serve would report it unauthenticated", id, err)
	}
	if tokenDir == "" {
		d, err := tokenstore.DefaultDir()
		if err != nil {
			if u.OAuth != nil {
				r.warning("%s: %v", id, err)
			}
			return
		}
		tokenDir = d
	}
	rec, err := tokenstore.ForUpstream(tokenstore.NewDir(tokenDir), id, u.URL, nil).Record(context.Background())
	switch {
	case err == nil && !rec.Token.IsExpired():
		r.line("%s: OAuth, logged in (token file %s)", id, tokenstore.NewDir(tokenDir).File(id))
	case err == nil && rec.Token.RefreshToken != "":
		r.line("%s: OAuth, access token expired, refreshed at the next call (token file %s)", id, tokenstore.NewDir(tokenDir).File(id))
	case err == nil:
		r.warning("%s: OAuth token expired and cannot be refreshed; serve would report it unauthenticated until you run: codecall auth login %s", id, id)
	case errors.Is(err, tokenstore.ErrNotFound):
		if u.OAuth != nil {
			r.warning("%s: OAuth, not logged in; serve would report it unauthenticated until you run: codecall auth login %s", id, id)
		}
	default:
		r.warning("%s: %v", id, err)
	}
}
