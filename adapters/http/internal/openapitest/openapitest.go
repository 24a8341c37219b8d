// Package openapitest checks that an OpenAPI document (or a context's
// fragment of it) documents every route a router registers, for the tests
// that live beside each fragment.
package openapitest

import (
	"net/http"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"
	"go.yaml.in/yaml/v3"
)

// Doc is what the checks read of an OpenAPI document.
type Doc struct {
	OpenAPI    string                    `yaml:"openapi"`
	Paths      map[string]map[string]any `yaml:"paths"`
	Components struct {
		PathItems map[string]map[string]any `yaml:"pathItems"`
	} `yaml:"components"`
}

// Load parses a document or a fragment.
func Load(t *testing.T, src []byte) Doc {
	t.Helper()
	var doc Doc
	if err := yaml.Unmarshal(src, &doc); err != nil {
		t.Fatalf("the OpenAPI document does not parse: %v", err)
	}
	return doc
}

// Operations returns the methods documented on a path, following a path
// item $ref into components.pathItems.
func (d Doc) Operations(path string) map[string]bool {
	item, ok := d.Paths[path]
	if !ok {
		return nil
	}
	if ref, ok := item["$ref"].(string); ok {
		item = d.Components.PathItems[strings.TrimPrefix(ref, "#/components/pathItems/")]
	}
	ops := map[string]bool{}
	for k := range item {
		switch k {
		case "get", "put", "post", "delete", "options", "head", "patch", "trace":
			ops[k] = true
		}
	}
	return ops
}

// CheckRoutes fails t for every route of routes that doc leaves out, and
// when routes has fewer than min (the registration went elsewhere).
func CheckRoutes(t *testing.T, doc Doc, routes chi.Routes, min int) {
	t.Helper()
	check(t, doc, routes, min, true)
}

// CheckPaths is CheckRoutes for routes that answer every method (the
// legacy paths' 308 and 410): a path documented for some method will do.
func CheckPaths(t *testing.T, doc Doc, routes chi.Routes, min int) {
	t.Helper()
	check(t, doc, routes, min, false)
}

func check(t *testing.T, doc Doc, routes chi.Routes, min int, methods bool) {
	t.Helper()
	seen := map[string]bool{}
	err := chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		seen[route] = true
		ops := doc.Operations(route)
		switch {
		case len(ops) == 0:
			t.Errorf("route %s %s is not documented", method, route)
		case methods && !ops[strings.ToLower(method)]:
			t.Errorf("route %s %s is not documented (the path is, for %v)", method, route, ops)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(seen) < min {
		t.Fatalf("found only %d routes, want at least %d", len(seen), min)
	}
}

// Part is a context's part of the API: its routes and its fragment.
type Part interface {
	Routes(r chi.Router)
	OpenAPI() []byte
}

// CheckPart checks every route p registers (at least min paths), its
// public and recovering ones too, against p's own fragment of the OpenAPI document.
func CheckPart(t *testing.T, p Part, min int) {
	t.Helper()
	r := chi.NewRouter()
	p.Routes(r)
	if pub, ok := p.(interface{ PublicRoutes(chi.Router) }); ok {
		pub.PublicRoutes(r)
	}
	if rec, ok := p.(interface{ RecoveringRoutes(chi.Router) }); ok {
		rec.RecoveringRoutes(r)
	}
	CheckRoutes(t, Load(t, p.OpenAPI()), r, min)
}
