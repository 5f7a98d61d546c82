package main

import (
	"strings"
	"testing"
)

func TestOpenAPIFlag(t *testing.T) {
	tests := []struct {
		args []string
		code int
		want []string
	}{
		{[]string{"search", "--openapi", "shop=../../examples/openapi/bookshop.yaml", "order books and ship them"}, 0,
			[]string{"shop.createOrder", "shop"}},
		{[]string{"search", "--openapi", "shop", "x"}, 2, []string{"NAME=URL or NAME=FILE"}},
		{[]string{"search", "--openapi", "a=x.yaml", "--openapi", "a=y.yaml", "x"}, 2, []string{`"a" is given twice`}},
		{[]string{"search", "--openapi", "bad id=x.yaml", "x"}, 1, []string{"server id"}},
	}
	for _, tt := range tests {
		code, out, errOut := runCLI(t, tt.args...)
		for _, w := range tt.want {
			if code != tt.code || !strings.Contains(out+errOut, w) {
				t.Errorf("%v: code %d (want %d), output %q %q, want it to mention %q", tt.args, code, tt.code, out, errOut, w)
			}
		}
	}
}

func TestCheckOpenAPI(t *testing.T) {
	good := writeFile(t, "good.yaml", "upstreams: {servers: {shop: {openapi: "+abs("../../examples/openapi/bookshop.yaml")+"}}}\n")
	code, out, _ := runCLI(t, "check", "--config", good)
	if code != 0 || !strings.Contains(out, "OpenAPI 3.0.3, 8 operations") || !strings.Contains(out, "http://127.0.0.1:4010") {
		t.Errorf("check of a good document: code %d\n%s", code, out)
	}
	bad := writeFile(t, "bad.yaml", "upstreams: {servers: {shop: {openapi: missing.yaml}}}\n")
	code, out, _ = runCLI(t, "check", "--config", bad)
	if code == 0 || !strings.Contains(out, "PROBLEM") || !strings.Contains(out, "missing.yaml") {
		t.Errorf("check of a missing document: code %d\n%s", code, out)
	}
}
