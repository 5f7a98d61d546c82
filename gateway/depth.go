package gateway

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/codecall-go/codecall/presets"
)

// MaxDepth is how many gateways may run nested, each an upstream of the
// one before. A gateway tells every stdio upstream it starts how many
// gateways run above it, in presets.EnvGatewayDepth; New refuses when
// that number reaches MaxDepth. So an upstream entry that starts the
// gateway again (directly, or through a chain of files naming each other)
// ends after MaxDepth processes instead of forking without bound. HTTP
// and SSE upstreams are separate servers, not children; nothing is passed
// to them.
const MaxDepth = 4

// ErrTooDeep is wrapped by the error of New for a gateway nested MaxDepth
// deep.
var ErrTooDeep = errors.New("gateway: too many gateways nested")

// nestingDepth reads how many gateways run above this one; none when the
// variable is not set.
func nestingDepth(lookup func(string) (string, bool)) (int, error) {
	v, ok := lookup(presets.EnvGatewayDepth)
	if !ok || v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("gateway: %s=%q is not a nesting depth (a whole number, 0 or more); a gateway sets it for the upstreams it starts, so do not set it yourself", presets.EnvGatewayDepth, v)
	}
	if n >= MaxDepth {
		return 0, fmt.Errorf("%w: %d gateways already run above this one (%s=%d), and at most %d may run nested; an upstream entry probably starts the gateway again on the same servers (check the commands and --upstreams files of the upstreams)",
			ErrTooDeep, n, presets.EnvGatewayDepth, n, MaxDepth)
	}
	return n, nil
}
