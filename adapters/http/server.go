// Package httpapi is the HTTP adapter: the chi router with HALO's paths,
// authentication, client-IP resolution, error mapping, metrics and the
// operational endpoints.
package httpapi

import (
	"context"
	"log/slog"
	"net/http"
	"net/netip"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"

	cmdcontent "github.com/halocms/halocms/commands/content"
	cmdidentity "github.com/halocms/halocms/commands/identity"
	cmdrights "github.com/halocms/halocms/commands/rights"
	cmdsession "github.com/halocms/halocms/commands/session"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/rights"
	rmaudit "github.com/halocms/halocms/readmodels/audit"
	rmidentity "github.com/halocms/halocms/readmodels/identity"
	rmrights "github.com/halocms/halocms/readmodels/rights"
)

// Sessions issues and checks tokens.
type Sessions interface {
	PasswordGrant(ctx context.Context, username, password string, ip netip.Addr) (cmdsession.Token, error)
	ClientCredentials(ctx context.Context, clientID, secret string, ip netip.Addr) (cmdsession.Token, error)
	Refresh(ctx context.Context, refreshToken, clientID, clientSecret string, ip netip.Addr) (cmdsession.Token, error)
	Authenticate(ctx context.Context, accessToken string, ip netip.Addr) (access.Actor, error)
	Revoke(ctx context.Context, token string) error
}

// IdentityCommands changes users and apps.
type IdentityCommands interface {
	CreateUser(ctx context.Context, c cmdidentity.CreateUser) (identity.User, error)
	UpdateUser(ctx context.Context, c cmdidentity.UpdateUser) (identity.User, error)
	CreateApp(ctx context.Context, name string) (cmdidentity.CreatedApp, error)
	RenameApp(ctx context.Context, id, name string) (identity.App, error)
}

// IdentityQueries reads users and apps.
type IdentityQueries interface {
	Self(ctx context.Context) (rmidentity.User, error)
	User(ctx context.Context, id string) (rmidentity.User, error)
	Users(ctx context.Context) ([]rmidentity.User, error)
	Apps(ctx context.Context, vis rmidentity.AppVisibility) ([]rmidentity.App, error)
}

// RightsCommands grants and revokes.
type RightsCommands interface {
	Grant(ctx context.Context, c cmdrights.Change) (cmdrights.Result, error)
	Revoke(ctx context.Context, c cmdrights.Change) (cmdrights.Result, error)
}

// Authorizer answers permission questions from the effective-rights
// projection.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
	// AuthorizeAnywhere returns nil when actor holds p on some scope of
	// any of kinds, on some app (see refusedFirst).
	AuthorizeAnywhere(ctx context.Context, actor access.Actor, p rights.Permission, kinds ...rights.ScopeKind) error
	VisibleApps(ctx context.Context, actor access.Actor) ([]string, bool, error)
	// List returns a user's effective rights for the caller who may see them.
	List(ctx context.Context, user, app string) (string, []rmrights.Right, error)
}

// Auditor replays the rights history from the event log.
type Auditor interface {
	Rights(ctx context.Context, q rmaudit.RightsQuery) (rmaudit.RightsReport, error)
}

// Readiness reports whether the server can serve: database reachable and
// projections running.
type Readiness interface {
	Ready(ctx context.Context) error
}

// Deps are the application services the router calls. All are required.
type Deps struct {
	Sessions    Sessions
	Identity    IdentityCommands
	Users       IdentityQueries
	Rights      RightsCommands
	Authorizer  Authorizer
	Audit       Auditor
	Content     ContentCommands
	ContentRead ContentQueries
	Push        PushCommands
	PushRead    PushQueries
	Ready       Readiness
	Metrics     *Metrics
	Log         *slog.Logger

	// AppUsers and AppUsersRead serve the segmentation API (app users,
	// identified users, pockets, segments).
	AppUsers     AppUserCommands
	AppUsersRead AppUserQueries

	// Loyalty, LoyaltyRead and LoyaltyAudit serve the loyalty API
	// (points, stamps, stamp cards) and its audit.
	Loyalty      LoyaltyCommands
	LoyaltyRead  LoyaltyQueries
	LoyaltyAudit LoyaltyAuditor
}

// Config is the HTTP-level configuration.
type Config struct {
	// TrustedProxies: X-Forwarded-For is believed only when the connection
	// comes from one of these prefixes.
	TrustedProxies []netip.Prefix
	// MaxBodyBytes bounds request bodies (default 1 MiB).
	MaxBodyBytes int64
	// BatchBodyBytes bounds content batch bodies (default 16 MiB).
	BatchBodyBytes int64
}

