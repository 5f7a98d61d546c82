package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestPolicyTest checks codecall policy test against opa test's output
// and exit codes: 0 when every test passes, 2 when one fails, 1 when the
// policy does not compile.
func TestPolicyTest(t *testing.T) {
	bad := writeFile(t, "bad_test.rego", "package codecall\n\ntest_x if { y }\n")
	tests := []struct {
		name    string
		args    []string
		code    int
		stdout  []string
		stderr  []string
		without []string
	}{
		{"passing", []string{"testdata/policytest/pass"}, 0, []string{"PASS: 2/2"}, nil, []string{"FAIL"}},
		{"failing", []string{"testdata/policytest/fail"}, 2, []string{
			"data.codecall.test_large_refund_runs_unasked: FAIL", "PASS: 1/2", "FAIL: 1/2"}, nil, []string{"test_small_refund_runs: PASS"}},
		{"verbose after the path", []string{"testdata/policytest/fail", "-v"}, 2, []string{"test_small_refund_runs: PASS", "FAILURES", "Fail not d.requireApproval"}, nil, nil},
		{"run filter", []string{"--run", "small", "testdata/policytest/fail"}, 0, []string{"PASS: 1/1"}, nil, nil},
		{"json", []string{"--format", "json", "testdata/policytest/fail"}, 2, []string{`"name": "test_large_refund_runs_unasked"`, `"fail": true`}, nil, nil},
		{"coverage", []string{"--coverage", "testdata/policytest/pass"}, 0, []string{`"covered"`, `"coverage"`, "small.rego"}, nil, nil},
		{"does not compile", []string{bad}, 1, nil, []string{"rego_unsafe_var_error", "bad_test.rego:3"}, nil},
		{"no path", nil, 1, nil, []string{"needs the paths"}, nil},
		{"config paths", []string{"--config", "../../examples/codecall-policies.yaml"}, 0, []string{"PASS:"}, nil, []string{"FAIL"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"policy", "test"}, tt.args...)...)
			if code != tt.code {
				t.Errorf("exit code %d, want %d\nstdout:\n%s\nstderr:\n%s", code, tt.code, out, errOut)
			}
			for _, w := range tt.stdout {
				if !strings.Contains(out, w) {
					t.Errorf("stdout lacks %q:\n%s", w, out)
				}
			}
			for _, w := range tt.stderr {
				if !strings.Contains(errOut, w) {
					t.Errorf("stderr lacks %q:\n%s", w, errOut)
				}
			}
			for _, w := range tt.without {
				if strings.Contains(out, w) {
					t.Errorf("stdout has %q:\n%s", w, out)
				}
			}
		})
	}
}

func TestPolicyEval(t *testing.T) {
	policies := t.TempDir()
	writeAt(t, policies, "p.rego", "package codecall\n\ndefault decision := {\"allow\": false, \"reason\": \"closed\"}\n\ndecision := {\"allow\": true, \"reason\": \"small\"} if input.args.amount_cents < 100\n")
	cfg := writeAt(t, policies, "codecall.yaml", "policy: {paths: [.]}\n")
	tests := []struct {
		name      string
		args      []string
		code      int
		decidedBy string
		allow     bool
		approval  bool
		reason    string
		hasInput  bool
	}{
		{"read-only runs", []string{"--tool", "crm.find_contacts", "--args", `{"query": "a"}`}, 0, "default", true, false, "read-only", true},
		{"open world asks", []string{"--tool", "notifications.send_email", "--args", `{"to": "a@example.com", "subject": "s", "body": "b"}`}, 0, "default", true, true, "open world", true},
		{"rego allows", []string{"--config", cfg, "--tool", "billing.refund_payment", "--args", `{"payment_id": "pay_001", "amount_cents": 50}`}, 0, "data.codecall.decision", true, true, "small", true},
		{"rego denies", []string{"--config", cfg, "--tool", "billing.refund_payment", "--args", `{"payment_id": "pay_001", "amount_cents": 5000}`}, 0, "data.codecall.decision", false, false, "closed", true},
		{"unknown tool", []string{"--tool", "crm.nope"}, 0, "access", false, false, "", false},
		{"invalid input", []string{"--tool", "crm.find_contacts", "--args", `{"query": 3}`}, 0, "validation", false, false, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, out, errOut := runCLI(t, append([]string{"policy", "eval"}, tt.args...)...)
			if code != tt.code {
				t.Fatalf("exit code %d, want %d\n%s%s", code, tt.code, out, errOut)
			}
			var rep evalReport
			if err := json.Unmarshal([]byte(out), &rep); err != nil {
				t.Fatalf("output is not the report: %v\n%s", err, out)
			}
			if rep.DecidedBy != tt.decidedBy || rep.Decision.Allow != tt.allow || rep.NeedsApproval != tt.approval || !strings.Contains(rep.Decision.Reason, tt.reason) {
				t.Errorf("got %+v", rep)
			}
			if (rep.Input != nil) != tt.hasInput {
				t.Errorf("input present: %v, want %v", rep.Input != nil, tt.hasInput)
			}
			if tt.hasInput && (rep.Input["tool"] == nil || rep.Input["via"] != "execute") {
				t.Errorf("input document incomplete: %v", rep.Input)
			}
		})
	}
	for _, bad := range [][]string{{"--tool", "x", "--args", "[1]"}, {"--tool", "x", "--args", "{"}, {"--args", "{}"}, {"--tool", "x", "--via", "mail"}} {
		if code, _, errOut := runCLI(t, append([]string{"policy", "eval"}, bad...)...); code != 1 || errOut == "" {
			t.Errorf("policy eval %q: exit %d, stderr %q; want 1 with a reason", bad, code, errOut)
		}
	}
}

// writeAt writes a file named name in dir and returns its path.
func writeAt(t *testing.T, dir, name, content string) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}
