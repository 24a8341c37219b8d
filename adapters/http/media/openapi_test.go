package media

import (
	"testing"

	"github.com/halocms/halocms/adapters/http/internal/openapitest"
)

// TestOpenAPIDocumentsEveryRoute checks every route Routes registers
// against this package's part of the OpenAPI document.
func TestOpenAPIDocumentsEveryRoute(t *testing.T) { openapitest.CheckPart(t, &API{}, 9) }
