package openapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi2"
	"github.com/getkin/kin-openapi/openapi2conv"
	"github.com/getkin/kin-openapi/openapi3"
	"go.yaml.in/yaml/v3"
)

// MaxDocumentBytes bounds one file of a document (the root or a file one
// of its $refs names): larger documents exist, but not by accident.
const MaxDocumentBytes = 64 << 20

// fetchTimeout bounds fetching a document from a URL.
const fetchTimeout = 30 * time.Second

// Document is a loaded OpenAPI document, converted to OpenAPI 3 when it was
// Swagger 2.0.
type Document struct {
	// T is the parsed document, $refs resolved.
	T *openapi3.T
	// Source is the file or URL it was read from.
	Source string
	// Version is the document's own openapi (or swagger) version.
	Version string
	// Hash covers every byte read for the document (its $ref files
	// included), so a reload can tell whether anything changed.
	Hash [32]byte
}

// IsURL reports whether source names an http(s) URL rather than a file.
func IsURL(source string) bool {
	return strings.HasPrefix(source, "http://") || strings.HasPrefix(source, "https://")
}

// Load reads an OpenAPI document from a file or an http(s) URL. $refs to
// other files are resolved when they stay next to the document: under the
// document's directory for a file, on the document's origin for a URL.
func Load(ctx context.Context, source string) (*Document, error) {
	var (
		data []byte
		loc  *url.URL
		err  error
	)
	if IsURL(source) {
		loc, err = url.Parse(source)
		if err != nil {
			return nil, fmt.Errorf("openapi: %q is not a URL: %w", source, err)
		}
		data, err = fetch(ctx, loc)
	} else {
		abs, aerr := filepath.Abs(source)
		if aerr != nil {
			return nil, fmt.Errorf("openapi: %s: %w", source, aerr)
		}
		loc = &url.URL{Path: filepath.ToSlash(abs)}
		data, err = readFile(abs)
	}
	if err != nil {
		return nil, fmt.Errorf("openapi: reading %s: %w", source, err)
	}
	doc, err := Parse(ctx, data, loc)
	if err != nil {
		return nil, fmt.Errorf("openapi: %s: %w", source, err)
	}
	doc.Source = source
	return doc, nil
}

// Parse reads a document from data; location (a file path as a URL, or
// an http(s) URL; nil for none) is where relative $refs are resolved.
func Parse(ctx context.Context, data []byte, location *url.URL) (*Document, error) {
	h := sha256.New()
	h.Write(data)
	version, err := versionOf(data)
	if err != nil {
		return nil, err
	}
	loader := openapi3.NewLoader()
	loader.Context = ctx
	loader.ReadFromURIFunc = func(_ *openapi3.Loader, ref *url.URL) ([]byte, error) {
		b, err := readRef(ctx, location, ref)
		if err == nil {
			h.Write(b)
		}
		return b, err
	}
	var t *openapi3.T
	if strings.HasPrefix(version, "2.") {
		var d2 openapi2.T
		js, err := yamlToJSON(data)
		if err != nil {
			return nil, err
		}
		if err := json.Unmarshal(js, &d2); err != nil {
			return nil, fmt.Errorf("not a valid Swagger 2.0 document: %w", err)
		}
		if t, err = openapi2conv.ToV3WithLoader(&d2, loader, location); err != nil {
			return nil, fmt.Errorf("converting Swagger 2.0 to OpenAPI 3: %w", err)
		}
		if err := loader.ResolveRefsIn(t, location); err != nil {
			return nil, fmt.Errorf("resolving $refs: %w", err)
		}
	} else {
		if !strings.HasPrefix(version, "3.") {
			return nil, fmt.Errorf("openapi version %q is not supported; CodeCall reads OpenAPI 3.0, 3.1 and Swagger 2.0", version)
		}
		if location != nil {
			t, err = loader.LoadFromDataWithPath(data, location)
		} else {
			t, err = loader.LoadFromData(data)
		}
		if err != nil {
			return nil, fmt.Errorf("not a valid OpenAPI document: %w", err)
		}
	}
	if t.Paths == nil || t.Paths.Len() == 0 {
		return nil, errors.New("the document has no paths, so there is no operation to serve")
	}
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	return &Document{T: t, Version: version, Hash: sum}, nil
}

// versionOf returns the document's "openapi" or "swagger" field.
func versionOf(data []byte) (string, error) {
	var head struct {
		OpenAPI string `yaml:"openapi" json:"openapi"`
		Swagger string `yaml:"swagger" json:"swagger"`
	}
	// JSON documents, the usual form of large generated ones, skip the
	// YAML parser, which is several times slower on them.
	if trimmed := bytes.TrimLeft(data, " \t\r\n"); len(trimmed) == 0 || trimmed[0] != '{' || json.Unmarshal(data, &head) != nil {
		if err := yaml.Unmarshal(data, &head); err != nil {
			return "", fmt.Errorf("neither JSON nor YAML: %w", err)
		}
	}
	switch {
	case head.OpenAPI != "":
		return head.OpenAPI, nil
	case head.Swagger != "":
		return head.Swagger, nil
	}
	return "", errors.New(`no "openapi" (3.x) or "swagger" (2.0) field at the top; is this an OpenAPI document?`)
}

func yamlToJSON(data []byte) ([]byte, error) {
	var v any
	if err := yaml.Unmarshal(data, &v); err != nil {
		return nil, fmt.Errorf("neither JSON nor YAML: %w", err)
	}
	js, err := json.Marshal(v)
	if err != nil {
		return nil, fmt.Errorf("the document cannot be read as JSON (a mapping with a non-string key?): %w", err)
	}
	return js, nil
}

// readRef reads a file a $ref names, if it stays next to the root
// document: same origin for a URL, same directory tree for a file. A
// document must not make CodeCall read /etc/passwd or a metadata endpoint.
func readRef(ctx context.Context, root, ref *url.URL) ([]byte, error) {
	if root == nil {
		return nil, fmt.Errorf("$ref %s: the document was given without a location, so it cannot refer to other files", ref)
	}
	if root.Scheme == "http" || root.Scheme == "https" {
		if ref.Scheme != root.Scheme || ref.Host != root.Host {
			return nil, fmt.Errorf("$ref %s: refused, external $refs of a document read from a URL must stay on %s://%s", ref, root.Scheme, root.Host)
		}
		return fetch(ctx, ref)
	}
	if ref.Scheme != "" && ref.Scheme != "file" {
		return nil, fmt.Errorf("$ref %s: refused, a document read from a file may refer only to files next to it", ref)
	}
	dir := filepath.Dir(filepath.FromSlash(root.Path))
	p := filepath.Clean(filepath.FromSlash(ref.Path))
	if rel, err := filepath.Rel(dir, p); err != nil || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return nil, fmt.Errorf("$ref %s: refused, it leaves the document's directory %s", ref.Path, dir)
	}
	return readFile(p)
}

func readFile(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return readCapped(f)
}

func readCapped(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxDocumentBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxDocumentBytes {
		return nil, fmt.Errorf("larger than %d MiB", MaxDocumentBytes>>20)
	}
	return b, nil
}

// fetch GETs a document.
func fetch(ctx context.Context, u *url.URL) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, fetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "application/json, application/yaml;q=0.9, */*;q=0.5")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		excerpt, _ := io.ReadAll(io.LimitReader(resp.Body, 200))
		return nil, fmt.Errorf("HTTP %d from %s: %s", resp.StatusCode, u.Redacted(), bytes.TrimSpace(excerpt))
	}
	return readCapped(resp.Body)
}
