package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/console"
	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/state/statetest"
)

// replicasVar turns on the replica tests: real codecall serve --http
// processes sharing a state store, behind HAProxy. .ci/run sets it after
// installing redis-server and haproxy.
const replicasVar = "CODECALLTEST_REPLICAS"

// countedVar makes the test binary an MCP server whose tools write one
// line per call to the file it names, so that calls are counted across
// every process that makes them.
const countedVar = "CODECALLTEST_CMD_COUNTED"

// serveCounted is the counted upstream: ledger.read is read-only, and
// ledger.delete needs approval under the built-in policy.
func serveCounted(path string) {
	srv := server.NewMCPServer("ledger", "1")
	record := func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o600)
		if err != nil {
			return nil, err
		}
		// One write of one line: O_APPEND keeps lines of several
		// processes whole.
		_, err = fmt.Fprintf(f, "%s %s\n", req.Params.Name, req.GetString("id", "-"))
		f.Close()
		if err != nil {
			return nil, err
		}
		return mcp.NewToolResultText(fmt.Sprintf(`{"ok":true,"tool":%q}`, req.Params.Name)), nil
	}
	srv.AddTool(mcp.NewTool("read", mcp.WithString("id"), mcp.WithReadOnlyHintAnnotation(true), mcp.WithDestructiveHintAnnotation(false),
		mcp.WithOpenWorldHintAnnotation(false)), record)
	srv.AddTool(mcp.NewTool("delete", mcp.WithString("id"), mcp.WithDestructiveHintAnnotation(true)), record)
	_ = server.ServeStdio(srv)
}

// countCalls reads the counted upstream's ledger: calls by "tool id".
func countCalls(t *testing.T, path string) map[string]int {
	t.Helper()
	out := map[string]int{}
	b, err := os.ReadFile(path)
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	for line := range strings.Lines(string(b)) {
		out[strings.TrimSpace(line)]++
	}
	return out
}

// fleet is codecall serve --http replicas sharing one config and store.
type fleet struct {
	t       *testing.T
	exe     string
	dir     string
	config  string
	ledger  string
	addrs   []string
	procs   []*exec.Cmd
	exited  []chan struct{}
	logs    []*bytes.Buffer
	mu      sync.Mutex
	haproxy string // the balancer's address, when started
}

const fleetToken = "fleet-token-0123456789abcdef"

