// Package identity serves the API of CMS users, apps, rights and the rights audit.
package identity

import (
	"context"
	_ "embed"

	cmdidentity "github.com/halocms/halocms/commands/identity"
	rmidentity "github.com/halocms/halocms/readmodels/identity"
	rmrights "github.com/halocms/halocms/readmodels/rights"

	"github.com/go-chi/chi/v5"

	httpapi "github.com/halocms/halocms/adapters/http"
	cmdrights "github.com/halocms/halocms/commands/rights"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/rights"
	rmaudit "github.com/halocms/halocms/readmodels/audit"
)

// Deps are the services the identity endpoints call. All are required.
type Deps struct {
	Identity   Commands
	Users      Queries
	Rights     RightsCommands
	Authorizer Authorizer
	Audit      Auditor
	Versions   VersionQueries
}

// API serves the identity endpoints.
type API struct {
	Deps
	kit *httpapi.Kit
}

// New returns the identity endpoints.
func New(kit *httpapi.Kit, d Deps) *API {
	if kit == nil || d.Identity == nil || d.Users == nil || d.Rights == nil || d.Authorizer == nil || d.Audit == nil || d.Versions == nil {
		panic("identity.New: nil dependency")
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
	r.Get("/api/core/user/self", s.kit.Handle(s.getSelf))
	r.Put("/api/core/user/self", s.kit.Handle(s.putSelf))
	r.Get("/core-api/user", s.kit.Handle(s.listUsers))
	r.Post("/core-api/user", s.kit.Handle(s.createUser))
	r.Put("/core-api/user", s.kit.Handle(s.updateUser))
	r.Get("/core-api/user/{id}", s.kit.Handle(s.getUser))
	r.Put("/core-api/user/{id}", s.kit.Handle(s.updateUser))
	r.Get("/core-api/app", s.kit.Handle(s.listApps))
	r.Post("/core-api/app", s.kit.Handle(s.createApp))
	r.Get("/core-api/app/{id}", s.kit.Handle(s.getApp))
	r.Put("/core-api/app/{id}", s.kit.Handle(s.renameApp))
	r.Post("/api/authentication/right/grant", s.kit.Handle(s.grant))
	r.Post("/api/authentication/right/revoke", s.kit.Handle(s.revokeRight))
	r.Get("/api/authentication/right", s.kit.Handle(s.listRights))
	r.Get("/api/audit/rights", s.kit.Handle(s.auditRights))
	r.Get("/api/authentication/version", s.kit.Handle(s.listServerVersions))
	r.Put("/api/authentication/version", s.kit.Handle(s.setServerVersion))
	r.Get("/api/authentication/version/current", s.kit.Handle(s.currentServerVersion))
}

// Commands changes users and apps.
type Commands interface {
	CreateUser(ctx context.Context, c cmdidentity.CreateUser) (identity.User, error)
	UpdateUser(ctx context.Context, c cmdidentity.UpdateUser) (identity.User, error)
	CreateApp(ctx context.Context, name string) (cmdidentity.CreatedApp, error)
	RenameApp(ctx context.Context, id, name string) (identity.App, error)
	SetServerVersion(ctx context.Context, v identity.ServerVersionSet) error
}

// VersionQueries reads the server versions, newest (the current one) first.
type VersionQueries interface {
	ServerVersions(ctx context.Context) ([]identity.ServerVersion, error)
}

// Queries reads users and apps.
type Queries interface {
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
	// any of kinds, on some app (see httpapi.Kit.RefusedFirst).
	AuthorizeAnywhere(ctx context.Context, actor access.Actor, p rights.Permission, kinds ...rights.ScopeKind) error
	VisibleApps(ctx context.Context, actor access.Actor) ([]string, bool, error)
	// List returns a user's effective rights for the caller who may see them.
	List(ctx context.Context, user, app string) (string, []rmrights.Right, error)
}

// Auditor replays the rights history from the event log.
type Auditor interface {
	Rights(ctx context.Context, q rmaudit.RightsQuery) (rmaudit.RightsReport, error)
}
