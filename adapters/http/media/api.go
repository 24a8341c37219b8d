// Package media serves an app's media library: uploads, the library's
// lists and metadata, updateByUrl, and the files themselves with their
// image transforms.
package media

import (
	_ "embed"
)

// API serves the media endpoints.
type API struct{}

//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPI is the part of the OpenAPI document that describes these
// endpoints (see httpapi.OpenAPIDocument).
func (s *API) OpenAPI() []byte { return openapiYAML }
