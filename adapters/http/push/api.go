// Package push serves the push API: schedules (to a segment, aliases or
// identified users), their listing and devices' activity.
package push

import (
	_ "embed"

	"github.com/go-chi/chi/v5"

	httpapi "github.com/halocms/halocms/adapters/http"
)

// Deps are the services the push endpoints call. All are required.
type Deps struct {
	Commands Commands
	Queries  Queries
}

// API serves the push endpoints.
type API struct {
	Deps
	kit *httpapi.Kit
}

// New returns the push endpoints.
func New(kit *httpapi.Kit, d Deps) *API {
	if kit == nil || d.Commands == nil || d.Queries == nil {
		panic("push.New: nil dependency")
	}
	return &API{Deps: d, kit: kit}
}

//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPI is the part of the OpenAPI document that describes these
// endpoints (see httpapi.OpenAPIDocument).
func (s *API) OpenAPI() []byte { return openapiYAML }

// Routes registers the endpoints, behind authentication.
func (s *API) Routes(r chi.Router) {
	r.Post("/api/push/schedule", s.kit.Handle(s.schedulePush(anyTarget)))
	r.Post("/api/push/schedule/toAliases", s.kit.Handle(s.schedulePush(aliasesTarget)))
	r.Post("/api/push/schedule/toIdentified", s.kit.Handle(s.schedulePush(identifiedTarget)))
	r.Post("/api/authentication/schedule", s.kit.Handle(s.schedulePush(anyTarget)))
	r.Post("/api/push/schedule/activity", s.kit.Handle(s.pushActivity))
	r.Get("/api/push/schedule", s.kit.Handle(s.listPushes))
	r.Get("/api/push/schedule/{id}", s.kit.Handle(s.getPush))
	r.Put("/api/push/schedule/{id}", s.kit.Handle(s.updatePush))
	r.Delete("/api/push/schedule/{id}", s.kit.Handle(s.deletePush))
	r.Post("/api/push/schedule/{id}/cancel", s.kit.Handle(s.cancelPush))
}
