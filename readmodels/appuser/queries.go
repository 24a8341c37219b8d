package appuser

import (
	"context"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
	"github.com/halocms/halocms/readmodels/internal/guard"
)

// Authorizer answers the read side's permission questions from the
// effective-rights projection.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
	AuthorizeAnywhere(ctx context.Context, actor access.Actor, p rights.Permission, kinds ...rights.ScopeKind) error
}

// Queries answers the reads of app users for the actor in the context: an
// app's token reads its app's app users, CMS users with the read right
// list and read an app's, and identified users their own pocket.
type Queries struct {
	store *Store
	authz Authorizer
}

// NewQueries returns the app user query service over store.
func NewQueries(store *Store, authz Authorizer) *Queries {
	if store == nil || authz == nil {
		panic("appuser.NewQueries: nil dependency")
	}
	return &Queries{store: store, authz: authz}
}

// AppUser reads an app user: an app's token (or an identified user's)
// reads its app's app users, and another app's as unknown (404, after
// which Android registers a new one); CMS users need the read right on
// the app, and one who reads no app is refused an unknown id too.
func (q *Queries) AppUser(ctx context.Context, id string) (AppUser, error) {
	a := access.From(ctx)
	u, err := q.store.AppUser(ctx, id)
	switch {
	case err != nil:
		err = guard.RefusedFirst(ctx, q.authz, rights.Read, err)
	case a.ClientApp() != "":
		if u.App != a.ClientApp() {
			err = fault.NotFoundf("app user not found")
		}
	default:
		err = q.authz.Authorize(ctx, a, rights.Read, rights.Resource{App: u.App})
	}
	if err != nil {
		return AppUser{}, err
	}
	return u, nil
}

// Listing is a CMS listing of an app's users: the app it names (resolved),
// or Malformed, what was wrong with the request as sent.
type Listing struct {
	App       string
	Malformed error
}

// listing checks that the caller may list the app's users: app tokens do
// not (a device has no business with the others), CMS users need the read
// right on the app. What was wrong with the request comes after the
// refusal of a caller who may list nothing.
func (q *Queries) listing(ctx context.Context, l Listing) error {
	a := access.From(ctx)
	if a.ClientApp() != "" {
		return fault.Forbiddenf("listing app users is for CMS users")
	}
	if l.Malformed != nil {
		return guard.Malformed(ctx, q.authz, rights.Read, l.Malformed, rights.AppScope)
	}
	return q.authz.Authorize(ctx, a, rights.Read, rights.Resource{App: l.App})
}

// Segment lists an app's app users by their tags, for the CMS.
func (q *Queries) Segment(ctx context.Context, l Listing, s SegmentQuery) (SegmentResult, error) {
	if err := q.listing(ctx, l); err != nil {
		return SegmentResult{}, err
	}
	s.App = l.App
	return q.store.Search(ctx, s)
}

// SearchIdentified lists an app's identified users whose email or name
// contains the search text, for the CMS.
func (q *Queries) SearchIdentified(ctx context.Context, l Listing, s IdentifiedQuery) (IdentifiedResult, error) {
	if err := q.listing(ctx, l); err != nil {
		return IdentifiedResult{}, err
	}
	s.App = l.App
	return q.store.SearchIdentified(ctx, s)
}

// Pocket reads the pocket of the identified user who asks.
func (q *Queries) Pocket(ctx context.Context) (Pocket, error) {
	id, _, err := appuser.PocketOwner(access.From(ctx))
	if err != nil {
		return Pocket{}, err
	}
	return q.store.Pocket(ctx, id)
}

// ReadBack reads an app user as the projection has it after a write that
// a command authorized.
func (q *Queries) ReadBack(ctx context.Context, id string) (AppUser, error) {
	return q.store.AppUser(ctx, id)
}

// AppNumber and AppByNumber translate between an app's id and its number
// (HALO's integer appId), which any caller may learn.
func (q *Queries) AppNumber(ctx context.Context, app string) (int, error) {
	return q.store.AppNumber(ctx, app)
}

// AppByNumber is the app whose number is n.
func (q *Queries) AppByNumber(ctx context.Context, n int) (string, error) {
	return q.store.AppByNumber(ctx, n)
}
