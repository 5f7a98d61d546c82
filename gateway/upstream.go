package gateway

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/openapi"
	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/sandbox"
	"github.com/codecall-go/codecall/toolerr"
)

// The states of an upstream.
const (
	stateIdle     = "idle"
	stateStarting = "starting"
	stateReady    = "ready"
	stateFailed   = "failed"
	stateClosed   = "closed"
)

// lateNotifications is how long a finished call still accepts its
// notifications: servers (mcp-go's among them) may write a call's last
// progress notifications after its response.
const lateNotifications = 250 * time.Millisecond

// UnavailablePrefix starts the error text of a call to an upstream that is
// not running, so clients and plans can tell it from the tool's own errors.
const UnavailablePrefix = "UNAVAILABLE: "

// upstream is one upstream server and its persistent client.
type upstream struct {
	g       *Gateway
	id      string
	cfg     presets.Upstream
	res     resolved
	resErr  error
	envHash [32]byte
	red     redactor
	include presets.Globs
	exclude presets.Globs
	timeout time.Duration
	// callTimeout is the timeout of one call as configured (timeout is
	// the ceiling, which an OpenAPI app raises to its longest operation's).
	callTimeout time.Duration

	mu         sync.Mutex
	state      string
	cl         *client.Client
	gen        uint64
	err        string // why it last failed, redacted
	failures   int
	upSince    time.Time
	downSince  time.Time // when it went down; zero while ready
	retryAt    time.Time // when the scheduled restart runs
	connecting chan struct{}
	retry      *time.Timer
	pipe       *stderrPipe  // the current child's stderr, stdio only
	diedWhy    string       // set when the connection died while starting
	auth       *authFailure // why the upstream refused the gateway's credentials; nil otherwise

	caps mcp.ServerCapabilities // what the running upstream offers; u.mu

	syncMu    sync.Mutex          // serialises list updates
	refreshMu sync.Mutex          // serialises re-listings after tools/list_changed
	listed    []mcp.Tool          // the upstream's last tools/list, kept by the globs
	held      map[string]bool     // upstream tool names held back by the pins -> new (not changed)
	tools     map[string]mcp.Tool // gateway name -> tool as registered
	prompts   map[string]string   // gateway name -> upstream prompt name
	resources map[string]bool     // resource URIs registered
	templates map[string]bool     // resource URI templates registered

	callsMu sync.Mutex
	calls   map[string]*inflight // gateway progress token -> call

	specHash [32]byte // the OpenAPI document served (openapi only); u.mu
}

// inflight is a call forwarded to the upstream, so that its notifications
// can reach the client that made it.
type inflight struct {
	ctx   context.Context
	token mcp.ProgressToken // the client's own token, or nil
	done  atomic.Bool       // answered; kept a moment for late notifications
}

func (g *Gateway) newUpstream(id string, cfg presets.Upstream) *upstream {
	u := &upstream{g: g, id: id, cfg: cfg, state: stateIdle, tools: map[string]mcp.Tool{}, calls: map[string]*inflight{},
		prompts: map[string]string{}, resources: map[string]bool{}, templates: map[string]bool{}}
	u.res, u.resErr = resolve(cfg, g.opts.lookup, g.opts.depth+1)
	u.envHash = hashResolved(u.res)
	u.red = newRedactor(u.res.secrets)
	if t := cfg.Transport(); t == presets.UpstreamHTTP || t == presets.UpstreamSSE {
		// OAuth tokens are learnt as the upstream runs.
		u.red.learnt = &learnt{}
	}
	// Validated by New and Reload, so compiling cannot fail here.
	u.include, _ = presets.CompileGlobs(cfg.IncludeTools)
	u.exclude, _ = presets.CompileGlobs(cfg.ExcludeTools)
	u.timeout = cfg.Timeout
	if u.timeout <= 0 {
		u.timeout = DefaultCallTimeout
	}
	u.callTimeout = u.timeout
	if cfg.Transport() == presets.UpstreamOpenAPI {
		u.timeout = openapiCeiling(cfg, u.timeout)
	}
	return u
}

func hashResolved(r resolved) [32]byte {
	b, _ := json.Marshal(struct {
		Env         []string
		Headers     map[string]string
		Query       map[string]string
		ClientCreds *openapi.ClientCredentials
	}{r.env, r.headers, r.query, r.clientCreds})
	return sha256.Sum256(b)
}

// envChanged reports whether the environment now resolves the upstream's
// placeholders or allowlist to different values.
func (u *upstream) envChanged() bool {
	r, err := resolve(u.cfg, u.g.opts.lookup, u.g.opts.depth+1)
	return (err == nil) != (u.resErr == nil) || hashResolved(r) != u.envHash
}

func (u *upstream) status() Status {
	u.mu.Lock()
	defer u.mu.Unlock()
	u.syncMu.Lock()
	n := len(u.tools)
	var held []string
	for name := range u.held {
		held = append(held, name)
	}
	u.syncMu.Unlock()
	sort.Strings(held)
	st := Status{ID: u.id, Transport: u.cfg.Transport(), State: u.state, Tools: n, Error: u.err, Restarts: u.failures,
		Sandbox: u.cfg.SandboxProfile(), Quarantined: held}
	if u.state == stateFailed {
		st.DownSince, st.RetryAt = u.downSince, u.retryAt
	}
	return st
}

