package meta

import (
	"strings"
	"testing"

	"github.com/codecall-go/codecall/presets"
	"github.com/codecall-go/codecall/vm"
)

func TestRunnerFor(t *testing.T) {
	worker := InProcess{} // any Runner the state was given
	locked, _ := presets.LimitsFor(presets.LockedDown)
	secure, _ := presets.LimitsFor(presets.Secure)
	for _, tc := range []struct {
		name    string
		runner  Runner
		preset  presets.Name
		limits  presets.Limits
		refused bool
	}{
		{"the state's runner", worker, presets.LockedDown, locked, false},
		{"locked_down without workers", nil, presets.LockedDown, locked, true},
		{"secure without workers runs in process", nil, presets.Secure, secure, false},
	} {
		st := &State{Runner: tc.runner, Config: &presets.Config{Preset: tc.preset}}
		got, why := st.runnerFor(tc.limits)
		switch {
		case tc.refused && (got != nil || why == nil || why.Kind != vm.KindIsolation || why.Hint == "" || !strings.Contains(why.Message, "locked_down")):
			t.Errorf("%s: got %v, %+v; want the isolation refusal with a hint", tc.name, got, why)
		case !tc.refused && (got == nil || why != nil):
			t.Errorf("%s: got %v, %+v; want a runner", tc.name, got, why)
		}
	}
}
