package analytics

import (
	"context"
	"time"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/analytics"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
	"github.com/halocms/halocms/readmodels/internal/guard"
)

// Authorizer checks the caller's rights.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
	AuthorizeAnywhere(ctx context.Context, actor access.Actor, p rights.Permission, kinds ...rights.ScopeKind) error
}

// Apps tells apps' numbers (0 for an app that does not exist).
type Apps interface {
	AppNumber(ctx context.Context, app string) (int, error)
}

// MaxDays bounds the range of one query.
const MaxDays = 366

// Queries answers the analytics reads for the actor in the context: CMS
// users holding read on the app.
type Queries struct {
	store *Store
	authz Authorizer
	apps  Apps
	now   func() time.Time
}

// NewQueries returns the query service; every dependency is required.
func NewQueries(store *Store, authz Authorizer, apps Apps) *Queries {
	if store == nil || authz == nil || apps == nil {
		panic("analytics.NewQueries: nil dependency")
	}
	return &Queries{store: store, authz: authz, apps: apps, now: time.Now}
}

// StatsRequest asks for an app's figures per day, from From to To (UTC
// days, inclusive; zero To is today, zero From is 29 days before To).
type StatsRequest struct {
	App      string
	From, To time.Time
	// Malformed is what was wrong with the request as sent, reported once
	// the caller may read an app's figures at all.
	Malformed error
}

// Stats is an app's figures over a range of days.
type Stats struct {
	App       string
	AppNumber int
	From, To  time.Time
	Days      []Day
}

// Stats answers a CMS user who holds read on the app; app tokens and app
// users' tokens are refused (the figures are every device's). A caller
// who may read no app at all gets 403 before any fault of the request.
func (q *Queries) Stats(ctx context.Context, req StatsRequest) (Stats, error) {
	a, err := access.CMSUser(ctx, fault.Forbiddenf("app tokens (and app users' tokens) may not read event figures; use a CMS user's token").
		With("permission", rights.Read.String()))
	if err != nil {
		return Stats{}, err
	}
	if req.Malformed != nil {
		return Stats{}, guard.Malformed(ctx, q.authz, rights.Read, req.Malformed, rights.AppScope)
	}
	if req.App == "" {
		return Stats{}, guard.Malformed(ctx, q.authz, rights.Read, fault.Invalidf("app is required").With("field", "app"), rights.AppScope)
	}
	if err := q.authz.Authorize(ctx, a, rights.Read, rights.Resource{App: req.App}); err != nil {
		return Stats{}, err
	}
	to, from := req.To, req.From
	if to.IsZero() {
		to = q.now()
	}
	to = analytics.Day(to)
	if from.IsZero() {
		from = to.AddDate(0, 0, -29)
	}
	from = analytics.Day(from)
	if from.After(to) {
		return Stats{}, fault.Invalidf("from must not be after to").With("field", "from")
	}
	if to.Sub(from) >= MaxDays*24*time.Hour {
		return Stats{}, fault.Invalidf("at most %d days at once", MaxDays).With("field", "from")
	}
	n, err := q.apps.AppNumber(ctx, req.App)
	if err != nil {
		return Stats{}, err
	}
	if n == 0 {
		return Stats{}, fault.Invalidf("app %s not found", req.App).With("field", "app")
	}
	days, err := q.store.Days(ctx, req.App, from, to)
	if err != nil {
		return Stats{}, err
	}
	return Stats{App: req.App, AppNumber: n, From: from, To: to, Days: days}, nil
}

// ClientID is the client id of an app's credentials, for the answer to a
// report (the caller's own app: its token said so).
func (q *Queries) ClientID(ctx context.Context, app string) (string, error) {
	return q.store.ClientID(ctx, app)
}