// connect starts the upstream unless it is running; concurrent callers
// share one attempt. The error says why the upstream is unavailable.
func (u *upstream) connect(ctx context.Context) error {
	u.mu.Lock()
	switch {
	case u.state == stateReady:
		u.mu.Unlock()
		return nil
	case u.state == stateClosed:
		u.mu.Unlock()
		return fmt.Errorf("upstream %q: stopped", u.id)
	case u.connecting != nil:
		ch := u.connecting
		u.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		return u.failure()
	}
	ch := make(chan struct{})
	u.connecting = ch
	u.state = stateStarting
	u.diedWhy = ""
	u.gen++
	gen := u.gen
	if u.retry != nil {
		u.retry.Stop()
		u.retry = nil
	}
	u.mu.Unlock()

	began := time.Now()
	progress := u.g.opts.progress
	if progress != nil {
		progress(StartEvent{Upstream: u.id, Transport: u.cfg.Transport()})
	}
	cl, lst, err := u.dial(gen)
	u.g.nameMu.Lock()
	defer u.g.nameMu.Unlock()
	if err == nil {
		// A name another upstream already serves would be shadowed or
		// would shadow it; refuse rather than serve the wrong tool.
		if cerr := u.g.nameConflicts(u, lst); cerr != nil {
			_ = cl.Close()
			cl, err = nil, cerr
		}
	}

	u.mu.Lock()
	u.connecting = nil
	close(ch)
	if u.state == stateClosed {
		pipe := u.pipe
		u.pipe = nil
		u.mu.Unlock()
		stopClient(cl, pipe)
		return fmt.Errorf("upstream %q: stopped", u.id)
	}
	if err == nil && u.diedWhy != "" {
		// The process exited between the handshake and now.
		err = errors.New(u.diedWhy)
		pipe := u.pipe
		u.pipe = nil
		go stopClient(cl, pipe)
	}
	if err != nil {
		msg := u.red.String(err.Error())
		u.auth = nil
		if af := (*authFailure)(nil); errors.As(err, &af) {
			u.auth = af
		}
		u.fail(msg)
		u.mu.Unlock()
		if progress != nil {
			progress(StartEvent{Upstream: u.id, Transport: u.cfg.Transport(), Done: true, Elapsed: time.Since(began), Err: errors.New(msg)})
		}
		return fmt.Errorf("upstream %q: %s", u.id, msg)
	}
	u.cl = cl
	u.caps = cl.GetServerCapabilities()
	u.state = stateReady
	u.err = ""
	u.auth = nil
	u.upSince = time.Now()
	u.downSince, u.retryAt = time.Time{}, time.Time{}
	u.mu.Unlock()
	u.g.log.Info("gateway: upstream ready", "upstream", u.id, "transport", u.cfg.Transport(),
		"tools", len(lst.tools), "prompts", len(lst.prompts), "resources", len(lst.resources), "resourceTemplates", len(lst.templates))
	u.setTools(lst.tools)
	u.setPrompts(lst.prompts)
	u.setResources(lst.resources, lst.templates)
	if progress != nil {
		progress(StartEvent{Upstream: u.id, Transport: u.cfg.Transport(), Done: true, Elapsed: time.Since(began), Tools: len(lst.tools)})
	}
	return nil
}

// failure returns the last failure as an error, or nil when ready.
func (u *upstream) failure() error {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state == stateReady {
		return nil
	}
	return fmt.Errorf("upstream %q: %s", u.id, u.err)
}

// fail records a failure and schedules a restart with backoff. u.mu held.
func (u *upstream) fail(msg string) {
	if !u.upSince.IsZero() && time.Since(u.upSince) > stableAfter {
		u.failures = 0
	}
	u.upSince = time.Time{}
	if u.downSince.IsZero() {
		u.downSince = time.Now()
	}
	u.failures++
	u.state = stateFailed
	u.err = msg
	delay := u.g.opts.backoffMin << min(u.failures-1, 20)
	if delay > u.g.opts.backoffMax || delay <= 0 {
		delay = u.g.opts.backoffMax
	}
	u.g.log.Error("gateway: upstream unavailable", "upstream", u.id, "reason", msg, "retryIn", delay)
	if u.retry != nil {
		u.retry.Stop()
	}
	u.retryAt = time.Now().Add(delay)
	u.retry = time.AfterFunc(delay, func() {
		u.g.spawn(func() { _ = u.connect(u.g.ctx) })
	})
}

// lost is called when the connection of generation gen died: the process
// exited or the transport failed during a call.
func (u *upstream) lost(gen uint64, why string) {
	u.mu.Lock()
	if u.gen == gen && u.state == stateStarting {
		u.diedWhy = why // connect reports it
	}
	if u.gen != gen || u.state != stateReady {
		u.mu.Unlock()
		return
	}
	cl, pipe := u.cl, u.pipe
	u.cl, u.pipe = nil, nil
	u.fail(u.red.String(why))
	u.mu.Unlock()
	go stopClient(cl, pipe)
}

