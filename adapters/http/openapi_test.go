package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/halocms/halocms/adapters/http/internal/openapitest"
)

func TestOpenAPIVersion(t *testing.T) {
	doc := openapitest.Load(t, openapiRoot)
	if !regexp.MustCompile(`^3\.1\.\d+$`).MatchString(doc.OpenAPI) {
		t.Fatalf("openapi = %q, want 3.1.x", doc.OpenAPI)
	}
	if len(doc.Paths) == 0 {
		t.Fatal("no paths")
	}
}

// TestOpenAPIDocumentsEveryRoute checks the root's own routes (probes,
// token, documents) against the root document; each context checks its
// routes against its fragment.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	r := chi.NewRouter()
	(&server{}).routes(r)
	openapitest.CheckRoutes(t, openapitest.Load(t, openapiRoot), r, 8)
}

// TestOpenAPIDocumentsLegacyPaths checks the 308 and 410 paths of legacy.go.
func TestOpenAPIDocumentsLegacyPaths(t *testing.T) {
	r := chi.NewRouter()
	legacy(r)
	openapitest.CheckPaths(t, openapitest.Load(t, openapiRoot), r, 5)
}

// TestOpenAPIMerge checks that a fragment adds paths and components, and
// that a path or component defined twice, or anything else in a fragment,
// is refused.
func TestOpenAPIMerge(t *testing.T) {
	frag := []byte("paths:\n  /x:\n    get: {}\ncomponents:\n  schemas:\n    X: {type: string}\n")
	y, j, err := OpenAPIDocument(frag)
	if err != nil {
		t.Fatal(err)
	}
	doc := openapitest.Load(t, y)
	if !doc.Operations("/x")["get"] || !strings.Contains(string(j), `"X": {`) {
		t.Errorf("the fragment's path or schema is missing")
	}
	for name, fragments := range map[string][][]byte{
		"a path twice":      {[]byte("paths:\n  /healthz:\n    get: {}\n")},
		"a schema twice":    {append(frag, frag...)},
		"another key":       {[]byte("info: {title: x}\n")},
		"a fragment in two": {frag, frag},
	} {
		if _, _, err := OpenAPIDocument(fragments...); err == nil {
			t.Errorf("%s: merged", name)
		}
	}
}

// TestOpenAPIJSON checks the JSON conversion and that every $ref of the
// root document resolves (TestOpenAPIWholeDocument checks the whole), and
// the handler that serves it.
func TestOpenAPIJSON(t *testing.T) {
	_, b, err := OpenAPIDocument()
	if err != nil {
		t.Fatal(err)
	}
	CheckOpenAPIJSON(t, b)
	s := &server{openapi: &openapiDoc{}}
	rec := httptest.NewRecorder()
	s.openapiJSONHandler(rec, httptest.NewRequest(http.MethodGet, "/openapi.json", nil))
	if rec.Code != http.StatusOK || !strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") || rec.Body.Len() != len(b) {
		t.Errorf("handler: %d %q %d bytes", rec.Code, rec.Header().Get("Content-Type"), rec.Body.Len())
	}
}

// CheckOpenAPIJSON checks a whole OpenAPI document in JSON: version 3.1,
// paths in the YAML's order, every $ref resolving.
func CheckOpenAPIJSON(t *testing.T, b []byte) {
	t.Helper()
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatalf("the document is not JSON: %v", err)
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