func newFleet(t *testing.T, n int, stateYAML string) *fleet {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	f := &fleet{t: t, exe: exe, dir: dir, ledger: filepath.Join(dir, "ledger.txt")}
	upstreams := filepath.Join(dir, "servers.json")
	servers, _ := json.Marshal(map[string]any{"mcpServers": map[string]any{
		// The upstream runs sandboxed: it sees the test binary's directory
		// read-only and writes its ledger in dir.
		"ledger": map[string]any{"command": exe, "env": map[string]string{countedVar: f.ledger}, "paths": []string{filepath.Dir(exe) + ":ro", dir}}}})
	if err := os.WriteFile(upstreams, servers, 0o600); err != nil {
		t.Fatal(err)
	}
	f.config = filepath.Join(dir, "codecall.yaml")
	cfg := fmt.Sprintf("preset: balanced\nsurfaces: [codecall, codemode]\ndirectCalls: {enabled: true}\nvm: {isolation: inprocess}\napproval: {timeout: 1m}\nupstreams: {file: %q}\n%s", upstreams, stateYAML)
	if err := os.WriteFile(f.config, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	for range n {
		f.addrs = append(f.addrs, freeAddr(t, "127.0.0.1"))
		f.procs = append(f.procs, nil)
		f.exited = append(f.exited, nil)
		f.logs = append(f.logs, nil)
	}
	t.Cleanup(func() {
		for i := range f.procs {
			f.kill(i)
		}
	})
	return f
}

// start starts replica i and waits until it is ready.
func (f *fleet) start(i int) {
	f.t.Helper()
	cmd := exec.Command(f.exe, "serve", "--http", f.addrs[i], "--config", f.config, "--token-env", "FLEET_TOKEN",
		"--log-level", "warn")
	var logBuf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &logBuf, &logBuf
	cmd.Env = append(os.Environ(), cliVar+"=1", "FLEET_TOKEN="+fleetToken,
		fmt.Sprintf("CODECALL_AUDIT__PATH=%s", filepath.Join(f.dir, fmt.Sprintf("audit-%d-%d.jsonl", i, time.Now().UnixNano()))))
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(exited)
	}()
	f.mu.Lock()
	f.procs[i], f.exited[i], f.logs[i] = cmd, exited, &logBuf
	f.mu.Unlock()
	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-exited:
			f.t.Fatalf("replica %d exited: %s", i, logBuf.String())
		default:
		}
		resp, err := http.Get("http://" + f.addrs[i] + readyPath)
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return
			}
		}
		if time.Now().After(deadline) {
			f.t.Fatalf("replica %d not ready within 60 s: %v\n%s", i, err, logBuf.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// kill ends replica i with SIGKILL: nothing it holds in memory survives.
func (f *fleet) kill(i int) {
	f.mu.Lock()
	cmd, exited := f.procs[i], f.exited[i]
	f.procs[i] = nil
	f.mu.Unlock()
	if cmd == nil || cmd.Process == nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGKILL)
	<-exited
}

// startHAProxy puts HAProxy in front of the replicas, round robin, with
// a health check on /readyz; each response names the replica that served
// it (X-Replica: r0, r1...).
func (f *fleet) startHAProxy(bin string) {
	f.t.Helper()
	f.haproxy = freeAddr(f.t, "127.0.0.1")
	var b strings.Builder
	fmt.Fprintf(&b, "global\n  maxconn 2000\ndefaults\n  mode http\n  timeout connect 2s\n  timeout client 120s\n  timeout server 120s\n"+
		"  timeout check 5s\n  retries 3\n  option redispatch\nfrontend fe\n  bind %s\n  default_backend be\nbackend be\n  balance roundrobin\n"+
		"  option httpchk GET %s\n  http-response set-header X-Replica %%s\n", f.haproxy, readyPath)
	for i, a := range f.addrs {
		fmt.Fprintf(&b, "  server r%d %s check inter 200ms fall 3 rise 1\n", i, a)
	}
	cfg := filepath.Join(f.dir, "haproxy.cfg")
	if err := os.WriteFile(cfg, []byte(b.String()), 0o600); err != nil {
		f.t.Fatal(err)
	}
	cmd := exec.Command(bin, "-db", "-f", cfg)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		f.t.Fatal(err)
	}
	f.t.Cleanup(func() {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	})
	waitHTTP(f.t, f.haproxy, &mcptest.Buffer{})
}

// waitServers waits until HAProxy sends requests to n replicas' worth of
// servers it sees up.
func (f *fleet) waitUp(up map[string]bool) {
	f.t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	seen := map[string]bool{}
	for len(seen) < len(up) {
		_, replica := f.post(f.haproxy, `return 1`, "", "")
		if !up[replica] {
			if time.Now().After(deadline) {
				f.t.Fatalf("HAProxy still sends requests to %s", replica)
			}
			seen = map[string]bool{}
			time.Sleep(100 * time.Millisecond)
			continue
		}
		seen[replica] = true
		if time.Now().After(deadline) {
			f.t.Fatalf("HAProxy reached only %v of %v", seen, up)
		}
	}
}

// post sends a 2026-07-28 codecall.execute (no session, no initialize:
// each request stands alone) to addr, and returns the result and the
// replica that served it.
func (f *fleet) post(addr, script, requestState, answer string) (*mcp.CallToolResult, string) {
	f.t.Helper()
	res, replica, err := f.tryPost(addr, script, requestState, answer)
	if err != nil {
		f.t.Fatal(err)
	}
	return res, replica
}

// tryPost is post for goroutines other than the test's: it returns what
// went wrong.
func (f *fleet) tryPost(addr, script, requestState, answer string) (*mcp.CallToolResult, string, error) {
	return f.request(addr, script, requestState, answer, true)
}

// request is tryPost from a client that can show approval prompts
// (canPrompt) or cannot, whose calls then wait for an operator.
func (f *fleet) request(addr, script, requestState, answer string, canPrompt bool) (*mcp.CallToolResult, string, error) {
	return f.callTool(addr, "codecall.execute", map[string]any{"script": script}, requestState, answer, canPrompt)
}

