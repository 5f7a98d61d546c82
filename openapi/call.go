package openapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/toolerr"
)

// excerptBytes is how much of an error response's body a tool error shows.
const excerptBytes = 300

func jsonText(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("cannot be encoded as JSON: %w", err)
	}
	return string(b), nil
}

// handler sends op's request for a call and turns the response into the
// tool's result.
func (a *App) handler(op *Operation) server.ToolHandlerFunc {
	return func(ctx context.Context, req mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		args := req.GetArguments()
		httpReq, err := a.Request(ctx, op, args)
		if err != nil {
			return a.failure(toolerr.Validation, op, err.Error(),
				"read the tool's inputSchema (codecall.describe) and send the input it asks for", false), nil
		}
		timeout := a.opts.timeout
		if op.Timeout > 0 {
			timeout = op.Timeout
		}
		if d, ok := catalog.CallTimeout(ctx); ok {
			// The caller bounded the call by the tool's timeout, which
			// the operator may have set longer than the operation's, and
			// reports its end itself.
			timeout = d
		}
		cctx, cancel := context.WithTimeout(ctx, timeout)
		defer cancel()
		httpReq = httpReq.WithContext(cctx)
		var token string
		if a.tokens != nil {
			if token, err = a.tokens.token(cctx); err != nil {
				return a.failure(toolerr.Unauthenticated, op, "no access token for the API: "+err.Error(),
					"The operator must check auth.clientCredentials (tokenUrl, clientId, clientSecret) of the app's upstream entry; retrying will not help until then.", false), nil
			}
			httpReq.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := a.client.Do(httpReq)
		if err != nil {
			return a.transportFailure(ctx, cctx, op, timeout, err)
		}
		defer resp.Body.Close()
		data, err := io.ReadAll(io.LimitReader(resp.Body, a.opts.maxBytes+1))
		if err != nil {
			if cctx.Err() != nil && ctx.Err() == nil {
				return a.failure(toolerr.Timeout, op, fmt.Sprintf("the API did not finish answering %s %s within %v", op.Method, op.Path, timeout),
					"The API was slow; the call may succeed if made again, and may have had its effect already.", true), nil
			}
			return a.failure(toolerr.Execution, op, "reading the response failed: "+err.Error(), "", true), nil
		}
		if int64(len(data)) > a.opts.maxBytes {
			return a.failure(toolerr.Limit, op, fmt.Sprintf("the response is larger than %d bytes (maxResponseBytes)", a.opts.maxBytes),
				"Ask for less (a filter, a page size) or raise maxResponseBytes for this API.", false), nil
		}
		if resp.StatusCode == http.StatusUnauthorized && a.tokens != nil {
			// A revoked or expired token: the next call fetches another.
			a.tokens.refused(token)
		}
		if resp.StatusCode >= 300 {
			return a.httpFailure(op, resp, data), nil
		}
		return a.success(resp, data), nil
	}
}

// Request builds the HTTP request for a call of op with args, without
// sending it. It fails, naming the field, when a required parameter is
// missing or a value cannot be serialised as the document declares.
func (a *App) Request(ctx context.Context, op *Operation, args map[string]any) (*http.Request, error) {
	path := op.Path
	var query []string
	header := http.Header{}
	var cookies []string
	known := map[string]bool{}
	for _, p := range op.params {
		known[p.field] = true
		v, ok := args[p.field]
		if !ok || v == nil {
			if p.required {
				return nil, fmt.Errorf("missing required %s parameter %q (input field %q)", p.in, p.name, p.field)
			}
			continue
		}
		s, err := serialize(p, v)
		if err != nil {
			return nil, fmt.Errorf("input field %q (%s parameter %q): %w", p.field, p.in, p.name, err)
		}
		switch p.in {
		case "path":
			if s == "" {
				return nil, fmt.Errorf("input field %q (path parameter %q) is empty; a path segment needs a value", p.field, p.name)
			}
			path = strings.ReplaceAll(path, "{"+p.name+"}", s)
		case "query":
			query = append(query, s)
		case "header":
			header.Set(p.name, s)
		case "cookie":
			cookies = append(cookies, s)
		}
	}
	var bodyReader io.Reader
	contentType := ""
	if b := op.body; b != nil {
		var payload any
		present := false
		if b.field != "" {
			known[b.field] = true
			payload, present = args[b.field]
		} else {
			obj := map[string]any{}
			for _, k := range b.merged {
				known[k] = true
				if v, ok := args[k]; ok {
					obj[k] = v
				}
			}
			payload, present = obj, len(obj) > 0 || b.required
		}
		if !present && b.required {
			return nil, fmt.Errorf("missing the request body (input field %q)", b.field)
		}
		if present {
			var err error
			bodyReader, contentType, err = encodeBody(b.mediaType, payload)
			if err != nil {
				return nil, fmt.Errorf("request body: %w", err)
			}
		}
	}
	unknown := make([]string, 0)
	for k := range args {
		if !known[k] {
			unknown = append(unknown, k)
		}
	}
	if len(unknown) > 0 {
		sort.Strings(unknown)
		return nil, fmt.Errorf("unknown input field(s) %s; the operation has no such parameter", strings.Join(unknown, ", "))
	}
	u := *a.base
	u.RawPath = a.base.EscapedPath() + path
	unescaped, err := url.PathUnescape(u.RawPath)
	if err != nil {
		return nil, fmt.Errorf("the path values do not make a valid URL: %w", err)
	}
	u.Path = unescaped
	for name, v := range a.opts.creds.Query {
		query = append(query, queryEscape(name)+"="+queryEscape(v))
	}
	sort.Strings(query[len(query)-len(a.opts.creds.Query):])
	u.RawQuery = strings.Join(query, "&")
	if pu, err := url.Parse(u.String()); err != nil || pu.Host != a.base.Host {
		return nil, fmt.Errorf("the path values do not make a valid URL")
	}
	req, err := http.NewRequestWithContext(ctx, op.Method, u.String(), bodyReader)
	if err != nil {
		return nil, fmt.Errorf("building the request: %w", err)
	}
	req.Header = header
	for k, v := range a.opts.creds.Headers {
		req.Header.Set(k, v)
	}
	if len(cookies) > 0 {
		req.Header.Set("Cookie", strings.Join(cookies, "; "))
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	req.Header.Set("Accept", "application/json, */*;q=0.5")
	req.Header.Set("User-Agent", a.opts.userAgent)
	return req, nil
}

// encodeBody encodes a request body in the media type the document
// declares.
func encodeBody(mediaType string, v any) (io.Reader, string, error) {
	mt := strings.ToLower(mediaType)
	switch {
	case isJSON(mt) || mt == "*/*" || mt == "application/*":
		b, err := json.Marshal(v)
		if err != nil {
			return nil, "", fmt.Errorf("cannot be encoded as JSON: %w", err)
		}
		ct := mediaType
		if mt == "*/*" || mt == "application/*" {
			ct = "application/json"
		}
		return bytes.NewReader(b), ct, nil
	case mt == "application/x-www-form-urlencoded":
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("a form body must be an object")
		}
		var pairs []string
		for _, k := range sortedKeys(obj) {
			s, err := formValue(obj[k])
			if err != nil {
				return nil, "", fmt.Errorf("field %q: %w", k, err)
			}
			for _, x := range s {
				pairs = append(pairs, queryEscape(k)+"="+queryEscape(x))
			}
		}
		return strings.NewReader(strings.Join(pairs, "&")), mediaType, nil
	case mt == "multipart/form-data":
		obj, ok := v.(map[string]any)
		if !ok {
			return nil, "", fmt.Errorf("a multipart body must be an object")
		}
		var buf bytes.Buffer
		w := multipart.NewWriter(&buf)
		for _, k := range sortedKeys(obj) {
			s, err := formValue(obj[k])
			if err != nil {
				return nil, "", fmt.Errorf("field %q: %w", k, err)
			}
			for _, x := range s {
				if err := w.WriteField(k, x); err != nil {
					return nil, "", err
				}
			}
		}
		if err := w.Close(); err != nil {
			return nil, "", err
		}
		return &buf, w.FormDataContentType(), nil
	case strings.HasPrefix(mt, "text/"):
		s, ok := v.(string)
		if !ok {
			return nil, "", fmt.Errorf("a %s body must be a string", mediaType)
		}
		return strings.NewReader(s), mediaType, nil
	}
	return nil, "", fmt.Errorf("media type %s cannot be sent", mediaType)
}

// formValue renders a form field: a scalar, a list of scalars (one pair
// each), or an object as JSON text.
func formValue(v any) ([]string, error) {
	if s, ok, err := scalar(v); ok || err != nil {
		return []string{s}, err
	}
	if list, ok := v.([]any); ok {
		var out []string
		for _, e := range list {
			s, isScalar, err := scalar(e)
			if err != nil {
				return nil, err
			}
			if !isScalar {
				js, err := jsonText(e)
				if err != nil {
					return nil, err
				}
				s = js
			}
			out = append(out, s)
		}
		return out, nil
	}
	js, err := jsonText(v)
	return []string{js}, err
}

// success turns a 2xx/3xx response into a result: a JSON object as
// structuredContent (and its text), other JSON or text as text, anything
// else described.
func (a *App) success(resp *http.Response, data []byte) *mcp.CallToolResult {
	ct := resp.Header.Get("Content-Type")
	trimmed := bytes.TrimSpace(data)
	if len(trimmed) == 0 {
		return mcp.NewToolResultText(a.opts.redact(fmt.Sprintf("HTTP %d (no content)", resp.StatusCode)))
	}
	if isJSON(ct) || (ct == "" && json.Valid(trimmed)) {
		text := a.opts.redact(string(trimmed))
		if trimmed[0] == '{' {
			var obj map[string]any
			if err := json.Unmarshal([]byte(text), &obj); err == nil {
				return &mcp.CallToolResult{Content: []mcp.Content{mcp.NewTextContent(text)}, StructuredContent: obj}
			}
		}
		return mcp.NewToolResultText(text)
	}
	if utf8.Valid(data) {
		return mcp.NewToolResultText(a.opts.redact(string(data)))
	}
	return mcp.NewToolResultText(fmt.Sprintf("HTTP %d: %d bytes of %s (binary content is not returned)", resp.StatusCode, len(data), ct))
}

// httpFailure turns an HTTP error status into a tool error.
func (a *App) httpFailure(op *Operation, resp *http.Response, data []byte) *mcp.CallToolResult {
	// Redacted before it is cut: a secret cut in two would not be
	// recognised, and its first half would be shown.
	excerpt := strings.TrimSpace(a.opts.redact(string(data)))
	if !utf8.ValidString(excerpt) {
		excerpt = "(binary)"
	}
	if len(excerpt) > excerptBytes {
		excerpt = excerpt[:excerptBytes]
		for !utf8.ValidString(excerpt) {
			excerpt = excerpt[:len(excerpt)-1]
		}
		excerpt += "…"
	}
	msg := fmt.Sprintf("HTTP %d %s from %s %s", resp.StatusCode, http.StatusText(resp.StatusCode), op.Method, op.Path)
	if excerpt != "" {
		msg += ": " + excerpt
	}
	code, retry := toolerr.Execution, false
	hint := "The API refused the request; read the message and change the input."
	switch s := resp.StatusCode; {
	case s == http.StatusUnauthorized:
		code = toolerr.Unauthenticated
		hint = "The API refused CodeCall's credentials; the operator must set them (auth or headers of the app's upstream entry)."
		if len(op.security) > 0 {
			names := make([]string, len(op.security))
			for i, n := range op.security {
				names[i] = n.scheme
			}
			hint += " The document asks for: " + strings.Join(names, " or ") + "."
		}
		if a.tokens != nil {
			// The token may have been revoked or have expired early; the
			// handler dropped it, so one retry uses a fresh one.
			retry = true
			hint = "The API refused CodeCall's access token; CodeCall dropped it and the next call fetches a new one, so retry once. If that fails too, the operator must check auth.clientCredentials of the app's upstream entry."
		}
	case s == http.StatusForbidden:
		code = toolerr.AccessDenied
		hint = "The API does not let these credentials do this; do not retry, choose another way or ask the user."
	case s == http.StatusNotFound:
		code = toolerr.NotFound
		hint = "The API has nothing at this address; check the identifiers in the input (search or list first)."
	case s == http.StatusTooManyRequests || s >= 500:
		retry = true
		hint = "The API is overloaded or failing; retry later."
		if ra := retryAfter(resp.Header.Get("Retry-After")); ra != "" {
			hint = "The API asks to wait " + ra + " before retrying."
		}
	case s >= 300 && s < 400:
		hint = "The API answered with a redirect CodeCall did not follow (only same-origin redirects are)."
	}
	return a.failure(code, op, msg, hint, retry)
}

// retryAfter renders a Retry-After header (seconds or an HTTP date).
func retryAfter(v string) string {
	v = strings.TrimSpace(v)
	if v == "" {
		return ""
	}
	if n, err := strconv.Atoi(v); err == nil && n >= 0 {
		return fmt.Sprintf("%d seconds", n)
	}
	if t, err := http.ParseTime(v); err == nil {
		d := time.Until(t).Round(time.Second)
		if d < 0 {
			d = 0
		}
		return fmt.Sprintf("%v (until %s)", d, t.UTC().Format(time.RFC1123))
	}
	return ""
}

// transportFailure turns a failed request (no HTTP answer) into a result.
func (a *App) transportFailure(ctx, cctx context.Context, op *Operation, timeout time.Duration, err error) (*mcp.CallToolResult, error) {
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case cctx.Err() != nil:
		return a.failure(toolerr.Timeout, op, fmt.Sprintf("the API did not answer %s %s within %v", op.Method, op.Path, timeout),
			"The API was slow; the call may succeed if made again, and may have had its effect already.", true), nil
	case errors.Is(err, errRedirect):
		return a.failure(toolerr.AccessDenied, op, unwrapURLError(err), "CodeCall follows redirects only within the API's origin; this cannot be changed by the input.", false), nil
	case errors.Is(err, errPrivate):
		return a.failure(toolerr.AccessDenied, op, unwrapURLError(err), "The address is on a private network; the operator may set allowPrivateNetwork.", false), nil
	}
	return a.failure(toolerr.Execution, op, "the request failed: "+unwrapURLError(err), "The API could not be reached; retry later.", true), nil
}

// unwrapURLError drops net/http's "Get \"<url>\": " prefix, whose URL may
// hold a query credential.
func unwrapURLError(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// failure is a tool error: isError, the text, and the error as data under
// toolerr.MetaKey, every text redacted.
func (a *App) failure(code toolerr.Code, op *Operation, msg, hint string, retryable bool) *mcp.CallToolResult {
	msg = a.opts.redact(string(code) + ": " + op.Name + ": " + msg)
	hint = a.opts.redact(hint)
	res := mcp.NewToolResultError(msg)
	data := map[string]any{"code": string(code), "message": msg, "retryable": retryable}
	if hint != "" {
		data["hint"] = hint
	}
	res.Meta = mcp.NewMetaFromMap(map[string]any{toolerr.MetaKey: data})
	return res
}
