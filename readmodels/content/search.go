package content

import (
	"context"
	"errors"
	"math"

	"github.com/jackc/pgx/v5"
)

// Search runs q as one SQL statement over content_items, joined with
// content_fields when it filters or sorts by typed columns (plus a
// count(*) with the same WHERE when q.Count is set, unless one statement
// gives both, see pageWithTotal), in one read-only snapshot that also
// reads the searched modules' slot maps (and q.FreshnessOf's Freshness).
// A search given its module's slot map (q.Slots) that pageWithTotal
// compiles is first tried as that one statement alone (pageInOneTrip).
//
// Every user-supplied string (field names included) is a bind parameter;
// the SQL text is assembled only from constants of the compiler's files
// (compile*.go, order.go, shortcuts.go; the typed column names come from
// slotColumns).
func (s *Store) Search(ctx context.Context, q Query) (Result, error) {
	q.RawValues = q.RawValues && q.Locale == ""
	if sql, args, ok := oneTripStatement(&q); ok {
		res, done, err := s.pageInOneTrip(ctx, &q, sql, args)
		if err != nil || done {
			localize(res.Items, q.Fields, q.Locale) // one module: see localizeItems
			return res, err
		}
	}
	if q.Known {
		return Result{}, ErrModuleUnverified
	}
	var res Result
	var slots map[string]string
	var multi map[string]map[string]string
	// The page, the total and the modules' columns come from one snapshot.
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return Result{}, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	var fresh Freshness
	if q.FreshnessOf != "" {
		if err := tx.QueryRow(ctx, `SELECT `+freshnessColumns("$1", "$2", "$3"), q.FreshnessOf, q.Now, int64(math.MaxInt64)).
			Scan(&fresh.Version, &fresh.Until); err != nil {
			return Result{}, err
		}
	}
	if len(q.ModuleIDs) == 1 {
		if slots, err = moduleSlots(ctx, tx, q.ModuleIDs[0]); err != nil {
			return Result{}, err
		}
	} else if multi, err = modulesSlots(ctx, tx, q.ModuleIDs); err != nil {
		return Result{}, err
	}
	if q.Count {
		if sql, args, ok := pageWithTotal(&q, slots, careful); ok {
			res, err := pageAndTotal(ctx, tx, &q, sql, custom(args))
			if err == nil {
				err = s.localizeItems(ctx, tx, &q, res.Items)
			}
			if err != nil || len(res.Items) > 0 || q.Offset == 0 {
				res.Freshness = fresh
				return res, err
			}
			// An empty page past the first: the total comes from the count.
		}
	}
	st, err := compileFull(&q, true, slots, multi)
	if err != nil {
		return Result{}, err
	}
	if q.Count {
		if err := tx.QueryRow(ctx, st.count, custom(st.countArgs)...).Scan(&res.Total); err != nil {
			return Result{}, err
		}
		if st.walk && res.Total < walkFactor*(q.Offset+q.Limit) {
			// Few matches: a walk of the sort index would pass over most
			// of the module to find them; filtering first and sorting the
			// few is cheaper.
			if st, err = compileFull(&q, false, slots, multi); err != nil {
				return Result{}, err
			}
		}
	}
	rows, err := tx.Query(ctx, st.page, custom(st.pageArgs)...)
	if err != nil {
		return Result{}, err
	}
	defer rows.Close()
	res.Items = []Item{}
	for rows.Next() {
		it, err := scanItem(rows, q.RawValues)
		if err != nil {
			return Result{}, err
		}
		res.Items = append(res.Items, it)
	}
	if err := rows.Err(); err != nil {
		return Result{}, err
	}
	rows.Close() // before the modules are read in the same transaction
	if err := s.localizeItems(ctx, tx, &q, res.Items); err != nil {
		return Result{}, err
	}
	res.Freshness = fresh
	return res, nil
}

// OneStatement reports whether Search answers q with the one statement of
// pageInOneTrip, unless the module changed since the caller read it or
// the page is empty. It keeps the compiled statement in q, for Search.
func OneStatement(q *Query) bool {
	_, _, ok := oneTripStatement(q)
	return ok
}

// tripPlan is what oneTripStatement compiled, and for which module state
// and page: a caller whose Known module turned out stale
// (ErrModuleUnverified) reads the module afresh into the same Query
// before it searches again. The filters are not expected to change
// between OneStatement and Search.
type tripPlan struct {
	key  tripKey
	sql  string
	args []any
	ok   bool
}

