// Package gateway exposes the tools of upstream MCP servers as tools of one
// mcp-go server, so that CodeCall (package middleware) can be put in front
// of servers written in any language.
//
// Each upstream (a command speaking MCP on stdio, a streamable HTTP or SSE
// endpoint, or an OpenAPI app: a REST API's document, whose operations
// package openapi serves on an in-process MCP server the upstream connects
// to like to any other, see openapi.go) is one app: its tools are registered as
// <serverId><separator><toolName> (or under their own names when the
// upstream's prefix is false; a name two upstreams would serve is refused)
// with _meta.codecall giving appId = serverId and source = upstream (openapi
// for an OpenAPI app), and
// their schemas and annotations passed through. A call is forwarded under
// the upstream's own tool name, on a persistent client that is started once
// (eagerly or on first use) and restarted with backoff when it dies.
// Upstream tools/list_changed notifications update the registered tools
// (mcp-go then tells the gateway's clients); progress notifications of a
// call reach the client that made it, log lines the clients with a call in
// flight (at each client's own level); a client's cancellation reaches the
// upstream as notifications/cancelled.
//
// Prompts (named like tools), resources and resource templates (under the
// upstream's own URIs), resource subscriptions and completion are served
// too, and an upstream's sampling/createMessage and elicitation/create
// during a call are relayed to the client that made the call (relay.go).
// The upstream connection uses the session-based protocol revision
// (initialize handshake), on which such server-to-client requests exist.
//
// A broken upstream (a command that does not exist, a server that crashes
// on start, a URL that does not answer) is reported with its id and reason
// and retried with backoff, and its tools fail with an UNAVAILABLE message,
// while the others are served.
//
// An HTTP or SSE upstream that needs OAuth is reached with a token from a
// tokenstore.Store (WithTokenStore), put there once by Login (codecall
// auth login) and refreshed as it expires (oauth.go, login.go, using
// mcp-go's OAuth client). An upstream without a valid token, or that
// refuses the gateway's credentials (401, 403), answers its calls with
// UNAUTHENTICATED and a hint naming the command to run, never with the
// HTTP error; tokens are redacted from logs, errors and results.
//
// A gateway tells each stdio upstream how many gateways run above it
// (presets.EnvGatewayDepth), and New refuses to start one nested MaxDepth
// deep, so that an upstream entry that starts the gateway again cannot
// fork without bound.
//
// Placeholders ${VAR} in env and headers are resolved from the environment
// when an upstream starts and on Reload. Resolved values are kept out of
// logs, errors and tool metadata: text that CodeCall produces about an
// upstream has them replaced by [redacted].
//
// Typical use, as codecall serve does it:
//
//	servers, err := gateway.LoadServers("servers.json")
//	gw, err := gateway.New(servers)
//	err = gw.Start(ctx)
//	cc, err := middleware.Wrap(gw.Server())
//	server.ServeStdio(gw.Server())
package gateway