// close stops the upstream for good and removes its tools.
func (u *upstream) close() {
	u.mu.Lock()
	if u.state == stateClosed {
		u.mu.Unlock()
		return
	}
	u.state = stateClosed
	cl, pipe := u.cl, u.pipe
	u.cl, u.pipe = nil, nil
	if u.retry != nil {
		u.retry.Stop()
	}
	u.mu.Unlock()
	stopClient(cl, pipe)
	u.syncMu.Lock()
	names := make([]string, 0, len(u.tools))
	for n := range u.tools {
		names = append(names, n)
	}
	u.tools = map[string]mcp.Tool{}
	u.syncMu.Unlock()
	u.g.register(u, nil, names)
	u.setPrompts(nil)
	u.setResources(nil, nil)
}

// stopClient closes a client (which stops its process) and then the read
// end of the process's stderr, so that a grandchild still holding stderr
// open cannot keep the drain, and Close, waiting.
func stopClient(cl *client.Client, pipe *stderrPipe) {
	if cl != nil {
		_ = cl.Close()
	}
	if pipe != nil {
		pipe.waitDrained(time.Second)
		_ = pipe.r.Close()
	}
}

// listing is what an upstream serves: its tools and, when it offers them,
// its prompts, resources and resource templates.
type listing struct {
	tools     []mcp.Tool
	prompts   []mcp.Prompt
	resources []mcp.Resource
	templates []mcp.ResourceTemplate
}

// dial starts a client, performs the handshake, sets the upstream's log
// level and lists what it serves. When an OAuth upstream refuses an access
// token that has not expired (revoked while the gateway was away), the
// token is marked expired and the dial made once more, which refreshes it.
func (u *upstream) dial(gen uint64) (*client.Client, listing, error) {
	cl, lst, err := u.dialOnce(gen)
	if af := (*authFailure)(nil); errors.As(err, &af) && af.cause != nil && u.refreshAfterRefusal(u.g.ctx, af.cause) {
		return u.dialOnce(gen)
	}
	return cl, lst, err
}

func (u *upstream) dialOnce(gen uint64) (*client.Client, listing, error) {
	if u.resErr != nil {
		return nil, listing{}, u.resErr
	}
	tr, stderr, err := u.transport()
	if err != nil {
		return nil, listing{}, err
	}
	// Sampling and elicitation requests of the upstream are relayed to the
	// client whose call is in flight (relay.go); declaring the handlers
	// declares the capabilities.
	rl := relay{u: u}
	cl := client.NewClient(tr, client.WithSamplingHandler(rl), client.WithElicitationHandler(rl))
	if err := cl.Start(u.g.ctx); err != nil {
		if stderr != nil {
			stderr.closeWriter()
			_ = stderr.r.Close()
		}
		// An SSE server refuses the event stream itself.
		if af := (*authFailure)(nil); errors.As(u.authError(u.g.ctx, err), &af) {
			return nil, listing{}, af
		}
		return nil, listing{}, fmt.Errorf("cannot start: %w%s", err, sandboxStartHint(u.cfg.SandboxProfile(), err))
	}
	if stderr != nil {
		stderr.closeWriter()
		u.mu.Lock()
		u.pipe = stderr
		u.mu.Unlock()
		started := u.g.spawn(func() {
			stderr.drain()
			u.lost(gen, "the process exited"+stderr.buf.suffix())
		})
		if !started {
			_ = cl.Close()
			_ = stderr.r.Close()
			return nil, listing{}, errors.New("the gateway is closing")
		}
	}
	cl.OnNotification(func(n mcp.JSONRPCNotification) { u.notified(gen, n) })
	ctx, cancel := context.WithTimeout(u.g.ctx, u.g.opts.startTimeout)
	defer cancel()
	fail := func(step string, err error) (*client.Client, listing, error) {
		_ = cl.Close()
		if af := (*authFailure)(nil); errors.As(u.authError(ctx, err), &af) {
			return nil, listing{}, af
		}
		if ctx.Err() != nil && errors.Is(err, context.DeadlineExceeded) {
			err = fmt.Errorf("no answer within %v (upstreams.startTimeout)", u.g.opts.startTimeout)
		}
		msg := fmt.Sprintf("%s failed: %v", step, err)
		if stderr != nil {
			// The process's last words usually say why it stopped. The
			// process has gone (or stopped answering); its stderr ends when
			// the sandbox's launcher has gone too, which a loaded machine
			// may take a few seconds to see: a start that failed can wait
			// for the reason.
			stderr.waitDrained(5 * time.Second)
			msg += stderr.buf.suffix() + u.sandboxNote()
		}
		return nil, listing{}, errors.New(msg)
	}
	// The session-based revision (initialize handshake): on it the
	// upstream may ask the client things in the middle of a call
	// (sampling, elicitation) and takes a log level for the session,
	// which the gateway relays (relay.go, notified). On 2026-07-28 a
	// server may not send such requests, and servers written for both
	// (the Go SDK's among them) then refuse them instead.
	if _, err := cl.Initialize(ctx, mcp.InitializeRequest{Params: mcp.InitializeParams{
		ProtocolVersion: mcp.LATEST_LEGACY_PROTOCOL_VERSION,
		ClientInfo:      mcp.Implementation{Name: u.g.opts.name, Version: u.g.opts.ver},
	}}); err != nil {
		return fail("initialize", err)
	}
	var lst listing
	res, err := cl.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return fail("tools/list", err)
	}
	lst.tools = res.Tools
	caps := cl.GetServerCapabilities()
	if caps.Logging != nil {
		// Servers send no log messages until a level is set. The gateway
		// asks for everything and filters by each client's own level
		// when forwarding (notified).
		if err := cl.SetLevel(ctx, mcp.SetLevelRequest{Params: mcp.SetLevelParams{Level: mcp.LoggingLevelDebug}}); err != nil {
			return fail("logging/setLevel", err)
		}
	}
	if caps.Prompts != nil {
		if lst.prompts, err = listPrompts(ctx, cl); err != nil {
			return fail("prompts/list", err)
		}
	}
	if caps.Resources != nil {
		if lst.resources, lst.templates, err = listResources(ctx, cl); err != nil {
			return fail("resources/list", err)
		}
	}
	return cl, lst, nil
}

