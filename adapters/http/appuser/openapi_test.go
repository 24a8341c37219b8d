package appuser

import (
	"testing"

	"github.com/go-chi/chi/v5"

	"github.com/halocms/halocms/adapters/http/internal/openapitest"
)

// TestOpenAPIDocumentsEveryRoute checks every route Routes registers
// against this package's part of the OpenAPI document.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	r := chi.NewRouter()
	(&API{}).Routes(r)
	openapitest.CheckRoutes(t, openapitest.Load(t, OpenAPI()), r, 8)
}