type tripKey struct {
	known                bool
	module, freshnessOf  string
	revision, now        int64
	offset, limit, sorts int
}

// oneTripStatement compiles q for pageInOneTrip, when it can: a search of
// one module whose slot map and revision the caller read, with a total.
// It compiles once per module state (see tripPlan); the HTTP layer asks
// OneStatement before it searches.
func oneTripStatement(q *Query) (string, []any, bool) {
	key := tripKey{known: q.Known, freshnessOf: q.FreshnessOf, revision: q.Revision, now: q.Now,
		offset: q.Offset, limit: q.Limit, sorts: len(q.Sort)}
	if len(q.ModuleIDs) == 1 {
		key.module = q.ModuleIDs[0]
	}
	if t := q.trip; t != nil && t.key == key {
		return t.sql, t.args, t.ok
	}
	t := &tripPlan{key: key}
	if q.Count && q.Slots != nil && q.Revision != 0 && len(q.ModuleIDs) == 1 {
		t.sql, t.args, t.ok = pageWithTotal(q, q.Slots, oneTrip)
	}
	q.trip = t
	return t.sql, t.args, t.ok
}

// ErrModuleUnverified: a search with a module taken from KnownModule
// (Query.Known) could not be answered by the statement that checks the
// module's revision; the caller must read the module afresh.
var ErrModuleUnverified = errors.New("content search: the known module must be read afresh")

// pageInOneTrip runs a pageWithTotal statement compiled for it (oneTrip)
// with the slot map and revision the caller read with the module (q.Slots,
// q.Revision): one statement, so one snapshot, with no transaction around
// it; the rows carry q.FreshnessOf's Freshness, if asked. done is false
// when the page is empty: either the module is no longer at q.Revision
// (changed or deleted since the caller read it: the statement may name the
// wrong columns, and the caller's checks may no longer hold; the gate
// stops it before it reads a row) or nothing matches; the careful path
// tells which.
//
// Unlike the other search statements, this one runs from a generic plan
// (on the generic pool), made once per connection and statement shape: it
// always reads every match through the indexes of its conditions and
// sorts them (it never walks a sort index, where a generic plan goes
// wrong), and planning it for its values cost more than running it.
func (s *Store) pageInOneTrip(ctx context.Context, q *Query, sql string, args []any) (res Result, done bool, err error) {
	rows, err := s.generic.Query(ctx, sql, args...)
	if err != nil {
		return Result{}, false, err
	}
	var fresh *Freshness
	if q.FreshnessOf != "" {
		fresh = new(Freshness)
	}
	if res, err = readPage(rows, q.RawValues, fresh); err != nil || len(res.Items) == 0 {
		return Result{}, false, err
	}
	if fresh != nil {
		res.Freshness = *fresh
	}
	return res, true, nil
}

// pageAndTotal runs a pageWithTotal statement.
func pageAndTotal(ctx context.Context, db interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, q *Query, sql string, args []any) (Result, error) {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return Result{}, err
	}
	return readPage(rows, q.RawValues, nil)
}

// readPage reads the rows of a pageWithTotal statement: items, each
// carrying the total (an empty page carries none: its total is 0 unless
// the page is past the end) and, when fresh is not nil, the Freshness it
// is read into.
func readPage(rows pgx.Rows, raw bool, fresh *Freshness) (Result, error) {
	defer rows.Close()
	res := Result{Items: []Item{}}
	extra := []any{&res.Total}
	if fresh != nil {
		extra = append(extra, &fresh.Version, &fresh.Until)
	}
	for rows.Next() {
		it, err := scanItem(rows, raw, extra...)
		if err != nil {
			return Result{}, err
		}
		res.Items = append(res.Items, it)
	}
	return res, rows.Err()
}

// walkFactor: a search walks the sort index only when the matches are at
// least this many times the rows it must return; with fewer, the walk
// would read about (Offset+Limit) x items/matches index entries, most of
// them not matching.
const walkFactor = 10

// custom runs a search statement unnamed, so that PostgreSQL plans it for
// its actual values every time: a cached generic plan knows neither how
// common the searched value is nor how far a sort must walk, and picks
// plans that are orders of magnitude slower for common values.
func custom(args []any) []any {
	return append([]any{pgx.QueryExecModeCacheDescribe}, args...)
}
