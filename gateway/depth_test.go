package gateway

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/codecall-go/codecall/presets"
)

// Each stdio upstream learns how many gateways run above it, whatever its
// env and envAllowlist say, and a gateway nested MaxDepth deep refuses to
// start.
func TestNestingDepth(t *testing.T) {
	for depth := range MaxDepth {
		env := map[string]string{presets.EnvGatewayDepth: strconv.Itoa(depth)}
		lookup := func(k string) (string, bool) { v, ok := env[k]; return v, ok }
		u := fixture(t, "ok", map[string]string{presets.EnvGatewayDepth: "0"}) // an entry cannot reset it
		u.EnvAllowlist = []string{presets.EnvGatewayDepth}
		g, _ := newGateway(t, map[string]presets.Upstream{"fx": u}, WithLookupEnv(lookup))
		if err := g.Start(context.Background()); err != nil {
			t.Fatal(err)
		}
		res := call(t, connect(t, g.Server()), "fx.getenv", map[string]any{"name": presets.EnvGatewayDepth})
		if got, want := text(res), strconv.Itoa(depth+1); got != want {
			t.Errorf("under a gateway at depth %d the upstream sees %s=%s, want %s", depth, presets.EnvGatewayDepth, got, want)
		}
	}

	for _, v := range []string{strconv.Itoa(MaxDepth), "99"} {
		lookup := func(k string) (string, bool) {
			if k == presets.EnvGatewayDepth {
				return v, true
			}
			return "", false
		}
		_, err := New(map[string]presets.Upstream{"fx": fixture(t, "ok", nil)}, WithLookupEnv(lookup))
		if !errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), presets.EnvGatewayDepth+"="+v) || !strings.Contains(err.Error(), "starts the gateway again") {
			t.Errorf("New at depth %s = %v, want ErrTooDeep naming the variable and the likely cause", v, err)
		}
	}
	for _, v := range []string{"x", "-1", "1.5"} {
		lookup := func(k string) (string, bool) { return v, k == presets.EnvGatewayDepth }
		if _, err := New(nil, WithLookupEnv(lookup)); err == nil || errors.Is(err, ErrTooDeep) || !strings.Contains(err.Error(), "not a nesting depth") {
			t.Errorf("New with %s=%q = %v, want an error saying it is not a depth", presets.EnvGatewayDepth, v, err)
		}
	}
}