// callTool sends one 2026-07-28 tools/call of tool to addr.
func (f *fleet) callTool(addr, tool string, args map[string]any, requestState, answer string, canPrompt bool) (*mcp.CallToolResult, string, error) {
	caps := map[string]any{}
	if canPrompt {
		caps["elicitation"] = map[string]any{}
	}
	params := map[string]any{
		"name": tool, "arguments": args,
		"_meta": map[string]any{
			mcp.MetaKeyProtocolVersion:    mcp.LATEST_PROTOCOL_VERSION,
			mcp.MetaKeyClientCapabilities: caps,
			mcp.MetaKeyClientInfo:         map[string]any{"name": "replica-test", "version": "1"},
		},
	}
	if requestState != "" {
		params["requestState"] = requestState
		params["inputResponses"] = map[string]any{"codecall.approval": map[string]any{
			"action": "accept", "content": map[string]any{"decision": answer}}}
	}
	body, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
	req, _ := http.NewRequest(http.MethodPost, "http://"+addr+"/mcp", bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "application/json, text/event-stream")
	req.Header.Set("Authorization", "Bearer "+fleetToken)
	req.Header.Set(mcp.HeaderProtocolVersion, mcp.LATEST_PROTOCOL_VERSION)
	req.Header.Set(mcp.HeaderMethod, "tools/call")
	req.Header.Set(mcp.HeaderName, tool)
	client := &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := client.Do(req)
	if err != nil {
		return nil, "", err
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		return nil, "", fmt.Errorf("POST %s: %d %s", addr, resp.StatusCode, raw)
	}
	payload := raw
	if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/event-stream") {
		// The last data line of the stream is the response.
		sc := bufio.NewScanner(bytes.NewReader(raw))
		sc.Buffer(make([]byte, 1<<20), 4<<20)
		for sc.Scan() {
			if d, ok := strings.CutPrefix(sc.Text(), "data: "); ok {
				payload = []byte(d)
			}
		}
	}
	var rpc struct {
		Result json.RawMessage `json:"result"`
		Error  any             `json:"error"`
	}
	if err := json.Unmarshal(payload, &rpc); err != nil || rpc.Error != nil {
		return nil, "", fmt.Errorf("not a result (%v): %s", err, payload)
	}
	res, err := mcp.ParseCallToolResult(&rpc.Result)
	if err != nil {
		return nil, "", fmt.Errorf("not a tool result: %v: %s", err, rpc.Result)
	}
	var rs struct {
		RequestState string `json:"requestState"`
		ResultType   string `json:"resultType"`
	}
	_ = json.Unmarshal(rpc.Result, &rs)
	if res.RequestState == "" {
		res.RequestState = rs.RequestState
	}
	if res.ResultType == "" {
		res.ResultType = mcp.ResultType(rs.ResultType)
	}
	return res, resp.Header.Get("X-Replica"), nil
}

// runResult reads a finished run's status, result and run id.
func runResult(t *testing.T, res *mcp.CallToolResult) (status, result, runID string) {
	t.Helper()
	if res.ResultType == mcp.ResultTypeInputRequired || len(res.Content) == 0 {
		t.Fatalf("not a finished run: %+v", res)
	}
	var o struct {
		Status string          `json:"status"`
		Result json.RawMessage `json:"result"`
		RunID  string          `json:"runId"`
		Error  any             `json:"error"`
	}
	text := mcp.GetTextFromContent(res.Content[0])
	if err := json.Unmarshal([]byte(text), &o); err != nil {
		t.Fatalf("not an execute result: %s", text)
	}
	if o.Status != "ok" {
		t.Fatalf("run ended %s: %v", o.Status, o.Error)
	}
	return o.Status, string(o.Result), o.RunID
}

func pausedState(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	if res.ResultType != mcp.ResultTypeInputRequired || !strings.HasPrefix(res.RequestState, "ccr1.") {
		b, _ := json.Marshal(res)
		t.Fatalf("the plan did not pause with a durable requestState (resultType %q): %s", res.ResultType, b)
	}
	return res.RequestState
}

// auditChain reads every replica's audit log and returns the events of
// one run, by type.
func (f *fleet) auditChain(runID string) map[string]int {
	f.t.Helper()
	files, _ := filepath.Glob(filepath.Join(f.dir, "audit-*.jsonl"))
	out := map[string]int{}
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			var e struct {
				Type        string `json:"event"`
				RunID       string `json:"runId"`
				ParentRunID string `json:"parentRunId"`
				Tool        string `json:"tool"`
				Status      string `json:"status"`
			}
			if json.Unmarshal([]byte(line), &e) != nil {
				continue
			}
			if e.RunID == runID || e.ParentRunID == runID {
				key := e.Type
				if e.Tool != "" {
					key += " " + e.Tool
				}
				if e.Type == "tool.call" {
					key += " " + e.Status
				}
				out[key]++
			}
		}
	}
	return out
}

