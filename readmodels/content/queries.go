package content

import (
	"context"
	"errors"
	"time"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
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

// Horizon tells how far the content read model is complete: an instant
// before which every change it will ever apply is applied (see the
// projection engine's Horizon).
type Horizon interface {
	Horizon(ctx context.Context, name string) (time.Time, error)
}

// ReadLine bounds the hot reads that run in PostgreSQL at once: Enter
// waits, first come first served, for weight places and returns what gives
// them back.
type ReadLine interface {
	Enter(ctx context.Context, weight int64) (leave func(), err error)
}

// Meter counts what the queries do.
type Meter interface {
	// CacheLookup counts a search looked up in the answer cache: hit,
	// miss, stale or bypass.
	CacheLookup(result string)
	// Searched counts a search run, by where its page came from: memory
	// or postgresql.
	Searched(index string)
	// SyncHeldBack records how far the horizon set a sync's answer back.
	SyncHeldBack(d time.Duration)
}

// QueriesConfig bounds the queries.
type QueriesConfig struct {
	// CacheEntries bounds the answer cache (default 1024 answers;
	// negative: no cache). See answerCache.
	CacheEntries int
	// SearchTimeout bounds a search, its wait in the read line included
	// (default 10 s; negative: none): one that takes longer is stopped,
	// in PostgreSQL too, and answered 503, so that no search (an app's
	// token is public) keeps PostgreSQL busy for long.
	SearchTimeout time.Duration
}

// Queries answers the reads of content for the actor in the context: who
// may read what (scope), the answer cache, whether the in-memory copy of
// a module or PostgreSQL answers a search, the read line and the time
// bound. The HTTP adapter maps the wire to its requests and its results
// to the wire.
type Queries struct {
	store   *Store
	authz   Authorizer
	horizon Horizon
	line    ReadLine
	meter   Meter
	cache   *answerCache
	timeout time.Duration
}

// NewQueries returns the content query service over store.
func NewQueries(store *Store, authz Authorizer, horizon Horizon, line ReadLine, meter Meter, cfg QueriesConfig) *Queries {
	if store == nil || authz == nil || horizon == nil || line == nil || meter == nil {
		panic("content.NewQueries: nil dependency")
	}
	if cfg.CacheEntries == 0 {
		cfg.CacheEntries = 1024
	}
	if cfg.SearchTimeout == 0 {
		cfg.SearchTimeout = 10 * time.Second
	}
	return &Queries{store: store, authz: authz, horizon: horizon, line: line, meter: meter,
		cache: newAnswerCache(cfg.CacheEntries), timeout: cfg.SearchTimeout}
}

// bounded bounds a search by the timeout (none if negative).
func (q *Queries) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if q.timeout < 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, q.timeout)
}

// stopped reports a search stopped by its timeout as an Unavailable fault
// that says so, and any other error as it is.
func (q *Queries) stopped(ctx context.Context, err error) error {
	if err != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		return fault.New(fault.Unavailable, "the search took longer than %s and was stopped; narrow it (fewer modules, operands or values)",
			q.timeout)
	}
	return err
}
