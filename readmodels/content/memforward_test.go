package content_test

import (
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/content"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// followWorld is module m1 of app a1 (category, title, price) with items
// the test creates, edits, unpublishes, publishes, archives and deletes
// in random batches, a store that keeps m1 in memory, and the searches it
// makes between the batches, each compared with the store without the
// index (PostgreSQL).
type followWorld struct {
	t        *testing.T
	f        *fixture
	mem      *rmcontent.Store
	rng      *rand.Rand
	ids      []string // items created, in order
	at       int64
	fields   []content.Field
	slots    map[string]string
	revision int64
	stats    map[string]int
}

var followWords = []string{"amber", "birch", "cedar", "delta", "ember", "fjord", "garnet", "heron"}

func newFollowWorld(t *testing.T, seed uint64, items int) *followWorld {
	t.Helper()
	w := &followWorld{t: t, f: newFixture(t), rng: rand.New(rand.NewPCG(seed, 7)), at: t0 - 50_000, stats: map[string]int{},
		fields: []content.Field{field("category", "01"), field("title", "01"), field("price", "02")}}
	w.f.module(w.at, "m1", "a1", w.fields...)
	w.f.module(w.at, "m2", "a1", field("category", "01"))
	var evs []interface{ EventType() string }
	for range items {
		evs = append(evs, w.created())
	}
	w.f.apply(w.next(), evs...)
	w.mem = rmcontent.NewStore(w.f.pool, pgtest.Generic(t, w.f.pool))
	w.mem.KeepInMemory(100_000)
	w.reload()
	return w
}

func (w *followWorld) next() int64 { w.at += 10; return w.at }

// reload reads m1 again (slots, revision) and loads its copy now.
func (w *followWorld) reload() {
	w.t.Helper()
	m, err := w.f.store.Module(w.f.ctx, "m1")
	if err != nil {
		w.t.Fatal(err)
	}
	w.slots, w.revision = m.Slots, m.Revision
	if err := w.mem.LoadInMemory(w.f.ctx, "m1", true); err != nil {
		w.t.Fatal(err)
	}
}

func (w *followWorld) values() map[string]any {
	r := w.rng
	v := map[string]any{"category": fmt.Sprintf("c%d", r.IntN(4)),
		"title": followWords[r.IntN(len(followWords))] + " " + followWords[r.IntN(len(followWords))],
		"price": num(fmt.Sprint(r.IntN(30)))} // few prices: ties, ordered by the ids
	if r.IntN(10) == 0 {
		delete(v, "price")
	}
	return v
}

// created is a new item whose id falls anywhere among the others'.
func (w *followWorld) created() content.ItemCreated {
	id := fmt.Sprintf("i%06d", w.rng.IntN(1_000_000))
	for slices.Contains(w.ids, id) {
		id += "x"
	}
	w.ids = append(w.ids, id)
	ev := content.ItemCreated{ItemID: id, App: "a1", Module: "m1", Name: "n" + id, Values: w.values(), By: "Ann"}
	if w.rng.IntN(8) > 0 {
		ev.PublishedAt = time.UnixMilli(t0)
	}
	return ev
}

// change is a random item event of m1 (or one of m2).
func (w *followWorld) change() interface{ EventType() string } {
	r := w.rng
	id := w.ids[r.IntN(len(w.ids))]
	switch n := r.IntN(20); {
	case n < 6:
		return w.created()
	case n < 10:
		return content.ItemEdited{ItemID: id, App: "a1", Module: "m1", Name: "n" + id, Values: w.values(), By: "Bob"}
	case n < 11: // the name alone: the item's row is written again all the same
		return content.ItemEdited{ItemID: id, App: "a1", Module: "m1", Name: fmt.Sprintf("renamed %d", r.IntN(100)),
			Values: w.values(), Changed: []string{"name"}, By: "Bob"}
	case n < 13:
		return content.ItemUnpublished{ItemID: id, App: "a1", Module: "m1", By: "Cy"}
	case n < 15:
		return content.ItemPublished{ItemID: id, App: "a1", Module: "m1", PublishedAt: time.UnixMilli(t0), By: "Dan"}
	case n < 16:
		return content.ItemArchived{ItemID: id, App: "a1", Module: "m1", ArchivedAt: time.UnixMilli(t0 + 1), By: "Eve"}
	case n < 18:
		return content.ItemDeleted{ItemID: id, App: "a1", Module: "m1", By: "Fay"}
	}
	return content.ItemCreated{ItemID: fmt.Sprintf("o%06d", r.IntN(1_000_000)), App: "a1", Module: "m2", Name: "other",
		Values: map[string]any{"category": "c1"}, PublishedAt: time.UnixMilli(t0), By: "Gus"}
}

// search makes a random search of m1 in memory and with PostgreSQL, and
// fails the test when the copy answers otherwise.
func (w *followWorld) search() {
	t, r := w.t, w.rng
	t.Helper()
	q := rmcontent.Query{Apps: []string{"a1"}, PublishedOnly: true, Count: true, ModuleIDs: []string{"m1"}, Fields: w.f.fields,
		Slots: w.slots, Revision: w.revision, Now: now, Limit: []int{1, 3, 10, 40}[r.IntN(4)], Offset: []int{0, 0, 2, 7}[r.IntN(4)],
		Sort: []rmcontent.SortKey{{Field: "price", Desc: r.IntN(2) == 0}}, FreshnessOf: "a1"}
	cat := &rmcontent.Expr{Op: "=", Property: "category", Value: fmt.Sprintf("c%d", r.IntN(4)), Type: "string"}
	price := &rmcontent.Expr{Op: []string{">=", "<", "="}[r.IntN(3)], Property: "price", Value: num(fmt.Sprint(r.IntN(30))), Type: "number"}
	like := &rmcontent.Expr{Op: "like", Property: "title", Value: followWords[r.IntN(len(followWords))][1:4], Type: "string"}
	switch r.IntN(4) {
	case 0:
		q.SearchValues = &rmcontent.Expr{Cond: "and", Operands: []*rmcontent.Expr{cat, price}}
	case 1:
		q.SearchValues = &rmcontent.Expr{Cond: "and", Operands: []*rmcontent.Expr{like, price}}
	case 2:
		q.SearchValues = like
	default:
		q.SearchValues = price // no list to start from: the copy scans the module
	}
	rmcontent.OneStatement(&q)
	want, err := w.f.store.Search(w.f.ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	got, done, err := w.mem.SearchInMemory(w.f.ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	if !done {
		w.stats["postgresql"]++
		return
	}
	w.stats["memory"]++
	if got.Total != want.Total || !slices.Equal(ids(got.Items), ids(want.Items)) || !reflect.DeepEqual(got.Items, want.Items) ||
		got.Freshness != want.Freshness {
		t.Fatalf("search %s: in memory %v of %d (%+v), want %v of %d (%+v)", showQuery(q), ids(got.Items), got.Total, got.Freshness,
			ids(want.Items), want.Total, want.Freshness)
	}
}

// TestInMemoryFollowsWrites interleaves batches of creations (of ids
// among the others'), edits, unpublications, publications, archivals,
// deletions and writes to another module of the app with searches of
// m1: each answer from the copy, brought forward to the version its
// statement reads, is PostgreSQL's; nearly all are answered from it. A
// change of m1's fields changes its revision: the search goes to
// PostgreSQL until the module is loaded again.
func TestInMemoryFollowsWrites(t *testing.T) {
	t.Parallel()
	for _, seed := range []uint64{1, 2} {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel()
			w := newFollowWorld(t, seed, 300)
			for step := range 150 {
				var evs []interface{ EventType() string }
				for range 1 + w.rng.IntN(4) {
					evs = append(evs, w.change())
				}
				w.f.apply(w.next(), evs...)
				for range 1 + w.rng.IntN(3) {
					w.search()
				}
				if step == 100 { // m1's fields change: reloaded whole
					w.fields = append(w.fields, field(fmt.Sprintf("extra%d", step), "01"))
					w.f.apply(w.next(), content.ModuleFieldsChanged{ModuleID: "m1", App: "a1", Fields: w.fields, By: "Ann"})
					stale := w.stats["memory"]
					m, err := w.f.store.Module(w.f.ctx, "m1")
					if err != nil {
						t.Fatal(err)
					}
					w.slots, w.revision = m.Slots, m.Revision
					w.search()
					if w.stats["memory"] != stale {
						t.Fatal("a search of the module at its new revision was answered by the copy of the old one")
					}
					w.reload()
				}
			}
			t.Logf("%v", w.stats)
			if all := w.stats["memory"] + w.stats["postgresql"]; w.stats["memory"] < all*9/10 {
				t.Fatalf("%d of %d searches answered in memory, want nine in ten", w.stats["memory"], all)
			}
		})
	}
}

// A batch that writes more rows than a copy takes (memForwardMin) leaves
// the search to PostgreSQL, and the module to be loaded again (in the
// background: the searches after may find it loaded); then the copy
// answers again.
func TestInMemoryReloadsAfterManyWrites(t *testing.T) {
	t.Parallel()
	w := newFollowWorld(t, 3, 50)
	w.search()
	var evs []interface{ EventType() string }
	for range 1100 {
		evs = append(evs, w.created())
	}
	w.f.apply(w.next(), evs...)
	before := w.stats["memory"]
	w.search()
	if w.stats["memory"] != before {
		t.Fatal("a search answered by a copy 1,100 rows behind")
	}
	for range 5 {
		w.search() // in memory or not, the answer is checked
	}
	w.reload()
	before = w.stats["memory"]
	for range 5 {
		w.search()
	}
	if w.stats["memory"] != before+5 {
		t.Fatalf("%v: the copy loaded again answered %d of 5", w.stats, w.stats["memory"]-before)
	}
}
