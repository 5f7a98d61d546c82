package e2e

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// requirePython skips a test where no python3 3.11+ runs Python plans.
func requirePython(t *testing.T) {
	t.Helper()
	if os.Getenv("CODECALLTEST_PYTHON") == "0" {
		t.Skip("CODECALLTEST_PYTHON=0: Python end-to-end tests skipped")
	}
	out, err := exec.Command("python3", "-I", "-S", "-c", "import sys; print(sys.version_info >= (3, 11))").Output()
	if err != nil || strings.TrimSpace(string(out)) != "True" {
		if os.Getenv("CODECALLTEST_PYTHON") == "1" {
			t.Fatalf("CODECALLTEST_PYTHON=1 and no python3 3.11+: %v %q", err, out)
		}
		t.Skipf("Python plans need python3 3.11 or later on PATH (%v, %q): Python end-to-end tests skipped", err, out)
	}
}

// pythonConfig writes a configuration that takes Python plans.
func pythonConfig(t *testing.T) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "codecall.yaml")
	yaml := "preset: secure\nvm:\n  timeout: 10s\n  isolation: process\n  languages: [javascript, python]\n"
	if err := os.WriteFile(path, []byte(yaml), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// planResult is codecall.execute's structured result.
type planResult struct {
	Status    string          `json:"status"`
	Result    json.RawMessage `json:"result"`
	Error     *planError      `json:"error"`
	Logs      []struct{ Level, Message string }
	ToolTrace []struct {
		ToolName string `json:"toolName"`
		OK       bool   `json:"ok"`
		Error    string `json:"error"`
	} `json:"toolTrace"`
	ApprovalState string `json:"approvalState"`
}

type planError struct {
	Message  string `json:"message"`
	Name     string `json:"name"`
	Code     string `json:"code"`
	Location *struct {
		Line, Column int
	} `json:"location"`
}

// TestPythonPlansGoSDK runs Python plans through codecall serve (the
// embedded demo, process isolation) with the official Go SDK client over
// stdio: discovery, two apps called at once with asyncio.gather, a
// filtered result; a call that needs a person's approval pauses the
// Python plan and resumes it; syntax errors carry their position.
func TestPythonPlansGoSDK(t *testing.T) {
	skipE2E(t)
	requirePython(t)
	root := moduleRoot(t)
	bin := buildCLI(t, root)
	ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
	defer cancel()
	wire := &wireLog{}
	cs := connectStdio(ctx, t, bin, wire, false, "serve", "--config", pythonConfig(t))
	defer closeSession(t, cs)

	const plan = `import asyncio
servers = await list_servers()
hits = await search_tool_docs("list unpaid invoices of a customer", limit=3)
contacts, invoices = await asyncio.gather(
    mcp_crm.find_contacts(status="customer"),
    call_tool("billing.list_invoices", {"status": "overdue"}),
)
print("customers:", len(contacts["contacts"]))
overdue = {inv["customer_id"] for inv in invoices["invoices"]}
result = {
    "apps": [s for s in servers if s in ("crm", "billing")],
    "found": [h["name"] for h in hits],
    "overdueCustomers": sorted(c["id"] for c in contacts["contacts"] if c["id"] in overdue),
}
`
	var res planResult
	callMeta(ctx, t, cs, "codecall.execute", map[string]any{"language": "python", "script": plan}, &res)
	if res.Status != "ok" {
		t.Fatalf("the Python plan ended %s: %+v", res.Status, res.Error)
	}
	var got struct {
		Apps, Found, OverdueCustomers []string
	}
	if err := json.Unmarshal(res.Result, &got); err != nil {
		t.Fatalf("result %s: %v", res.Result, err)
	}
	if strings.Join(got.Apps, ",") != "billing,crm" || len(got.Found) == 0 || got.Found[0] == "" {
		t.Errorf("discovery inside the plan: %s", res.Result)
	}
	if len(res.ToolTrace) != 2 || !res.ToolTrace[0].OK || !res.ToolTrace[1].OK {
		t.Errorf("toolTrace %+v, want the two calls, ok", res.ToolTrace)
	}
	if len(res.Logs) != 1 || !strings.HasPrefix(res.Logs[0].Message, "customers: ") {
		t.Errorf("logs %+v, want the print", res.Logs)
	}
	t.Logf("python plan: %s", res.Result)

	// A call the built-in policy asks a person about: the plan pauses,
	// the client's handler approves, the plan goes on.
	before := approvals.Load()
	callMetaResult(ctx, t, cs, "codecall.execute", map[string]any{"language": "python", "script": `
try:
    r = await mcp_crm.delete_contact(contact_id="con_008")
    result = {"deleted": r}
except ToolError as e:
    result = {"code": e.code, "message": e.message}
`}, false, &res)
	if res.Status != "ok" || approvals.Load() == before {
		t.Errorf("the approval did not pause and resume the Python plan: status %s, prompts %d, result %s", res.Status, approvals.Load()-before, res.Result)
	}
	if strings.Contains(string(res.Result), `"code"`) {
		t.Errorf("the approved call failed: %s", res.Result)
	}

	// Syntax errors name line and column.
	callMetaResult(ctx, t, cs, "codecall.execute", map[string]any{"language": "python", "script": "x = 1\nresult = (x +\n"}, true, &res)
	if res.Status != "syntax_error" || res.Error == nil || res.Error.Location == nil || res.Error.Location.Line < 2 {
		t.Errorf("syntax error: %+v", res.Error)
	}
	// A tool error raises ToolError; unhandled, it ends the plan as tool_error.
	callMetaResult(ctx, t, cs, "codecall.execute", map[string]any{"language": "python", "script": `result = await call_tool("crm.get_contact", {"contact_id": "con_nope"})`}, true, &res)
	if res.Status != "tool_error" || res.Error == nil || res.Error.Code == "" {
		t.Errorf("unhandled tool error: %s %+v", res.Status, res.Error)
	}
	wire.check(t, false)
}

// TestPythonPlansGateway runs a Python plan through codecall serve
// --upstreams in front of the npm reference servers (filesystem, memory,
// everything) with the Go SDK client: it discovers the upstreams, writes a
// file and stores an entity, then reads both back at once with
// asyncio.gather, approving each call as a person would.
func TestPythonPlansGateway(t *testing.T) {
	s := prepare(t)
	requirePython(t)
	serversFile, files := s.npmUpstreams(t, nil)
	ctx, cancel := context.WithTimeout(context.Background(), subtestTimeout)
	defer cancel()
	wire := &wireLog{}
	cs := connectStdio(ctx, t, s.bin, wire, false, "serve", "--upstreams", serversFile, "--config", pythonConfig(t))
	defer closeSession(t, cs)
	const plan = `import asyncio
servers = await list_servers()
path = codecall_context["dir"] + "/python-note.txt"
await mcp_filesystem.write_file(path=path, content="written by a Python plan")
await mcp_memory.create_entities(entities=[{"name": "python-note", "entityType": "file", "observations": ["stored at " + path]}])
file, graph = await asyncio.gather(
    mcp_filesystem.read_text_file(path=path),
    call_tool("memory.open_nodes", {"names": ["python-note"]}),
)
text = file if isinstance(file, str) else file["content"]
entity = graph["entities"][0]
result = {"servers": [s for s in servers if s in ("everything", "filesystem", "memory")], "text": text,
          "entity": entity["name"], "sameFile": entity["observations"][0].endswith(path)}
`
	var res planResult
	callMeta(ctx, t, cs, "codecall.execute", map[string]any{"language": "python", "script": plan, "context": map[string]any{"dir": files}}, &res)
	if res.Status != "ok" {
		t.Fatalf("the Python plan ended %s: %+v", res.Status, res.Error)
	}
	var got struct {
		Servers      []string
		Text, Entity string
		SameFile     bool
	}
	if err := json.Unmarshal(res.Result, &got); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got.Servers, ",") != "everything,filesystem,memory" || got.Text != "written by a Python plan" || got.Entity != "python-note" || !got.SameFile {
		t.Errorf("result %s", res.Result)
	}
	if b, err := os.ReadFile(filepath.Join(files, "python-note.txt")); err != nil || string(b) != "written by a Python plan" {
		t.Errorf("the file the plan wrote: %q %v", b, err)
	}
	if len(res.ToolTrace) != 4 {
		t.Errorf("toolTrace %+v, want 4 calls", res.ToolTrace)
	}
	wire.check(t, false)
}
