package policy

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/loader"
	"github.com/open-policy-agent/opa/v1/rego"
	"github.com/open-policy-agent/opa/v1/topdown"
)

// Decision is a policy's verdict on one tool call.
type Decision struct {
	// Allow lets the call run (after approval, when RequireApproval is set).
	Allow bool `json:"allow"`
	// RequireApproval asks a person before the call runs.
	RequireApproval bool `json:"requireApproval"`
	// Reason says why; it is shown to the client on a denial and audited.
	Reason string `json:"reason"`
}

// Engine is a compiled Rego policy with its query prepared once. It is
// immutable and safe for concurrent use; reloading builds a new Engine.
type Engine struct {
	query    string
	files    []string
	prepared rego.PreparedEvalQuery
	partial  *rego.PreparedPartialQuery // nil when the decision's shape cannot be asked about
	discover *rego.PreparedEvalQuery    // the policy's own discoverable rule, when it has one
	loadedAt time.Time
}

// LoadError is a policy that cannot be loaded: a missing path, a parse error
// or a compile error. Its message names the file and line.
type LoadError struct {
	Problems []string
}

func (e *LoadError) Error() string {
	if len(e.Problems) == 1 {
		return "policy: " + e.Problems[0]
	}
	return "policy: " + fmt.Sprintf("%d problems:\n  ", len(e.Problems)) + strings.Join(e.Problems, "\n  ")
}

// policyFile reports whether the loader should read name: Rego modules
// (but not their unit tests, which `opa test` and package tester run) and
// data documents.
func policyFile(name string) bool {
	switch strings.ToLower(filepath.Ext(name)) {
	case ".rego":
		return !strings.HasSuffix(name, "_test.rego")
	case ".json", ".yaml", ".yml":
		return true
	}
	return false
}

// LoadEngine reads every .rego module and .json/.yaml data file under
// paths (files or directories; *_test.rego files are skipped), compiles
// them as Rego v1 and prepares query. Errors name the file and line.
func LoadEngine(ctx context.Context, paths []string, query string) (*Engine, error) {
	if len(paths) == 0 {
		return nil, &LoadError{Problems: []string{"policy.paths is empty; list .rego files or directories"}}
	}
	var problems []string
	for _, p := range paths {
		if _, err := os.Stat(p); err != nil {
			problems = append(problems, fmt.Sprintf("policy.paths: %s: %v", p, unwrapPathError(err)))
		}
	}
	if len(problems) > 0 {
		return nil, &LoadError{Problems: problems}
	}
	res, err := loader.NewFileLoader().
		WithRegoVersion(ast.RegoV1).
		WithProcessAnnotation(true).
		Filtered(paths, func(_ string, info fs.FileInfo, _ int) bool {
			return !info.IsDir() && !policyFile(info.Name())
		})
	if err != nil {
		return nil, &LoadError{Problems: loaderProblems(err)}
	}
	if len(res.Modules) == 0 {
		return nil, &LoadError{Problems: []string{fmt.Sprintf("no .rego module found under %s", strings.Join(paths, ", "))}}
	}
	store, err := res.Store()
	if err != nil {
		return nil, &LoadError{Problems: []string{err.Error()}}
	}
	if _, err := ast.ParseRef(query); err != nil {
		return nil, &LoadError{Problems: []string{fmt.Sprintf("policy.query %q is not a Rego reference: %v", query, err)}}
	}
	var files []string
	opts := []func(*rego.Rego){
		rego.Query(query), rego.Store(store), rego.SetRegoVersion(ast.RegoV1),
		rego.StrictBuiltinErrors(true),
		rego.EnablePrintStatements(false),
	}
	for name, m := range res.Modules {
		files = append(files, name)
		opts = append(opts, rego.ParsedModule(m.Parsed))
	}
	sort.Strings(files)
	r := rego.New(opts...)
	prepared, err := r.PrepareForEval(ctx)
	if err != nil {
		return nil, &LoadError{Problems: loaderProblems(err)}
	}
	if err := checkDefined(ctx, prepared, query); err != nil {
		return nil, err
	}
	e := &Engine{query: query, files: files, prepared: prepared, loadedAt: time.Now()}
	// Discovery filtering needs "can allow ever be true?"; a decision whose
	// shape the type checker rejects for that question is simply never
	// filtered on (Decide still denies it at call time).
	partialOpts := append(opts[:len(opts):len(opts)], rego.Query(query+".allow == true"))
	if partial, err := rego.New(partialOpts...).PrepareForPartial(ctx); err == nil {
		e.partial = &partial
	}
	if dq := DiscoveryQuery(query); checkDefined(ctx, prepared, dq) == nil {
		discover, err := rego.New(append(opts[:len(opts):len(opts)], rego.Query(dq))...).PrepareForEval(ctx)
		if err != nil {
			return nil, &LoadError{Problems: loaderProblems(err)}
		}
		e.discover = &discover
	}
	return e, nil
}

// checkDefined catches the commonest mistake, a query that names no rule
// of the loaded policy (a typo in the package or rule name), at load time
// rather than as a denial of every call.
func checkDefined(ctx context.Context, prepared rego.PreparedEvalQuery, query string) error {
	for _, m := range prepared.Modules() {
		pkg := m.Package.Path.String()
		for _, rule := range m.Rules {
			full := rule.Ref().GroundPrefix().String()
			if !strings.HasPrefix(full, "data.") { // the compiler qualifies rule refs; parsed modules do not
				full = pkg + "." + full
			}
			if full == query || strings.HasPrefix(full, query+".") || strings.HasPrefix(query, full+".") {
				return nil
			}
		}
	}
	return &LoadError{Problems: []string{fmt.Sprintf("policy.query %q names no rule in the loaded policy; check the package and rule names (e.g. package codecall, rule decision)", query)}}
}

