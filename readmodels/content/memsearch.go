package content

import (
	"context"
	"math"
	"slices"
)

// InMemoryShape reports whether q has the shape SearchInMemory may
// answer: an app's paged search with a total, of one module whose slot
// map and revision the caller read, filtered by searchValues, sorted by
// values, without a locale. Whether it does depends on the rest.
func InMemoryShape(q Query) bool {
	return q.PublishedOnly && q.Count && q.Locale == "" && q.Limit > 0 && len(q.Sort) > 0 &&
		q.SearchValues != nil && len(q.ModuleIDs) == 1 && q.Slots != nil && q.Revision != 0
}

// SearchInMemory answers a query as Search would, from the in-memory copy of its
// module (see memIndex and KeepInMemory), when it can; done is false when
// Search must answer. It reads PostgreSQL once, by primary key (or only
// the app's content version, see memItems): the caller need not count it
// among its hot reads. Its items may be shared (see Result.InMemory).
func (s *Store) SearchInMemory(ctx context.Context, in Query) (res Result, done bool, err error) {
	if s.mem == nil || !InMemoryShape(in) {
		return Result{}, false, nil
	}
	q := &in // compiled in place, as Search does (see oneTripStatement)
	module := q.ModuleIDs[0]
	m := s.mem.get(module)
	if m == nil {
		return Result{}, false, nil
	}
	if m.revision != q.Revision {
		// The caller read the module at another revision: either it or
		// the copy is behind; PostgreSQL tells.
		return Result{}, false, nil
	}
	if !q.AllApps && !slices.Contains(q.VisibleModules, module) && !slices.Contains(q.Apps, m.app) ||
		q.FreshnessOf != "" && q.FreshnessOf != m.app {
		return Result{}, false, nil
	}
	// What PostgreSQL would refuse, or answer some other way, it answers.
	if _, _, ok := oneTripStatement(q); !ok {
		if !singleEquality(q.SearchValues) {
			return Result{}, false, nil
		}
		if _, _, ok := fieldsFilter(q, q.Slots, false); !ok {
			return Result{}, false, nil
		}
	}
	for tries := 0; ; tries++ {
		cond, sorts, ok := m.plan(q)
		if !ok {
			return Result{}, false, nil
		}
		matches, ok := m.match(&cond, q.Now)
		if !ok {
			return Result{}, false, nil
		}
		var page []int32 // none past the last match: what Search answers too (no items, the total)
		if q.Offset < len(matches) {
			page = m.page(matches, sorts, q.Offset, q.Limit)
		}
		items, fresh, ok, err := s.memItems(ctx, m, page, q.Now)
		if err != nil {
			return Result{}, false, err
		}
		if ok {
			return s.memAnswer(q, m, items, len(matches), fresh)
		}
		// The tables moved past the copy: it is brought forward to where
		// they are now, and the search made again on it. Tables behind
		// the copy are others (a rebuild): it is loaded again. When they
		// moved on each time, PostgreSQL answers this search, and the copy
		// stays for the next.
		if fresh.Version <= m.version {
			s.mem.outdated(m)
			return Result{}, false, nil
		}
		if tries == memTries-1 {
			return Result{}, false, nil
		}
		if m = s.mem.catchUp(ctx, m); m == nil {
			return Result{}, false, nil
		}
	}
}

// memTries: a search brings its module's copy forward at most this many
// times less one (see memIndex.catchUp); when the tables moved on each
// time, it goes to PostgreSQL.
const memTries = 3

// memAnswer is q's Result from m's items read at fresh (their values
// decoded unless q asks for them raw).
func (s *Store) memAnswer(q *Query, m *memModule, items []Item, total int, fresh Freshness) (Result, bool, error) {
	var err error
	if !q.RawValues {
		for i := range items {
			if items[i].Values, err = decodeValues(items[i].RawValues); err != nil {
				return Result{}, false, err
			}
			items[i].RawValues = nil
		}
	}
	return m.answer(q, items, total, fresh), true, nil
}

// answer is q's Result from the copy: its page's items, its total and,
// when asked, the Freshness read with them.
func (m *memModule) answer(q *Query, items []Item, total int, fresh Freshness) Result {
	res := Result{Items: items, Total: total, InMemory: true}
	if q.FreshnessOf != "" {
		res.Freshness = fresh
	}
	return res
}

// memItems returns the items of rows (of m), with their values as stored,
// and the Freshness read with them; false when the tables are no longer
// at m's version (Freshness.Version says where they are). The items searches fetched before are kept in m (see
// memModule.items): PostgreSQL then reads only the others, by id, and in
// the same statement the app's content version. Read at m's version, an
// item is still what the tables hold while the version is (the projection
// changes it with every batch that touches the app's items), so a page
// whose items are all kept costs one read of the version.
func (s *Store) memItems(ctx context.Context, m *memModule, rows []int32, now int64) ([]Item, Freshness, bool, error) {
	items := make([]Item, len(rows))
	var fresh Freshness
	var ids []string
	var fetched []int      // the positions PostgreSQL fills
	at := map[string]int{} // id → its position
	m.itemsMu.Lock()
	for k, r := range rows {
		if it, ok := m.items[r]; ok {
			items[k] = it
			continue
		}
		id := m.ids.at(r)
		ids, fetched, at[id] = append(ids, id), append(fetched, k), k
	}
	m.itemsMu.Unlock()
	if len(ids) == 0 {
		if err := s.generic.QueryRow(ctx, `SELECT `+freshnessColumns("$1", "$2", "$3"), m.app, now, int64(math.MaxInt64)).
			Scan(&fresh.Version, &fresh.Until); err != nil {
			return nil, fresh, false, err
		}
		return items, fresh, fresh.Version == m.version, nil
	}
	res, err := s.generic.Query(ctx, memFetch, ids, m.app, now, int64(math.MaxInt64))
	if err != nil {
		return nil, fresh, false, err
	}
	defer res.Close()
	found := 0
	for res.Next() {
		it, err := scanItem(res, true, &fresh.Version, &fresh.Until)
		if err != nil {
			return nil, fresh, false, err
		}
		if fresh.Version != m.version {
			res.Close()
			return nil, fresh, false, nil
		}
		items[at[it.ID]] = it
		found++
	}
	if err := res.Err(); err != nil {
		return nil, fresh, false, err
	}
	if found != len(ids) { // cannot be at the copy's version; PostgreSQL answers
		s.mem.outdated(m)
		return nil, fresh, false, nil
	}
	s.mem.keep(m, rows, items, fetched)
	return items, fresh, true, nil
}

// memFetch reads the page's items by id, each row with the app's
// Freshness: its content version, which tells whether the copy the page
// came from is still what the tables hold.
var memFetch = `SELECT ` + itemColumns + `, ` + freshnessColumns("$2", "$3", "$4") + `
	FROM content_items i WHERE i.id = ANY($1::text[])`