// transport builds the client transport. For stdio the child gets exactly
// the resolved environment and its stderr is kept for error messages.
func (u *upstream) transport() (transport.Interface, *stderrPipe, error) {
	switch u.cfg.Transport() {
	case presets.UpstreamOpenAPI:
		t, err := u.openapiTransport()
		return t, nil, err
	case presets.UpstreamHTTP:
		oauth, err := u.oauthConfig(u.g.ctx)
		if err != nil {
			return nil, nil, err
		}
		opts := []transport.StreamableHTTPCOption{transport.WithHTTPHeaders(u.res.headers), transport.WithContinuousListening(),
			transport.WithHTTPLogger(u.g.log.With("upstream", u.id)), transport.WithHTTPBasicClient(upstreamHTTPClient())}
		if oauth != nil {
			opts = append(opts, transport.WithHTTPOAuth(*oauth))
		}
		t, err := transport.NewStreamableHTTP(u.cfg.URL, opts...)
		if err != nil {
			return nil, nil, err
		}
		return &cancellingHTTP{StreamableHTTP: t}, nil, nil
	case presets.UpstreamSSE:
		oauth, err := u.oauthConfig(u.g.ctx)
		if err != nil {
			return nil, nil, err
		}
		opts := []transport.ClientOption{transport.WithHeaders(u.res.headers), transport.WithSSELogger(u.g.log.With("upstream", u.id)),
			transport.WithHTTPClient(upstreamHTTPClient())}
		if oauth != nil {
			opts = append(opts, transport.WithOAuth(*oauth))
		}
		t, err := transport.NewSSE(u.cfg.URL, opts...)
		if err != nil {
			return nil, nil, err
		}
		return &cancellingSSE{SSE: t}, nil, nil
	}
	p, err := newStderrPipe(u.red, u.g.log.With("upstream", u.id))
	if err != nil {
		return nil, nil, err
	}
	env, dir := u.res.env, u.cfg.Cwd
	t := transport.NewStdioWithOptions(u.cfg.Command, nil, u.cfg.Args, transport.WithCommandLogger(u.g.log.With("upstream", u.id)), transport.WithCommandFunc(
		func(_ context.Context, command string, _ []string, args []string) (*exec.Cmd, error) {
			var cmd *exec.Cmd
			if u.cfg.SandboxProfile() == presets.SandboxNone {
				cmd = exec.Command(command, args...)
				cmd.Dir = dir
			} else {
				prof, err := u.sandboxProfile()
				if err != nil {
					return nil, err
				}
				if cmd, err = prof.Command(command, args, env); err != nil {
					return nil, err
				}
			}
			// Not os.Environ(): only the baseline, the allowlist and env.
			cmd.Env = env
			cmd.Stderr = p.w
			return cmd, nil
		}))
	return t, p, nil
}

// sandboxProfile is the confinement of a stdio upstream under sandbox
// default: its cwd (absolute) read-write, its paths, the user's package
// caches read-only, the network only with allowNetwork. Without a cwd it
// works in its own private /tmp, not in CodeCall's directory.
func (u *upstream) sandboxProfile() (sandbox.Profile, error) {
	p, err := sandboxProfileOf(u.cfg)
	p.Name, p.Cgroup = u.id, u.g.opts.cgroup
	return p, err
}

func sandboxProfileOf(cfg presets.Upstream) (sandbox.Profile, error) {
	home, _ := os.UserHomeDir()
	p := sandbox.Profile{Network: cfg.AllowNetwork, Home: home, MaxMemoryBytes: cfg.MaxMemory, MaxProcesses: int64(cfg.MaxProcesses)}
	if cfg.Cwd != "" {
		dir, err := filepath.Abs(cfg.Cwd)
		if err != nil {
			return p, fmt.Errorf("cwd %q: %w", cfg.Cwd, err)
		}
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			return p, fmt.Errorf("sandbox: cwd %q is not a directory; create it or change cwd", dir)
		}
		p.Dir = dir
	}
	for _, v := range cfg.ViewPaths(home) {
		if _, err := os.Stat(v.Path); err != nil {
			return p, fmt.Errorf("sandbox: paths entry %q does not exist (%v); create it or remove it from paths", v.Path, errors.Unwrap(err))
		}
		p.Paths = append(p.Paths, sandbox.ViewPath{Path: v.Path, Write: !v.ReadOnly})
	}
	return p, nil
}

