package httpapi_test

import (
	"testing"

	httpapi "github.com/halocms/halocms/adapters/http"
	httpanalytics "github.com/halocms/halocms/adapters/http/analytics"
	httpappuser "github.com/halocms/halocms/adapters/http/appuser"
	httpcontent "github.com/halocms/halocms/adapters/http/content"
	httpidentity "github.com/halocms/halocms/adapters/http/identity"
	"github.com/halocms/halocms/adapters/http/internal/openapitest"
	httployalty "github.com/halocms/halocms/adapters/http/loyalty"
	httppush "github.com/halocms/halocms/adapters/http/push"
)

// TestOpenAPIWholeDocument merges every context's fragment into the root
// document, as the server does: no path or component twice, every $ref
// resolving, the contexts' paths all there.
func TestOpenAPIWholeDocument(t *testing.T) {
	fragments := map[string][]byte{"identity": (&httpidentity.API{}).OpenAPI(), "content": (&httpcontent.API{}).OpenAPI(),
		"push": (&httppush.API{}).OpenAPI(), "appuser": (&httpappuser.API{}).OpenAPI(), "loyalty": (&httployalty.API{}).OpenAPI(),
		"analytics": (&httpanalytics.API{}).OpenAPI()}
	all := [][]byte{}
	for _, f := range fragments {
		all = append(all, f)
	}
	y, j, err := httpapi.OpenAPIDocument(all...)
	if err != nil {
		t.Fatal(err)
	}
	httpapi.CheckOpenAPIJSON(t, j)
	doc := openapitest.Load(t, y)
	for name, f := range fragments {
		for path := range openapitest.Load(t, f).Paths {
			if len(doc.Operations(path)) == 0 {
				t.Errorf("%s's path %s is not in the whole document", name, path)
			}
		}
	}
}
