// Package benchmarks holds CodeCall's end-to-end benchmarks: the size of
// tools/list with and without CodeCall, and the latency of the meta-tools
// and of codemode.run through a real MCP client. Figures are reported in
// BENCHMARKS.md.
//
//	go test ./benchmarks -run TestListSize -v
//	go test ./benchmarks -run TestCodeModeTokens -v
//	go test ./benchmarks -bench . -benchmem -run '^$'
package benchmarks
