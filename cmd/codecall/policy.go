package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/open-policy-agent/opa/v1/ast"
	"github.com/open-policy-agent/opa/v1/cover"
	"github.com/open-policy-agent/opa/v1/tester"
	"github.com/open-policy-agent/opa/v1/topdown"
	"github.com/open-policy-agent/opa/v1/topdown/lineage"

	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/toolerr"
)

// exitCode is an error whose message has been printed already and that
// ends the command with a given exit status (policy test's 2, as opa
// test's, for failing tests).
type exitCode int

func (c exitCode) Error() string { return fmt.Sprintf("exit status %d", int(c)) }

const policyUsage = `Usage:
  codecall policy test [--config FILE] [--coverage] [-v] [--run REGEX] [--format pretty|json] [PATH...]
        run the Rego unit tests (test_ rules, usually in *_test.rego files) under PATH,
        or under the config's policy.paths, with OPA's test runner: the output and
        exit codes of opa test (0 all passed, 2 a test failed or errored, 1 the
        policy could not be loaded or compiled)
  codecall policy eval [--config FILE] [--catalog FILE | --upstreams FILE] --tool NAME [--args JSON]
                       [--via execute|invoke|direct] [--context JSON]
        decide one call as the server would (access, input validation, policy) and
        print the decision with the policy input it was made from
`

func policyCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, policyUsage)
		return errUsage
	}
	switch args[0] {
	case "test":
		return policyTestCmd(ctx, args[1:], stdout, stderr)
	case "eval":
		return policyEvalCmd(ctx, args[1:], stdout, stderr)
	case "help", "--help", "-h", "-help":
		fmt.Fprint(stdout, policyUsage)
		return nil
	}
	fmt.Fprintf(stderr, "codecall policy: unknown command %q\n\n%s", args[0], policyUsage)
	return errUsage
}

// policyTestCmd is opa test, for CodeCall's policies: the same loader
// (Rego v1, data files beside the policies), compiler settings, runner and
// reporters as opa's own command, so a policy author sees what they know.
func policyTestCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("policy test", stderr)
	configFile := fs.String("config", "", "test the policies of this config `file`'s policy.paths when no PATH is given")
	coverage := fs.Bool("coverage", false, "report coverage as opa test --coverage does (JSON, with the covered and not covered lines of each file)")
	verbose := fs.Bool("v", false, "list every test and its print output, as opa test -v")
	runRE := fs.String("run", "", "run only tests whose name matches this `regex`")
	format := fs.String("format", "pretty", "output `format`: pretty or json")
	timeout := fs.Duration("timeout", 5*time.Second, "time limit of one test")
	// Flags may come after the paths, as opa test allows
	// (codecall policy test examples/policies -v).
	var paths []string
	for rest := args; ; {
		if err := parseFlags(fs, rest); err != nil {
			return err
		}
		if fs.NArg() == 0 {
			break
		}
		paths = append(paths, fs.Arg(0))
		rest = fs.Args()[1:]
	}
	if len(paths) == 0 {
		cfg, err := loadConfig(*configFile)
		if err != nil {
			return err
		}
		if paths = cfg.Policy.Paths; len(paths) == 0 {
			return errors.New("policy test needs the paths of the policies and their tests, e.g. codecall policy test examples/policies, or --config FILE with policy.paths")
		}
	}
	if *format != "pretty" && *format != "json" {
		return fmt.Errorf("--format: %q is not an output format; use pretty or json", *format)
	}
	if *runRE != "" {
		if _, err := regexp.Compile(*runRE); err != nil {
			return fmt.Errorf("--run: %w", err)
		}
	}
	modules, store, err := tester.LoadWithParserOptions(paths, nil, ast.ParserOptions{RegoVersion: ast.RegoV1, ProcessAnnotation: true})
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitCode(1)
	}
	txn, err := store.NewTransaction(ctx)
	if err != nil {
		fmt.Fprintln(stderr, err)
		return exitCode(1)
	}
	defer store.Abort(ctx, txn)
	compiler := ast.NewCompiler().
		WithEnablePrintStatements(true).
		WithCapabilities(ast.CapabilitiesForThisVersion()).
		WithUseTypeCheckAnnotations(true)
	var cov *cover.Cover
	runner := tester.NewRunner().
		SetCompiler(compiler).
		SetStore(store).
		CapturePrintOutput(true).
		EnableTracing(*verbose).
		StackTraces(true).
		SetModules(modules).
		SetTimeout(*timeout).
		Filter(*runRE)
	if *coverage {
		cov = cover.New()
		runner = runner.SetCoverageQueryTracer(cov)
	}
	var reporter tester.Reporter
	switch {
	case *coverage:
		reporter = tester.JSONCoverageReporter{Cover: cov, Modules: modules, Output: stdout, Verbose: *verbose}
	case *format == "json":
		reporter = tester.JSONReporter{Output: stdout}
	default:
		reporter = tester.PrettyReporter{Output: stdout, Verbose: *verbose}
	}
	ch, err := runner.RunTests(ctx, txn)
	if err != nil {
		// Compile errors, as opa test prints them, with file and line.
		fmt.Fprintln(stderr, err)
		return exitCode(1)
	}
	failed := false
	results := make(chan *tester.Result)
	go func() {
		defer close(results)
		for r := range ch {
			if !r.Pass() {
				failed = true
			}
			// As opa test -v without --explain: the notes and failures
			// of the trace (without -v nothing is traced).
			r.Trace = lineage.Filter(r.Trace, func(e *topdown.Event) bool {
				return e.Op == topdown.NoteOp || e.Op == topdown.FailOp
			})
			results <- r
		}
	}()
	if err := reporter.Report(results); err != nil {
		fmt.Fprintln(stderr, err)
		return exitCode(1)
	}
	if failed {
		return exitCode(2)
	}
	return nil
}

