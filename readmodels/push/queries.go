package push

import (
	"context"
	"slices"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/push"
	"github.com/halocms/halocms/domain/rights"
	"github.com/halocms/halocms/readmodels/internal/guard"
	rmrights "github.com/halocms/halocms/readmodels/rights"
)

// Authorizer answers the read side's permission questions from the
// effective-rights projection.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
	AuthorizeAnywhere(ctx context.Context, actor access.Actor, p rights.Permission, kinds ...rights.ScopeKind) error
	// Of lists a user's effective rights (on every app when app is empty).
	Of(ctx context.Context, userID, app string) ([]rmrights.Right, error)
}

// Queries answers the reads of push schedules for the actor in the
// context: CMS users with the read right on the schedules' apps.
type Queries struct {
	store *Store
	authz Authorizer
}

// NewQueries returns the push query service over store.
func NewQueries(store *Store, authz Authorizer) *Queries {
	if store == nil || authz == nil {
		panic("push.NewQueries: nil dependency")
	}
	return &Queries{store: store, authz: authz}
}

// reader refuses anonymous callers (401) and app or app-user tokens
// (403): viewing pushes is for CMS users with the read right.
func reader(ctx context.Context) (access.Actor, error) {
	return access.CMSUser(ctx, fault.Forbiddenf("app tokens (and app users' tokens) may not read pushes; use a CMS user's token").
		With("permission", rights.Read.String()))
}

// Schedule reads a schedule for a caller holding read on its app.
func (q *Queries) Schedule(ctx context.Context, id string) (Schedule, error) {
	a, err := reader(ctx)
	if err != nil {
		return Schedule{}, err
	}
	v, err := q.store.Schedule(ctx, id)
	if err != nil {
		return Schedule{}, guard.RefusedFirst(ctx, q.authz, rights.Read, err)
	}
	return v, q.authz.Authorize(ctx, a, rights.Read, rights.Resource{App: v.App})
}

// SearchRequest lists schedules.
type SearchRequest struct {
	Query Query
	// Malformed is what was wrong with the request as sent, reported once
	// the caller may read pushes at all.
	Malformed error
}

// Search lists (and searches by name) the schedules of the apps the
// caller may read, or of the one app it names.
func (q *Queries) Search(ctx context.Context, req SearchRequest) (Page, error) {
	a, err := reader(ctx)
	if err != nil {
		return Page{}, err
	}
	if req.Malformed != nil {
		return Page{}, req.Malformed
	}
	s := req.Query
	switch s.Status {
	case "", push.StatusScheduled, push.StatusDispatching, push.StatusDispatched, push.StatusCancelled:
	default:
		return Page{}, fault.Invalidf("status must be scheduled, dispatching, dispatched or cancelled").With("field", "status")
	}
	if s.AllApps = a.IsAdmin(); !s.AllApps {
		rs, err := q.authz.Of(ctx, a.ID, "")
		if err != nil {
			return Page{}, err
		}
		s.Apps = []string{}
		for _, rt := range rs {
			if rt.ScopeKind == rights.AppScope.String() && slices.Contains(rt.Permissions, rights.Read.String()) {
				s.Apps = append(s.Apps, rt.App)
			}
		}
		if s.App != "" && !slices.Contains(s.Apps, s.App) {
			return Page{}, fault.Forbiddenf("read permission on this app is required").With("permission", rights.Read.String())
		}
	}
	return q.store.Search(ctx, s)
}

// ReadBack reads a schedule as the projection has it after a write that a
// command authorized.
func (q *Queries) ReadBack(ctx context.Context, id string) (Schedule, error) {
	return q.store.Schedule(ctx, id)
}
