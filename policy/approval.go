package policy

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/toolerr"
)

// ApprovalOutcome is how an approval ended. The values are audited.
type ApprovalOutcome string

// The approval outcomes.
const (
	ApprovalApproved ApprovalOutcome = "approved"    // approved for this call
	ApprovalTrusted  ApprovalOutcome = "trusted"     // approved earlier in this session, for the session
	ApprovalDenied   ApprovalOutcome = "denied"      // the person declined or cancelled
	ApprovalExpired  ApprovalOutcome = "expired"     // no answer within approval.timeout
	ApprovalNoClient ApprovalOutcome = "unavailable" // the client cannot show an approval prompt
	ApprovalFailed   ApprovalOutcome = "failed"      // the prompt could not be shown or read
	approvalSession  ApprovalOutcome = "approved_for_session"
)

// The choices of the approval prompt.
const (
	ChoiceApprove        = "approve"
	ChoiceApproveSession = "approve_for_session"
	ChoiceDeny           = "deny"
)

// ApprovalInputKey is the key of CodeCall's approval prompt among a
// multi-round-trip request's inputRequests.
const ApprovalInputKey = "codecall.approval"

// Redactor removes secrets from a value before a person sees it. The
// policy/redact package provides one.
type Redactor interface {
	Value(v any, schema json.RawMessage) any
}

// ApprovalRequest is one call waiting for a person's approval.
type ApprovalRequest struct {
	Tool      *catalog.Tool
	Args      map[string]any
	Via       Via
	SessionID string
	// Reason is the policy's reason for asking.
	Reason string
	// Run is the plan the call belongs to; nil for a direct call or an
	// invoke.
	Run *RunInfo
}

// Approvals asks people to approve calls and remembers session trust. One
// Approvals serves a server for its whole life, across config reloads.
type Approvals struct {
	timeout      time.Duration
	sessionTrust bool
	redactor     Redactor
	now          func() time.Time

	// trustStore, when set, keeps session trust instead of trust: every
	// replica sharing it sees the trust a person granted on any of them.
	trustStore TrustStore
	// prompts, when set, keeps the prompts Begin issues instead of
	// pending: an answer may reach any replica sharing it.
	prompts PromptStore

	mu      sync.Mutex
	trust   map[trustKey]time.Time
	pending map[string]*pendingApproval
}

// TrustStore keeps "approve for this session" where every replica of a
// server sees it. Keys are a session and a tool: trust never crosses
// sessions. Methods may be called from any goroutine; an error makes the
// gate fail closed (the call is asked about again, the trust not kept).
type TrustStore interface {
	Trusted(ctx context.Context, session, tool string) (bool, error)
	Trust(ctx context.Context, session, tool string, ttl time.Duration) error
}

// WithTrustStore keeps session trust in s instead of this process's
// memory.
func WithTrustStore(s TrustStore) ApprovalOption { return func(a *Approvals) { a.trustStore = s } }

// PromptStore keeps the prompts Begin issues (a direct call's or a
// codecall.invoke's, answered by a 2026-07-28 client in its next request)
// where every replica of a server reads them. Take must be atomic: of two
// replicas handed the same answer, one gets the prompt. An error makes the
// call fail closed: it is not made.
type PromptStore interface {
	// Keep files p under token until ttl passes.
	Keep(ctx context.Context, token string, p IssuedPrompt, ttl time.Duration) error
	// Take returns the prompt under token and removes it; found is false
	// when there is none (never issued, answered, or long expired).
	Take(ctx context.Context, token string) (p IssuedPrompt, found bool, err error)
}

// IssuedPrompt is what a PromptStore keeps of a prompt: whose and which
// call it is for, so that an answer counts only for that call. It holds
// digests, never the session id or the arguments themselves.
type IssuedPrompt struct {
	Session    string `json:"session"` // a digest of the session id
	Tool       string `json:"tool"`
	ArgsDigest string `json:"args"`
	ExpiresMs  int64  `json:"expiresMs"` // when the prompt expires, Unix milliseconds
}