// script reads, asks to delete (approval), and reads again.
func fleetScript(id string) string {
	return fmt.Sprintf(`const a = await callTool('ledger.read', {id: %[1]q});
		const d = await callTool('ledger.delete', {id: %[1]q});
		const b = await callTool('ledger.read', {id: %[1]q + '-after'});
		return [a.ok, d.ok, b.ok, Math.round(Math.random() * 1e6) >= 0, Date.now() > 0]`, id)
}

func requireReplicaTools(t *testing.T) string {
	t.Helper()
	if os.Getenv(replicasVar) == "" {
		t.Skip("set " + replicasVar + "=1 to run replicas behind HAProxy (.ci/run does, after installing redis-server and haproxy)")
	}
	if statetest.RedisServer() == "" {
		t.Skip("redis-server (or valkey-server) is not installed: apt-get install redis-server")
	}
	bin, err := exec.LookPath("haproxy")
	if err != nil {
		t.Skip("haproxy is not installed: apt-get install haproxy")
	}
	return bin
}

const fleetKey = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8="

// TestReplicasBehindHAProxy: three replicas on one Redis behind HAProxy.
// An approval answered on another replica, an answer after the replica
// that paused the plan was SIGKILLed, and an answer after every replica
// was killed and restarted all resume the plan, and no tool runs twice.
func TestReplicasBehindHAProxy(t *testing.T) {
	haproxy := requireReplicaTools(t)
	t.Setenv("STATE_KEY_FLEET", fleetKey)
	url := statetest.StartRedis(t)
	f := newFleet(t, 3, fmt.Sprintf("state: {store: redis, url: %q, keyEnv: STATE_KEY_FLEET}\n", url))
	for i := range f.addrs {
		f.start(i)
	}
	f.startHAProxy(haproxy)
	all := map[string]bool{"r0": true, "r1": true, "r2": true}
	f.waitUp(all)

	check := func(id, runID string) {
		t.Helper()
		calls := countCalls(t, f.ledger)
		for call, want := range map[string]int{"read " + id: 1, "delete " + id: 1, "read " + id + "-after": 1} {
			if calls[call] != want {
				t.Errorf("%s ran %d times, want %d (ledger %v)", call, calls[call], want, calls)
			}
		}
		chain := f.auditChain(runID)
		for ev, want := range map[string]int{"execute.start": 1, "execute.end": 1, "tool.call ledger.delete ok": 1,
			"tool.call ledger.delete input_required": 1, "tool.call ledger.read ok": 2} {
			if chain[ev] != want {
				t.Errorf("run %s: %d %s events, want %d (chain %v)", runID, chain[ev], ev, want, chain)
			}
		}
	}

	t.Run("answer on another replica", func(t *testing.T) {
		paused, first := f.post(f.haproxy, fleetScript("a1"), "", "")
		res, second := f.post(f.haproxy, fleetScript("a1"), pausedState(t, paused), "approve")
		if first == "" || first == second {
			t.Fatalf("the answer reached %q, the plan paused on %q: want two replicas", second, first)
		}
		_, _, runID := runResult(t, res)
		check("a1", runID)
	})

	t.Run("codemode.run and invoke answered on another replica", func(t *testing.T) {
		mustCall := func(tool string, args map[string]any, state, answer string) (*mcp.CallToolResult, string) {
			t.Helper()
			res, replica, err := f.callTool(f.haproxy, tool, args, state, answer, true)
			if err != nil {
				t.Fatal(err)
			}
			return res, replica
		}
		code := map[string]any{"code": `import * as ledger from '@codemode/servers/ledger';
			await ledger.read({id: 'c1'});
			await ledger.delete_({id: 'c1'}); // a reserved word gets '_' appended
			await ledger.read({id: 'c1-after'});
			globalThis.__codemode_result__ = Math.random() >= 0;`}
		paused, first := mustCall("codemode.run", code, "", "")
		res, second := mustCall("codemode.run", code, pausedState(t, paused), "approve")
		if first == second {
			t.Fatalf("the answer reached the replica the script paused on (%s)", first)
		}
		var out struct {
			Result json.RawMessage `json:"result"`
			RunID  string          `json:"runId"`
		}
		if err := json.Unmarshal([]byte(mcp.GetTextFromContent(res.Content[0])), &out); err != nil || string(out.Result) != "true" {
			t.Fatalf("codemode.run answer (%v): %s", err, mcp.GetTextFromContent(res.Content[0]))
		}
		check("c1", out.RunID)

		invoke := map[string]any{"tool": "ledger.delete", "input": map[string]any{"id": "i1"}}
		prompt, first := mustCall("codecall.invoke", invoke, "", "")
		if prompt.ResultType != mcp.ResultTypeInputRequired || prompt.RequestState == "" {
			t.Fatalf("invoke did not ask: %+v", prompt)
		}
		done, second := mustCall("codecall.invoke", invoke, prompt.RequestState, "approve")
		if first == second || done.IsError || done.ResultType == mcp.ResultTypeInputRequired {
			t.Fatalf("invoke answered on %s after its prompt on %s: %+v", second, first, done)
		}
		again, _ := mustCall("codecall.invoke", invoke, prompt.RequestState, "approve")
		if again.ResultType != mcp.ResultTypeInputRequired {
			t.Fatalf("an invoke answer counted twice: %+v", again)
		}
		if n := countCalls(t, f.ledger)["delete i1"]; n != 1 {
			t.Fatalf("the invoked delete ran %d times, want 1", n)
		}
	})

	t.Run("replica killed between pause and answer", func(t *testing.T) {
		paused, first := f.post(f.haproxy, fleetScript("k1"), "", "")
		idx := int(first[1] - '0')
		f.kill(idx)
		up := map[string]bool{}
		for r := range all {
			if r != first {
				up[r] = true
			}
		}
		f.waitUp(up)
		res, second := f.post(f.haproxy, fleetScript("k1"), pausedState(t, paused), "approve")
		if second == first {
			t.Fatalf("answered by the killed replica %s", first)
		}
		_, _, runID := runResult(t, res)
		check("k1", runID)
		f.start(idx)
		f.waitUp(all)
	})

	t.Run("mcp-go client, every replica restarted while the person decides", func(t *testing.T) {
		// mcp-go's own 2026-07-28 client: it answers the input request by
		// sending the request again with the answer, through the balancer.
		// The replicas are all killed and started again while the person
		// "decides", so the answer reaches a process that never saw the
		// plan.
		prompts := 0
		decide := elicitFunc(func(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
			prompts++
			for i := range f.addrs {
				f.kill(i)
			}
			for i := range f.addrs {
				f.start(i)
			}
			f.waitUp(all)
			return &mcp.ElicitationResult{ElicitationResponse: mcp.ElicitationResponse{
				Action: mcp.ElicitationResponseActionAccept, Content: map[string]any{"decision": "approve"}}}, nil
		})
		tr, err := transport.NewStreamableHTTP("http://"+f.haproxy+"/mcp",
			transport.WithHTTPHeaders(map[string]string{"Authorization": "Bearer " + fleetToken}),
			transport.WithHTTPBasicClient(&http.Client{Transport: &http.Transport{DisableKeepAlives: true}}))
		if err != nil {
			t.Fatal(err)
		}
		c := client.NewClient(tr, client.WithElicitationHandler(decide))
		mcptest.Initialize(t, c, mcptest.Modern())
		req := mcp.CallToolRequest{}
		req.Params.Name = "codecall.execute"
		req.Params.Arguments = map[string]any{"script": fleetScript("m1")}
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
		defer cancel()
		res, err := c.CallTool(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if prompts != 1 {
			t.Fatalf("the person was asked %d times, want 1", prompts)
		}
		_, _, runID := runResult(t, res)
		check("m1", runID)
	})

	t.Run("every replica restarted", func(t *testing.T) {
		paused, _ := f.post(f.haproxy, fleetScript("r1"), "", "")
		token := pausedState(t, paused)
		for i := range f.addrs {
			f.kill(i)
		}
		for i := range f.addrs {
			f.start(i)
		}
		f.waitUp(all)
		res, _ := f.post(f.haproxy, fleetScript("r1"), token, "approve")
		_, _, runID := runResult(t, res)
		check("r1", runID)
	})
}

// fleetConsoleToken is the console's token on every replica of
// TestReplicaOutOfBandApproval.
const fleetConsoleToken = "fleet-console-token-0123456789abcdef"

// consoleList lists the waiting calls through the console API at addr and
// returns them with the replica that answered.
func consoleList(t *testing.T, addr string) ([]policy.PendingApproval, string) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, "http://"+addr+console.Prefix+"/api/approvals", nil)
	req.Header.Set("Authorization", "Bearer "+fleetConsoleToken)
	resp, err := (&http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var list console.ApprovalList
	if resp.StatusCode != http.StatusOK || json.Unmarshal(raw, &list) != nil {
		t.Fatalf("GET %s approvals: %d %s", addr, resp.StatusCode, raw)
	}
	return list.Approvals, resp.Header.Get("X-Replica")
}

