// Package policies is CodeCall's example policy set: Rego modules (OPA v1
// syntax) and their settings in data.yaml, deciding every tool call of the
// demo server through data.codecall.decision. Point policy.paths at this
// directory to use it (see examples/codecall-policies.yaml) and read README.md
// for the input document, the decision and each rule.
//
// The package has no Go API. Its tests compile every Rego file in strict
// mode, run the Rego unit tests (*_test.rego) through OPA's tester with
// coverage, and evaluate a decision table against the demo's real tools, so
// `go test ./examples/policies/` fails when the policy or its tests break.
package policies