// WithPromptStore keeps the prompts of direct calls and invokes in s
// instead of this process's memory.
func WithPromptStore(s PromptStore) ApprovalOption { return func(a *Approvals) { a.prompts = s } }

// promptGrace is how long a PromptStore keeps a prompt past its expiry, so
// that a late answer is told it expired rather than that it is unknown.
const promptGrace = 10 * time.Minute

// trustStoreTimeout bounds one round trip to a TrustStore.
const trustStoreTimeout = 2 * time.Second

// TrustTTL is how long session trust lasts.
const TrustTTL = trustTTL

type trustKey struct{ session, tool string }

type pendingApproval struct {
	session, tool, argsDigest string
	expires                   time.Time
}

// maxTrust and maxPending bound the memory a flood of sessions or
// unanswered prompts can take; the oldest entries go first.
const (
	maxTrust   = 10000
	maxPending = 10000
	trustTTL   = 24 * time.Hour
)

// ApprovalOption configures Approvals.
type ApprovalOption func(*Approvals)

// WithRedactor redacts the arguments shown in approval prompts. Without a
// redactor a prompt lists argument names only, never their values.
func WithRedactor(r Redactor) ApprovalOption { return func(a *Approvals) { a.redactor = r } }

// NewApprovals returns an approval service: timeout bounds the wait for an
// answer; sessionTrust offers "approve for this session".
func NewApprovals(timeout time.Duration, sessionTrust bool, opts ...ApprovalOption) *Approvals {
	a := &Approvals{timeout: timeout, sessionTrust: sessionTrust, now: time.Now,
		trust: map[trustKey]time.Time{}, pending: map[string]*pendingApproval{}}
	for _, o := range opts {
		o(a)
	}
	return a
}

// Configure changes the timeout and the session-trust choice, e.g. after a
// config reload; trust already granted is kept.
func (a *Approvals) Configure(timeout time.Duration, sessionTrust bool) {
	a.mu.Lock()
	a.timeout, a.sessionTrust = timeout, sessionTrust
	a.mu.Unlock()
}

// SetRedactor changes the redactor, e.g. after a config reload.
func (a *Approvals) SetRedactor(r Redactor) {
	a.mu.Lock()
	a.redactor = r
	a.mu.Unlock()
}

// Timeout is how long a prompt waits for an answer.
func (a *Approvals) Timeout() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.timeout
}

