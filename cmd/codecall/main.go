// Command codecall puts CodeCall in front of an MCP tool set: the embedded
// demo server, a static catalog file, or upstream MCP servers.
//
//	codecall serve [--config FILE] [--catalog FILE | --upstreams FILE] [--http ADDR [--token-env NAME | --http-insecure-no-auth]]
//	codecall search [--catalog FILE] [--config FILE] [--app A] [--top K] [--json] [--explain] QUERY
//	codecall check [--config FILE] [--catalog FILE] [--upstreams FILE] [--http ADDR [--token-env NAME]]
//	codecall policy test [--coverage] [PATH...]
//	codecall policy eval --tool NAME [--args JSON]
//	codecall eval [--corpus DIR] [--queries FILE]
//	codecall approvals list|approve|deny [--url URL] [--token-env NAME] [ID]
//	codecall version
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	os.Exit(run(ctx, os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = `codecall: code-mode middleware for MCP servers

Usage:
  codecall serve   [--config FILE] [--catalog FILE | --upstreams FILE] [--http ADDR]
                                                                    serve over stdio (default) or streamable HTTP
  codecall search  [--config FILE] [--catalog FILE] [--app APP]... [--top K] [--json] [--explain] QUERY
  codecall check   [--config FILE] [--catalog FILE] [--upstreams FILE] [--http ADDR]
                                                                    validate a config, catalog or upstreams file;
                                                                    say who could reach serve --http ADDR
  codecall policy test [--config FILE] [--coverage] [-v] [--run REGEX] [PATH...]
                                                                    run Rego unit tests as opa test does
  codecall policy eval [--config FILE] [--catalog FILE | --upstreams FILE] --tool NAME [--args JSON]
                                                                    show the decision for one call and its policy input
  codecall eval    [--corpus DIR] [--queries FILE] [--split S] [--misses N [--explain]]
                                                                    search quality on a tool corpus vs plain BM25
  codecall approvals list|approve|deny [--url URL] [--token-env NAME] [--as NAME] [ID]
                                                                    answer approvals on a running serve --console
  codecall upstreams accept [--config FILE] [--state-dir DIR] UPSTREAM|TOOL
                                                                    serve tool definitions held back as changed
  codecall auth login|status|logout [--config FILE] [--upstreams FILE] [--token-dir DIR] [UPSTREAM]
                                                                    OAuth login to an HTTP or SSE upstream
  codecall version

--upstreams FILE puts CodeCall in front of the MCP servers listed in FILE
({"mcpServers": ...}, the usual client format); each becomes an app.
With neither --catalog nor upstreams, the embedded demo server (CRM, billing, support,
analytics, inventory, notifications) is served.
--http on an address other than loopback needs a bearer token (--token-env NAME)
or an explicit --http-insecure-no-auth.
CODECALL_* environment variables override the configuration, with or without --config.
Run 'codecall COMMAND --help' for a command's flags.
`

// run is main without the process: it returns the exit code.
func run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return 2
	}
	var err error
	switch cmd, rest := args[0], args[1:]; cmd {
	case "serve":
		err = serveCmd(ctx, rest, stdin, stdout, stderr)
	case "search":
		err = searchCmd(ctx, rest, stdout, stderr)
	case "check":
		err = checkCmd(rest, stdout, stderr)
	case "eval":
		err = evalCmd(ctx, rest, stdout, stderr)
	case "policy":
		err = policyCmd(ctx, rest, stdout, stderr)
	case "approvals":
		err = approvalsCmd(ctx, rest, stdout, stderr)
	case "upstreams":
		err = upstreamsCmd(rest, stdout, stderr)
	case "auth":
		err = authCmd(ctx, rest, stdout, stderr)
	case "version", "--version", "-version":
		fmt.Fprintln(stdout, versionString())
	case "help", "--help", "-h", "-help":
		fmt.Fprint(stdout, usage)
	default:
		fmt.Fprintf(stderr, "codecall: unknown command %q\n\n%s", cmd, usage)
		return 2
	}
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		return 2
	case errors.As(err, new(exitCode)):
		var c exitCode
		errors.As(err, &c)
		return int(c)
	default:
		// Library errors already carry the "codecall: " prefix.
		fmt.Fprintf(stderr, "codecall: %s\n", strings.TrimPrefix(err.Error(), "codecall: "))
		return 1
	}
}

// errUsage marks an error whose message the flag package already printed.
var errUsage = errors.New("usage")

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet("codecall "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

func parseFlags(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return errUsage
	}
	return nil
}
