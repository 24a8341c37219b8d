package content_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/content"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// memFixture is module m1 of app a1 with a category (text column) and a
// price (number column), its items i01..i<n> published in categories
// c0..c2, and a store that keeps modules in memory (at most max items).
func memFixture(t *testing.T, n, max int) (*fixture, *rmcontent.Store, rmcontent.Query) {
	t.Helper()
	f := newFixture(t)
	f.module(t0, "m1", "a1", field("category", "01"), field("price", "02"))
	f.module(t0, "m2", "a1", field("category", "01"), field("price", "02"))
	for i := 1; i <= n; i++ {
		f.item(t0+int64(i), fmt.Sprintf("i%02d", i), "a1", "m1", "item", map[string]any{"category": fmt.Sprintf("c%d", i%3), "price": num(fmt.Sprint(i * 10))}, t0)
	}
	mem := rmcontent.NewStore(f.pool, pgtest.Generic(t, f.pool))
	mem.KeepInMemory(max)
	m, err := f.store.Module(f.ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	q := rmcontent.Query{Apps: []string{"a1"}, PublishedOnly: true, Count: true, ModuleIDs: []string{"m1"}, Fields: f.fields,
		Slots: m.Slots, Revision: m.Revision, Now: now, Limit: 2, Sort: []rmcontent.SortKey{{Field: "price", Desc: true}},
		SearchValues: &rmcontent.Expr{Cond: "and", Operands: []*rmcontent.Expr{{Op: "=", Property: "category", Value: "c1"}, {Op: ">=", Property: "price", Value: num("20")}}},
		FreshnessOf:  "a1"}
	return f, mem, q
}

// memSearch searches as the HTTP layer does: in memory, else with Search.
func memSearch(t *testing.T, f *fixture, s *rmcontent.Store, q rmcontent.Query) rmcontent.Result {
	t.Helper()
	rmcontent.OneStatement(&q)
	res, done, err := s.SearchInMemory(f.ctx, q)
	if err == nil && !done {
		res, err = s.Search(f.ctx, q)
	}
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// A copy answers at the app's content version the search reads: after a
// change the copy is brought forward by the rows written since (see
// memModule.forward) and the search, made again on it, sees the change.
func TestInMemoryCopyFollowsTheVersion(t *testing.T) {
	t.Parallel()
	f, mem, q := memFixture(t, 9, 1000)
	want := func(res rmcontent.Result, inMemory bool, total int, page ...string) {
		t.Helper()
		if res.InMemory != inMemory || res.Total != total || !slices.Equal(ids(res.Items), page) {
			t.Fatalf("in memory %v, page %v of %d; want %v, %v of %d", res.InMemory, ids(res.Items), res.Total, inMemory, page, total)
		}
	}
	first := memSearch(t, f, mem, q) // asks for the load, in the background
	want(first, false, 2, "i07", "i04")
	if err := mem.LoadInMemory(f.ctx, "m1", false); err != nil {
		t.Fatal(err)
	}
	loaded := memSearch(t, f, mem, q)
	want(loaded, true, 2, "i07", "i04")
	if loaded.Freshness != first.Freshness || loaded.Freshness.Version == 0 {
		t.Fatalf("freshness %+v, want %+v (the app's, as PostgreSQL reads it)", loaded.Freshness, first.Freshness)
	}

	f.item(now, "i10", "a1", "m1", "item", map[string]any{"category": "c1", "price": num("95")}, t0)
	want(memSearch(t, f, mem, q), true, 3, "i10", "i07")
	want(memSearch(t, f, mem, q), true, 3, "i10", "i07")

	// A change to another module of the app changes the version too: the
	// copy moves to it with no row.
	f.item(now, "x1", "a1", "m2", "other", map[string]any{"category": "c1"}, t0)
	want(memSearch(t, f, mem, q), true, 3, "i10", "i07")

	// The module read at another revision than the copy's: PostgreSQL.
	if err := mem.LoadInMemory(f.ctx, "m1", false); err != nil {
		t.Fatal(err)
	}
	old := q
	old.Revision++
	old.Known = true
	if _, done, err := mem.SearchInMemory(f.ctx, old); err != nil || done {
		t.Fatal("a search of the module at another revision was answered in memory")
	}
	// A page past the matches, and no match: no items, the total.
	past := q
	past.Offset = 10
	want(memSearch(t, f, mem, past), true, 3)
	none := q
	none.SearchValues = &rmcontent.Expr{Op: "=", Property: "category", Value: "c9"}
	want(memSearch(t, f, mem, none), true, 0)
	f.item(now, "i11", "a1", "m1", "item", map[string]any{"category": "c9"}, t0)
	none.Offset = 0
	want(memSearch(t, f, mem, none), true, 1, "i11") // no match in the copy, but the version moved on
	// Another app's token does not see the module.
	other := q
	other.Apps, other.FreshnessOf = []string{"a2"}, "a2"
	want(memSearch(t, f, mem, other), false, 0)
}

// The items a search fetched are kept with the copy: the next search of
// them reads only the app's content version, and answers what PostgreSQL
// holds, values and all, for as long as the version holds; an edit of
// one of them is seen at once (its row is replaced as the copy is brought
// forward, and the edited item fetched).
func TestInMemoryKeepsFetchedItems(t *testing.T) {
	t.Parallel()
	f, mem, q := memFixture(t, 20, 1000) // a copy of 20 rows keeps 2 items
	if err := mem.LoadInMemory(f.ctx, "m1", false); err != nil {
		t.Fatal(err)
	}
	price := func(res rmcontent.Result) []any {
		out := []any{}
		for _, it := range res.Items {
			out = append(out, it.Values["price"])
		}
		return out
	}
	check := func(res rmcontent.Result, inMemory bool, page []string, prices ...any) {
		t.Helper()
		if res.InMemory != inMemory || !slices.Equal(ids(res.Items), page) || !slices.Equal(price(res), prices) {
			t.Fatalf("in memory %v, page %v with prices %v; want %v, %v with %v", res.InMemory, ids(res.Items), price(res), inMemory, page, prices)
		}
	}
	check(memSearch(t, f, mem, q), true, []string{"i19", "i16"}, num("190"), num("160")) // fetched
	if kept := mem.KeptItems("m1"); len(kept) != 2 || !slices.Contains(kept, "i19") || !slices.Contains(kept, "i16") {
		t.Fatalf("the copy keeps %v, want the page's i19 and i16", kept)
	}
	// Kept items are not read again: a change made behind the
	// projection's back (no new version) is not seen.
	if _, err := f.pool.Exec(f.ctx, `UPDATE content_items SET vals = '{"price": 1, "category": "c1"}' WHERE id = 'i19'`); err != nil {
		t.Fatal(err)
	}
	check(memSearch(t, f, mem, q), true, []string{"i19", "i16"}, num("190"), num("160")) // kept
	raw := q
	raw.RawValues = true
	if res := memSearch(t, f, mem, raw); !res.InMemory || string(res.Items[0].RawValues) != `{"price": 190, "category": "c1"}` {
		t.Fatalf("kept item's values as stored: %s (in memory %v)", res.Items[0].RawValues, res.InMemory)
	}
	// At most a tenth of the rows: another page's items take the places
	// of those kept.
	other := q
	other.SearchValues = &rmcontent.Expr{Op: "=", Property: "category", Value: "c2"}
	res := memSearch(t, f, mem, other)
	if kept := mem.KeptItems("m1"); !res.InMemory || len(kept) != 2 || !slices.Contains(kept, res.Items[0].ID) || !slices.Contains(kept, res.Items[1].ID) {
		t.Fatalf("another page %v (in memory %v): the copy keeps %v, want that page's items only", ids(res.Items), res.InMemory, kept)
	}

	f.apply(now, content.ItemEdited{ItemID: "i19", App: "a1", Module: "m1", Name: "item",
		Values: map[string]any{"category": "c1", "price": num("191")}, By: "Ann"})
	check(memSearch(t, f, mem, q), true, []string{"i19", "i16"}, num("191"), num("160"))
	check(memSearch(t, f, mem, q), true, []string{"i19", "i16"}, num("191"), num("160"))
}

// The index holds at most its number of items: a module with more is
// left to PostgreSQL, and loading one evicts the least recently used.
func TestInMemoryBound(t *testing.T) {
	t.Parallel()
	f, mem, q := memFixture(t, 9, 9)
	for i := 1; i <= 5; i++ {
		f.item(t0, fmt.Sprintf("j%d", i), "a1", "m2", "item", map[string]any{"category": "c1", "price": num("30")}, t0)
	}
	m2, err := f.store.Module(f.ctx, "m2")
	if err != nil {
		t.Fatal(err)
	}
	q2 := q
	q2.ModuleIDs, q2.Slots, q2.Revision = []string{"m2"}, m2.Slots, m2.Revision
	for _, m := range []string{"m1", "m2"} {
		if err := mem.LoadInMemory(f.ctx, m, false); err != nil {
			t.Fatal(err)
		}
	}
	if !memSearch(t, f, mem, q2).InMemory || memSearch(t, f, mem, q).InMemory {
		t.Fatal("m1 (9 items) should have been evicted by m2 (5) in an index of 9")
	}
	f.item(now, "i10", "a1", "m1", "item", map[string]any{"category": "c1", "price": num("95")}, t0) // 10 items now
	m1, err := f.store.Module(f.ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	q.Revision = m1.Revision
	if err := mem.LoadInMemory(f.ctx, "m1", false); err != nil {
		t.Fatal(err)
	}
	if res := memSearch(t, f, mem, q); res.InMemory || res.Total != 3 {
		t.Fatalf("a module of 10 items in an index of 9: in memory %v, total %d", res.InMemory, res.Total)
	}
}

// likesInMemory returns a store that keeps modules in memory (at most max
// items), with module m1 of f loaded and its texts' trigram lists built,
// and m1 as the read model shows it.
func likesInMemory(t *testing.T, f *fixture, max int) (*rmcontent.Store, rmcontent.Module) {
	t.Helper()
	mem := rmcontent.NewStore(f.pool, pgtest.Generic(t, f.pool))
	mem.KeepInMemory(max)
	if err := mem.LoadInMemory(f.ctx, "m1", true); err != nil {
		t.Fatal(err)
	}
	m, err := f.store.Module(f.ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	return mem, m
}

// Texts beyond ASCII are lower-cased by PostgreSQL's rules, not the
// index's: a like on one is left to PostgreSQL, and finds what it finds.
// A like on ASCII texts is answered in memory from the trigram lists,
// each candidate's text checked.
func TestInMemoryLikeBeyondASCII(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.module(t0, "m1", "a1", field("title", "01"), field("price", "02"))
	// K, the Kelvin sign, lower-cases to k; "lamb embers" holds every
	// trigram of "amber" but not the word.
	for i, title := range []string{"KELVIN", "\u212Aelvin", "kelvin", "Ärger", "lamb embers", "Amber"} {
		f.item(t0, fmt.Sprintf("i%d", i), "a1", "m1", "item", map[string]any{"title": title, "price": num(fmt.Sprint(i))}, t0)
	}
	mem, m := likesInMemory(t, f, 100)
	for _, like := range []string{"elvin", "rger", "KEL", "amber"} {
		q := rmcontent.Query{Apps: []string{"a1"}, PublishedOnly: true, Count: true, ModuleIDs: []string{"m1"}, Fields: f.fields,
			Slots: m.Slots, Revision: m.Revision, Now: now, Limit: 10, Sort: []rmcontent.SortKey{{Field: "price"}},
			SearchValues: &rmcontent.Expr{Op: "like", Property: "title", Value: like}}
		if like == "amber" { // past the rows beyond ASCII, which the like cannot judge
			q.SearchValues = &rmcontent.Expr{Cond: "and", Operands: []*rmcontent.Expr{q.SearchValues, {Op: ">=", Property: "price", Value: num("4")}}}
		}
		got, want := memSearch(t, f, mem, q), memSearch(t, f, f.store, q)
		if got.InMemory != (like == "amber") || !slices.Equal(ids(got.Items), ids(want.Items)) {
			t.Errorf("like %q: in memory %v, %v; PostgreSQL finds %v", like, got.InMemory, ids(got.Items), ids(want.Items))
		}
	}
}

// A like on a column of ASCII texts gives the rows holding its needle's
// rarest trigram to start from, as an equality gives its rows: a search
// starts from the rows in all such lists at its top (intersected), then
// checks each like on them. The answers are PostgreSQL's.
func TestInMemoryLikeStarts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.module(t0, "m1", "a1", field("title", "01"), field("category", "01"), field("price", "02"))
	words := []string{"amber", "birch", "cedar", "lamb", "embers", "amberlight"}
	for i := range 300 {
		pub := t0
		if i%7 == 0 {
			pub = 0 // not published: no search finds it
		}
		title := words[i%len(words)] + " " + words[(i/len(words))%len(words)]
		if i%9 == 0 {
			title += " zest" // rarer than any category
		}
		f.item(t0+int64(i), fmt.Sprintf("i%03d", i), "a1", "m1", "item",
			map[string]any{"title": title, "category": fmt.Sprintf("c%d", i%5), "price": num(fmt.Sprint(i % 50))}, pub)
	}
	mem, m := likesInMemory(t, f, 1000)
	like := func(s string) *rmcontent.Expr { return &rmcontent.Expr{Op: "like", Property: "title", Value: s} }
	eq := func(p, v string) *rmcontent.Expr { return &rmcontent.Expr{Op: "=", Property: p, Value: v} }
	and := func(o ...*rmcontent.Expr) *rmcontent.Expr { return &rmcontent.Expr{Cond: "and", Operands: o} }
	or := func(o ...*rmcontent.Expr) *rmcontent.Expr { return &rmcontent.Expr{Cond: "or", Operands: o} }
	for name, sv := range map[string]*rmcontent.Expr{
		"like":                  like("amber"),
		"like, equality":        and(like("ZEST"), eq("category", "c1")),
		"two likes":             and(like("amb"), like("birch")),
		"like and a number":     and(&rmcontent.Expr{Op: ">=", Property: "price", Value: num("30")}, like("cedar")),
		"two equalities":        and(eq("category", "c1"), eq("title", "amber birch")),
		"a trigram none holds":  and(like("ambq"), eq("category", "c1")),
		"like, equality and or": and(eq("category", "c3"), or(like("lamb"), like("ember")), like("amber")),
		"a like within an or":   and(eq("category", "c0"), or(like("lamb"), eq("title", "birch cedar"))),
	} {
		q := rmcontent.Query{Apps: []string{"a1"}, PublishedOnly: true, Count: true, ModuleIDs: []string{"m1"}, Fields: f.fields,
			Slots: m.Slots, Revision: m.Revision, Now: now, Limit: 200, Sort: []rmcontent.SortKey{{Field: "price", Desc: true}},
			SearchValues: sv}
		got, want := memSearch(t, f, mem, q), memSearch(t, f, f.store, q)
		if !got.InMemory || got.Total != want.Total || !slices.Equal(ids(got.Items), ids(want.Items)) {
			t.Errorf("%s: in memory %v, %v of %d; PostgreSQL finds %v of %d", name, got.InMemory, ids(got.Items), got.Total,
				ids(want.Items), want.Total)
		}
		if name != "a trigram none holds" && want.Total == 0 {
			t.Errorf("%s: PostgreSQL finds nothing; the case tests nothing", name)
		}
	}
}
