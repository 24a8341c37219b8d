package content

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/content"
	projcontent "github.com/halocms/halocms/projections/content"
)

const planItems = 30_000

// bulk fills the content tables with planItems items of module m1 (and a
// third as many of m2), laid out as the projector does: one key row per
// item and single-valued field, NULLs for missing values. price is missing
// on every tenth item; two thirds of the items are published.
func bulk(t *testing.T) (*pgxpool.Pool, map[string]content.Field) {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if err := (projcontent.Projector{}).Create(ctx, pool, "public"); err != nil {
		t.Fatal(err)
	}
	for _, sql := range []string{`
INSERT INTO content_items (id, app, module, name, created_at, state_changed_at, published_at, pub_from, pub_until)
SELECT lpad(g::text, 24, '0'), 'a1', CASE WHEN g % 4 = 0 THEN 'm2' ELSE 'm1' END, 'item ' || g, 1000000 + g, 1000000 + g,
       CASE WHEN g % 3 = 0 THEN NULL ELSE 1000 END, CASE WHEN g % 3 = 0 THEN NULL ELSE 1000 END, 9223372036854775807
FROM generate_series(1, ` + strconv.Itoa(planItems*4/3) + `) g`, `
INSERT INTO content_keys (item_id, module, field, n, pub_from, pub_until)
SELECT id, module, 'price', CASE WHEN created_at % 10 = 0 THEN NULL ELSE (created_at * 7919) % 1000 END, pub_from, pub_until
FROM content_items`, `
INSERT INTO content_keys (item_id, module, field, s, pub_from, pub_until)
SELECT id, module, 'category', 'cat' || (created_at % 20), pub_from, pub_until FROM content_items`,
		`INSERT INTO content_modules (id, app, name, created_at) VALUES ('m1', 'a1', 'm1', 0), ('m2', 'a1', 'm2', 0)`,
		`VACUUM ANALYZE content_items`, `VACUUM ANALYZE content_keys`} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	return pool, map[string]content.Field{
		"price":    {Name: "price", Type: "000000000000000000000002"},
		"category": {Name: "category", Type: "000000000000000000000001"},
	}
}

func explain(t *testing.T, pool *pgxpool.Pool, sql string, args []any) string {
	t.Helper()
	rows, err := pool.Query(context.Background(), "EXPLAIN "+sql, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var lines []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			t.Fatal(err)
		}
		lines = append(lines, l)
	}
	return strings.Join(lines, "\n")
}

