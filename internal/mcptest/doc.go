// Package mcptest is the one test harness of CodeCall's tests: it connects
// an mcp-go client to a server (Connect), records what the server sends
// the client (Notifications), writes policy files (WritePolicy,
// WritePolicies), fakes the host a plan calls tools through (Host),
// collects log output (Buffer) and calls a tool through each of CodeCall's
// paths (CallVia). A package's tests set up with these instead of a copy
// of their own.
//
// The package imports no CodeCall package, so the internal tests of any
// of them, package vm's included, may use it.
package mcptest
