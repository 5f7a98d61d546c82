// Package codemode holds what the Code Mode surface needs before a script
// runs: the names under which MCP servers and their tools appear to a
// script, and the linking of a script, which is an ES module, into the body
// of an async function that package ast validates and the sandbox runs.
//
// # Names
//
// Every connected server is importable as "@codemode/servers/" +
// ModulePath(serverID), with ModulePaths telling apart servers whose ids
// normalise to the same path, and every tool is one export of its server's
// module, named by ExportNames. Both mappings are deterministic: the same
// ids and tool names always give the same paths and identifiers.
//
// # Linking
//
// goja runs scripts and function bodies, not modules. Link reads a module
// with the module parser of github.com/grafana/sobek (only its parser is
// used), checks every static import against a Resolver, and rewrites the
// module in place: import declarations become constant bindings read from
// the array named ModulesName, export keywords go, and every line keeps its
// number. Top-level await needs no rewriting, since the body runs inside an
// async function. Link does not validate the result: package ast does,
// and Linked.Mappings lead the locations it reports back to the module.
package codemode
