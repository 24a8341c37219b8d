// Package loyalty serves the loyalty API: points (earn, redeem, adjust, rebalance),
// stamps and stamp cards, account views and the loyalty audit.
package loyalty

import (
	_ "embed"
	"strings"

	"github.com/go-chi/chi/v5"

	httpapi "github.com/halocms/halocms/adapters/http"
)

// Deps are the services the loyalty endpoints call. All are required.
type Deps struct {
	Commands Commands
	Queries  Queries
	Audit    Auditor
}

// API serves the loyalty endpoints.
type API struct {
	Deps
	kit *httpapi.Kit
}

// New returns the loyalty endpoints.
func New(kit *httpapi.Kit, d Deps) *API {
	if kit == nil || d.Commands == nil || d.Queries == nil || d.Audit == nil {
		panic("loyalty.New: nil dependency")
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
	r.Post("/api/loyalty/user/search", s.kit.Handle(s.searchLoyaltyUsers))
	r.Post("/api/loyalty/user/rebalance", s.kit.Handle(s.rebalanceLoyalty))
	r.Get("/api/loyalty/user/self", s.kit.Handle(s.getLoyaltyUser))
	r.Get("/api/loyalty/user/{id}", s.kit.Handle(s.getLoyaltyUser))
	r.Get("/api/loyalty/user/{id}/transactions", s.kit.Handle(s.loyaltyTransactions))
	r.Post("/api/loyalty/user/{id}/earn", s.kit.Handle(s.loyaltyPoints(earnPoints)))
	r.Post("/api/loyalty/user/{id}/redeem", s.kit.Handle(s.loyaltyPoints(redeemPoints)))
	r.Post("/api/loyalty/user/{id}/adjust", s.kit.Handle(s.loyaltyPoints(adjustPoints)))
	r.Post("/api/loyalty/user/{id}/stamps", s.kit.Handle(s.addStamps))
	r.Post("/api/loyalty/user/{id}/stampcards/{card}/redeem", s.kit.Handle(s.redeemStampCard))
	r.Get("/api/loyalty/stampcard", s.kit.Handle(s.listStampCards))
	r.Post("/api/loyalty/stampcard", s.kit.Handle(s.defineStampCard))
	r.Get("/api/loyalty/stampcard/{id}", s.kit.Handle(s.getStampCard))
	r.Put("/api/loyalty/stampcard/{id}", s.kit.Handle(s.changeStampCard))
	r.Delete("/api/loyalty/stampcard/{id}", s.kit.Handle(s.retireStampCard))
	r.Get("/api/audit/loyalty", s.kit.Handle(s.auditLoyalty))
}

// OwnsIdempotency: points (earn, redeem, adjust), stamps and stamp-card
// redemptions take their Idempotency-Key themselves (kept in the
// account's event log, for ever, across callers); the root's middleware
// leaves them alone.
func (s *API) OwnsIdempotency(path string) bool {
	rest, ok := strings.CutPrefix(strings.TrimRight(path, "/"), "/api/loyalty/user/")
	if !ok || !strings.Contains(rest, "/") {
		return false
	}
	for _, suffix := range []string{"/earn", "/redeem", "/adjust", "/stamps"} {
		if strings.HasSuffix(rest, suffix) {
			return true
		}
	}
	return false
}
