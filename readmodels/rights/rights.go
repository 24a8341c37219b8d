// Package rights answers "may user U do action A on resource R of app P"
// from the effective-rights projection. Every command and query of the
// project authorizes through Authorizer.
package rights

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// Authorizer checks actors against rights_grants.
type Authorizer struct{ pool *pgxpool.Pool }

// NewAuthorizer returns an authorizer over pool.
func NewAuthorizer(pool *pgxpool.Pool) *Authorizer {
	if pool == nil {
		panic("rights.NewAuthorizer: nil pool")
	}
	return &Authorizer{pool: pool}
}

// Allowed reports whether a CMS user holds permission p on res: a right on
// the whole app, on res's module, or on res's item.
func (a *Authorizer) Allowed(ctx context.Context, userID string, p rights.Permission, res rights.Resource) (bool, error) {
	var ok bool
	err := a.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM rights_grants
		WHERE user_id = $1 AND app_id = $2 AND $3 = ANY(permissions)
		  AND (scope_kind = 'app'
		       OR (scope_kind = 'module' AND scope_id = $4 AND $4 <> '')
		       OR (scope_kind = 'item' AND scope_id = $5 AND $5 <> '')))`,
		userID, res.App, p.String(), res.Module, res.Item).Scan(&ok)
	return ok, err
}

// Authorize returns nil when actor may do p on res: admins and the system
// may do anything; CMS users need a matching right; an app token (and a
// user identified through the app) may read its own app's resources;
// anyone else is refused.
func (a *Authorizer) Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error {
	return decide(actor, p, p == rights.Read && res.App == actor.ClientApp(), "this resource", func() (bool, error) {
		return a.Allowed(ctx, actor.ID, p, res)
	})
}

// AuthorizeAnyApp returns nil when actor holds p on the whole of at
// least one app, as Authorize would allow it on some app: admins and the
// system; app tokens and identified users for read (their own app); CMS
// users with p granted on a whole app. Anyone else is refused, as
// Authorize refuses. Callers use it before telling whether an id exists
// or what is wrong with a request, when the right that counts depends on
// an app they cannot know yet: a caller who may do p nowhere learns
// nothing.
func (a *Authorizer) AuthorizeAnyApp(ctx context.Context, actor access.Actor, p rights.Permission) error {
	return a.AuthorizeAnywhere(ctx, actor, p, rights.AppScope)
}

// AuthorizeAnywhere is AuthorizeAnyApp where a CMS user's grant of p on
// a scope of any of kinds counts, not only on a whole app: for content,
// where a right on a module (or an item) lets its holder do p on what is
// inside it. Give the kinds of the grants that could allow the request
// (a right on one item allows nothing on a module); with none, no grant
// counts.
func (a *Authorizer) AuthorizeAnywhere(ctx context.Context, actor access.Actor, p rights.Permission, kinds ...rights.ScopeKind) error {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.String()
	}
	return decide(actor, p, p == rights.Read, anyOf(kinds), func() (bool, error) {
		var ok bool
		err := a.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM rights_grants
			WHERE user_id = $1 AND scope_kind = ANY($2) AND $3 = ANY(permissions))`, actor.ID, names, p.String()).Scan(&ok)
		return ok, err
	})
}

// anyOf names what a grant of one of kinds covers, for a refusal: "an
// app", "an app or a module", "an app, a module or an item".
func anyOf(kinds []rights.ScopeKind) string {
	if len(kinds) == 0 {
		return "an app"
	}
	var b strings.Builder
	for i, k := range kinds {
		switch {
		case i == 0:
		case i == len(kinds)-1:
			b.WriteString(" or ")
		default:
			b.WriteString(", ")
		}
		if k == rights.ModuleScope {
			b.WriteString("a ")
		} else {
			b.WriteString("an ")
		}
		b.WriteString(k.String())
	}
	return b.String()
}

// decide is the one rule of Authorize, AuthorizeAnyApp and
// AuthorizeAnywhere: anonymous callers are unauthenticated, admins and
// the system allowed, app tokens (and users identified through them)
// allowed when client says so, CMS users when granted says so; the
// others are refused p on what.
func decide(actor access.Actor, p rights.Permission, client bool, what string, granted func() (bool, error)) error {
	switch {
	case actor.Kind == access.Anonymous:
		return access.ErrUnauthenticated
	case actor.IsAdmin():
		return nil
	case actor.ClientApp() != "":
		if client {
			return nil
		}
	case actor.Kind == access.User:
		ok, err := granted()
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
	}
	return fault.Forbiddenf("%s permission on %s is required", p, what).With("permission", p.String())
}

// VisibleApps returns the apps a user holds any right on.
func (a *Authorizer) VisibleApps(ctx context.Context, actor access.Actor) ([]string, bool, error) {
	if actor.IsAdmin() {
		return nil, true, nil
	}
	rows, err := a.pool.Query(ctx, `SELECT DISTINCT app_id FROM rights_grants WHERE user_id = $1 ORDER BY app_id`, actor.ID)
	if err != nil {
		return nil, false, err
	}
	defer rows.Close()
	ids := []string{}
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return nil, false, err
		}
		ids = append(ids, id)
	}
	return ids, false, rows.Err()
}

// Right is one row of a user's effective rights.
type Right struct {
	App         string
	ScopeKind   string
	ScopeID     string
	Permissions []string
}

// Of lists a user's effective rights, optionally for one app.
func (a *Authorizer) Of(ctx context.Context, userID, app string) ([]Right, error) {
	rows, err := a.pool.Query(ctx, `SELECT app_id, scope_kind, scope_id, permissions FROM rights_grants
		WHERE user_id = $1 AND ($2 = '' OR app_id = $2) ORDER BY app_id, scope_kind, scope_id`, userID, app)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Right{}
	for rows.Next() {
		var r Right
		if err := rows.Scan(&r.App, &r.ScopeKind, &r.ScopeID, &r.Permissions); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}