// CheckSandbox reports whether a stdio upstream under sandbox default
// could be launched as configured, without starting it: its cwd and paths
// exist, and its command and the files its arguments name are inside its
// view (the command is looked up on path, the PATH it would get). It
// returns the view's paths for display, nil for sandbox none and remote
// servers.
func CheckSandbox(u presets.Upstream, path string) ([]sandbox.ViewPath, error) {
	if p := u.SandboxProfile(); p == presets.SandboxNone || p == presets.SandboxRemote {
		return nil, nil
	}
	prof, err := sandboxProfileOf(u)
	if err != nil {
		return nil, err
	}
	// A check starts nothing, so it makes no cgroup either.
	prof.Cgroup = sandbox.CgroupOff
	if _, err := prof.Command(u.Command, u.Args, []string{"PATH=" + path}); err != nil {
		return nil, err
	}
	return prof.View(), nil
}

// sandboxStartHint says why a sandboxed upstream's launcher may have been
// refused at its very start: the host does not let this user create the
// namespaces the sandbox needs. "" for other errors and profiles.
func sandboxStartHint(profile string, err error) string {
	if profile != presets.SandboxDefault && profile != presets.SandboxDefaultNetwork {
		return ""
	}
	if !errors.Is(err, os.ErrPermission) && !errors.Is(err, syscall.ENOSPC) && !errors.Is(err, syscall.EINVAL) {
		return ""
	}
	return " (the sandbox needs user, pid and mount namespaces, which this host refuses to this user: see kernel.unprivileged_userns_clone, " +
		"AppArmor's restrict_unprivileged_userns, user.max_user_namespaces or the container's seccomp profile; or set sandbox: none to run the server unconfined)"
}

// sandboxNote is added to why a sandboxed upstream failed to start: what
// it was not given is the usual cause.
func (u *upstream) sandboxNote() string {
	switch u.cfg.SandboxProfile() {
	case presets.SandboxDefault:
		return " (it runs under sandbox: default, with no network and only the runtime directories, cwd and paths: visible; give it what it needs with paths: or allowNetwork: true)"
	case presets.SandboxDefaultNetwork:
		return " (it runs under sandbox: default with the network, and only the runtime directories, cwd and paths: visible; give it what it needs with paths:)"
	}
	return ""
}

// client returns the running client, starting the upstream if it is not
// running and not waiting out a backoff.
func (u *upstream) client(ctx context.Context) (*client.Client, uint64, error) {
	u.mu.Lock()
	if u.state == stateReady {
		cl, gen := u.cl, u.gen
		u.mu.Unlock()
		return cl, gen, nil
	}
	state, msg := u.state, u.err
	u.mu.Unlock()
	if state == stateFailed {
		return nil, 0, fmt.Errorf("upstream %q is not running (%s); it is restarted automatically", u.id, msg)
	}
	if err := u.connect(ctx); err != nil {
		return nil, 0, err
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.state != stateReady {
		return nil, 0, fmt.Errorf("upstream %q is not running (%s)", u.id, u.err)
	}
	return u.cl, u.gen, nil
}

// cwdShown is the directory a stdio upstream runs in, as the approval
// prompt and describe show it: its cwd made absolute; without one, the
// gateway's own directory under sandbox: none, or the private /tmp the
// sandbox gives it. A remote server has none the gateway knows.
func (u *upstream) cwdShown() string {
	if u.cfg.Transport() != presets.UpstreamStdio {
		return ""
	}
	if u.cfg.Cwd != "" {
		if dir, err := filepath.Abs(u.cfg.Cwd); err == nil {
			return dir
		}
		return u.cfg.Cwd
	}
	if u.cfg.SandboxProfile() == presets.SandboxNone {
		if dir, err := os.Getwd(); err == nil {
			return dir
		}
		return ""
	}
	return "/tmp (private to its sandbox)"
}

// timeoutFrom says where the timeout of the upstream's calls is set, for
// the error of a call past it.
func (u *upstream) timeoutFrom() string {
	if u.cfg.Timeout > 0 {
		return fmt.Sprintf("the timeout of upstream %q", u.id)
	}
	return fmt.Sprintf("the default for upstream calls; set timeout on upstream %q to change it", u.id)
}

// handler forwards a call of the gateway tool to the upstream's tool name.
func (u *upstream) handler(name string) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		cl, gen, err := u.client(ctx)
		if err != nil {
			if af := u.authState(); af != nil {
				return af.result(name), nil
			}
			return transient(toolerr.Execution, UnavailablePrefix+u.red.String(err.Error()), u.retryHint()), nil
		}
		// A caller that bounded the call by the tool's timeout (CodeCall's
		// gate, from the tool's timeoutMs or the operator's tools: entry)
		// reports its end; without one, the upstream's timeout applies here.
		callCtx, cancel := ctx, context.CancelFunc(func() {})
		if _, bounded := catalog.CallTimeout(ctx); !bounded {
			callCtx, cancel = context.WithTimeout(ctx, u.timeout)
		}
		defer cancel()

		token := fmt.Sprintf("codecall-%s-%d", u.id, u.g.seq.Add(1))
		call := &inflight{ctx: ctx}
		if req.Params.Meta != nil {
			call.token = req.Params.Meta.ProgressToken
		}
		u.callsMu.Lock()
		u.calls[token] = call
		u.callsMu.Unlock()
		defer func() {
			call.done.Store(true)
			time.AfterFunc(lateNotifications, func() {
				u.callsMu.Lock()
				delete(u.calls, token)
				u.callsMu.Unlock()
			})
		}()

		up := mcp.CallToolRequest{}
		up.Params.Name = name
		up.Params.Arguments = req.Params.Arguments
		up.Params.Meta = &mcp.Meta{ProgressToken: token}
		res, err := callTool(callCtx, cl, token, up)
		if err != nil && u.refreshAfterRefusal(callCtx, err) {
			// The server refused an access token that had not expired
			// (revoked, or its clock differs): one more try, which
			// refreshes it first.
			res, err = callTool(callCtx, cl, token+"-retry", up)
		}
		switch {
		case err == nil:
			return u.redactResult(res), nil
		case ctx.Err() != nil:
			// The client gave up; mcp-go's client has already told the
			// upstream with notifications/cancelled.
			return nil, ctx.Err()
		case callCtx.Err() != nil:
			return transient(toolerr.Timeout, fmt.Sprintf("TIMEOUT: upstream %q did not answer %s within %v (its timeout)", u.id, name, u.timeout),
				"The upstream was slow; the call may succeed if made again, and may have had its effect already."), nil
		}
		if af := (*authFailure)(nil); errors.As(u.authError(ctx, err), &af) {
			if errors.Is(err, transport.ErrOAuthAuthorizationRequired) {
				// An OAuth upstream whose token was refused and could not
				// be refreshed is unusable until an operator logs in
				// again: shown as down, with why and what to run. A 401
				// to static credentials or a 403 may concern this call
				// only, and leaves the upstream up.
				u.lostAuth(gen, af)
			}
			return af.result(name), nil
		}
		var te *transport.Error
		if errors.As(err, &te) || errors.Is(err, transport.ErrTransportClosed) {
			u.lost(gen, "connection lost: "+err.Error())
			return transient(toolerr.Execution, UnavailablePrefix+u.red.String(fmt.Sprintf("upstream %q failed during the call: %v", u.id, err)), u.retryHint()), nil
		}
		// A JSON-RPC error from the upstream (unknown tool, invalid
		// arguments): its own message, as a tool error.
		return mcp.NewToolResultError(u.red.String(err.Error())), nil
	}
}