type server struct {
	Deps
	cfg     Config
	numbers appNumbers
}

// NewRouter builds the whole HTTP API.
func NewRouter(d Deps, cfg Config) http.Handler {
	if d.Sessions == nil || d.Identity == nil || d.Users == nil || d.Rights == nil || d.Authorizer == nil ||
		d.Audit == nil || d.Content == nil || d.ContentRead == nil || d.Push == nil || d.PushRead == nil || d.AppUsers == nil || d.AppUsersRead == nil ||
		d.Loyalty == nil || d.LoyaltyRead == nil || d.LoyaltyAudit == nil || d.Ready == nil || d.Metrics == nil || d.Log == nil {
		panic("httpapi.NewRouter: nil dependency")
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = 1 << 20
	}
	if cfg.BatchBodyBytes == 0 {
		cfg.BatchBodyBytes = 16 << 20
	}
	s := &server{Deps: d, cfg: cfg}
	r := chi.NewRouter()
	r.Use(middleware.Recoverer, s.clientIP, s.metrics, s.limitBody)
	r.Use(middleware.StripSlashes) // every path works with and without a trailing slash

	r.Get("/healthz", s.h(s.healthz))
	r.Get("/readyz", s.h(s.readyz))
	r.Method(http.MethodGet, "/metrics", d.Metrics.Handler())
	r.Get("/openapi.yaml", s.h(s.openapiSpec))
	r.Get("/openapi.json", s.openapiJSONHandler)
	r.Get("/docs", s.h(s.openapiPage))

	r.Post("/api/oauth/token", s.h(s.token))
	r.Post("/api/oauth/revoke", s.h(s.revoke))

	r.Group(func(r chi.Router) {
		r.Use(s.authenticate)
		r.Get("/api/core/user/self", s.h(s.getSelf))
		r.Put("/api/core/user/self", s.h(s.putSelf))

		r.Get("/core-api/user", s.h(s.listUsers))
		r.Post("/core-api/user", s.h(s.createUser))
		r.Put("/core-api/user", s.h(s.updateUser))
		r.Get("/core-api/user/{id}", s.h(s.getUser))
		r.Put("/core-api/user/{id}", s.h(s.updateUser))

		r.Get("/core-api/app", s.h(s.listApps))
		r.Post("/core-api/app", s.h(s.createApp))
		r.Get("/core-api/app/{id}", s.h(s.getApp))
		r.Put("/core-api/app/{id}", s.h(s.renameApp))

		r.Post("/api/authentication/right/grant", s.h(s.grant))
		r.Post("/api/authentication/right/revoke", s.h(s.revokeRight))
		r.Get("/api/authentication/right", s.h(s.listRights))

		r.Get("/api/audit/rights", s.h(s.auditRights))

		r.Get("/api/generalcontent/module", s.h(s.listModules))
		r.Post("/api/generalcontent/module", s.h(s.createModule))
		r.Get("/api/generalcontent/module/{id}", s.h(s.getModule))
		r.Put("/api/generalcontent/module/{id}", s.h(s.updateModule))
		r.Delete("/api/generalcontent/module/{id}", s.h(s.deleteModule))

		r.Get("/api/core/moduletype", s.h(s.listModuleTypes))
		r.Post("/api/core/moduletype", s.h(s.createModuleType))
		r.Put("/api/core/moduletype/{id}", s.h(s.updateModuleType))
		r.Delete("/api/core/moduletype/{id}", s.h(s.deleteModuleType))
		r.Get("/api/core/moduletype/download", s.h(s.downloadModuleTypes))
		r.Get("/api/core/moduletype/download/{id}", s.h(s.downloadModuleTypes))
		r.Post("/api/core/moduletype/import", s.h(s.importModuleTypes))

		r.Get("/api/generalcontent/instance", s.h(s.listInstances))
		r.Post("/api/generalcontent/instance", s.h(s.createInstance))
		r.Post("/api/generalcontent/instance/search", s.h(s.search))
		r.Post("/api/generalcontent/instance/sync", s.h(s.sync))
		r.Post("/api/generalcontent/instance/batch", s.h(s.batch))
		r.Get("/api/generalcontent/instance/{id}", s.h(s.getInstance))
		r.Put("/api/generalcontent/instance/{id}", s.h(s.updateInstance))
		r.Delete("/api/generalcontent/instance/{id}", s.h(s.deleteInstance))
		r.Post("/api/generalcontent/instance/{id}/publish", s.h(s.transit(cmdcontent.Publish)))
		r.Post("/api/generalcontent/instance/{id}/unpublish", s.h(s.transit(cmdcontent.Unpublish)))
		r.Post("/api/generalcontent/instance/{id}/archive", s.h(s.transit(cmdcontent.Archive)))
		r.Post("/api/generalcontent/instance/{id}/unarchive", s.h(s.transit(cmdcontent.Unarchive)))
		r.Post("/api/generalcontent/instance/{id}/restore", s.h(s.transit(cmdcontent.Restore)))
		r.Get("/api/generalcontent/instance/{id}/history", s.h(s.history))
		r.Post("/api/generalcontent/instance/{id}/history/{revision}/restore", s.h(s.revertInstance))

		r.Post("/api/segmentation/appuser", s.h(s.createAppUser))
		r.Post("/api/segmentation/appuser/search", s.h(s.searchAppUsers))
		r.Get("/api/segmentation/appuser/{id}", s.h(s.getAppUser))
		r.Put("/api/segmentation/appuser/{id}", s.h(s.updateAppUser))
		r.Post("/api/segmentation/identified/register", s.h(s.registerIdentified))
		r.Post("/api/segmentation/identified/login", s.h(s.loginIdentified))
		r.Post("/api/segmentation/identified/search", s.h(s.searchIdentified))
		r.Get("/api/segmentation/identified-pocket/self", s.h(s.getPocket))
		r.Put("/api/segmentation/identified-pocket", s.h(s.putPocket))
		r.Put("/api/segmentation/identified-pocket/self", s.h(s.putPocket))

		r.Post("/api/push/schedule", s.h(s.schedulePush(anyTarget)))
		r.Post("/api/push/schedule/toAliases", s.h(s.schedulePush(aliasesTarget)))
		r.Post("/api/push/schedule/toIdentified", s.h(s.schedulePush(identifiedTarget)))
		r.Post("/api/authentication/schedule", s.h(s.schedulePush(anyTarget)))
		r.Post("/api/push/schedule/activity", s.h(s.pushActivity))
		r.Get("/api/push/schedule", s.h(s.listPushes))
		r.Get("/api/push/schedule/{id}", s.h(s.getPush))
		r.Put("/api/push/schedule/{id}", s.h(s.updatePush))
		r.Delete("/api/push/schedule/{id}", s.h(s.deletePush))
		r.Post("/api/push/schedule/{id}/cancel", s.h(s.cancelPush))

		r.Post("/api/loyalty/user/search", s.h(s.searchLoyaltyUsers))
		r.Post("/api/loyalty/user/rebalance", s.h(s.rebalanceLoyalty))
		r.Get("/api/loyalty/user/self", s.h(s.getLoyaltyUser))
		r.Get("/api/loyalty/user/{id}", s.h(s.getLoyaltyUser))
		r.Get("/api/loyalty/user/{id}/transactions", s.h(s.loyaltyTransactions))
		r.Post("/api/loyalty/user/{id}/earn", s.h(s.loyaltyPoints(earnPoints)))
		r.Post("/api/loyalty/user/{id}/redeem", s.h(s.loyaltyPoints(redeemPoints)))
		r.Post("/api/loyalty/user/{id}/adjust", s.h(s.loyaltyPoints(adjustPoints)))
		r.Post("/api/loyalty/user/{id}/stamps", s.h(s.addStamps))
		r.Post("/api/loyalty/user/{id}/stampcards/{card}/redeem", s.h(s.redeemStampCard))
		r.Get("/api/loyalty/stampcard", s.h(s.listStampCards))
		r.Post("/api/loyalty/stampcard", s.h(s.defineStampCard))
		r.Get("/api/loyalty/stampcard/{id}", s.h(s.getStampCard))
		r.Put("/api/loyalty/stampcard/{id}", s.h(s.changeStampCard))
		r.Delete("/api/loyalty/stampcard/{id}", s.h(s.retireStampCard))
		r.Get("/api/audit/loyalty", s.h(s.auditLoyalty))
	})
	legacy(r)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusNotFound, haloError{Error: haloErrorBody{Status: 404, Message: "no such endpoint: " + r.Method + " " + r.URL.Path, Extra: map[string]any{}, Type: "HaloError"}})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, http.StatusMethodNotAllowed, haloError{Error: haloErrorBody{Status: 405, Message: "method " + r.Method + " not allowed on " + r.URL.Path, Extra: map[string]any{}, Type: "HaloError"}})
	})
	return r
}

// handlerFunc is an endpoint that returns its failure: h writes it.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// h adapts fn to net/http: a failure is written by the one error table.
func (s *server) h(fn handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := fn(w, r); err != nil {
			s.fail(w, r, err)
		}
	}
}

func (s *server) fail(w http.ResponseWriter, r *http.Request, err error) {
	writeError(w, r, s.Log, err)
}

func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}
