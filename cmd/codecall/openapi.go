package main

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/codecall-go/codecall/openapi"
	"github.com/codecall-go/codecall/presets"
)

// openapiFlag registers --openapi NAME=URL|FILE, the shorthand for an
// upstream entry {openapi: URL|FILE} with id NAME (no credentials, base URL
// from the document; use the config's upstreams: for more).
func openapiFlag(fs *flag.FlagSet, src *source) {
	fs.Func("openapi", "serve the operations of an OpenAPI document as the app `NAME=URL|FILE` (repeatable; credentials and other settings go in the config's upstreams.servers)", func(v string) error {
		name, doc, ok := strings.Cut(v, "=")
		if !ok || name == "" || doc == "" {
			return fmt.Errorf("want NAME=URL or NAME=FILE (e.g. shop=examples/openapi/bookshop.yaml), got %q", v)
		}
		for _, prev := range src.openapi {
			if strings.HasPrefix(prev, name+"=") {
				return fmt.Errorf("app %q is given twice", name)
			}
		}
		src.openapi = append(src.openapi, v)
		return nil
	})
}

// openapiServers turns the --openapi values into upstream entries.
func openapiServers(values []string) map[string]presets.Upstream {
	out := make(map[string]presets.Upstream, len(values))
	for _, v := range values {
		name, doc, _ := strings.Cut(v, "=")
		if !openapi.IsURL(doc) {
			doc = abs(doc)
		}
		out[name] = presets.Upstream{OpenAPI: doc}
	}
	return out
}

// openapiFiles are the document files of OpenAPI apps, watched so that an
// edit reloads the app.
func openapiFiles(servers map[string]presets.Upstream) []string {
	var out []string
	for _, u := range servers {
		if u.OpenAPI != "" && !openapi.IsURL(u.OpenAPI) {
			out = append(out, abs(u.OpenAPI))
		}
	}
	return out
}

// checkOpenAPI reads an OpenAPI app's document and builds its tools, as
// serve would, and says how many operations it serves and where, and which
// ones it cannot serve.
func checkOpenAPI(u presets.Upstream) (string, []openapi.Skipped, error) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	doc, err := openapi.Load(ctx, u.OpenAPI)
	if err != nil {
		return "", nil, err
	}
	app, err := openapi.New(doc, openapi.WithBaseURL(u.BaseURL))
	if err != nil {
		return "", nil, fmt.Errorf("%s: %w", u.OpenAPI, err)
	}
	n := len(app.Operations()) + len(app.Skipped())
	return fmt.Sprintf("%s (OpenAPI %s, %d %s in the document) calling %s", u.OpenAPI, doc.Version, n, plural(n, "operation", "operations"), app.BaseURL()), app.Skipped(), nil
}