// transient is the result of a call that failed for a cause that may pass
// (the upstream is down or was slow): isError with the text, and the error
// as data under toolerr.MetaKey, retryable, so plans and clients can tell
// it from the tool's own failures without reading the text.
func transient(code toolerr.Code, msg, hint string) *mcp.CallToolResult {
	res := mcp.NewToolResultError(msg)
	res.Meta = mcp.NewMetaFromMap(map[string]any{toolerr.MetaKey: map[string]any{
		"code": string(code), "message": msg, "hint": hint, "retryable": true}})
	return res
}

func (u *upstream) retryHint() string {
	return fmt.Sprintf("The upstream %q is unavailable and is restarted automatically; retry in a few seconds.", u.id)
}

// notified handles a notification from the upstream.
func (u *upstream) notified(gen uint64, n mcp.JSONRPCNotification) {
	u.mu.Lock()
	current := u.gen == gen && u.state == stateReady
	u.mu.Unlock()
	if !current {
		return
	}
	switch n.Method {
	case string(mcp.MethodNotificationToolsListChanged):
		u.g.spawn(func() { u.refresh(gen) })
	case string(mcp.MethodNotificationPromptsListChanged):
		u.g.spawn(func() { u.refreshPrompts(gen) })
	case string(mcp.MethodNotificationResourcesListChanged):
		u.g.spawn(func() { u.refreshResources(gen) })
	case string(mcp.MethodNotificationResourceUpdated):
		uri, _ := n.Params.AdditionalFields["uri"].(string)
		u.g.resourceUpdated(uri, copyMap(n.Params.AdditionalFields))
	case string(mcp.MethodNotificationProgress):
		params := copyMap(n.Params.AdditionalFields)
		token, _ := params["progressToken"].(string)
		u.callsMu.Lock()
		call := u.calls[token]
		u.callsMu.Unlock()
		if call == nil || call.token == nil {
			return
		}
		params["progressToken"] = call.token
		_ = u.g.srv.SendNotificationToClient(call.ctx, n.Method, params)
	case string(mcp.MethodNotificationMessage):
		// A log line is not tied to a request; it goes to the clients with
		// a call to this upstream in flight, each filtered by the level
		// that client set (mcp-go's SendLogMessageToClient).
		note, ok := logNotification(n)
		if !ok {
			return
		}
		for _, ctx := range u.callers(false) {
			_ = u.g.srv.SendLogMessageToClient(ctx, note)
		}
	}
}