// TestReplicaOutOfBandApproval: three replicas on one Redis behind
// HAProxy, with the console. A client that cannot show prompts runs a plan
// on replica r0; its call waits for an operator. Every replica lists it
// (the console API through the balancer, round robin), an operator
// approves it with codecall approvals against r1, the plan on r0 goes on,
// and a second operator's answer through r2 is refused. The tool runs
// once, and r0's audit log says who approved it, through which channel.
func TestReplicaOutOfBandApproval(t *testing.T) {
	haproxy := requireReplicaTools(t)
	t.Setenv("STATE_KEY_FLEET", fleetKey)
	t.Setenv("FLEET_CONSOLE_TOKEN", fleetConsoleToken)
	url := statetest.StartRedis(t)
	f := newFleet(t, 3, fmt.Sprintf("state: {store: redis, url: %q, keyEnv: STATE_KEY_FLEET}\n"+
		"console: {enabled: true, tokenEnv: FLEET_CONSOLE_TOKEN}\n", url))
	for i := range f.addrs {
		f.start(i)
	}
	f.startHAProxy(haproxy)
	f.waitUp(map[string]bool{"r0": true, "r1": true, "r2": true})

	type outcome struct {
		res *mcp.CallToolResult
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		res, _, err := f.request(f.addrs[0], fleetScript("o1"), "", "", false)
		done <- outcome{res, err}
	}()

	// Every replica lists the call waiting on r0.
	var id string
	listedBy := map[string]bool{}
	for deadline := time.Now().Add(30 * time.Second); len(listedBy) < 3; {
		pending, replica := consoleList(t, f.haproxy)
		if len(pending) == 1 && pending[0].Tool == "ledger.delete" {
			id = pending[0].ID
			listedBy[replica] = true
		} else if len(pending) > 1 {
			t.Fatalf("%s lists %d waiting calls, want 1: %+v", replica, len(pending), pending)
		}
		if time.Now().After(deadline) {
			t.Fatalf("after 30 s the waiting call was listed by %v only", listedBy)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if p, _ := consoleList(t, f.addrs[1]); len(p) != 1 || p[0].ID != id {
		t.Fatalf("r1 lists %+v, want %s", p, id)
	}

	// What one waiting call costs the store: r0 reads its answer (GET)
	// every 500 ms and renews its entry (SET) every 5 s; each replica's
	// console lists the queue (SCAN, then MGET) every 2 s. HAProxy's
	// readiness checks PING the store too; they are not the queue's.
	before := redisCommandStats(t, url)
	window := time.Now()
	time.Sleep(6 * time.Second)
	after := redisCommandStats(t, url)
	secs := time.Since(window).Seconds()
	rate := func(cmd string) float64 { return float64(after[cmd]-before[cmd]) / secs }
	t.Logf("one call waiting on r0, 3 replicas with the console: per second GET %.2f, SET %.2f, SCAN %.2f, MGET %.2f (PING %.2f from readiness checks)",
		rate("get"), rate("set"), rate("scan"), rate("mget"), rate("ping"))
	if g := after["get"] - before["get"]; float64(g) > secs/0.5+2 {
		t.Errorf("%d GETs in %.1f s while one call waited: more than one per 500 ms poll", g, secs)
	}

	// codecall approvals, against r1.
	t.Setenv("CONSOLE_TOKEN", fleetConsoleToken)
	var out, errOut bytes.Buffer
	if err := approvalsCmd(context.Background(), []string{"approve", "--url", "http://" + f.addrs[1], "--as", "olga", id}, &out, &errOut); err != nil {
		t.Fatalf("codecall approvals approve against r1: %v\n%s", err, errOut.String())
	}
	var o outcome
	select {
	case o = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("the plan on r0 did not go on within 30 s of the approval through r1")
	}
	if o.err != nil {
		t.Fatal(o.err)
	}
	_, result, runID := runResult(t, o.res)
	if result != "[true,true,true,true,true]" {
		t.Fatalf("result %s", result)
	}
	err := approvalsCmd(context.Background(), []string{"deny", "--url", "http://" + f.addrs[2], "--as", "piet", id}, &out, &errOut)
	if err == nil || !strings.Contains(err.Error(), "answered already") {
		t.Fatalf("a second answer through r2: %v, want refused (answered already)", err)
	}
	for _, addr := range f.addrs {
		if p, _ := consoleList(t, addr); len(p) != 0 {
			t.Errorf("%s still lists %+v", addr, p)
		}
	}
	calls := countCalls(t, f.ledger)
	if calls["read o1"] != 1 || calls["delete o1"] != 1 || calls["read o1-after"] != 1 {
		t.Fatalf("ledger %v, want each call once", calls)
	}
	chain := f.auditChain(runID)
	if chain["execute.start"] != 1 || chain["execute.end"] != 1 || chain["tool.call ledger.delete ok"] != 1 {
		t.Fatalf("audit chain %v", chain)
	}
	if by := f.approver(runID); by != "cli olga" {
		t.Fatalf("the audit log's approval of the delete: %q, want channel cli, approver olga", by)
	}
}

// approver returns the channel and approver of the approved decision in a
// run's audit events.
func (f *fleet) approver(runID string) string {
	f.t.Helper()
	files, _ := filepath.Glob(filepath.Join(f.dir, "audit-*.jsonl"))
	var found []string
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			f.t.Fatal(err)
		}
		for line := range strings.Lines(string(b)) {
			var e struct {
				RunID, ParentRunID, Approval, ApprovalChannel, Approver string
			}
			if json.Unmarshal([]byte(line), &e) == nil && (e.RunID == runID || e.ParentRunID == runID) && e.Approval == "approved" {
				found = append(found, e.ApprovalChannel+" "+e.Approver)
			}
		}
	}
	return strings.Join(found, "; ")
}