// evalReport is what policy eval prints.
type evalReport struct {
	Tool string `json:"tool"`
	// Decision is the verdict: the policy's, or a refusal before it.
	Decision policy.Decision `json:"decision"`
	// DecidedBy is "default" (the built-in policy), the Rego query, or
	// the step that refused the call before any policy: "access" or
	// "validation".
	DecidedBy string `json:"decidedBy"`
	// NeedsApproval says whether a person would be asked.
	NeedsApproval bool `json:"needsApproval"`
	// Code is the error code a client would get (refusals only).
	Code string `json:"code,omitempty"`
	// Error is the policy's own failure, which denies.
	Error string `json:"error,omitempty"`
	// Input is the policy input document; absent when the call was
	// refused before the policy.
	Input map[string]any `json:"input,omitempty"`
}

// policyEvalCmd decides one call as the server would and prints the
// decision with the input the policy saw.
func policyEvalCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("policy eval", stderr)
	var src source
	fs.StringVar(&src.configFile, "config", "", "CodeCall YAML config `file` (its policy, modes and tools)")
	fs.StringVar(&src.catalogFile, "catalog", "", "decide for a tool of this static catalog `file` instead of the demo")
	fs.StringVar(&src.upstreamsFile, "upstreams", "", "decide for a tool of the MCP servers in `file` (they are started)")
	tool := fs.String("tool", "", "the tool's `name`, as a plan calls it (e.g. billing.refund_payment)")
	argsJSON := fs.String("args", "{}", "the call's arguments as a JSON `object`")
	via := fs.String("via", string(policy.ViaExecute), "the `path` of the call: execute (a plan), invoke (codecall.invoke) or direct (a client's tools/call)")
	ctxJSON := fs.String("context", "", "a plan's context object as `JSON` (via execute)")
	var lf logFlags
	lf.register(fs, "warn")
	if err := parseFlags(fs, args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("policy eval takes no arguments, got %q; the tool is --tool NAME", fs.Args())
	}
	if *tool == "" {
		return errors.New("policy eval needs --tool NAME, e.g. codecall policy eval --tool billing.refund_payment --args '{\"paymentId\": \"p1\"}'")
	}
	call := policy.Call{Tool: *tool, Via: policy.Via(*via)}
	switch call.Via {
	case policy.ViaExecute, policy.ViaInvoke, policy.ViaDirect:
	default:
		return fmt.Errorf("--via: %q is not a path; use execute, invoke or direct", *via)
	}
	if err := json.Unmarshal([]byte(*argsJSON), &call.Args); err != nil || call.Args == nil {
		return fmt.Errorf("--args must be a JSON object such as '{\"id\": \"c1\"}': %v", describeJSONError([]byte(*argsJSON), err))
	}
	if *ctxJSON != "" {
		if err := json.Unmarshal([]byte(*ctxJSON), &call.Context); err != nil || call.Context == nil {
			return fmt.Errorf("--context must be a JSON object: %v", describeJSONError([]byte(*ctxJSON), err))
		}
	}
	if call.Via == policy.ViaExecute {
		call.Run = &policy.RunInfo{ID: "policy-eval", CallIndex: 1}
	}
	b, err := buildOnce(ctx, src, lf, stderr)
	if err != nil {
		return err
	}
	defer b.Close()
	st, release := b.cc.Acquire(ctx)
	defer release()
	rep := evalReport{Tool: *tool}
	out, err := st.Gate.Decide(ctx, st.Catalog, call)
	var te *toolerr.Error
	switch {
	case out != nil:
		rep.Decision, rep.DecidedBy, rep.NeedsApproval = out.Decision, out.Policy, out.NeedsApproval()
		rep.Input = policy.InputDocument(out.Tool, call)
		if out.EvalErr != nil {
			rep.Error = out.EvalErr.Error()
		}
		if errors.As(err, &te) {
			rep.Code = string(te.Code)
		}
	case errors.As(err, &te):
		rep.Decision = policy.Decision{Allow: false, Reason: te.Message}
		rep.Code = string(te.Code)
		rep.DecidedBy = "access"
		if te.Code == toolerr.Validation {
			rep.DecidedBy = "validation"
		}
	default:
		return err
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}

// describeJSONError says what is wrong with a JSON flag value.
func describeJSONError(data []byte, err error) string {
	if err == nil {
		return "got " + strings.TrimSpace(string(data))
	}
	return err.Error()
}