// callers returns the context of one call per client session with a call
// to this upstream in flight; with running, only calls not yet answered.
func (u *upstream) callers(running bool) []context.Context {
	u.callsMu.Lock()
	defer u.callsMu.Unlock()
	var targets []context.Context
	seen := map[string]bool{}
	for _, c := range u.calls {
		if running && c.done.Load() {
			continue
		}
		if s := server.ClientSessionFromContext(c.ctx); s != nil && !seen[s.SessionID()] {
			seen[s.SessionID()] = true
			targets = append(targets, c.ctx)
		}
	}
	return targets
}

// logNotification decodes an upstream's notifications/message.
func logNotification(n mcp.JSONRPCNotification) (mcp.LoggingMessageNotification, bool) {
	var note mcp.LoggingMessageNotification
	b, err := json.Marshal(n.Params.AdditionalFields)
	if err != nil || json.Unmarshal(b, &note.Params) != nil || note.Params.Level == "" {
		return note, false
	}
	note.Method = n.Method
	return note, true
}

func copyMap(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// refresh re-lists the tools after tools/list_changed.
func (u *upstream) refresh(gen uint64) {
	u.mu.Lock()
	cl := u.cl
	ok := u.gen == gen && u.state == stateReady
	u.mu.Unlock()
	if !ok {
		return
	}
	// One re-listing at a time, so that an older listing is never applied
	// after a newer one (the pins would see a definition change back and
	// forth).
	u.refreshMu.Lock()
	defer u.refreshMu.Unlock()
	ctx, cancel := context.WithTimeout(u.g.ctx, u.g.opts.startTimeout)
	defer cancel()
	res, err := cl.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		u.g.log.Warn("gateway: re-listing tools after list_changed failed", "upstream", u.id, "error", u.red.String(err.Error()))
		return
	}
	u.setTools(res.Tools)
}

// setTools registers the upstream's tools that pass its include/exclude
// globs under their gateway names and removes the ones that disappeared.
func (u *upstream) setTools(tools []mcp.Tool) {
	u.syncMu.Lock()
	defer u.syncMu.Unlock()
	if u.g.ctx.Err() != nil {
		return
	}
	listed := u.keptTools(tools)
	u.listed = listed
	want := map[string]mcp.Tool{}
	orig := map[string]string{}
	for _, t := range u.pinned(listed) {
		gt := u.expose(t)
		want[gt.Name] = gt
		orig[gt.Name] = t.Name
	}
	var add []server.ServerTool
	var remove []string
	for name, t := range want {
		if old, ok := u.tools[name]; ok && sameTool(old, t) {
			continue
		}
		add = append(add, server.ServerTool{Tool: t, Handler: u.handler(orig[name])})
	}
	for name := range u.tools {
		if _, ok := want[name]; !ok {
			remove = append(remove, name)
		}
	}
	kept := u.g.register(u, add, remove)
	for _, name := range remove {
		delete(u.tools, name)
	}
	for _, st := range kept {
		u.tools[st.Tool.Name] = st.Tool
	}
}

// recheck applies the pinned definitions again to the last listing (after
// an operator accepted some, on reload).
func (u *upstream) recheck() {
	u.syncMu.Lock()
	listed := u.listed
	u.syncMu.Unlock()
	if u.g.pins != nil && listed != nil {
		u.setTools(listed)
	}
}

// pinned returns the tools the pinned definitions let through, and holds
// back the others: logged, and reported through WithQuarantine, once per
// hold. When the pins cannot be read or written it holds back every tool:
// a gateway that cannot tell a changed definition from a known one does
// not serve it. u.syncMu held.
func (u *upstream) pinned(tools []mcp.Tool) []mcp.Tool {
	if u.g.pins == nil {
		return tools
	}
	held, err := u.g.pins.check(u.id, tools)
	if err != nil {
		u.g.log.Error("gateway: cannot check the pinned tool definitions; the upstream's tools are held back", "upstream", u.id,
			"error", err, "fix", "make upstreams.stateDir writable, or set upstreams.pinDefinitions: false")
		held = map[string]bool{}
		for _, t := range tools {
			held[t.Name] = false
		}
	}
	var out []mcp.Tool
	for _, t := range tools {
		isNew, ok := held[t.Name]
		if !ok {
			out = append(out, t)
			continue
		}
		if _, already := u.held[t.Name]; already || err != nil {
			continue
		}
		q := Quarantine{Upstream: u.id, Tool: t.Name, Name: u.exposedName(t.Name), New: isNew, Reason: quarantineText(u.id, t.Name, isNew)}
		u.g.log.Warn("gateway: tool held back", "upstream", u.id, "tool", t.Name, "reason", q.Reason)
		if f := u.g.opts.quarantined; f != nil {
			f(q)
		}
	}
	u.held = held
	return out
}

func sameTool(a, b mcp.Tool) bool {
	ja, err1 := json.Marshal(a)
	jb, err2 := json.Marshal(b)
	return err1 == nil && err2 == nil && string(ja) == string(jb)
}

// exposedName is the gateway's name for an upstream tool or prompt.
func (u *upstream) exposedName(name string) string {
	if u.cfg.IsPrefixed() {
		return u.id + u.g.opts.sep + name
	}
	return name
}

// keptTools returns the tools that pass the include/exclude globs.
func (u *upstream) keptTools(tools []mcp.Tool) []mcp.Tool {
	if u.cfg.Transport() == presets.UpstreamOpenAPI {
		return tools // selected by operation (openapiSelect)
	}
	var out []mcp.Tool
	for _, t := range tools {
		if (len(u.include) > 0 && !u.include.Match(t.Name)) || u.exclude.Match(t.Name) {
			continue
		}
		out = append(out, t)
	}
	return out
}

