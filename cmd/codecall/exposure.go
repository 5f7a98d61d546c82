package main

import (
	"crypto/sha256"
	"crypto/subtle"
	"errors"
	"flag"
	"fmt"
	"net"
	"os"
)

// httpAuth holds the flags that decide who may call `serve --http`.
type httpAuth struct {
	token    string
	tokenEnv string
	insecure bool
}

func (a *httpAuth) register(fs *flag.FlagSet) {
	fs.StringVar(&a.token, "token", "", "with --http, require this bearer `token` (prefer --token-env: flags show in ps)")
	fs.StringVar(&a.tokenEnv, "token-env", "", "with --http, require the bearer token held in environment variable `NAME`")
	fs.BoolVar(&a.insecure, "http-insecure-no-auth", false, "with --http on an address other than loopback, serve without a bearer token: anyone who can reach the port can run plans (logged as a warning)")
}

// bearer returns the token every HTTP request must carry, "" for none.
func (a httpAuth) bearer() (string, error) {
	if a.tokenEnv == "" {
		return a.token, nil
	}
	v, ok := os.LookupEnv(a.tokenEnv)
	if !ok || v == "" {
		return "", fmt.Errorf("--token-env %s: the variable is not set or empty", a.tokenEnv)
	}
	if a.token != "" {
		return "", errors.New("--token and --token-env both given; use one")
	}
	return v, nil
}

// exposure is who can reach an HTTP endpoint: decided once from the bind
// address and the authentication flags by decideExposure, which serve
// obeys and check reports.
type exposure struct {
	addr     string
	loopback bool // bound to a loopback address: other hosts cannot connect
	token    bool // a bearer token is required
	open     bool // not loopback, no token: the operator said --http-insecure-no-auth
}

// errOpenHTTP is wrapped by decideExposure's refusal of an endpoint that
// anyone on the network could call.
var errOpenHTTP = errors.New("open HTTP endpoint refused")

// decideExposure is the one rule for `serve --http addr`: a loopback bind
// needs nothing (a token, if given, is still required); any other bind
// needs a bearer token, or the explicit --http-insecure-no-auth.
func decideExposure(addr, bearer string, insecure bool) (exposure, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return exposure{}, fmt.Errorf("--http %s: %v; want host:port such as 127.0.0.1:8080", addr, err)
	}
	e := exposure{addr: addr, loopback: isLoopbackName(host), token: bearer != ""}
	switch {
	case insecure && e.token:
		return e, errors.New("--http-insecure-no-auth and a bearer token both given; the token would be required anyway, so drop one")
	case e.loopback || e.token:
	case insecure:
		e.open = true
	default:
		return e, fmt.Errorf("%w: --http %s listens on %s with no bearer token, so anyone who can reach the port could run plans and call every tool. "+
			"Require a token with --token-env NAME (or --token), bind a loopback address such as %s, or accept an open endpoint with --http-insecure-no-auth",
			errOpenHTTP, addr, bindPlace(host), net.JoinHostPort("127.0.0.1", port))
	}
	return e, nil
}

// bindPlace says where a listener on host accepts connections.
func bindPlace(host string) string {
	if ip := net.ParseIP(host); host == "" || ip != nil && ip.IsUnspecified() {
		return "every network interface"
	}
	return "a network address (" + host + ")"
}

func (e exposure) String() string {
	host, _, _ := net.SplitHostPort(e.addr)
	switch {
	case e.loopback && e.token:
		return "loopback only, bearer token required"
	case e.loopback:
		return "loopback only, no bearer token: any process on this host can call it"
	case e.token:
		return "reachable on " + bindPlace(host) + ", bearer token required"
	}
	return "OPEN: reachable on " + bindPlace(host) + " with no authentication (--http-insecure-no-auth): anyone who can reach the port can run plans and call every tool"
}

// sameToken compares a presented token with the required one in constant
// time, whatever their lengths (subtle.ConstantTimeCompare returns early
// on a length mismatch, so the digests are compared instead).
func sameToken(got, want string) bool {
	g, w := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(want))
	return subtle.ConstantTimeCompare(g[:], w[:]) == 1
}
