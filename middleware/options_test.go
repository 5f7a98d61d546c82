package middleware_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
	"github.com/codecall-go/codecall/middleware"
	"github.com/codecall-go/codecall/presets"
)

const denyFindContacts = `default decision := {"allow": true, "requireApproval": false, "reason": "open"}

decision := {"allow": false, "requireApproval": false, "reason": "contacts are frozen"} if input.tool.name == "crm.find_contacts"
`

// TestReloadOptionsInAnyOrder checks that WithoutReload and
// WithConfigFile (or WithConfig) give the same watching whichever comes
// first: WithoutReload turns off both the config and the policy watcher,
// and WithConfigFile given after it does not turn either back on. Each
// case edits the config file and a policy file after Wrap and checks which
// edits apply.
func TestReloadOptionsInAnyOrder(t *testing.T) {
	tests := []struct {
		order      []string // options by name, in the order given to Wrap
		wantConfig bool     // an edit of the config file applies
		wantPolicy bool     // an edit of a policy file applies
	}{
		{[]string{"WithConfigFile"}, true, true},
		{[]string{"WithConfigFile", "WithoutReload"}, false, false},
		{[]string{"WithoutReload", "WithConfigFile"}, false, false},
		{[]string{"WithConfig"}, false, true},
		{[]string{"WithConfig", "WithoutReload"}, false, false},
		{[]string{"WithoutReload", "WithConfig"}, false, false},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.order, ","), func(t *testing.T) {
			t.Parallel()
			policyDir := t.TempDir()
			file := filepath.Join(t.TempDir(), "codecall.yaml")
			mcptest.WritePolicy(t, policyDir, "policy.rego", regoHeader+allowAll)
			base := fmt.Sprintf("directCalls: {enabled: true}\npolicy: {paths: [%q]}\n", policyDir)
			writeFile(t, file, base)
			byName := map[string]middleware.Option{
				"WithConfigFile": middleware.WithConfigFile(file),
				"WithConfig":     middleware.WithConfig(config(func(c *presets.Config) { c.Policy.Paths = []string{policyDir} })),
				"WithoutReload":  middleware.WithoutReload(),
			}
			var opts []middleware.Option
			for _, name := range tt.order {
				opts = append(opts, byName[name])
			}

			srv := newShop(t)
			wrap(t, srv, opts...)
			s := connect(t, srv)
			configApplied := func() bool { return slices.Contains(s.list(), "billing.list_invoices") }
			policyApplied := func() bool {
				return mcptest.CallVia(t, s.c, "invoke", "crm.find_contacts", map[string]any{"query": "x"}) == "ACCESS_DENIED"
			}
			if configApplied() || policyApplied() {
				t.Fatal("an edit shows before it was made")
			}

			settled := time.Now().Add(time.Second) // well past both watchers' debounce
			mcptest.WritePolicy(t, policyDir, "policy.rego", regoHeader+denyFindContacts)
			writeFile(t, file, base+"tools:\n  \"billing.list_invoices\": {visibleInListTools: true}\n")
			if tt.wantPolicy {
				waitFor(t, policyApplied, "the policy edit to apply")
			}
			if tt.wantConfig {
				waitFor(t, configApplied, "the config edit to apply")
			}
			time.Sleep(time.Until(settled))
			if !tt.wantPolicy && policyApplied() {
				t.Error("the policy edit applied, but policy files must not be watched")
			}
			if !tt.wantConfig && configApplied() {
				t.Error("the config edit applied, but the config file must not be watched")
			}
		})
	}
}

// TestEnvWithoutConfigFile checks that CODECALL_ variables apply to Wrap
// without a config file, as they do on top of one, with the same strict
// errors, and that WithConfig's config is taken as the program built it.
func TestEnvWithoutConfigFile(t *testing.T) {
	t.Run("applied", func(t *testing.T) {
		t.Setenv("CODECALL_SEARCH__TOP_K", "3")
		t.Setenv("CODECALL_METATOOLS__PREFIX", "codecall_")
		srv := newShop(t)
		cc := wrap(t, srv)
		st, release := cc.Acquire(t.Context())
		defer release()
		if st.Config.Search.TopK != 3 || st.Config.MetaTools.Prefix != "codecall_" {
			t.Errorf("environment not applied without a file: topK %d, prefix %q", st.Config.Search.TopK, st.Config.MetaTools.Prefix)
		}
	})
	t.Run("unknown variable", func(t *testing.T) {
		t.Setenv("CODECALL_SEARCH__TOPKK", "3")
		_, err := middleware.Wrap(newShop(t))
		if err == nil || !strings.Contains(err.Error(), "CODECALL_SEARCH__TOPKK") || !strings.Contains(err.Error(), "did you mean CODECALL_SEARCH__TOP_K?") {
			t.Fatalf("want an error naming the variable and the key it misspells, got %v", err)
		}
	})
	t.Run("WithConfig as given", func(t *testing.T) {
		t.Setenv("CODECALL_SEARCH__TOP_K", "3")
		srv := newShop(t)
		cc := wrap(t, srv, middleware.WithConfig(presets.Default()))
		st, release := cc.Acquire(t.Context())
		defer release()
		if st.Config.Search.TopK != presets.Default().Search.TopK {
			t.Errorf("WithConfig's config was changed by the environment: topK %d", st.Config.Search.TopK)
		}
	})
}
