// Package e2e holds CodeCall's end-to-end tests: the real codecall binary,
// serving a fixture catalog, the embedded demo or upstream MCP servers over
// stdio and streamable HTTP, is driven by clients from other codebases: the
// official MCP TypeScript SDK client (client/*.mjs) under Node.js, and the
// official Go SDK client on the newest protocol revision. The MCP
// conformance suite runs against the Go SDK's fixture server alone and
// behind the gateway. See README.md for what the tests prove, what they
// need and how to skip them. The package has no code of its own; run it
// with
//
//	go test ./e2e/ -v -count=1
package e2e
