package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/term"
)

// isTerminal reports whether r is a terminal: a person typing, not an MCP
// client that started codecall with pipes.
func isTerminal(r io.Reader) bool {
	f, ok := r.(interface{ Fd() uintptr })
	return ok && term.IsTerminal(int(f.Fd()))
}

// banner is what serve tells a person who started it from a terminal.
type banner struct {
	// served says what is served: "the built-in demo (37 tools)".
	served string
	// url is the streamable HTTP endpoint; empty for stdio.
	url string
	// exe is the binary to name in the client snippet; args are serve's
	// arguments as given.
	exe  string
	args []string
}

// write prints the banner: what is served, which client snippet to use
// and how to quit. On stdio it says that the terminal carries JSON-RPC for
// an MCP client: typing into it gets protocol errors, not help.
func (b banner) write(w io.Writer) {
	var s strings.Builder
	fmt.Fprintf(&s, "codecall %s: serving %s", version, b.served)
	if b.url != "" {
		fmt.Fprintf(&s, " over streamable HTTP at %s\n\n", b.url)
		fmt.Fprintf(&s, "Point an MCP client at that URL, e.g. in VS Code's .vscode/mcp.json:\n")
		fmt.Fprintf(&s, "  {\"servers\": {\"codecall\": {\"type\": \"http\", \"url\": %s}}}\n", quote(b.url))
		fmt.Fprintf(&s, "or try it in the MCP Inspector: npx @modelcontextprotocol/inspector (transport \"Streamable HTTP\", URL above).\n")
	} else {
		fmt.Fprintf(&s, " over stdio.\n\n")
		fmt.Fprintf(&s, "This terminal is not a chat: stdin and stdout now carry JSON-RPC for an MCP client,\n")
		fmt.Fprintf(&s, "and anything typed here is answered with a JSON-RPC error. Let a client start codecall instead,\n")
		fmt.Fprintf(&s, "e.g. Claude Desktop (claude_desktop_config.json) or Cursor (~/.cursor/mcp.json):\n")
		args, _ := json.Marshal(b.args)
		fmt.Fprintf(&s, "  {\"mcpServers\": {\"codecall\": {\"command\": %s, \"args\": %s}}}\n", quote(b.exe), strings.ReplaceAll(string(args), "\",\"", "\", \""))
		if strings.Contains(filepath.ToSlash(b.exe), "/go-build") {
			fmt.Fprintf(&s, "(this binary is go run's temporary one: install codecall first with go install ./cmd/codecall)\n")
		}
		fmt.Fprintf(&s, "or try it in the MCP Inspector: npx @modelcontextprotocol/inspector %s\n", strings.Join(append([]string{b.exe}, b.args...), " "))
		fmt.Fprintf(&s, "Claude Code, VS Code and more: README, \"Connect a client\". To search from the shell: codecall search \"refund a payment\"\n")
	}
	fmt.Fprintf(&s, "Quit with Ctrl-C.\n\n")
	_, _ = io.WriteString(w, s.String())
}

// executable is the path to name in client snippets: this binary's
// absolute path, or "codecall" when it cannot be found.
func executable() string {
	exe, err := os.Executable()
	if err != nil {
		return "codecall"
	}
	return exe
}

// servedWhat names what serve serves, for the banner.
func servedWhat(ctx context.Context, src source, b *built) string {
	if b.gw != nil {
		return fmt.Sprintf("the tools of %d upstream servers (started in the background; see the log)", len(b.gw.Status()))
	}
	st, release := b.cc.Acquire(ctx)
	n := len(st.Catalog.Enabled())
	release()
	if src.catalogFile != "" {
		return fmt.Sprintf("the catalog %s (%d tools)", src.catalogFile, n)
	}
	return fmt.Sprintf("the built-in demo (%d tools: CRM, billing, support, analytics, inventory, notifications)", n)
}

// quote is s as a JSON string.
func quote(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}