// TestSortByFieldWalksTheIndex checks the plan shape of a paged sort by a
// scalar field of one module: the ascending one reads content_keys in
// index order and stops early, with no Sort node. It logs how long each
// shape takes.
func TestSortByFieldWalksTheIndex(t *testing.T) {
	if testing.Short() {
		t.Skip("bulk data")
	}
	t.Parallel()
	pool, fields := bulk(t)
	s := NewStore(pool, pgtest.Generic(t, pool))
	ctx := context.Background()
	base := Query{AllApps: true, ModuleIDs: []string{"m1"}, PublishedOnly: true, Now: 2000, Fields: fields, Limit: 20, Offset: 40}

	asc := base
	asc.Sort = []SortKey{{Field: "price"}}
	st, err := compile(&asc, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	plan := explain(t, pool, st.page, st.pageArgs)
	if strings.Contains(plan, "Sort") || !strings.Contains(plan, "content_keys_module_field_n_item_id") {
		t.Errorf("the ascending field sort should walk the key index:\n%s", plan)
	}

	desc := base
	desc.Sort = []SortKey{{Field: "price", Desc: true}}
	if st, err = compile(&desc, map[string]string{}); err != nil {
		t.Fatal(err)
	}
	plan = explain(t, pool, st.page, st.pageArgs)
	if strings.Contains(plan, "Sort") || strings.Count(plan, "Index Only Scan Backward using content_keys_module_field_n_item_id") != 1 {
		t.Errorf("the descending field sort should walk the key index backwards (missing values last):\n%s", plan)
	}

	timed := func(name string, q Query) []string {
		t.Helper()
		start := time.Now()
		res, err := s.Search(ctx, q)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%-40s %8v  %v", name, time.Since(start).Round(time.Microsecond), ids(res.Items)[:3])
		return ids(res.Items)
	}
	// The general plan (two modules, restricted to m1 by metaSearch) must
	// give the same page.
	general := func(q Query) Query {
		q.ModuleIDs = []string{"m1", "m2"}
		q.MetaSearch = &Expr{Op: "=", Property: "module", Value: "m1"}
		return q
	}
	text := base
	text.Sort = []SortKey{{Field: "category", Desc: true}, {Attr: "createdAt"}}
	for _, c := range []struct {
		name string
		q    Query
	}{{"price asc", asc}, {"price desc", desc}, {"category desc, createdAt", text}} {
		fast := timed(c.name+", key walk", c.q)
		slow := timed(c.name+", general", general(c.q))
		if !slices.Equal(fast, slow) {
			t.Errorf("%s: key walk %v, general %v", c.name, fast, slow)
		}
	}

	// A published-only equality on one field of one module is counted
	// from the key index alone, and counts the same as the general count.
	cnt := base
	cnt.Count, cnt.AllApps, cnt.Apps = true, false, []string{"a1"}
	cnt.SearchValues = &Expr{Op: "=", Property: "category", Value: "cat3"}
	st, err = compile(&cnt, map[string]string{})
	if err != nil {
		t.Fatal(err)
	}
	plan = explain(t, pool, st.count, st.countArgs)
	if strings.Contains(plan, "content_items") || !strings.Contains(plan, "Index Only Scan") {
		t.Errorf("the count should read the key index only:\n%s", plan)
	}
	// best runs a count five times and returns it with its best time.
	best := func(sql string, args []any) (int, time.Duration) {
		t.Helper()
		var n int
		d := time.Hour
		for range 5 {
			start := time.Now()
			if err := pool.QueryRow(ctx, sql, args...).Scan(&n); err != nil {
				t.Fatal(err)
			}
			d = min(d, time.Since(start))
		}
		return n, d
	}
	generalCount := `SELECT count(*) FROM content_items i WHERE i.module = 'm1' AND i.pub_from <= 2000 AND i.pub_until > 2000 AND i.deleted_at IS NULL AND
		EXISTS (SELECT 1 FROM content_keys k WHERE k.item_id = i.id AND k.field = 'category' AND k.s = 'cat3')`
	want, d := best(generalCount, nil)
	t.Logf("%-40s %8v  total %d", "count category = cat3, general", d.Round(time.Microsecond), want)
	got, d := best(st.count, st.countArgs)
	t.Logf("%-40s %8v  total %d", "count category = cat3, from keys", d.Round(time.Microsecond), got)
	res, err := s.Search(ctx, cnt)
	if err != nil {
		t.Fatal(err)
	}
	if res.Total != want || want == 0 {
		t.Errorf("count from keys %d, general %d", res.Total, want)
	}
	cnt.Apps = []string{"a2"}
	if res, err := s.Search(ctx, cnt); err != nil || res.Total != 0 {
		t.Errorf("count for another app: %d, %v", res.Total, err)
	}
}

func ids(items []Item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

// TestTypedColumnPlans checks the plans of the searches on typed columns
// (content_fields) of one module, at planItems items: "category = X and
// title like Y and a date range" is one scan of the GIN index on (tx, eqs)
// and one statement for the page and the total; "category = X" is counted
// from the category column's btree alone and paged by walking the price
// column's index backwards. Both answer what the general plan (two
// modules, restricted to m1 by metaSearch) answers.
func TestTypedColumnPlans(t *testing.T) {
	if testing.Short() {
		t.Skip("bulk data")
	}
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if err := (projcontent.Projector{}).Create(ctx, pool, "public"); err != nil {
		t.Fatal(err)
	}
	words := `(ARRAY['amber','birch','cedar','delta','ember','fjord','garnet','heron','indigo','jasper'])`
	for _, sql := range []string{`
INSERT INTO content_modules (id, app, name, created_at, slots) VALUES
	('m1', 'a1', 'm1', 0, '{"title": "t1", "category": "t2", "price": "n1", "releaseDate": "n2"}'), ('m2', 'a1', 'm2', 0, '{}')`, `
INSERT INTO content_items (id, app, module, name, created_at, state_changed_at, published_at, pub_from, pub_until)
SELECT lpad(g::text, 24, '0'), 'a1', 'm1', 'item ' || g, 1000000 + g, 1000000 + g,
       CASE WHEN g % 3 = 0 THEN NULL ELSE 1000 END, CASE WHEN g % 3 = 0 THEN NULL ELSE 1000 END, 9223372036854775807
FROM generate_series(1, ` + strconv.Itoa(planItems) + `) g`, `
INSERT INTO content_fields (item_id, module, pub_from, pub_until, t1, t2, n1, n2)
SELECT id, module, pub_from, pub_until,
       'Product ' || created_at || ' ' || ` + words + `[created_at % 10 + 1] || ' ' || ` + words + `[created_at / 10 % 10 + 1],
       'cat' || (created_at % 20), (created_at * 7919) % 100000, 1000 + (created_at * 31) % 365
FROM content_items`,
		`UPDATE content_fields SET tx = t1 || E'\n' || t2, eqs = ARRAY[module || E'\x1ft1=' || t1, module || E'\x1ft2=' || t2]`,
		// The app's freshness: a version, and an item of m2 whose
		// publication is scheduled at 5000.
		`INSERT INTO content_versions (app, version) VALUES ('a1', 42)`, `
INSERT INTO content_items (id, app, module, name, created_at, state_changed_at, published_at, pub_from, pub_until)
VALUES ('scheduled', 'a1', 'm2', 'scheduled', 0, 0, 5000, 5000, 9223372036854775807)`,
		`VACUUM ANALYZE content_items`, `VACUUM ANALYZE content_fields`, `VACUUM ANALYZE content_modules`} {
		if _, err := pool.Exec(ctx, sql); err != nil {
			t.Fatal(err)
		}
	}
	fields := map[string]content.Field{
		"title":       {Name: "title", Type: "000000000000000000000001"},
		"category":    {Name: "category", Type: "000000000000000000000001"},
		"price":       {Name: "price", Type: "000000000000000000000002"},
		"releaseDate": {Name: "releaseDate", Type: "000000000000000000000006"},
	}
	slots, err := moduleSlots(ctx, pool, "m1")
	if err != nil || len(slots) != 4 {
		t.Fatalf("slots %v, %v", slots, err)
	}
	generic := pgtest.Generic(t, pool)
	s := NewStore(pool, generic)
	cat := &Expr{Op: "=", Property: "category", Value: "cat3"}
	b := Query{AllApps: false, Apps: []string{"a1"}, ModuleIDs: []string{"m1"}, PublishedOnly: true, Now: 2000, Fields: fields,
		Limit: 20, Count: true, Sort: []SortKey{{Field: "price", Desc: true}},
		SearchValues: &Expr{Cond: "and", Operands: []*Expr{cat, {Op: "like", Property: "title", Value: "mbe"},
			{Op: ">=", Property: "releaseDate", Value: 1100}, {Op: "<=", Property: "releaseDate", Value: 1300}}}}
	a := b
	a.SearchValues = cat

	sql, args, ok := pageWithTotal(&b, slots, careful)
	if !ok {
		t.Fatal("(b) is not compiled as one statement for the page and the total")
	}
	plan := explain(t, pool, sql, args)
	if !strings.Contains(plan, "Bitmap Index Scan on content_fields_tx_eqs_idx") || strings.Contains(plan, "content_keys") {
		t.Errorf("(b) should find its matches in the GIN index on (tx, eqs):\n%s", plan)
	}
	// pageInOneTrip runs it, gated by the slot map, from a generic plan:
	// the same index, behind a check of the map made once.
	sql, args, _ = pageWithTotal(&b, slots, oneTrip)
	if plan := explain(t, generic, sql, args); !strings.Contains(plan, "Bitmap Index Scan on content_fields_tx_eqs_idx") ||
		strings.Contains(plan, "BitmapAnd") || !strings.Contains(plan, "One-Time Filter") || !strings.Contains(plan, "$1") {
		t.Errorf("(b)'s generic plan should check the slot map once and find its matches in the GIN index on (tx, eqs) alone:\n%s", plan)
	}
	if _, _, ok := pageWithTotal(&a, slots, oneTrip); ok {
		t.Error("(a), one equality, should be counted and paged apart")
	}
	// OneStatement tells the HTTP layer's line which searches are one
	// statement: (b) with the module's slot map and revision, with a total.
	withModule := func(q Query) Query { q.Slots, q.Revision = slots, 1; return q }
	noTotal := withModule(b)
	noTotal.Count = false
	for name, c := range map[string]struct {
		q    Query
		want bool
	}{
		"(b)": {withModule(b), true}, "(a)": {withModule(a), false}, "(b) without the module's revision": {b, false},
		"(b) without a total": {noTotal, false},
	} {
		if got := OneStatement(&c.q); got != c.want {
			t.Errorf("OneStatement(%s) = %v, want %v", name, got, c.want)
		}
	}
	st, err := compile(&a, slots)
	if err != nil {
		t.Fatal(err)
	}
	if plan := explain(t, pool, st.count, st.countArgs); !strings.Contains(plan, "Index Only Scan using content_fields_module_lower_item_id_t2") {
		t.Errorf("(a)'s count should read the category column's index only:\n%s", plan)
	}
	if plan := explain(t, pool, st.page, st.pageArgs); strings.Contains(plan, "Sort") ||
		!strings.Contains(plan, "Index Scan Backward using content_fields_module_n1_item_id_idx") {
		t.Errorf("(a)'s page should walk the price column's index backwards:\n%s", plan)
	}

	// The one-round-trip page, given the slot map and revision read with
	// the module, answers as the careful path does; given a revision that
	// is no longer the module's (its fields changed in between, so that
	// the map may be wrong), it gives up, and the search still answers
	// right, or, when the caller took the module from KnownModule, says
	// that it must be read afresh.
	type read struct {
		slots    map[string]string
		revision int64
	}
	for name, m := range map[string]read{
		"current": {slots, 1},
		"stale":   {map[string]string{"title": "t2", "category": "t1", "price": "n2", "releaseDate": "n1"}, 7},
	} {
		for _, off := range []int{0, 20} {
			q := b
			q.Offset, q.FreshnessOf = off, "a1"
			want, err := s.Search(ctx, q)
			q.Slots, q.Revision = m.slots, m.revision
			if err != nil {
				t.Fatal(err)
			}
			sql, args, _ := pageWithTotal(&q, q.Slots, oneTrip)
			res, done, err := s.pageInOneTrip(ctx, &q, sql, args)
			if err != nil || done != (name == "current") {
				t.Errorf("%s slots, offset %d: done %v, %v", name, off, done, err)
			}
			if done && (res.Total != want.Total || !slices.Equal(ids(res.Items), ids(want.Items)) || res.Freshness != want.Freshness) {
				t.Errorf("%s slots, offset %d: one trip %d %v %+v, careful %d %v %+v", name, off, res.Total, ids(res.Items), res.Freshness,
					want.Total, ids(want.Items), want.Freshness)
			}
			if want.Freshness != (Freshness{Version: 42, Until: 5000}) {
				t.Errorf("%s slots, offset %d: freshness %+v, want version 42 until 5000", name, off, want.Freshness)
			}
			got, err := s.Search(ctx, q)
			if err != nil || got.Total != want.Total || want.Total == 0 || !slices.Equal(ids(got.Items), ids(want.Items)) {
				t.Errorf("%s slots, offset %d: search %d %v (%v), want %d %v", name, off, got.Total, ids(got.Items), err, want.Total, ids(want.Items))
			}
			q.Known = true
			got, err = s.Search(ctx, q)
			if name == "current" && (err != nil || !slices.Equal(ids(got.Items), ids(want.Items))) {
				t.Errorf("known module, offset %d: %v (%v), want %v", off, ids(got.Items), err, ids(want.Items))
			}
			if name == "stale" && !errors.Is(err, ErrModuleUnverified) {
				t.Errorf("stale known module, offset %d: %v (%v), want ErrModuleUnverified", off, ids(got.Items), err)
			}
		}
	}
	// An empty page leaves the answer to the careful path: a total of 0.
	none := b
	none.Slots, none.Revision = slots, 1
	none.SearchValues = &Expr{Cond: "and", Operands: []*Expr{cat, {Op: "like", Property: "title", Value: "zzzz"}}}
	sql, args, _ = pageWithTotal(&none, slots, oneTrip)
	if _, done, err := s.pageInOneTrip(ctx, &none, sql, args); err != nil || done {
		t.Errorf("no match: done %v, %v", done, err)
	}
	if res, err := s.Search(ctx, none); err != nil || res.Total != 0 || len(res.Items) != 0 {
		t.Errorf("no match: %+v, %v", res, err)
	}
	none.Known = true
	if _, err := s.Search(ctx, none); !errors.Is(err, ErrModuleUnverified) {
		t.Errorf("no match with a known module: %v, want ErrModuleUnverified (an empty page proves nothing)", err)
	}

	general := func(q Query) Query {
		q.ModuleIDs = []string{"m1", "m2"}
		q.MetaSearch = &Expr{Op: "=", Property: "module", Value: "m1"}
		return q
	}
	for name, q := range map[string]Query{"(a)": a, "(b)": b} {
		for _, off := range []int{0, 20, 1000} {
			q.Offset = off
			start := time.Now()
			fast, err := s.Search(ctx, q)
			if err != nil {
				t.Fatal(err)
			}
			d := time.Since(start)
			start = time.Now()
			slow, err := s.Search(ctx, general(q))
			if err != nil {
				t.Fatal(err)
			}
			t.Logf("%s offset %d: typed columns %v, general %v; total %d", name, off, d.Round(time.Microsecond),
				time.Since(start).Round(time.Microsecond), fast.Total)
			if fast.Total != slow.Total || fast.Total == 0 || !slices.Equal(ids(fast.Items), ids(slow.Items)) {
				t.Errorf("%s offset %d: typed columns %d %v, general %d %v", name, off, fast.Total, ids(fast.Items), slow.Total, ids(slow.Items))
			}
		}
	}
}

// TestOneStatementCompilesOnce: Search runs the statement OneStatement
// compiled into the Query, and compiles afresh when the module state it
// was compiled for changed: the retry after ErrModuleUnverified reads the
// module again into the same Query (not Known any more, perhaps another
// module of that name at the same revision).
func TestOneStatementCompilesOnce(t *testing.T) {
	t.Parallel()
	fields := map[string]content.Field{
		"title": {Name: "title", Type: "000000000000000000000001"},
		"price": {Name: "price", Type: "000000000000000000000002"},
	}
	q := Query{Apps: []string{"a1"}, ModuleIDs: []string{"m1"}, PublishedOnly: true, Now: 2000, Fields: fields,
		Limit: 20, Count: true, Sort: []SortKey{{Field: "price", Desc: true}},
		SearchValues: &Expr{Op: "like", Property: "title", Value: "mbe"},
		Slots:        map[string]string{"title": "t1", "price": "n1"}, Revision: 3, Known: true}
	if !OneStatement(&q) || q.trip == nil || !q.trip.ok {
		t.Fatalf("OneStatement: want one statement, kept in the query (%+v)", q.trip)
	}
	kept := q.trip
	kept.sql = "the kept statement"
	if sql, _, ok := oneTripStatement(&q); !ok || sql != kept.sql {
		t.Fatalf("the same module state compiled again: %q", sql)
	}
	copied := q // Search takes the Query by value
	if sql, _, _ := oneTripStatement(&copied); sql != kept.sql {
		t.Fatalf("a copy of the query compiled again: %q", sql)
	}
	for name, change := range map[string]func(*Query){
		"no longer known":                   func(q *Query) { q.Known = false },
		"another page":                      func(q *Query) { q.Offset = 20 },
		"another instant":                   func(q *Query) { q.Now++ },
		"another revision":                  func(q *Query) { q.Revision = 4 },
		"another module, the same revision": func(q *Query) { q.ModuleIDs = []string{"m2"} },
	} {
		r := q
		change(&r)
		sql, args, ok := oneTripStatement(&r)
		if !ok || sql == kept.sql || !slices.Contains(args, any(r.ModuleIDs[0])) || !slices.Contains(args, any(r.Revision)) {
			t.Errorf("%s: want a fresh statement for module %s at revision %d, got %q %v", name, r.ModuleIDs[0], r.Revision, sql, args)
		}
	}
	noSlots := q
	noSlots.Known, noSlots.Slots, noSlots.Revision = false, nil, 0
	if OneStatement(&noSlots) {
		t.Error("a module read without its slot map: want no one statement")
	}
}
