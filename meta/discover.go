package meta

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/codecall-go/codecall/catalog"
	"github.com/codecall-go/codecall/policy"
	"github.com/codecall-go/codecall/toolerr"
	"github.com/codecall-go/codecall/vm"
)

// Discover implements vm.Host: a plan's searchTools and describeTools,
// answered as codecall.search and codecall.describe answer, through the
// same index, limits and gate. A plan sees only the tools it may call (the
// gate's access rules and the plan's allowedTools), so whatever it finds
// it can use, and a tool it may not call is never confirmed to exist.
func (p *planHost) Discover(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	if p.journal != nil {
		return p.journal.call(ctx, callRef{Tool: op, Input: digestBytes(args)}, op,
			func(ctx context.Context) (json.RawMessage, error) { return p.discover(ctx, op, args) })
	}
	return p.discover(ctx, op, args)
}

// discover answers a discovery of the plan.
func (p *planHost) discover(ctx context.Context, op string, args json.RawMessage) (json.RawMessage, error) {
	if p.codeMode != nil {
		return p.discoverCodeMode(ctx, op, args)
	}
	offered := func(ctx context.Context, name string) (*catalog.Tool, bool) {
		t, err := p.st.Gate.Access(ctx, p.st.Catalog, policy.Call{Tool: name, Via: policy.ViaExecute, Allowed: p.allowed})
		return t, err == nil
	}
	switch op {
	case vm.DiscoverCatalog:
		return p.discoverCatalog(ctx)
	case vm.DiscoverSearch:
		var in struct {
			Query  string   `json:"query"`
			AppIDs []string `json:"appIds"`
			Tags   []string `json:"tags"`
			TopK   *int     `json:"topK"`
		}
		if err := json.Unmarshal(args, &in); err != nil {
			return nil, &toolerr.Error{Code: toolerr.Validation, Tool: "searchTools", Message: "searchTools: the arguments cannot be read"}
		}
		search := SearchInput{Query: in.Query, TopK: in.TopK}
		if len(in.AppIDs) > 0 || len(in.Tags) > 0 {
			search.Filter = &SearchFilter{AppIDs: in.AppIDs, Tags: in.Tags}
		}
		out, field, err := p.st.search(ctx, search, func(ctx context.Context, name string) bool {
			_, ok := offered(ctx, name)
			return ok
		}, p.progressFunc())
		switch {
		case field != "":
			return nil, &toolerr.Error{Code: toolerr.Validation, Tool: "searchTools", Message: "searchTools: " + err.Error(),
				Hint: "Call searchTools(query, {appIds?: string[], tags?: string[], topK?: integer})."}
		case err != nil:
			return nil, err
		}
		return json.Marshal(out.Tools)
	case vm.DiscoverDescribe:
		var in struct {
			Names []string `json:"names"`
		}
		if err := json.Unmarshal(args, &in); err != nil || len(in.Names) == 0 {
			return nil, &toolerr.Error{Code: toolerr.Validation, Tool: "describeTools", Message: "describeTools: names must list at least one tool name"}
		}
		if len(in.Names) > maxDescribeNames {
			return nil, &toolerr.Error{Code: toolerr.Validation, Tool: "describeTools",
				Message: "describeTools: too many names", Hint: "Describe at most 256 names per call."}
		}
		return json.Marshal(p.st.describe(ctx, in.Names, p.st.Config.Describe.MaxDefinitions, DescribeBoth, offered))
	}
	return nil, errors.New("unknown discovery operation")
}