// Trusted reports whether the person approved tool for the whole session
// earlier. Calls without a session are never trusted.
func (a *Approvals) Trusted(session, tool string) bool {
	if session == "" {
		return false
	}
	if a.trustStore != nil {
		ctx, cancel := context.WithTimeout(context.Background(), trustStoreTimeout)
		defer cancel()
		ok, err := a.trustStore.Trusted(ctx, session, tool)
		return err == nil && ok
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	at, ok := a.trust[trustKey{session, tool}]
	if ok && a.now().Sub(at) > trustTTL {
		delete(a.trust, trustKey{session, tool})
		return false
	}
	return ok
}

func (a *Approvals) trustLocked(session, tool string) {
	if session == "" {
		return
	}
	if len(a.trust) >= maxTrust {
		var oldest trustKey
		var at time.Time
		for k, t := range a.trust {
			if at.IsZero() || t.Before(at) {
				oldest, at = k, t
			}
		}
		delete(a.trust, oldest)
	}
	a.trust[trustKey{session, tool}] = a.now()
}

// sandboxSummary says in words how the server behind a tool runs, from its
// sandbox profile (catalog.Tool.SandboxProfile); "" when it does not say.
func sandboxSummary(profile string) string {
	switch profile {
	case "":
		return ""
	case "default":
		return "sandbox default: no network, only its own directories visible"
	case "default+network":
		return "sandbox default+network: the host's network, only its own directories visible"
	case "none":
		return "sandbox none: the server runs with the gateway's own rights (every file and the network)"
	case "remote":
		return "a remote server (HTTP): the gateway confines nothing of it"
	}
	return "sandbox " + profile
}

// Prompt builds the elicitation a person answers: the tool's name, title,
// description and side-effect hints, the policy's reason, and the
// arguments with secrets redacted.
func (a *Approvals) Prompt(req ApprovalRequest) mcp.ElicitationParams {
	t := req.Tool
	var b strings.Builder
	fmt.Fprintf(&b, "Approve a call of %s", t.Name)
	if t.Title != "" {
		fmt.Fprintf(&b, " (%s)", t.Title)
	}
	fmt.Fprintf(&b, " made via %s?\n", req.Via)
	if d := strings.TrimSpace(t.Description); d != "" {
		if len(d) > 500 {
			d = d[:500] + "…"
		}
		fmt.Fprintf(&b, "What it does: %s\n", d)
	}
	fmt.Fprintf(&b, "Side effects: %s\n", hintSummary(t))
	if where := sandboxSummary(t.SandboxProfile); where != "" {
		if t.Cwd != "" {
			where += "; working directory " + t.Cwd
		}
		fmt.Fprintf(&b, "Runs in: %s\n", where)
	} else if t.Cwd != "" {
		fmt.Fprintf(&b, "Runs in: working directory %s\n", t.Cwd)
	}
	if req.Reason != "" {
		fmt.Fprintf(&b, "Why you are asked: %s\n", req.Reason)
	}
	b.WriteString("Arguments: ")
	b.WriteString(a.argsText(req))
	choices := []any{ChoiceApprove, ChoiceDeny}
	a.mu.Lock()
	sessionTrust := a.sessionTrust
	a.mu.Unlock()
	if sessionTrust && req.SessionID != "" {
		choices = []any{ChoiceApprove, ChoiceApproveSession, ChoiceDeny}
	}
	return mcp.ElicitationParams{
		Mode:    mcp.ElicitationModeForm,
		Message: b.String(),
		RequestedSchema: map[string]any{
			"type": "object",
			"properties": map[string]any{
				"decision": map[string]any{
					"type": "string", "enum": choices, "title": "Decision",
					"description": "approve runs this call once; approve_for_session also approves later calls of this tool in this session; deny refuses it",
				},
			},
			"required": []any{"decision"},
		},
	}
}

func (a *Approvals) argsText(req ApprovalRequest) string {
	a.mu.Lock()
	r := a.redactor
	a.mu.Unlock()
	if r == nil {
		names := make([]string, 0, len(req.Args))
		for k := range req.Args {
			names = append(names, k)
		}
		sort.Strings(names)
		return "(values hidden) " + strings.Join(names, ", ")
	}
	shown, err := json.MarshalIndent(r.Value(map[string]any(req.Args), req.Tool.InputSchema), "", "  ")
	if err != nil {
		return "(cannot be shown)"
	}
	if len(shown) > 4000 {
		return string(shown[:4000]) + "…"
	}
	return string(shown)
}

func hintSummary(t *catalog.Tool) string {
	a := t.Annotations
	if a.Defaulted || (a.ReadOnlyHint == nil && a.DestructiveHint == nil) {
		return "not declared by the tool (treated as possibly destructive)"
	}
	var parts []string
	if a.ReadOnlyHint != nil && *a.ReadOnlyHint {
		parts = append(parts, "read-only")
	}
	if a.DestructiveHint != nil {
		if *a.DestructiveHint {
			parts = append(parts, "may delete or overwrite data")
		} else {
			parts = append(parts, "non-destructive")
		}
	}
	if a.IdempotentHint != nil && *a.IdempotentHint {
		parts = append(parts, "idempotent")
	}
	if a.OpenWorldHint != nil && *a.OpenWorldHint {
		parts = append(parts, "reaches outside systems")
	}
	if len(parts) == 0 {
		return "not declared"
	}
	return strings.Join(parts, ", ")
}

// Interpret reads a person's answer, recording session trust when given.
func (a *Approvals) Interpret(res *mcp.ElicitationResult, req ApprovalRequest) ApprovalOutcome {
	if res == nil || res.Action != mcp.ElicitationResponseActionAccept {
		return ApprovalDenied
	}
	content, _ := res.Content.(map[string]any)
	choice, _ := content["decision"].(string)
	switch choice {
	case ChoiceApprove:
		return ApprovalApproved
	case ChoiceApproveSession:
		a.mu.Lock()
		offered, store := a.sessionTrust, a.trustStore
		if offered && req.SessionID != "" && store == nil {
			a.trustLocked(req.SessionID, req.Tool.Name)
		}
		a.mu.Unlock()
		switch {
		case !offered || req.SessionID == "":
			return ApprovalApproved
		case store != nil:
			// This call is approved either way; trust that cannot be
			// stored is not granted, and the next call asks again.
			ctx, cancel := context.WithTimeout(context.Background(), trustStoreTimeout)
			defer cancel()
			if err := store.Trust(ctx, req.SessionID, req.Tool.Name, trustTTL); err != nil {
				return ApprovalApproved
			}
		}
		return approvalSession
	default:
		return ApprovalDenied
	}
}

// CanElicit reports whether the client behind ctx can show a prompt: a
// 2026-07-28 request that declares the elicitation capability, or a
// session that declared it at initialize.
func CanElicit(ctx context.Context) bool {
	if info := server.RequestProtocolInfoFromContext(ctx); info != nil && info.Modern {
		return info.ClientCapabilities != nil && info.ClientCapabilities.Elicitation != nil
	}
	s, ok := server.ClientSessionFromContext(ctx).(server.SessionWithClientInfo)
	return ok && s.GetClientCapabilities().Elicitation != nil
}

// Ask shows the prompt with a server-initiated elicitation and waits for
// the answer, at most the approval timeout. It is for clients of the
// protocol before 2026-07-28; newer clients answer through Begin and
// Resume.
func (a *Approvals) Ask(ctx context.Context, srv *server.MCPServer, req ApprovalRequest) (ApprovalOutcome, error) {
	if srv == nil || !CanElicit(ctx) {
		return ApprovalNoClient, nil
	}
	ctx, cancel := context.WithTimeout(ctx, a.Timeout())
	defer cancel()
	res, err := srv.RequestElicitation(ctx, mcp.ElicitationRequest{
		Request: mcp.Request{Method: string(mcp.MethodElicitationCreate)},
		Params:  a.Prompt(req),
	})
	switch {
	case err == nil:
		return a.Interpret(res, req), nil
	case errors.Is(ctx.Err(), context.DeadlineExceeded):
		return ApprovalExpired, nil
	case errors.Is(err, server.ErrElicitationNotSupported), errors.Is(err, server.ErrNoActiveSession):
		return ApprovalNoClient, nil
	default:
		return ApprovalFailed, err
	}
}

// Begin starts a multi-round-trip approval: it returns the state token to
// hand the client and the prompt to put in the result's inputRequests.
// With a PromptStore the prompt is kept there, and an error means it
// could not be: the call is not made.
func (a *Approvals) Begin(ctx context.Context, req ApprovalRequest) (token string, prompt mcp.ElicitationParams, err error) {
	var b [16]byte
	_, _ = rand.Read(b[:])
	token = "cc-approval-" + hex.EncodeToString(b[:])
	prompt = a.Prompt(req)
	if a.prompts != nil {
		ctx, cancel := context.WithTimeout(ctx, trustStoreTimeout)
		defer cancel()
		expires := a.now().Add(a.Timeout())
		rec := IssuedPrompt{Session: sessionDigest(req.SessionID), Tool: req.Tool.Name, ArgsDigest: argsDigest(req.Args), ExpiresMs: expires.UnixMilli()}
		if err := a.prompts.Keep(ctx, token, rec, a.Timeout()+promptGrace); err != nil {
			return "", mcp.ElicitationParams{}, fmt.Errorf("the approval prompt could not be kept in the state store: %w", err)
		}
		return token, prompt, nil
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	now := a.now()
	for k, p := range a.pending {
		if now.After(p.expires) {
			delete(a.pending, k)
		}
	}
	if len(a.pending) >= maxPending {
		for k := range a.pending {
			delete(a.pending, k)
			break
		}
	}
	a.pending[token] = &pendingApproval{session: req.SessionID, tool: req.Tool.Name, argsDigest: argsDigest(req.Args), expires: now.Add(a.timeout)}
	return token, prompt, nil
}

// sessionDigest is how a PromptStore names a session.
func sessionDigest(session string) string {
	sum := sha256.Sum256([]byte("codecall session\x00" + session))
	return hex.EncodeToString(sum[:16])
}

// Resume reads the answer to a prompt started with Begin. ok is false when
// the request carries no answer to a prompt of ours; then the caller
// starts one. A token answers once, for the same session, tool and
// arguments it was issued for, within the timeout. A PromptStore that
// cannot be read fails closed (ApprovalFailed, with the error).
func (a *Approvals) Resume(ctx context.Context, state string, responses mcp.InputResponses, req ApprovalRequest) (outcome ApprovalOutcome, ok bool, err error) {
	answer := server.ElicitationResponse(responses, ApprovalInputKey)
	if state == "" || answer == nil {
		return "", false, nil
	}
	var p pendingApproval
	session := req.SessionID
	if a.prompts != nil {
		ctx, cancel := context.WithTimeout(ctx, trustStoreTimeout)
		defer cancel()
		rec, found, err := a.prompts.Take(ctx, state)
		switch {
		case err != nil:
			return ApprovalFailed, true, fmt.Errorf("the approval prompt could not be read from the state store: %w", err)
		case !found:
			return "", false, nil
		}
		p = pendingApproval{session: rec.Session, tool: rec.Tool, argsDigest: rec.ArgsDigest, expires: time.UnixMilli(rec.ExpiresMs)}
		session = sessionDigest(session) // compared as kept
	} else {
		a.mu.Lock()
		found, ok := a.pending[state]
		if ok {
			delete(a.pending, state)
		}
		a.mu.Unlock()
		if !ok {
			return "", false, nil
		}
		p = *found
	}
	switch {
	case p.session != session || p.tool != req.Tool.Name || p.argsDigest != argsDigest(req.Args):
		return ApprovalDenied, true, nil
	case a.now().After(p.expires):
		return ApprovalExpired, true, nil
	}
	return a.Interpret(answer, req), true, nil
}

// InputRequired renders a prompt started with Begin as the tool result
// that asks the client for the answer.
func InputRequired(token string, prompt mcp.ElicitationParams) *mcp.CallToolResult {
	return server.NewInputRequestBuilder(token).Elicit(ApprovalInputKey, prompt).ToolResult()
}

func argsDigest(args map[string]any) string {
	b, _ := json.Marshal(args)
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// ApprovalError maps an outcome that does not let the call run to the
// error the caller sees, nil when the call may run.
func ApprovalError(tool string, o ApprovalOutcome, timeout time.Duration) *toolerr.Error {
	switch o {
	case ApprovalApproved, ApprovalTrusted, approvalSession:
		return nil
	case ApprovalDenied:
		return &toolerr.Error{Code: toolerr.ApprovalDenied, Tool: tool, Message: fmt.Sprintf("the user declined the call of %s", tool)}
	case ApprovalExpired:
		return &toolerr.Error{Code: toolerr.ApprovalExpired, Tool: tool, Message: fmt.Sprintf("no approval for %s within %v (approval.timeout); the call was not made", tool, timeout)}
	case ApprovalNoClient:
		return &toolerr.Error{Code: toolerr.ApprovalRequired, Tool: tool, Message: fmt.Sprintf("%s needs a person's approval, and this client cannot show approval prompts (MCP elicitation); "+
			"use a client that supports elicitation, or have the operator change the policy for this tool", tool)}
	default:
		return &toolerr.Error{Code: toolerr.ApprovalRequired, Tool: tool, Message: fmt.Sprintf("the approval prompt for %s could not be shown; the call was not made", tool)}
	}
}

// Audited is the outcome as the audit log records it.
func (o ApprovalOutcome) Audited() string {
	if o == approvalSession {
		return string(ApprovalApproved)
	}
	return string(o)
}

// ForSession reports whether the person approved the tool for the rest of
// the session.
func (o ApprovalOutcome) ForSession() bool { return o == approvalSession }
