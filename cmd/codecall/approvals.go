package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/user"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/codecall-go/codecall/console"
)

const approvalsUsage = `Usage:
  codecall approvals list    [--url URL] [--token-env NAME] [--json]
  codecall approvals approve [--url URL] [--token-env NAME] [--as NAME] ID
  codecall approvals deny    [--url URL] [--token-env NAME] [--as NAME] ID

Lists and answers the calls that wait for an operator's approval on a
running codecall serve --http --console, through its console API. The
token is the console's (console.tokenEnv); answers are audited with
channel cli and the name given with --as (default: your user name).
`

// approvalsCmd is codecall approvals list|approve|deny.
func approvalsCmd(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help") {
			fmt.Fprint(stdout, approvalsUsage)
			return nil
		}
		fmt.Fprint(stderr, approvalsUsage)
		return errUsage
	}
	verb, rest := args[0], args[1:]
	fs := newFlags("approvals "+verb, stderr)
	base := fs.String("url", "http://127.0.0.1:8080", "the server's base `URL` (its --http address)")
	tokenEnv := fs.String("token-env", "CONSOLE_TOKEN", "environment `variable` holding the console's token")
	asJSON := fs.Bool("json", false, "list: print the JSON the server answers")
	as := fs.String("as", "", "approve, deny: your `name` in the audit log (default: your user name)")
	switch verb {
	case "list", "approve", "deny":
	default:
		fmt.Fprintf(stderr, "codecall approvals: unknown verb %q\n\n%s", verb, approvalsUsage)
		return errUsage
	}
	if err := parseFlags(fs, rest); err != nil {
		return err
	}
	token := os.Getenv(*tokenEnv)
	if token == "" {
		return fmt.Errorf("approvals: the console's token variable %s is not set; export it, or name another with --token-env", *tokenEnv)
	}
	api, err := url.Parse(strings.TrimRight(*base, "/"))
	if err != nil || (api.Scheme != "http" && api.Scheme != "https") || api.Host == "" {
		return fmt.Errorf("approvals: --url %q is not an http(s) URL such as http://127.0.0.1:8080", *base)
	}
	c := apiClient{base: api.String() + console.Prefix + "/api", token: token}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	switch verb {
	case "list":
		if fs.NArg() > 0 {
			return fmt.Errorf("approvals list takes no arguments, got %q", fs.Args())
		}
		return c.list(ctx, stdout, *asJSON)
	default:
		if fs.NArg() != 1 {
			return fmt.Errorf("approvals %s takes one approval ID (from codecall approvals list), got %d arguments", verb, fs.NArg())
		}
		by := *as
		if by == "" {
			by = userName()
		}
		return c.answer(ctx, stdout, fs.Arg(0), verb, by)
	}
}

func userName() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return os.Getenv("USER")
}

// apiClient speaks the console's JSON API.
type apiClient struct {
	base, token string
}

func (c apiClient) do(ctx context.Context, method, path string, body any, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return fmt.Errorf("approvals: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("approvals: reaching the server: %w (is codecall serve --http --console running there?)", err)
	}
	defer res.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(res.Body, 8<<20))
	if err != nil {
		return fmt.Errorf("approvals: reading the server's answer: %w", err)
	}
	if res.StatusCode != http.StatusOK {
		var e struct {
			Error string `json:"error"`
		}
		if json.Unmarshal(raw, &e) == nil && e.Error != "" {
			return fmt.Errorf("approvals: the server answered %d: %s", res.StatusCode, e.Error)
		}
		return fmt.Errorf("approvals: the server answered %s (is the console enabled there?)", res.Status)
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("approvals: the server's answer is not the console API's JSON: %w", err)
	}
	return nil
}

func (c apiClient) list(ctx context.Context, stdout io.Writer, asJSON bool) error {
	var l console.ApprovalList
	if err := c.do(ctx, http.MethodGet, "/approvals", nil, &l); err != nil {
		return err
	}
	if asJSON {
		enc := json.NewEncoder(stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(l)
	}
	if len(l.Approvals) == 0 {
		fmt.Fprintln(stdout, "no call is waiting for approval")
		return nil
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tTOOL\tVIA\tRUN\tWAITING\tEXPIRES IN\tREASON")
	for _, p := range l.Approvals {
		run := p.RunID
		if run != "" {
			run = fmt.Sprintf("%s#%d", run, p.CallIndex)
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", p.ID, printable(p.Tool), p.Via, run,
			time.Since(p.Since).Round(time.Second), time.Until(p.Expires).Round(time.Second), printable(p.Reason))
	}
	return tw.Flush()
}

func (c apiClient) answer(ctx context.Context, stdout io.Writer, id, verb, by string) error {
	var res console.AnswerResponse
	err := c.do(ctx, http.MethodPost, "/approvals/"+url.PathEscape(id), console.AnswerRequest{Decision: verb, By: by}, &res)
	if err != nil {
		return err
	}
	past := map[string]string{"approve": "approved", "deny": "denied"}[verb]
	fmt.Fprintf(stdout, "%s %s\n", past, res.ID)
	return nil
}

// printable keeps a tool's or a policy's text from moving the terminal:
// control characters become spaces.
func printable(s string) string {
	return strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return ' '
		}
		return r
	}, s)
}