func unwrapPathError(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// loaderProblems turns OPA's errors into one line each, keeping the file and
// line OPA reports ("file.rego:12: rego_parse_error: ...").
func loaderProblems(err error) []string {
	var astErrs ast.Errors
	if errors.As(err, &astErrs) {
		out := make([]string, 0, len(astErrs))
		for _, e := range astErrs {
			out = append(out, astErrorLine(e))
		}
		return out
	}
	var one *ast.Error
	if errors.As(err, &one) {
		return []string{astErrorLine(one)}
	}
	lines := strings.Split(strings.TrimSpace(err.Error()), "\n")
	out := lines[:0]
	for _, l := range lines {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, l)
		}
	}
	return out
}

func astErrorLine(e *ast.Error) string {
	if e.Location != nil {
		return fmt.Sprintf("%s:%d:%d: %s: %s", e.Location.File, e.Location.Row, e.Location.Col, e.Code, e.Message)
	}
	return fmt.Sprintf("%s: %s", e.Code, e.Message)
}

// Files lists the modules the engine was built from.
func (e *Engine) Files() []string { return e.files }

// Query is the prepared decision query.
func (e *Engine) Query() string { return e.query }

// Decide evaluates the policy for one call. An undefined, malformed or
// failed evaluation is a denial whose reason says what went wrong; the
// error is returned as well, for logging.
func (e *Engine) Decide(ctx context.Context, input map[string]any) (Decision, error) {
	val, err := ast.InterfaceToValue(input)
	if err != nil {
		return deny("the call's input cannot be given to the policy"), fmt.Errorf("policy input: %w", err)
	}
	return e.decideValue(ctx, val)
}

func (e *Engine) decideValue(ctx context.Context, val ast.Value) (Decision, error) {
	rs, err := e.prepared.Eval(ctx, rego.EvalParsedInput(val))
	if err != nil {
		var te *topdown.Error
		msg := err.Error()
		if errors.As(err, &te) && te.Location != nil {
			msg = fmt.Sprintf("%s:%d: %s", te.Location.File, te.Location.Row, te.Message)
		}
		return deny("the policy failed to evaluate"), fmt.Errorf("policy evaluation: %s", msg)
	}
	if len(rs) == 0 || len(rs[0].Expressions) == 0 {
		return deny("the policy gave no decision"), fmt.Errorf("policy %s is undefined for this input", e.query)
	}
	return parseDecision(rs[0].Expressions[0].Value, e.query)
}

// parseDecision reads {allow, requireApproval, reason}; anything else
// denies.
func parseDecision(v any, query string) (Decision, error) {
	obj, ok := v.(map[string]any)
	if !ok {
		return deny("the policy's decision is malformed"), fmt.Errorf("policy %s is %T, not an object {allow, requireApproval, reason}", query, v)
	}
	allow, ok := obj["allow"].(bool)
	if !ok {
		return deny("the policy's decision is malformed"), fmt.Errorf("policy %s.allow is %T, not a boolean", query, obj["allow"])
	}
	d := Decision{Allow: allow}
	if ra, present := obj["requireApproval"]; present {
		b, ok := ra.(bool)
		if !ok {
			return deny("the policy's decision is malformed"), fmt.Errorf("policy %s.requireApproval is %T, not a boolean", query, ra)
		}
		d.RequireApproval = b
	}
	if r, present := obj["reason"]; present {
		s, ok := r.(string)
		if !ok {
			return deny("the policy's decision is malformed"), fmt.Errorf("policy %s.reason is %T, not a string", query, r)
		}
		d.Reason = s
	}
	return d, nil
}

func deny(reason string) Decision { return Decision{Allow: false, Reason: reason} }

// DiscoveryQuery is the rule a policy may define, next to its decision
// rule, to say which tools search and describe may show: for the query
// data.codecall.decision it is data.codecall.discoverable.
func DiscoveryQuery(query string) string {
	if i := strings.LastIndex(query, "."); i > 0 {
		return query[:i] + ".discoverable"
	}
	return query + ".discoverable"
}

// NeverAllows reports whether the policy denies every call of the tool
// described by toolDoc, whatever its arguments, path, session, run and
// context. A policy that defines the discoverable rule (DiscoveryQuery)
// answers for itself: the rule is evaluated with input.tool alone, and
// false hides the tool. Otherwise partial evaluation with everything but
// the tool unknown must prove that no call can be allowed; when it cannot
// (aggregates and comprehensions over unknown input are kept as they are)
// the tool stays visible, since the gate still decides every call.
func (e *Engine) NeverAllows(ctx context.Context, toolDoc map[string]any) bool {
	val, err := ast.InterfaceToValue(map[string]any{"tool": toolDoc})
	if err != nil {
		return false
	}
	if e.discover != nil {
		rs, err := e.discover.Eval(ctx, rego.EvalParsedInput(val))
		if err != nil || len(rs) == 0 || len(rs[0].Expressions) == 0 {
			return false
		}
		visible, ok := rs[0].Expressions[0].Value.(bool)
		return ok && !visible
	}
	if e.partial == nil {
		return false
	}
	pq, err := e.partial.Partial(ctx, rego.EvalParsedInput(val),
		rego.EvalParsedUnknowns([]*ast.Term{
			ast.MustParseTerm("input.args"), ast.MustParseTerm("input.via"), ast.MustParseTerm("input.session"),
			ast.MustParseTerm("input.run"), ast.MustParseTerm("input.context"),
		}))
	if err != nil {
		return false // unsure: keep the tool discoverable; calls still go through Decide
	}
	return len(pq.Queries) == 0
}
