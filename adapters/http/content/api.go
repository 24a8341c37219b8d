// Package content serves the content API (wire reference §4–5): modules, module
// types, items with their states and history, search, sync and batch.
package content

import (
	"context"
	_ "embed"
	"strings"

	"github.com/go-chi/chi/v5"

	cmdcontent "github.com/halocms/halocms/commands/content"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/rights"
)

// Deps are the services the content endpoints call. All are required.
type Deps struct {
	Commands   Commands
	Queries    Queries
	Authorizer Authorizer
	Live       Live
}

// API serves the content endpoints.
type API struct {
	Deps
	kit *httpapi.Kit
}

// New returns the content endpoints.
func New(kit *httpapi.Kit, d Deps) *API {
	if kit == nil || d.Commands == nil || d.Queries == nil || d.Authorizer == nil || d.Live == nil {
		panic("content.New: nil dependency")
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
	r.Get("/api/generalcontent/module", s.kit.Handle(s.listModules))
	r.Post("/api/generalcontent/module", s.kit.Handle(s.createModule))
	r.Get("/api/generalcontent/module/{id}", s.kit.Handle(s.getModule))
	r.Put("/api/generalcontent/module/{id}", s.kit.Handle(s.updateModule))
	r.Delete("/api/generalcontent/module/{id}", s.kit.Handle(s.deleteModule))
	r.Get("/api/core/moduletype", s.kit.Handle(s.listModuleTypes))
	r.Post("/api/core/moduletype", s.kit.Handle(s.createModuleType))
	r.Put("/api/core/moduletype/{id}", s.kit.Handle(s.updateModuleType))
	r.Delete("/api/core/moduletype/{id}", s.kit.Handle(s.deleteModuleType))
	r.Get("/api/core/moduletype/download", s.kit.Handle(s.downloadModuleTypes))
	r.Get("/api/core/moduletype/download/{id}", s.kit.Handle(s.downloadModuleTypes))
	r.Post("/api/core/moduletype/import", s.kit.Handle(s.importModuleTypes))
	r.Get("/api/generalcontent/instance", s.kit.Handle(s.listInstances))
	r.Post("/api/generalcontent/instance", s.kit.Handle(s.createInstance))
	r.Post("/api/generalcontent/instance/search", s.kit.Handle(s.search))
	r.Post("/api/generalcontent/instance/sync", s.kit.Handle(s.sync))
	r.Post("/api/generalcontent/instance/batch", s.kit.Handle(s.batch))
	r.Get("/api/generalcontent/instance/{id}", s.kit.Handle(s.getInstance))
	r.Put("/api/generalcontent/instance/{id}", s.kit.Handle(s.updateInstance))
	r.Delete("/api/generalcontent/instance/{id}", s.kit.Handle(s.deleteInstance))
	r.Post("/api/generalcontent/instance/{id}/publish", s.kit.Handle(s.transit(cmdcontent.Publish)))
	r.Post("/api/generalcontent/instance/{id}/unpublish", s.kit.Handle(s.transit(cmdcontent.Unpublish)))
	r.Post("/api/generalcontent/instance/{id}/archive", s.kit.Handle(s.transit(cmdcontent.Archive)))
	r.Post("/api/generalcontent/instance/{id}/unarchive", s.kit.Handle(s.transit(cmdcontent.Unarchive)))
	r.Post("/api/generalcontent/instance/{id}/restore", s.kit.Handle(s.transit(cmdcontent.Restore)))
	r.Get("/api/generalcontent/instance/{id}/history", s.kit.Handle(s.history))
	r.Post("/api/generalcontent/instance/{id}/history/{revision}/restore", s.kit.Handle(s.revertInstance))
	r.Get("/api/generalcontent/events", s.kit.Handle(s.events))
}

// BatchBodyBytes bounds the bodies of batch requests (bulk imports).
const BatchBodyBytes = 16 << 20

// BodyLimit bounds the batch endpoint's bodies by BatchBodyBytes.
func (s *API) BodyLimit(path string) (int64, bool) {
	if strings.HasSuffix(strings.TrimSuffix(path, "/"), "/generalcontent/instance/batch") {
		return BatchBodyBytes, true
	}
	return 0, false
}

// Authorizer tells whether the caller holds a permission somewhere, for
// a batch that is refused before it is read.
type Authorizer interface {
	AuthorizeAnywhere(ctx context.Context, actor access.Actor, p rights.Permission, kinds ...rights.ScopeKind) error
}
