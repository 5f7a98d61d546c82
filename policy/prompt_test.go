package policy

import (
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/catalog"
)

// The approval prompt says how the server behind the tool runs, and in
// which directory, so that a person approving a call to an unconfined
// server knows it.
func TestPromptShowsSandboxProfile(t *testing.T) {
	a := NewApprovals(time.Minute, false)
	tests := []struct {
		profile, cwd, want string
	}{
		{"default", "", "Runs in: sandbox default: no network, only its own directories visible\n"},
		{"default+network", "", "Runs in: sandbox default+network: the host's network"},
		{"none", "", "Runs in: sandbox none: the server runs with the gateway's own rights"},
		{"remote", "", "Runs in: a remote server"},
		{"default", "/srv/work", "Runs in: sandbox default: no network, only its own directories visible; working directory /srv/work\n"},
		{"", "/srv/work", "Runs in: working directory /srv/work\n"},
		{"", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.profile+tc.cwd, func(t *testing.T) {
			p := a.Prompt(ApprovalRequest{Tool: &catalog.Tool{Name: "fs.write_file", SandboxProfile: tc.profile, Cwd: tc.cwd}, Via: ViaInvoke})
			if tc.want == "" {
				if strings.Contains(p.Message, "Runs in:") {
					t.Errorf("a tool without a profile got a line: %s", p.Message)
				}
				return
			}
			if !strings.Contains(p.Message, tc.want) {
				t.Errorf("prompt lacks %q:\n%s", tc.want, p.Message)
			}
		})
	}
}