// TestReplicaRestartWithFileStore: one replica on a bbolt file, SIGKILLed
// between pause and answer and started again, resumes the plan.
func TestReplicaRestartWithFileStore(t *testing.T) {
	if os.Getenv(replicasVar) == "" {
		t.Skip("set " + replicasVar + "=1 to run replicas (.ci/run does)")
	}
	t.Setenv("STATE_KEY_FLEET", fleetKey)
	f := newFleet(t, 1, fmt.Sprintf("state: {store: file, path: %q, keyEnv: STATE_KEY_FLEET}\n", filepath.Join(t.TempDir(), "state.db")))
	f.start(0)
	paused, _ := f.post(f.addrs[0], fleetScript("f1"), "", "")
	token := pausedState(t, paused)
	f.kill(0)
	f.start(0)
	res, _ := f.post(f.addrs[0], fleetScript("f1"), token, "approve")
	_, result, runID := runResult(t, res)
	if result != "[true,true,true,true,true]" {
		t.Fatalf("result %s", result)
	}
	calls := countCalls(t, f.ledger)
	if calls["read f1"] != 1 || calls["delete f1"] != 1 || calls["read f1-after"] != 1 {
		t.Fatalf("ledger %v", calls)
	}
	if chain := f.auditChain(runID); chain["execute.start"] != 1 || chain["execute.end"] != 1 || chain["tool.call ledger.delete ok"] != 1 ||
		chain["tool.call ledger.delete input_required"] != 1 || chain["tool.call ledger.read ok"] != 2 {
		t.Fatalf("audit chain %v", chain)
	}
}

