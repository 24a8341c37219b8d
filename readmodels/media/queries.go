package media

import (
	"context"
	"slices"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
	"github.com/halocms/halocms/readmodels/internal/guard"
)

// Authorizer checks the caller's rights.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
	AuthorizeAnywhere(ctx context.Context, actor access.Actor, p rights.Permission, kinds ...rights.ScopeKind) error
}

// Queries answers the library's reads for the actor in the context: CMS
// users holding read on the app. (Reading the files themselves is the
// file server's: see Readable.)
type Queries struct {
	store *Store
	authz Authorizer
}

// NewQueries returns the query service; every dependency is required.
func NewQueries(store *Store, authz Authorizer) *Queries {
	if store == nil || authz == nil {
		panic("media.NewQueries: nil dependency")
	}
	return &Queries{store: store, authz: authz}
}

// MaxLimit bounds a page.
const MaxLimit = 500

// cmsUser refuses anonymous callers (401) and app or app users' tokens
// (403): the library is browsed by CMS users.
func cmsUser(ctx context.Context) (access.Actor, error) {
	return access.CMSUser(ctx, fault.Forbiddenf("app tokens (and app users' tokens) may not browse the media library; use a CMS user's token").
		With("permission", rights.Read.String()))
}

func (q *Queries) reader(ctx context.Context, app string, malformed error) error {
	a, err := cmsUser(ctx)
	if err != nil {
		return err
	}
	if malformed != nil {
		return guard.Malformed(ctx, q.authz, rights.Read, malformed, rights.AppScope)
	}
	if app == "" {
		return guard.Malformed(ctx, q.authz, rights.Read, fault.Invalidf("app is required").With("field", "app"), rights.AppScope)
	}
	return q.authz.Authorize(ctx, a, rights.Read, rights.Resource{App: app})
}

// ListRequest is a list's filter, and what was wrong with the request as
// sent (reported once the caller may read an app at all).
type ListRequest struct {
	Filter
	Malformed error
}

// List answers a page of an app's files and how many match.
func (q *Queries) List(ctx context.Context, req ListRequest) ([]File, int, error) {
	if err := q.reader(ctx, req.App, req.Malformed); err != nil {
		return nil, 0, err
	}
	f := req.Filter
	if f.Page < 1 {
		f.Page = 1
	}
	if f.Limit == 0 {
		f.Limit = 50
	}
	if f.Limit < 1 || f.Limit > MaxLimit {
		return nil, 0, fault.Invalidf("limit is 1 to %d", MaxLimit).With("field", "limit")
	}
	if f.Kind != "" && !slices.Contains([]string{"image", "video", "audio", "document"}, f.Kind) {
		return nil, 0, fault.Invalidf("kind is image, video, audio or document").With("field", "kind")
	}
	return q.store.List(ctx, f)
}

// File reads one file, with what uses it, for a reader of its app.
func (q *Queries) File(ctx context.Context, id string) (File, error) {
	a, err := cmsUser(ctx)
	if err != nil {
		return File{}, err
	}
	f, err := q.store.Get(ctx, id)
	if err != nil {
		return f, err
	}
	if err := q.authz.Authorize(ctx, a, rights.Read, rights.Resource{App: f.App}); err != nil {
		return File{}, err
	}
	return f, nil
}

// Facets answers an app's folders, tags and kinds.
func (q *Queries) Facets(ctx context.Context, app string, malformed error) (Facets, error) {
	if err := q.reader(ctx, app, malformed); err != nil {
		return Facets{}, err
	}
	return q.store.Facets(ctx, app)
}

// Access answers whether app's files need a signed URL or a token.
func (q *Queries) Access(ctx context.Context, app string, malformed error) (bool, error) {
	if err := q.reader(ctx, app, malformed); err != nil {
		return false, err
	}
	return q.store.Signed(ctx, app)
}
