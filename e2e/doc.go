// Package e2e holds CodeCall's end-to-end tests: the real codecall binary,
// serving a fixture catalog over stdio and streamable HTTP, is driven by
// the official MCP TypeScript SDK client (client/client.mjs) under Node.js.
// See README.md for what the tests prove, what they need and how to skip
// them. The package has no code of its own; run it with
//
//	go test ./e2e/ -v -count=1
package e2e