// loadVar turns on the bounded load test (BENCHMARKS.md, "Replicas").
const loadVar = "CODECALLTEST_LOAD"

// redisCommands reads the server's count of commands processed.
func redisCommands(t *testing.T, url string) int64 {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "redis://"), "/0")
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("INFO stats\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	var n int64 = -1
	for n < 0 {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatalf("INFO stats: %v", err)
		}
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "total_commands_processed:"); ok {
			n, _ = strconv.ParseInt(v, 10, 64)
		}
	}
	return n
}

// redisCommandStats reads how many times the server ran each command
// (INFO commandstats), by lower-case name.
func redisCommandStats(t *testing.T, url string) map[string]int64 {
	t.Helper()
	addr := strings.TrimSuffix(strings.TrimPrefix(url, "redis://"), "/0")
	c, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := c.Write([]byte("INFO commandstats\r\n")); err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(c)
	head, err := r.ReadString('\n') // $<length>
	if err != nil || !strings.HasPrefix(head, "$") {
		t.Fatalf("INFO commandstats: %q, %v", head, err)
	}
	n, _ := strconv.Atoi(strings.TrimSpace(head[1:]))
	body := make([]byte, n)
	if _, err := io.ReadFull(r, body); err != nil {
		t.Fatalf("INFO commandstats: %v", err)
	}
	out := map[string]int64{}
	for line := range strings.Lines(string(body)) {
		// cmdstat_get:calls=12,usec=...
		name, rest, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(line), "cmdstat_"), ":calls=")
		if !ok {
			continue
		}
		calls, _, _ := strings.Cut(rest, ",")
		out[name], _ = strconv.ParseInt(calls, 10, 64)
	}
	return out
}

