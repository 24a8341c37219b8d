// Package appuser serves the segmentation API: app users, identified users,
// their pockets and segments.
package appuser

import (
	_ "embed"
	"time"

	"github.com/go-chi/chi/v5"

	httpapi "github.com/halocms/halocms/adapters/http"
)

// Deps are the services the appuser endpoints call. All are required.
type Deps struct {
	Commands Commands
	Queries  Queries
}

// API serves the appuser endpoints.
type API struct {
	Deps
	kit *httpapi.Kit
}

// New returns the appuser endpoints.
func New(kit *httpapi.Kit, d Deps) *API {
	if kit == nil || d.Commands == nil || d.Queries == nil {
		panic("appuser.New: nil dependency")
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
	r.Post("/api/segmentation/appuser", s.kit.Deprecated(AppUserDeprecation, s.kit.Handle(s.createAppUser)))
	r.Post("/api/segmentation/appuser/search", s.kit.Handle(s.searchAppUsers))
	r.Get("/api/segmentation/appuser/{id}", s.kit.Deprecated(AppUserDeprecation, s.kit.Handle(s.getAppUser)))
	r.Put("/api/segmentation/appuser/{id}", s.kit.Deprecated(AppUserDeprecation, s.kit.Handle(s.updateAppUser)))
	r.Post("/api/segmentation/identified/register", s.kit.Handle(s.registerIdentified))
	r.Post("/api/segmentation/identified/search", s.kit.Handle(s.searchIdentified))
	r.Get("/api/segmentation/identified-pocket/self", s.kit.Handle(s.getPocket))
	r.Put("/api/segmentation/identified-pocket", s.kit.Handle(s.putPocket))
	r.Put("/api/segmentation/identified-pocket/self", s.kit.Handle(s.putPocket))
}

// RecoveringRoutes registers the identified login, which also takes an
// identified user's expired (not revoked) token as its app's: when an
// APP+ token expires, iOS signs in again with it as the bearer.
func (s *API) RecoveringRoutes(r chi.Router) {
	r.Post("/api/segmentation/identified/login", s.kit.Handle(s.loginIdentified))
}

// AppUserDeprecation: HALO 2.0.0 (2016-10-17) deprecated GET, POST and PUT
// on /api/segmentation/appuser; they keep working until the sunset, and
// identified users (registered and signed in with the device's alias) are
// what replaces the anonymous app user. The CMS's search of app users is
// this server's own and not deprecated.
var AppUserDeprecation = httpapi.Deprecation{
	Since:     time.Date(2016, 10, 17, 0, 0, 0, 0, time.UTC),
	Sunset:    time.Date(2027, 12, 31, 23, 59, 59, 0, time.UTC),
	Successor: "/api/segmentation/identified/register",
}

// PublicRoutes registers what needs no token: the DELETE of an app user,
// which HALO 2.0.0 removed (GET and PUT still work), answers 410 to anyone.
func (s *API) PublicRoutes(r chi.Router) {
	r.Delete("/api/segmentation/appuser/{id}", httpapi.Removed)
}
