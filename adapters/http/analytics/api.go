// Package analytics serves HALO's daily events: the reports apps send
// (POST /api/events/daily) and the CMS's figures over them.
package analytics

import (
	"context"
	_ "embed"
	"strings"

	"github.com/go-chi/chi/v5"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/domain/analytics"
	rmanalytics "github.com/halocms/halocms/readmodels/analytics"
)

// Commands records reports.
type Commands interface {
	Record(ctx context.Context, r analytics.Report) (analytics.Recorded, error)
}

// Queries answers the figures and the client id a report's answer shows.
type Queries interface {
	Stats(ctx context.Context, req rmanalytics.StatsRequest) (rmanalytics.Stats, error)
	ClientID(ctx context.Context, app string) (string, error)
}

// Deps are the services the endpoints call. All are required.
type Deps struct {
	Commands Commands
	Queries  Queries
}

// API serves the events endpoints.
type API struct {
	Deps
	kit *httpapi.Kit
}

// New returns the events endpoints.
func New(kit *httpapi.Kit, d Deps) *API {
	if kit == nil || d.Commands == nil || d.Queries == nil {
		panic("analytics.New: nil dependency")
	}
	return &API{Deps: d, kit: kit}
}

//go:embed openapi.yaml
var openapiYAML []byte

// OpenAPI is the part of the OpenAPI document that describes these
// endpoints (see httpapi.OpenAPIDocument).
func (s *API) OpenAPI() []byte { return openapiYAML }

// Routes registers the endpoints, behind authentication. HALO serves
// events under /api only (its /core-api holds users and apps).
func (s *API) Routes(r chi.Router) {
	r.Post("/api/events/daily", s.kit.Handle(s.record))
	r.Get("/api/events/daily/stats", s.kit.Handle(s.stats))
}

// MaxBodyBytes bounds a report's body: a type, a coord and a small extra.
const MaxBodyBytes = 16 << 10

// BodyLimit bounds the reports' bodies by MaxBodyBytes.
func (s *API) BodyLimit(path string) (int64, bool) {
	if strings.TrimSuffix(path, "/") == "/api/events/daily" {
		return MaxBodyBytes, true
	}
	return 0, false
}
