// Package attacks is an end-to-end attack suite for codecall.execute and
// codemode.run. Its tests wrap a small mcp-go server with CodeCall,
// connect a real MCP client in process, send hostile plans (sandbox
// escapes, tampering with injected bindings, coercion tricks, resource
// bombs, tool-call floods, Unicode tricks) and assert the exact outcome of
// each one, and that the host is unharmed afterwards: it still answers,
// leaks no goroutines or memory, and never ran a tool the plan was
// refused.
//
// Every plan also runs through codemode.run, turned into an ES module
// whose callTool is a shim over the test server's module; the Code Mode
// cases attack that surface's own walls (the linker, the module
// namespaces, the result slot, Proxy and Reflect, which a module has).
// Both surfaces run in both isolation modes.
//
// The package holds no code outside its tests.
package attacks