// TestReplicaLoad: a few hundred concurrent 2026-07-28 clients against
// three replicas on one Redis behind HAProxy, a third of them with a plan
// that pauses for approval and is answered (on whichever replica the
// balancer picks). It reports throughput, latency percentiles and Redis
// round trips per run, and checks that no tool ran twice.
func TestReplicaLoad(t *testing.T) {
	if os.Getenv(loadVar) == "" {
		t.Skip("set " + loadVar + "=1 (with " + replicasVar + "=1) to run the replica load test; BENCHMARKS.md has its figures")
	}
	haproxy := requireReplicaTools(t)
	t.Setenv("STATE_KEY_FLEET", fleetKey)
	url := statetest.StartRedis(t)
	f := newFleet(t, 3, fmt.Sprintf("state: {store: redis, url: %q, keyEnv: STATE_KEY_FLEET}\n", url))
	for i := range f.addrs {
		f.start(i)
	}
	f.startHAProxy(haproxy)
	f.waitUp(map[string]bool{"r0": true, "r1": true, "r2": true})

	sessions := 300
	if v, err := strconv.Atoi(os.Getenv(loadVar)); err == nil && v > 1 {
		sessions = v
	}
	before := redisCommands(t, url)
	type sample struct {
		approval bool
		took     time.Duration
	}
	samples := make([]sample, sessions)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range sessions {
		wg.Go(func() {
			s := sample{approval: i%3 == 0}
			id := fmt.Sprintf("s%d", i)
			script := fmt.Sprintf(`const a = await callTool('ledger.read', {id: %q}); return a.ok`, id)
			if s.approval {
				script = fleetScript(id)
			}
			t0 := time.Now()
			res, _, err := f.tryPost(f.haproxy, script, "", "")
			if err == nil && s.approval {
				if res.ResultType != mcp.ResultTypeInputRequired {
					b, _ := json.Marshal(res)
					err = fmt.Errorf("session %d: the plan did not pause: %s", i, b)
				} else {
					res, _, err = f.tryPost(f.haproxy, script, res.RequestState, "approve")
				}
			}
			if err == nil && (res.IsError || res.ResultType == mcp.ResultTypeInputRequired) {
				b, _ := json.Marshal(res)
				err = fmt.Errorf("session %d: %s", i, b)
			}
			if err != nil {
				t.Error(err)
				return
			}
			s.took = time.Since(t0)
			samples[i] = s
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	commands := redisCommands(t, url) - before - 1 // the INFO itself

	if t.Failed() {
		t.FailNow()
	}
	var plain, approved []time.Duration
	for _, s := range samples {
		if s.approval {
			approved = append(approved, s.took)
		} else {
			plain = append(plain, s.took)
		}
	}
	pct := func(d []time.Duration, p float64) time.Duration {
		slices.Sort(d)
		return d[min(len(d)-1, int(float64(len(d))*p))]
	}
	calls := countCalls(t, f.ledger)
	for call, n := range calls {
		if n != 1 {
			t.Errorf("%s ran %d times", call, n)
		}
	}
	wantCalls := len(plain) + 3*len(approved)
	if len(calls) != wantCalls {
		t.Errorf("%d distinct calls in the ledger, want %d", len(calls), wantCalls)
	}
	requests := len(plain) + 2*len(approved)
	t.Logf("replicas 3 (redis, HAProxy round robin), sessions %d (%d with an approval), wall %v: %.0f runs/s, %.0f requests/s",
		sessions, len(approved), elapsed.Round(time.Millisecond), float64(sessions)/elapsed.Seconds(), float64(requests)/elapsed.Seconds())
	t.Logf("plain plan (1 call): p50 %v p95 %v; approval plan (pause, answer, replay; 3 calls): p50 %v p95 %v",
		pct(plain, 0.5).Round(time.Millisecond), pct(plain, 0.95).Round(time.Millisecond),
		pct(approved, 0.5).Round(time.Millisecond), pct(approved, 0.95).Round(time.Millisecond))
	t.Logf("redis commands %d: %.1f per approval plan (plain plans use none)", commands, float64(commands)/float64(len(approved)))
}

// elicitFunc is a client.ElicitationHandler from a function.
type elicitFunc func(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error)

func (f elicitFunc) Elicit(ctx context.Context, req mcp.ElicitationRequest) (*mcp.ElicitationResult, error) {
	return f(ctx, req)
}