// expose turns an upstream tool into the gateway's: prefixed name, CodeCall
// metadata naming the app and source, secrets removed from its text. An
// upstream's own _meta.codecall may add tags, examples and visibility, but
// not choose its app or source, nor switch off requiresApproval.
func (u *upstream) expose(t mcp.Tool) mcp.Tool {
	own, _, err := catalog.ReadMeta(t)
	if err != nil {
		own = catalog.Meta{}
	}
	m := catalog.Meta{
		VisibleInListTools: own.VisibleInListTools, EnabledInCodeCall: own.EnabledInCodeCall,
		Tags: own.Tags, Examples: own.Examples,
		AppID: u.id, Source: catalog.SourceUpstream, RequiresApproval: u.cfg.RequiresApproval,
		SandboxProfile: u.cfg.SandboxProfile(),
	}
	if own.RequiresApproval != nil && *own.RequiresApproval {
		m.RequiresApproval = catalog.Bool(true)
	}
	m.TimeoutMs, m.TimeoutFrom = u.callTimeout.Milliseconds(), u.timeoutFrom()
	m.Cwd = u.cwdShown()
	if u.cfg.Transport() == presets.UpstreamOpenAPI {
		// Written by CodeCall from the operator's own operations: overrides.
		m.Source = catalog.SourceOpenAPI
		if own.RequiresApproval != nil {
			m.RequiresApproval = own.RequiresApproval
		}
		if own.TimeoutMs > 0 {
			m.TimeoutMs, m.TimeoutFrom = own.TimeoutMs, fmt.Sprintf("the operation's timeout under operations of upstream %q", u.id)
		}
	}
	t.Name = u.exposedName(t.Name)
	t.Description = u.red.String(t.Description)
	t.Title = u.red.String(t.Title)
	if t.Meta != nil {
		fields := copyMap(t.Meta.AdditionalFields)
		delete(fields, catalog.MetaKey)
		t.Meta = &mcp.Meta{AdditionalFields: fields}
	}
	t = catalog.SetMeta(t, m)
	if u.red.r != nil {
		t = u.redactSchemas(t)
	}
	return t
}

// redactSchemas removes secrets from the schemas, which reach clients
// through codecall.describe.
func (u *upstream) redactSchemas(t mcp.Tool) mcp.Tool {
	b, err := json.Marshal(t)
	if err != nil {
		return t
	}
	clean := u.red.String(string(b))
	if clean == string(b) {
		return t
	}
	var out mcp.Tool
	if err := json.Unmarshal([]byte(clean), &out); err != nil {
		return t
	}
	out.Meta = t.Meta
	return out
}

// stderrPipe carries a child's stderr to a bounded tail buffer; its end
// (EOF) tells that the process has exited.
type stderrPipe struct {
	r, w    *os.File
	buf     *tail
	log     *slog.Logger
	drained chan struct{}
}

func newStderrPipe(red redactor, log *slog.Logger) (*stderrPipe, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, fmt.Errorf("cannot create a pipe for stderr: %w", err)
	}
	return &stderrPipe{r: r, w: w, buf: &tail{red: red}, log: log, drained: make(chan struct{})}, nil
}

// closeWriter closes the parent's copy of the write end once the child has
// its own, so that EOF means the child has gone.
func (p *stderrPipe) closeWriter() { _ = p.w.Close() }

// drain keeps the last lines for error messages and logs each line at
// debug level (secrets removed), until the child has gone.
func (p *stderrPipe) drain() {
	defer close(p.drained)
	defer p.r.Close()
	br := bufio.NewReaderSize(p.r, 4096)
	for {
		// ReadSlice bounds memory: a line longer than the buffer comes in
		// pieces.
		line, err := br.ReadSlice('\n')
		if len(line) > 0 {
			_, _ = p.buf.Write(line)
			if p.log.Enabled(context.Background(), slog.LevelDebug) {
				p.log.Debug("gateway: upstream stderr", "line", p.buf.red.String(strings.TrimRight(string(line), "\r\n")))
			}
		}
		if err != nil && !errors.Is(err, bufio.ErrBufferFull) {
			return
		}
	}
}

func (p *stderrPipe) waitDrained(d time.Duration) {
	select {
	case <-p.drained:
	case <-time.After(d):
	}
}

// tail keeps the last few KiB of a child's stderr.
type tail struct {
	mu  sync.Mutex
	b   []byte
	red redactor
}

const tailBytes = 4 << 10

func (t *tail) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.b = append(t.b, p...)
	if len(t.b) > tailBytes {
		t.b = append(t.b[:0], t.b[len(t.b)-tailBytes:]...)
	}
	return len(p), nil
}

// suffix returns "; stderr: <last lines>" or "", secrets removed.
func (t *tail) suffix() string {
	if t == nil {
		return ""
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	s := strings.TrimSpace(string(t.b))
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	if len(lines) > 5 {
		lines = lines[len(lines)-5:]
	}
	return "; stderr: " + t.red.String(strings.Join(lines, " | "))
}
