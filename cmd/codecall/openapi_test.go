package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/codecall-go/codecall/internal/mcptest"
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

// codecall serve --openapi watches the document: an edit reloads the app,
// and the client is told its tools changed.
func TestServeOpenAPIReloadsOnDocumentEdit(t *testing.T) {
	dir := t.TempDir()
	src, err := os.ReadFile("../../examples/openapi/bookshop.yaml")
	if err != nil {
		t.Fatal(err)
	}
	doc := filepath.Join(dir, "bookshop.yaml")
	if err := os.WriteFile(doc, src, 0o600); err != nil {
		t.Fatal(err)
	}
	config := filepath.Join(dir, "codecall.yaml")
	if err := os.WriteFile(config, []byte("tools:\n  \"*\": {visibleInListTools: true}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	inR, inW := io.Pipe()
	var out, errb mcptest.Buffer
	done := make(chan int)
	go func() {
		done <- run(context.Background(), []string{"serve", "--openapi", "shop=" + doc, "--config", config}, inR, &out, &errb)
	}()
	send := func(line string) {
		if _, err := io.WriteString(inW, line+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		deadline := time.Now().Add(30 * time.Second)
		for !cond() {
			if time.Now().After(deadline) {
				t.Fatalf("timed out waiting for %s; stdout:\n%s\nstderr:\n%s", what, out.String(), errb.String())
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`{"jsonrpc":"2.0","id":2,"method":"tools/list"}`)
	waitFor("tools/list", func() bool { return strings.Contains(out.String(), `"id":2`) })
	if !strings.Contains(out.String(), `"shop.getOrder"`) {
		t.Fatalf("shop.getOrder is not listed:\n%s", out.String())
	}
	edited := strings.Replace(string(src), "operationId: getOrder", "operationId: fetchOrder", 1)
	if err := os.WriteFile(doc, []byte(edited), 0o600); err != nil {
		t.Fatal(err)
	}
	waitFor("tools/list_changed", func() bool { return strings.Contains(out.String(), "notifications/tools/list_changed") })
	for i := 3; ; i++ {
		send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/list"}`, i))
		waitFor("tools/list", func() bool { return strings.Contains(out.String(), fmt.Sprintf(`"id":%d`, i)) })
		if strings.Contains(out.String(), `"shop.fetchOrder"`) {
			break
		}
		if i > 50 {
			t.Fatalf("shop.fetchOrder never listed:\n%s", out.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	inW.Close()
	if code := <-done; code != 0 {
		t.Fatalf("serve exited %d: %s", code, errb.String())
	}
}
