package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"
)

type openapiDoc struct {
	OpenAPI    string                    `yaml:"openapi"`
	Paths      map[string]map[string]any `yaml:"paths"`
	Components struct {
		PathItems map[string]map[string]any `yaml:"pathItems"`
	} `yaml:"components"`
}

func loadOpenAPI(t *testing.T) openapiDoc {
	t.Helper()
	var doc openapiDoc
	if err := yaml.Unmarshal(openapiYAML, &doc); err != nil {
		t.Fatalf("openapi.yaml does not parse: %v", err)
	}
	return doc
}

// operations returns the methods documented on a path, following a path
// item $ref into components.pathItems.
func (d openapiDoc) operations(path string) map[string]bool {
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

func TestOpenAPIVersion(t *testing.T) {
	doc := loadOpenAPI(t)
	if !regexp.MustCompile(`^3\.1\.\d+$`).MatchString(doc.OpenAPI) {
		t.Fatalf("openapi = %q, want 3.1.x", doc.OpenAPI)
	}
	if len(doc.Paths) == 0 {
		t.Fatal("no paths")
	}
}

var (
	routeCall  = regexp.MustCompile(`\br\.(Get|Post|Put|Delete|Patch)\(\s*"([^"]+)"`)
	methodCall = regexp.MustCompile(`\br\.Method\(\s*http\.Method(\w+)\s*,\s*"([^"]+)"`)
)

// TestOpenAPIDocumentsEveryRoute reads server.go's route registrations and
// fails for every path and method the document leaves out.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	doc := loadOpenAPI(t)
	src, err := os.ReadFile("server.go")
	if err != nil {
		t.Fatal(err)
	}
	type route struct{ method, path string }
	var routes []route
	for _, m := range routeCall.FindAllStringSubmatch(string(src), -1) {
		routes = append(routes, route{strings.ToLower(m[1]), m[2]})
	}
	for _, m := range methodCall.FindAllStringSubmatch(string(src), -1) {
		routes = append(routes, route{strings.ToLower(m[1]), m[2]})
	}
	if len(routes) < 10 {
		t.Fatalf("found only %d routes in server.go; has the registration style changed?", len(routes))
	}
	for _, rt := range routes {
		if !doc.operations(rt.path)[rt.method] {
			t.Errorf("route %s %s is not documented in openapi.yaml", strings.ToUpper(rt.method), rt.path)
		}
	}
}

var (
	legacyMoved   = regexp.MustCompile(`"(/[^"]+)"\s*:\s*"/`)
	legacyLiteral = regexp.MustCompile(`"(/[^"]*)"`)
)

// TestOpenAPIDocumentsLegacyPaths checks the 308 and 410 paths of legacy.go.
func TestOpenAPIDocumentsLegacyPaths(t *testing.T) {
	doc := loadOpenAPI(t)
	src, err := os.ReadFile("legacy.go")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	for _, m := range legacyLiteral.FindAllStringSubmatch(string(src), -1) {
		// Skip "/" and the "/{id}" suffix literal; keep whole paths.
		if p := strings.TrimSuffix(m[1], "/"); p != "" && !strings.HasPrefix(p, "/{") {
			want[p] = true
		}
	}
	for _, m := range legacyMoved.FindAllStringSubmatch(string(src), -1) {
		want[m[1]+"/{id}"] = true // registered as old+"/{id}"
	}
	if len(want) < 5 {
		t.Fatalf("found only %d legacy paths in legacy.go; has its style changed?", len(want))
	}
	for p := range want {
		if len(doc.operations(p)) == 0 {
			t.Errorf("legacy path %s is not documented in openapi.yaml", p)
		}
	}
}

// TestOpenAPIJSON checks the JSON conversion and that every $ref resolves.
func TestOpenAPIJSON(t *testing.T) {
	b := openapiJSON()
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("openapiJSON is not JSON: %v", err)
	}
	if v, _ := doc["openapi"].(string); !strings.HasPrefix(v, "3.1.") {
		t.Fatalf("openapi = %v", doc["openapi"])
	}
	// Keys keep the YAML's order.
	if i, j := strings.Index(string(b), `"/healthz"`), strings.Index(string(b), `"/api/oauth/token"`); i < 0 || j < 0 || i > j {
		t.Errorf("paths are not in the YAML's order")
	}
	var walk func(v any, at string)
	walk = func(v any, at string) {
		switch x := v.(type) {
		case map[string]any:
			for k, c := range x {
				if k == "$ref" {
					ref, _ := c.(string)
					if !resolves(doc, ref) {
						t.Errorf("%s: $ref %q does not resolve", at, ref)
					}
					continue
				}
				walk(c, at+"/"+k)
			}
		case []any:
			for _, c := range x {
				walk(c, at)
			}
		}
	}
	walk(doc, "#")

	rec := httptest.NewRecorder()
	(&server{}).openapiJSONHandler(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") || rec.Body.Len() != len(b) {
		t.Errorf("handler: %d %q %d bytes", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
}

func resolves(doc map[string]any, ref string) bool {
	if !strings.HasPrefix(ref, "#/") {
		return false
	}
	var cur any = doc
	for _, part := range strings.Split(ref[2:], "/") {
		part = strings.ReplaceAll(strings.ReplaceAll(part, "~1", "/"), "~0", "~")
		m, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		if cur, ok = m[part]; !ok {
			return false
		}
	}
	return true
}
