package vm

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/dop251/goja"
)

// Discovery operations a plan asks its host for (Host.Discover).
const (
	// DiscoverSearch is searchTools(query, {appIds, tags, topK}); its args
	// are {"query", "appIds"?, "tags"?, "topK"?} and its answer the hits.
	DiscoverSearch = "search"
	// DiscoverDescribe is describeTools(names); its args are {"names"} and
	// its answer {tools, notFound?}.
	DiscoverDescribe = "describe"
	// DiscoverCatalog lists the tools the plan may call, for a Python
	// plan's mcp_<alias> proxies and list_servers/list_tools; its args are
	// {} and its answer [{name, appId, description}].
	DiscoverCatalog = "catalog"
)

// maxDiscoverArgsBytes bounds the JSON of one searchTools or describeTools
// request: a query, a few filters, a list of names.
const maxDiscoverArgsBytes = 64 << 10

// searchArgs are searchTools' arguments as they cross to the host.
type searchArgs struct {
	Query  string   `json:"query"`
	AppIDs []string `json:"appIds,omitempty"`
	Tags   []string `json:"tags,omitempty"`
	TopK   *int     `json:"topK,omitempty"`
}

// searchTools implements searchTools(query, {appIds, tags, topK}): a
// promise of the tools the host's search finds, as codecall.search lists
// them. Like callTool, it counts toward maxToolCalls.
func (r *run) searchTools(call goja.FunctionCall) goja.Value {
	args := searchArgs{Query: r.nameArg("searchTools", "query", call.Argument(0))}
	if opts := call.Argument(1); !goja.IsUndefined(opts) && !goja.IsNull(opts) {
		o, ok := opts.(*goja.Object)
		if !ok || r.isArray(o) {
			r.throwType("searchTools: options must be an object such as {appIds: ['crm'], topK: 5}")
		}
		raw := r.encodeJSON(o, encodeOptions{what: "searchTools options", keep: maxDiscoverArgsBytes})
		var in struct {
			AppIDs []string `json:"appIds"`
			Tags   []string `json:"tags"`
			TopK   *int     `json:"topK"`
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&in); err != nil {
			r.throwType("searchTools: options are {appIds?: string[], tags?: string[], topK?: integer}")
		}
		args.AppIDs, args.Tags, args.TopK = in.AppIDs, in.Tags, in.TopK
	}
	b, err := json.Marshal(args)
	if err != nil {
		r.throwType("searchTools: the options cannot be encoded")
	}
	return r.discover("searchTools", DiscoverSearch, b)
}

// describeTools implements describeTools(names): a promise of the tools'
// definitions ({tools, notFound?}), as codecall.describe gives them with
// format "ts". A single name may be given as a string.
func (r *run) describeTools(call goja.FunctionCall) goja.Value {
	var names []string
	switch v := call.Argument(0).(type) {
	case *goja.Object:
		if !r.isArray(v) {
			r.throwType("describeTools: names must be an array of tool names")
		}
		raw := r.encodeJSON(v, encodeOptions{what: "describeTools names", keep: maxDiscoverArgsBytes})
		if err := json.Unmarshal(raw, &names); err != nil {
			r.throwType("describeTools: names must be an array of strings")
		}
	default:
		names = []string{r.nameArg("describeTools", "name", v)}
	}
	if len(names) == 0 {
		r.throwType("describeTools: names must list at least one tool name")
	}
	b, err := json.Marshal(map[string][]string{"names": names})
	if err != nil {
		r.throwType("describeTools: the names cannot be encoded")
	}
	return r.discover("describeTools", DiscoverDescribe, b)
}

// discover queues a discovery request like a tool call: it shares the
// tool-call budget, the concurrency limit and the deadline, and settles on
// the event loop. It is left out of toolTrace and metrics.toolCalls, which
// report the plan's tool calls.
func (r *run) discover(fn, op string, args []byte) goja.Value {
	if len(r.calls) >= r.opts.Limits.MaxToolCalls {
		r.stop(limitOutcome(LimitToolCalls, fmt.Sprintf("the plan made more than %d tool calls (searchTools and describeTools count), this preset's maxToolCalls", r.opts.Limits.MaxToolCalls)))
		r.throwRange("tool-call limit reached")
	}
	c := &toolCall{index: len(r.calls), name: fn, op: op, inputJSON: args, throwOnError: true}
	p, resolve, reject := r.rt.NewPromise()
	c.resolve, c.reject = resolve, reject
	r.calls = append(r.calls, c)
	r.queue = append(r.queue, c) // the event loop starts it (launch)
	return r.rt.ToValue(p)
}

// toolCalls is the number of tool calls the plan made, discovery requests
// left out.
func (r *run) toolCalls() int {
	n := 0
	for _, c := range r.calls {
		if c.op == "" {
			n++
		}
	}
	return n
}
