package content_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	projcontent "github.com/halocms/halocms/projections/content"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// t0 is the base instant of the fixtures (ms).
const t0 int64 = 1_700_000_000_000

// now is when the searches judge publication: after every fixture event.
const now = t0 + 100_000

const day int64 = 86_400_000

// fixture is a fresh database with the content tables, filled through the
// real projector.
type fixture struct {
	t      *testing.T
	ctx    context.Context
	pool   *pgxpool.Pool
	store  *rmcontent.Store
	pos    int64
	fields map[string]content.Field
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	t.Cleanup(cancel)
	pool := pgtest.Pool(t)
	if err := (projcontent.Projector{}).Create(ctx, pool, "public"); err != nil {
		t.Fatal(err)
	}
	return &fixture{t: t, ctx: ctx, pool: pool, store: rmcontent.NewStore(pool, pgtest.Generic(t, pool)), fields: map[string]content.Field{}}
}

// apply records evs at instant at (ms) and projects them.
func (f *fixture) apply(at int64, evs ...interface{ EventType() string }) {
	f.t.Helper()
	var recs []event.Recorded
	for _, ev := range evs {
		f.pos++
		recs = append(recs, event.Recorded{Position: event.Position{TxID: uint64(f.pos), Pos: f.pos},
			StreamID: "s", Type: ev.EventType(), Data: ev, RecordedAt: time.UnixMilli(at)})
	}
	if err := (projcontent.Projector{}).Apply(f.ctx, f.pool, "public", recs); err != nil {
		f.t.Fatal(err)
	}
}

// module creates a module with fields, remembering their definitions.
func (f *fixture) module(at int64, id, app string, fields ...content.Field) {
	f.t.Helper()
	for _, fd := range fields {
		f.fields[fd.Name] = fd
	}
	f.apply(at, content.ModuleCreated{ModuleID: id, App: app, Name: id, Fields: fields, By: "Ann"})
}

// item creates an item (published at pub unless pub is 0).
func (f *fixture) item(at int64, id, app, module, name string, vals map[string]any, pub int64, tags ...content.Tag) {
	f.t.Helper()
	ev := content.ItemCreated{ItemID: id, App: app, Module: module, Name: name, Values: vals, Tags: tags, By: "Ann"}
	if ev.Values == nil {
		ev.Values = map[string]any{}
	}
	if pub != 0 {
		ev.PublishedAt = time.UnixMilli(pub)
	}
	f.apply(at, ev)
}

func field(name, typ string) content.Field {
	return content.Field{ID: "f-" + name, Name: name, Type: "0000000000000000000000" + typ}
}

func num(s string) json.Number { return json.Number(s) }

// catalog is the shared search fixture. In module m1 (app a1), created in
// this order:
//
//	i1 Alpha   title "Hello World"  price 10     date t0+1000  active true   cats [a b]  author i2  related [i2 i3]  published
//	i2 beta    title "hello there"  price 2^53+1 date t0+2000  active false  cats [b]                   related []      published
//	i3 Gamma   title "100% pure_"   price 2^53                               cats []     author i1                  published
//	i4 delta   (no title)           price -5.5   date t0+3000  active true                                              concept
//	i5 Epsilon title "scheduled"    price 20                                                                            published t0+1 day
//	i6 Zeta    title "zz expired"                                                                                       expired at t0+500
//	i7 Eta     title "archived"                                                                                         archived at t0+200
//	i8 Theta   title "deleted"                                                                                          deleted
//
// j1 in m2 (app a1) and k1 in m3 (app a2) are published and titled
// "Hello World".
func catalog(t *testing.T) *fixture {
	f := newFixture(t)
	f.module(t0-10_000, "m1", "a1",
		field("title", "01"), field("price", "02"), field("date", "06"), field("active", "08"),
		content.Field{ID: "f-cats", Name: "cats", Type: "000000000000000000000017", Rules: content.FieldRules{Values: []string{"a", "b", "c"}}},
		field("author", "11"), field("related", "10"), field("label", "15"), field("meta", "13"))
	f.module(t0-10_000, "m2", "a1", field("title", "01"))
	f.module(t0-10_000, "m3", "a2", field("title", "01"))
	at := t0 - 9000
	next := func() int64 { at += 100; return at }
	android := content.Tag{ID: "t1", Name: "Platform", Value: "android", TagType: "x"}
	f.item(next(), "i1", "a1", "m1", "Alpha", map[string]any{"title": "Hello World", "price": num("10"), "date": num("1700000001000"),
		"active": true, "cats": []any{"a", "b"}, "author": "i2", "related": []any{"i2", "i3"},
		"label": map[string]any{"en-US": "Colour", "es-ES": "Color"}, "meta": map[string]any{"k": "secret value"}}, t0, android)
	f.item(next(), "i2", "a1", "m1", "beta", map[string]any{"title": "hello there", "price": num("9007199254740993"),
		"date": num("1700000002000"), "active": false, "cats": []any{"b"}, "related": []any{},
		"label": map[string]any{"en-US": "Size"}}, t0, content.Tag{Name: "Platform", Value: "ios"})
	f.item(next(), "i3", "a1", "m1", "Gamma", map[string]any{"title": "100% pure_", "price": num("9007199254740992"),
		"cats": []any{}, "author": "i1"}, t0,
		content.Tag{Name: "Platform", Value: "android"}, content.Tag{ID: "t9", Name: "Lang", Value: "es"})
	f.item(next(), "i4", "a1", "m1", "delta", map[string]any{"price": num("-5.5"), "date": num("1700000003000"), "active": true}, 0)
	f.item(next(), "i5", "a1", "m1", "Epsilon", map[string]any{"title": "scheduled", "price": num("20")}, t0+day)
	f.item(next(), "i6", "a1", "m1", "Zeta", map[string]any{"title": "zz expired"}, t0-5000)
	f.apply(next(), content.ItemExpirySet{ItemID: "i6", App: "a1", Module: "m1", RemovedAt: time.UnixMilli(t0 + 500)})
	f.item(next(), "i7", "a1", "m1", "Eta", map[string]any{"title": "archived"}, t0-5000)
	f.apply(next(), content.ItemArchived{ItemID: "i7", App: "a1", Module: "m1", ArchivedAt: time.UnixMilli(t0 + 200)})
	f.item(next(), "i8", "a1", "m1", "Theta", map[string]any{"title": "deleted"}, t0)
	f.apply(next(), content.ItemDeleted{ItemID: "i8", App: "a1", Module: "m1", By: "Bob"})
	f.item(next(), "j1", "a1", "m2", "Other", map[string]any{"title": "Hello World"}, t0)
	f.item(next(), "k1", "a2", "m3", "Foreign", map[string]any{"title": "Hello World"}, t0)
	return f
}

// q is a search of module m1 by an admin.
func (f *fixture) q() rmcontent.Query {
	return rmcontent.Query{AllApps: true, ModuleIDs: []string{"m1"}, Fields: f.fields, Now: now}
}

func (f *fixture) search(q rmcontent.Query) rmcontent.Result {
	f.t.Helper()
	res, err := f.store.Search(f.ctx, q)
	if err != nil {
		f.t.Fatalf("search: %v", err)
	}
	return res
}

func ids(items []rmcontent.Item) []string {
	out := []string{}
	for _, it := range items {
		out = append(out, it.ID)
	}
	return out
}

func op(o, prop string, v any) *rmcontent.Expr {
	return &rmcontent.Expr{Op: o, Property: prop, Value: v}
}
func and(es ...*rmcontent.Expr) *rmcontent.Expr           { return &rmcontent.Expr{Cond: "and", Operands: es} }
func or(es ...*rmcontent.Expr) *rmcontent.Expr            { return &rmcontent.Expr{Cond: "or", Operands: es} }
func typed(e *rmcontent.Expr, typ string) *rmcontent.Expr { e.Type = typ; return e }

type searchCase struct {
	name string
	expr *rmcontent.Expr
	want []string
}

func runValues(t *testing.T, f *fixture, cases []searchCase) {
	t.Helper()
	for _, c := range cases {
		q := f.q()
		q.SearchValues = c.expr
		if got := ids(f.search(q).Items); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func runMeta(t *testing.T, f *fixture, cases []searchCase) {
	t.Helper()
	for _, c := range cases {
		q := f.q()
		q.MetaSearch = c.expr
		if got := ids(f.search(q).Items); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

// wantInvalid checks that q fails with a 400 whose message mentions each
// of words.
func wantInvalid(t *testing.T, f *fixture, name string, q rmcontent.Query, words ...string) {
	t.Helper()
	_, err := f.store.Search(f.ctx, q)
	if !fault.Is(err, fault.Invalid) {
		t.Errorf("%s: got %v, want an Invalid fault", name, err)
		return
	}
	for _, w := range words {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("%s: %q does not mention %q", name, err.Error(), w)
		}
	}
}

// A like ignores case beyond ASCII too, as ILIKE does: its candidates
// come through the lower-cased tx, checked against the field as written.
func TestLikeIgnoresCaseBeyondASCII(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.module(t0-10_000, "m1", "a1", field("title", "01"), field("brand", "01"))
	f.item(t0-9000, "u1", "a1", "m1", "one", map[string]any{"title": "ÉCOLE ÜBER ALLES", "brand": "ΣΟΦΙΑ"}, t0-5000)
	f.item(t0-8000, "u2", "a1", "m1", "two", map[string]any{"title": "petite école", "brand": "σοφία"}, t0-5000)
	f.item(t0-7000, "u3", "a1", "m1", "three", map[string]any{"title": "ecole sans accent", "brand": "sofia"}, t0-5000)
	runValues(t, f, []searchCase{
		{"upper-case pattern", op("like", "title", "ÉCOLE"), []string{"u1", "u2"}},
		{"lower-case pattern", op("like", "title", "über"), []string{"u1"}},
		{"mixed case, Greek", op("like", "brand", "σΟφ"), []string{"u1", "u2"}},
		{"with an equality", and(op("like", "title", "École"), op("=", "brand", "σοφία")), []string{"u2"}},
		{"no accent is another letter", op("like", "title", "ecole"), []string{"u3"}},
	})
	q := f.q()
	q.SearchValues = op("like", "title", "über")
	if res := f.search(q); len(res.Items) != 1 || !strings.Contains(string(res.Items[0].RawValues), "ÉCOLE ÜBER ALLES") &&
		res.Items[0].Values["title"] != "ÉCOLE ÜBER ALLES" {
		t.Errorf("the found item's title is not as written: %+v", res.Items)
	}
}

func TestSearchOperators(t *testing.T) {
	t.Parallel()
	f := catalog(t)
	all := []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7"}
	runValues(t, f, []searchCase{
		// text
		{"text =", op("=", "title", "Hello World"), []string{"i1"}},
		{"text = is case-sensitive", op("=", "title", "hello world"), []string{}},
		{"values. prefix", op("=", "values.title", "Hello World"), []string{"i1"}},
		{"text !=", op("!=", "title", "Hello World"), []string{"i2", "i3", "i4", "i5", "i6", "i7"}},
		{"text >", op(">", "title", "r"), []string{"i5", "i6"}},
		{"text <", op("<", "title", "2"), []string{"i3"}},
		{"text in", op("in", "title", []any{"Hello World", "scheduled"}), []string{"i1", "i5"}},
		{"text in with null", op("in", "title", []any{"scheduled", nil}), []string{"i4", "i5"}},
		{"text !in", op("!in", "title", []any{"Hello World", "scheduled"}), []string{"i2", "i3", "i4", "i6", "i7"}},
		{"text in empty", op("in", "title", []any{}), []string{}},
		{"text !in empty", op("!in", "title", []any{}), all},
		{"text = null", typed(op("=", "title", nil), "null"), []string{"i4"}},
		{"text != null", op("!=", "title", nil), []string{"i1", "i2", "i3", "i5", "i6", "i7"}},
		{"like is case-insensitive", op("like", "title", "WORLD"), []string{"i1"}},
		{"like substring", op("like", "title", "ell"), []string{"i1", "i2"}},
		{"like escapes %", op("like", "title", "0% p"), []string{"i3"}},
		{"like % is literal", op("like", "title", "o%d"), []string{}},
		{"like _ is literal", op("like", "title", "l_o"), []string{}},
		{"like trailing _", op("like", "title", "re_"), []string{"i3"}},

		// number, with exact long integers
		{"number = long", op("=", "price", num("9007199254740993")), []string{"i2"}},
		{"number = long other", op("=", "price", num("9007199254740992")), []string{"i3"}},
		{"number = float64", op("=", "price", float64(10)), []string{"i1"}},
		{"number = numeric string", op("=", "price", "10"), []string{"i1"}},
		{"number = decimal", op("=", "price", num("-5.50")), []string{"i4"}},
		{"number >", op(">", "price", num("10")), []string{"i2", "i3", "i5"}},
		{"number >=", op(">=", "price", num("10")), []string{"i1", "i2", "i3", "i5"}},
		{"number > long", op(">", "price", num("9007199254740992")), []string{"i2"}},
		{"number <", op("<", "price", 0.0), []string{"i4"}},
		{"number <=", op("<=", "price", num("-5.5")), []string{"i4"}},
		{"number in", op("in", "price", []any{num("10"), float64(20)}), []string{"i1", "i5"}},
		{"number !in", op("!in", "price", []any{num("10"), num("20")}), []string{"i2", "i3", "i4", "i6", "i7"}},
		{"number != ", op("!=", "price", num("10")), []string{"i2", "i3", "i4", "i5", "i6", "i7"}},
		{"number = null", op("=", "price", nil), []string{"i6", "i7"}},

		// date
		{"date >", typed(op(">", "date", num("1700000001500")), "date"), []string{"i2", "i4"}},
		{"date <=", typed(op("<=", "date", num("1700000002000")), "date"), []string{"i1", "i2"}},
		{"date =", typed(op("=", "date", float64(1700000003000)), "date"), []string{"i4"}},
		{"date = null", typed(op("=", "date", nil), "null"), []string{"i3", "i5", "i6", "i7"}},

		// boolean
		{"bool = true", op("=", "active", true), []string{"i1", "i4"}},
		{"bool = false", op("=", "active", false), []string{"i2"}},
		{"bool = 'true'", op("=", "active", "true"), []string{"i1", "i4"}},
		{"bool != true", op("!=", "active", true), []string{"i2", "i3", "i5", "i6", "i7"}},
		{"bool = null", op("=", "active", nil), []string{"i3", "i5", "i6", "i7"}},

		// multi-valued: matches when one element does
		{"multi =", op("=", "cats", "b"), []string{"i1", "i2"}},
		{"multi !=", op("!=", "cats", "b"), []string{"i3", "i4", "i5", "i6", "i7"}},
		{"multi in", op("in", "cats", []any{"a", "c"}), []string{"i1"}},
		{"multi = null", op("=", "cats", nil), []string{"i3", "i4", "i5", "i6", "i7"}},

		// object: only null tests and like
		{"object like", op("like", "meta", "SECRET"), []string{"i1"}},
		{"object = null", op("=", "meta", nil), []string{"i2", "i3", "i4", "i5", "i6", "i7"}},
		{"object != null", op("!=", "meta", nil), []string{"i1"}},

		// unknown field (not in Fields): typed by the value; no key rows
		{"unknown field", op("=", "nosuch", "x"), []string{}},
		{"unknown field !=", op("!=", "nosuch", num("1")), all},

		// nesting
		{"and/or", and(op(">=", "price", num("10")), or(op("=", "active", true), op("like", "title", "there"))), []string{"i1", "i2"}},
		{"or/and", or(and(op("=", "active", true), op("<", "price", 0)), op("=", "title", "scheduled")), []string{"i4", "i5"}},
		{"single operand", and(op("=", "title", "scheduled")), []string{"i5"}},
		// an AND of key conditions is one INTERSECT of id sets; a range on
		// a single-valued field reads one key row (one set), while the
		// conditions on a multi-valued field may hold for different values
		{"range on one field", and(op(">", "price", num("-6")), op("<", "price", num("15"))), []string{"i1", "i4"}},
		{"range and text", and(op(">=", "price", num("0")), op("like", "title", "world"), op("<=", "price", num("10"))), []string{"i1"}},
		{"two values of a multi-valued field", and(op("=", "cats", "a"), op("=", "cats", "b")), []string{"i1"}},
		{"multi-valued, both bounds", and(op(">", "cats", "a"), op("<", "cats", "b")), []string{"i1"}}, // b > a, a < b: two values
	})
}

func TestSearchLocalized(t *testing.T) {
	t.Parallel()
	f := catalog(t)
	for _, c := range []struct {
		locale string
		expr   *rmcontent.Expr
		want   []string
	}{
		{"es-ES", op("=", "label", "Color"), []string{"i1"}},
		{"en-US", op("=", "label", "Color"), []string{}},
		{"", op("=", "label", "Color"), []string{"i1"}}, // any locale
		{"en-US", op("like", "label", "siz"), []string{"i2"}},
		{"es-ES", op("=", "label", nil), []string{"i2", "i3", "i4", "i5", "i6", "i7"}},
	} {
		q := f.q()
		q.Locale, q.SearchValues = c.locale, c.expr
		if got := ids(f.search(q).Items); !slices.Equal(got, c.want) {
			t.Errorf("locale %q %s %v: got %v, want %v", c.locale, c.expr.Op, c.expr.Value, got, c.want)
		}
	}

	// Values come back resolved to the locale.
	q := f.q()
	q.Locale = "es-ES"
	q.InstanceIDs = []string{"i1", "i2"}
	items := f.search(q).Items
	if len(items) != 2 || items[0].Values["label"] != "Color" || items[1].Values["label"] != nil {
		t.Errorf("es-ES labels: %v, %v", items[0].Values["label"], items[1].Values["label"])
	}
	if _, ok := items[1].Values["label"]; !ok {
		t.Error("a missing translation must stay as a null value")
	}
	if items[0].Values["title"] != "Hello World" {
		t.Errorf("non-localized values must stay: %v", items[0].Values["title"])
	}
	// Without a locale the object stays.
	q.Locale = ""
	if m, ok := f.search(q).Items[0].Values["label"].(map[string]any); !ok || m["en-US"] != "Colour" {
		t.Errorf("without locale: %v", f.search(q).Items[0].Values["label"])
	}
}

// TestSearchLocalizedByOwnModule: a search of several modules, or of
// items by id, resolves each item's localized values with the fields of
// the item's own module, whatever Query.Fields (one definition per name)
// says.
func TestSearchLocalizedByOwnModule(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.module(t0, "mA", "a1", field("title", "01"), field("label", "15"), field("info", "15"))
	titleB := field("title", "01")
	titleB.Localized = true
	f.module(t0, "mB", "a1", titleB, field("info", "13"), field("note", "15"))
	loc := func(en, es string) map[string]any { return map[string]any{"en-US": en, "es-ES": es} }
	f.item(t0+1, "a", "a1", "mA", "A", map[string]any{"title": "plain", "label": loc("Colour", "Color"), "info": loc("Two", "Dos")}, t0)
	f.item(t0+2, "b", "a1", "mB", "B", map[string]any{"title": loc("City", "Ciudad"), "info": map[string]any{"es-ES": "x", "n": num("1")},
		"note": loc("Note", "Nota")}, t0)
	fieldsA := map[string]content.Field{"title": field("title", "01"), "label": field("label", "15"), "info": field("info", "15")}
	for _, c := range []struct {
		name string
		q    rmcontent.Query
	}{
		{"by ids", rmcontent.Query{InstanceIDs: []string{"a", "b"}}},
		{"both modules", rmcontent.Query{ModuleIDs: []string{"mA", "mB"}}},
		{"both modules, counted", rmcontent.Query{ModuleIDs: []string{"mA", "mB"}, Count: true, Limit: 10}},
		{"every module, counted", rmcontent.Query{Count: true, Limit: 10}},
	} {
		q := c.q
		q.AllApps, q.Now, q.Locale, q.Fields = true, now, "es-ES", fieldsA
		items := f.search(q).Items
		if got := ids(items); !slices.Equal(got, []string{"a", "b"}) {
			t.Errorf("%s: got %v", c.name, got)
			continue
		}
		a, b := items[0].Values, items[1].Values
		if a["title"] != "plain" || a["label"] != "Color" || a["info"] != "Dos" {
			t.Errorf("%s: a = %v", c.name, a)
		}
		if info, ok := b["info"].(map[string]any); b["title"] != "Ciudad" || b["note"] != "Nota" || !ok || info["es-ES"] != "x" {
			t.Errorf("%s: b = %v", c.name, b)
		}
	}
}

func TestSearchMeta(t *testing.T) {
	t.Parallel()
	f := catalog(t)
	runMeta(t, f, []searchCase{
		{"name =", op("=", "name", "Alpha"), []string{"i1"}},
		{"name = is case-sensitive", op("=", "name", "alpha"), []string{}},
		{"name like", op("like", "name", "ALP"), []string{"i1"}},
		{"name in", op("in", "name", []any{"beta", "Gamma"}), []string{"i2", "i3"}},
		{"name !=", op("!=", "name", "Alpha"), []string{"i2", "i3", "i4", "i5", "i6", "i7"}},
		{"publishedAt = null", typed(op("=", "publishedAt", nil), "null"), []string{"i4"}},
		{"publishedAt >", typed(op(">", "publishedAt", num("1700000000000")), "date"), []string{"i5"}},
		{"publishedAt <= float", typed(op("<=", "publishedAt", float64(t0)+0.5), "date"), []string{"i1", "i2", "i3", "i6", "i7"}},
		{"publishedAt < fraction", typed(op("<", "publishedAt", float64(t0)+0.5), "date"), []string{"i1", "i2", "i3", "i6", "i7"}},
		{"publishedAt = fraction", typed(op("=", "publishedAt", float64(t0)+0.5), "date"), []string{}},
		{"publishedAt string", typed(op("=", "publishedAt", "1700000000000"), "date"), []string{"i1", "i2", "i3"}},
		{"removedAt <= now", typed(op("<=", "removedAt", num("1700000100000")), "date"), []string{"i6"}},
		{"removedAt != x", typed(op("!=", "removedAt", num("1700000000500")), "date"), []string{"i1", "i2", "i3", "i4", "i5", "i7"}},
		{"archivedAt != null", op("!=", "archivedAt", nil), []string{"i7"}},
		{"publishedAt in", op("in", "publishedAt", []any{num("1700000000000"), nil}), []string{"i1", "i2", "i3", "i4"}},
		{"publishedAt !in", op("!in", "publishedAt", []any{num("1700000000000")}), []string{"i4", "i5", "i6", "i7"}},
		{"createdBy", op("=", "createdBy", "Ann"), []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7"}},
		{"id in", op("in", "id", []any{"i3", "i1", "nope"}), []string{"i1", "i3"}},
		{"externalId = null", op("=", "externalId", nil), []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7"}},
		{"the state filter of the SDKs", and(
			typed(op("<=", "publishedAt", num("1700000100000")), "date"),
			typed(op("=", "deletedAt", nil), "null"),
			or(typed(op(">", "removedAt", num("1700000100000")), "date"), typed(op("=", "removedAt", nil), "null")),
		), []string{"i1", "i2", "i3", "i7"}},
		// naming deletedAt lifts the implicit "not deleted"
		{"deletedAt != null", op("!=", "deletedAt", nil), []string{"i8"}},
		{"deletedBy", op("=", "deletedBy", "Bob"), []string{}},
		{"deletedBy with deletedAt", and(op("=", "deletedBy", "Bob"), op(">", "deletedAt", 0)), []string{"i8"}},
	})
}

func TestSearchInvalid(t *testing.T) {
	t.Parallel()
	f := catalog(t)
	sv := func(e *rmcontent.Expr) rmcontent.Query { q := f.q(); q.SearchValues = e; return q }
	ms := func(e *rmcontent.Expr) rmcontent.Query { q := f.q(); q.MetaSearch = e; return q }
	deep := op("=", "title", "x")
	for range 40 {
		deep = and(deep)
	}
	wide := make([]*rmcontent.Expr, 600)
	for i := range wide {
		wide[i] = op("=", "name", "x")
	}
	wantInvalid(t, f, "text against a number field", sv(op("=", "price", "abc")), "price")
	wantInvalid(t, f, "bool against a number field", sv(op(">", "price", true)), "price")
	wantInvalid(t, f, "a number too long", sv(op("=", "price", num(strings.Repeat("9", 2000)))), "price")
	wantInvalid(t, f, "NaN-like number", sv(op("=", "price", num("NaN"))), "price")
	wantInvalid(t, f, "in with a text against a number field", sv(op("in", "price", []any{"1", "x"})), "price")
	wantInvalid(t, f, "unknown operator", sv(op("~", "title", "x")), "~")
	wantInvalid(t, f, "unknown meta operator", ms(op("contains", "name", "x")), "contains")
	wantInvalid(t, f, "unknown meta property", ms(op("=", "colour", "x")), "colour")
	wantInvalid(t, f, "values field in metaSearch", ms(op("=", "title", "x")), "title")
	wantInvalid(t, f, "short like", sv(op("like", "title", "ab")), "3")
	wantInvalid(t, f, "short meta like", ms(op("like", "name", "al")), "3")
	wantInvalid(t, f, "like with a number", sv(op("like", "title", num("123"))))
	wantInvalid(t, f, "like on a number field", sv(op("like", "price", "123")))
	wantInvalid(t, f, "in without an array", sv(op("in", "title", "x")))
	wantInvalid(t, f, "= with an array", sv(op("=", "title", []any{"x"})))
	wantInvalid(t, f, "> null", sv(op(">", "price", nil)))
	wantInvalid(t, f, "date not a number", ms(op(">", "createdAt", "yesterday")), "createdAt")
	wantInvalid(t, f, "like on a date", ms(op("like", "createdAt", "2020")))
	wantInvalid(t, f, "object comparison", sv(op(">", "meta", "x")), "meta")
	wantInvalid(t, f, "empty operands", sv(&rmcontent.Expr{Cond: "and"}))
	wantInvalid(t, f, "unknown condition", sv(&rmcontent.Expr{Cond: "xor", Operands: []*rmcontent.Expr{op("=", "title", "x")}}), "xor")
	wantInvalid(t, f, "empty node", sv(&rmcontent.Expr{}))
	wantInvalid(t, f, "nil operand", sv(and(nil)))
	wantInvalid(t, f, "too deep", sv(deep), "32")
	wantInvalid(t, f, "too many nodes", ms(or(wide...)), "500")
	wantInvalid(t, f, "no property", sv(op("=", "", "x")))
	q := f.q()
	q.Offset = -1
	wantInvalid(t, f, "negative offset", q)
	q = f.q()
	q.SegmentTags = []rmcontent.Tag{{Value: "x"}}
	wantInvalid(t, f, "tag without id or name", q)
	q = f.q()
	q.RelatedTo = []rmcontent.Relation{{IDs: []string{"*"}}}
	wantInvalid(t, f, "relation without field", q)

	// Still valid at the limits.
	ok := op("=", "title", "Hello World")
	for range 31 {
		ok = and(ok)
	}
	if got := ids(f.search(sv(ok)).Items); !slices.Equal(got, []string{"i1"}) {
		t.Errorf("32 levels: got %v", got)
	}
}

func TestSearchRelationsAndSegments(t *testing.T) {
	t.Parallel()
	f := catalog(t)
	for _, c := range []struct {
		name string
		rel  []rmcontent.Relation
		want []string
	}{
		{"single relation", []rmcontent.Relation{{Field: "author", IDs: []string{"i2"}}}, []string{"i1"}},
		{"single relation, any id", []rmcontent.Relation{{Field: "author", IDs: []string{"i2", "i1"}}}, []string{"i1", "i3"}},
		{"multiple relation", []rmcontent.Relation{{Field: "related", IDs: []string{"i3"}}}, []string{"i1"}},
		{"star", []rmcontent.Relation{{Field: "author", IDs: []string{"*"}}}, []string{"i1", "i3"}},
		{"star on an empty list", []rmcontent.Relation{{Field: "related", IDs: []string{"*"}}}, []string{"i1"}},
		{"values. prefix", []rmcontent.Relation{{Field: "values.author", IDs: []string{"i1"}}}, []string{"i3"}},
		{"and-ed", []rmcontent.Relation{{Field: "author", IDs: []string{"*"}}, {Field: "related", IDs: []string{"i2"}}}, []string{"i1"}},
		{"no ids", []rmcontent.Relation{{Field: "author"}}, []string{}},
		{"an id twice", []rmcontent.Relation{{Field: "author", IDs: []string{"i2", "i1", "i2"}}}, []string{"i1", "i3"}},
		{"an empty list", []rmcontent.Relation{{Field: "related", IDs: []string{}}}, []string{}},
	} {
		q := f.q()
		q.RelatedTo = c.rel
		if got := ids(f.search(q).Items); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}

	android := rmcontent.Tag{Name: "Platform", Value: "android"}
	for _, c := range []struct {
		name  string
		tags  []rmcontent.Tag
		total bool
		want  []string
	}{
		{"partial by name+value", []rmcontent.Tag{android}, false, []string{"i1", "i3"}},
		{"partial by id", []rmcontent.Tag{{ID: "t9"}}, false, []string{"i3"}},
		{"partial, one of two", []rmcontent.Tag{{Name: "Platform", Value: "ios"}, {ID: "t9"}}, false, []string{"i2", "i3"}},
		{"total, all of two", []rmcontent.Tag{android, {ID: "t9", Name: "Lang", Value: "es"}}, true, []string{"i3"}},
		{"total, one tag", []rmcontent.Tag{android}, true, []string{"i1", "i3"}},
		{"total by id or name", []rmcontent.Tag{{ID: "t1", Name: "nomatch"}}, true, []string{"i1"}},
		{"value matters", []rmcontent.Tag{{Name: "Platform", Value: "web"}}, false, []string{}},
	} {
		q := f.q()
		q.SegmentTags, q.SegmentTotal = c.tags, c.total
		if got := ids(f.search(q).Items); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSearchVisibility(t *testing.T) {
	t.Parallel()
	f := catalog(t)
	for _, c := range []struct {
		name string
		mod  func(*rmcontent.Query)
		want []string
	}{
		{"published at now", func(q *rmcontent.Query) { q.PublishedOnly = true }, []string{"i1", "i2", "i3"}},
		{"published a day later", func(q *rmcontent.Query) { q.PublishedOnly, q.Now = true, t0+day }, []string{"i1", "i2", "i3", "i5"}},
		{"published before expiry and archive", func(q *rmcontent.Query) { q.PublishedOnly, q.Now = true, t0+100 }, []string{"i1", "i2", "i3", "i6", "i7"}},
		{"published before t0", func(q *rmcontent.Query) { q.PublishedOnly, q.Now = true, t0-1 }, []string{"i6", "i7"}},
		{"deleted hidden", func(q *rmcontent.Query) {}, []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7"}},
		{"deleted included", func(q *rmcontent.Query) { q.IncludeDeleted = true }, []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7", "i8"}},
		{"deleted never published", func(q *rmcontent.Query) { q.IncludeDeleted, q.PublishedOnly = true, true }, []string{"i1", "i2", "i3"}},
		{"app a1, all modules", func(q *rmcontent.Query) {
			q.AllApps, q.Apps, q.ModuleIDs = false, []string{"a1"}, nil
			q.SearchValues = op("=", "title", "Hello World")
		}, []string{"i1", "j1"}},
		{"app a2, all modules", func(q *rmcontent.Query) {
			q.AllApps, q.Apps, q.ModuleIDs = false, []string{"a2"}, nil
			q.SearchValues = op("=", "title", "Hello World")
		}, []string{"k1"}},
		{"no apps", func(q *rmcontent.Query) { q.AllApps, q.Apps = false, nil }, []string{}},
		{"every app", func(q *rmcontent.Query) { q.ModuleIDs = nil; q.SearchValues = op("=", "title", "Hello World") }, []string{"i1", "j1", "k1"}},
		{"two modules", func(q *rmcontent.Query) { q.ModuleIDs = []string{"m2", "m3"} }, []string{"j1", "k1"}},
		{"rights on an app or a module", func(q *rmcontent.Query) {
			q.AllApps, q.Apps, q.VisibleModules, q.ModuleIDs = false, []string{"a2"}, []string{"m2"}, nil
		}, []string{"j1", "k1"}},
		{"rights on items", func(q *rmcontent.Query) {
			q.AllApps, q.VisibleItems, q.ModuleIDs = false, []string{"i2", "k1"}, nil
		}, []string{"i2", "k1"}},
		{"empty module list", func(q *rmcontent.Query) { q.ModuleIDs = []string{} }, []string{}},
		{"instances", func(q *rmcontent.Query) { q.InstanceIDs = []string{"i2", "i8", "j1"} }, []string{"i2"}},
		{"empty instance list", func(q *rmcontent.Query) { q.InstanceIDs = []string{} }, []string{}},
	} {
		q := f.q()
		c.mod(&q)
		if got := ids(f.search(q).Items); !slices.Equal(got, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}

func TestSearchSort(t *testing.T) {
	t.Parallel()
	f := catalog(t)
	for _, c := range []struct {
		sort string
		want []string
	}{
		{"", []string{"i1", "i2", "i3", "i4", "i5", "i6", "i7"}},
		{"createdAt desc", []string{"i7", "i6", "i5", "i4", "i3", "i2", "i1"}},
		{"name asc", []string{"i1", "i2", "i4", "i5", "i7", "i3", "i6"}}, // case-insensitive
		{"NAME DESC", []string{"i6", "i3", "i7", "i5", "i4", "i2", "i1"}},
		// missing values are the smallest (first ascending, last descending),
		// as in HALO; ties by id in the last key's direction
		{"publishedAt asc", []string{"i4", "i6", "i7", "i1", "i2", "i3", "i5"}},
		{"publishedAt desc", []string{"i5", "i3", "i2", "i1", "i7", "i6", "i4"}},
		{"publishedAt desc,name asc", []string{"i5", "i1", "i2", "i3", "i7", "i6", "i4"}},
		{"values.price asc", []string{"i6", "i7", "i4", "i1", "i5", "i3", "i2"}},
		{"values.price desc", []string{"i2", "i3", "i5", "i1", "i4", "i7", "i6"}},
		{"values.title asc", []string{"i4", "i3", "i7", "i2", "i1", "i5", "i6"}}, // lower(): "hello there" < "hello world"
		{"values.title desc", []string{"i6", "i5", "i1", "i2", "i7", "i3", "i4"}},
		{"values.date desc", []string{"i4", "i2", "i1", "i7", "i6", "i5", "i3"}},
		{"values.active desc,values.price asc", []string{"i4", "i1", "i2", "i6", "i7", "i5", "i3"}},
		{"values.author asc,createdAt desc", []string{"i7", "i6", "i5", "i4", "i2", "i3", "i1"}},
	} {
		keys, err := rmcontent.ParseSort(c.sort)
		if err != nil {
			t.Fatalf("%q: %v", c.sort, err)
		}
		// The same order through the general plan (no limit, or several
		// modules) and the key-walking one (limit, one module).
		for _, shape := range []struct {
			name  string
			limit int
			mods  []string
		}{{"general", 0, []string{"m1"}}, {"two modules", 100, []string{"m1", "m2"}}, {"key walk", 100, []string{"m1"}}} {
			q := f.q()
			q.Sort, q.Limit, q.ModuleIDs = keys, shape.limit, shape.mods
			if len(shape.mods) > 1 {
				q.MetaSearch = op("=", "module", "m1")
			}
			if got := ids(f.search(q).Items); !slices.Equal(got, c.want) {
				t.Errorf("sort %q (%s): got %v, want %v", c.sort, shape.name, got, c.want)
			}
		}
	}

	// A localized field sorts with a locale.
	q := f.q()
	q.Sort, q.Locale, q.Limit = []rmcontent.SortKey{{Field: "label"}}, "en-US", 3
	if got := ids(f.search(q).Items); !slices.Equal(got, []string{"i3", "i4", "i5"}) { // items without an en-US label first
		t.Errorf("label asc: got %v", got)
	}
	q.Sort = []rmcontent.SortKey{{Field: "label", Desc: true}}
	if got := ids(f.search(q).Items); !slices.Equal(got, []string{"i2", "i1", "i7"}) {
		t.Errorf("label desc: got %v", got)
	}

	for _, c := range []struct {
		name string
		keys []rmcontent.SortKey
	}{
		{"multi-valued", []rmcontent.SortKey{{Field: "cats"}}},
		{"multiple relation", []rmcontent.SortKey{{Field: "related"}}},
		{"object", []rmcontent.SortKey{{Field: "meta"}}},
		{"localized without locale", []rmcontent.SortKey{{Field: "label"}}},
		{"unknown field", []rmcontent.SortKey{{Field: "nosuch"}}},
		{"unknown attribute", []rmcontent.SortKey{{Attr: "colour"}}},
		{"both", []rmcontent.SortKey{{Attr: "name", Field: "title"}}},
		{"neither", []rmcontent.SortKey{{}}},
	} {
		q := f.q()
		q.Sort, q.Limit = c.keys, 10
		wantInvalid(t, f, "sort by "+c.name, q)
	}
}

func TestSearchPaging(t *testing.T) {
	t.Parallel()
	f := catalog(t)
	for _, sort := range []string{"", "values.price asc", "values.price desc", "name desc"} {
		keys, _ := rmcontent.ParseSort(sort)
		q := f.q()
		q.Sort = keys
		full := ids(f.search(q).Items)
		var paged []string
		for off := 0; off < 9; off += 3 {
			q.Offset, q.Limit, q.Count = off, 3, true
			res := f.search(q)
			if res.Total != 7 {
				t.Errorf("sort %q offset %d: total %d, want 7", sort, off, res.Total)
			}
			paged = append(paged, ids(res.Items)...)
		}
		if !slices.Equal(paged, full) {
			t.Errorf("sort %q: pages %v, whole %v", sort, paged, full)
		}
	}
	q := f.q()
	q.PublishedOnly, q.Count, q.Limit, q.Offset = true, true, 1, 1
	q.SearchValues = op("!=", "title", "nothing")
	res := f.search(q)
	if res.Total != 3 || !slices.Equal(ids(res.Items), []string{"i2"}) {
		t.Errorf("published page: total %d items %v", res.Total, ids(res.Items))
	}
	q.Offset = 5
	if res := f.search(q); res.Total != 3 || len(res.Items) != 0 {
		t.Errorf("past the end: total %d items %v", res.Total, ids(res.Items))
	}
	q.Count = false
	if res := f.search(q); res.Total != 0 {
		t.Errorf("total without Count: %d", res.Total)
	}
}

func TestSearchItemFields(t *testing.T) {
	t.Parallel()
	f := catalog(t)
	q := f.q()
	q.InstanceIDs = []string{"i2", "i8"}
	q.IncludeDeleted = true
	items := f.search(q).Items
	if len(items) != 2 {
		t.Fatalf("got %v", ids(items))
	}
	i2, i8 := items[0], items[1]
	if i2.Values["price"] != num("9007199254740993") {
		t.Errorf("long number value: %#v", i2.Values["price"])
	}
	if i2.Name != "beta" || i2.Module != "m1" || i2.App != "a1" || i2.PublishedAt == nil || *i2.PublishedAt != t0 ||
		len(i2.Tags) != 1 || i2.Tags[0].Value != "ios" {
		t.Errorf("i2: %+v", i2)
	}
	if i8.DeletedAt == nil || i8.DeletedBy == nil || *i8.DeletedBy != "Bob" {
		t.Errorf("i8: %+v", i8)
	}

	// Asked for raw, the values come back as stored, long numbers and
	// all, and are not decoded; with a locale they are decoded to be
	// resolved.
	q.RawValues = true
	raw := f.search(q).Items
	for i, it := range raw {
		var got map[string]any
		d := json.NewDecoder(bytes.NewReader(it.RawValues))
		d.UseNumber()
		if err := d.Decode(&got); err != nil || it.Values != nil || !reflect.DeepEqual(got, items[i].Values) {
			t.Errorf("%s raw: %s (%v), values %v; want %v", it.ID, it.RawValues, err, it.Values, items[i].Values)
		}
	}
	q.Locale = "es-ES"
	if it := f.search(q).Items[0]; it.RawValues != nil || it.Values == nil {
		t.Errorf("raw with a locale: raw %s, values %v", it.RawValues, it.Values)
	}
}

func TestParseSort(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		in   string
		want []rmcontent.SortKey
	}{
		{"", nil},
		{"createdAt asc,updatedAt desc", []rmcontent.SortKey{{Attr: "createdAt"}, {Attr: "updatedAt", Desc: true}}},
		{" name ", []rmcontent.SortKey{{Attr: "name"}}},
		{"publishedat DESC", []rmcontent.SortKey{{Attr: "publishedAt", Desc: true}}},
		{"values.price desc, name", []rmcontent.SortKey{{Field: "price", Desc: true}, {Attr: "name"}}},
		{"values.my field Asc", []rmcontent.SortKey{{Field: "my field"}}},
		{"values.my field", []rmcontent.SortKey{{Field: "my field"}}},
		{"createdBy desc,,", []rmcontent.SortKey{{Attr: "createdBy", Desc: true}}},
	} {
		got, err := rmcontent.ParseSort(c.in)
		if err != nil || !slices.Equal(got, c.want) {
			t.Errorf("ParseSort(%q) = %v, %v; want %v", c.in, got, err, c.want)
		}
	}
	for _, in := range []string{"colour asc", "name up", "values. asc", "name asc desc", "createdAt asc, price"} {
		if _, err := rmcontent.ParseSort(in); !fault.Is(err, fault.Invalid) {
			t.Errorf("ParseSort(%q): %v, want Invalid", in, err)
		}
	}
}

// TestSearchCount checks Total against the items themselves, for the
// shapes counted from content_keys alone (published-only equality on one
// field of one module) and the others.
func TestSearchCount(t *testing.T) {
	t.Parallel()
	f := catalog(t)
	for _, c := range []struct {
		name string
		mod  func(*rmcontent.Query)
	}{
		{"text", func(q *rmcontent.Query) { q.SearchValues = op("=", "title", "Hello World") }},
		{"number", func(q *rmcontent.Query) { q.SearchValues = op("=", "price", num("9007199254740993")) }},
		{"boolean", func(q *rmcontent.Query) { q.SearchValues = op("=", "active", true) }},
		{"relation", func(q *rmcontent.Query) { q.SearchValues = op("=", "author", "i1") }},
		{"before expiry", func(q *rmcontent.Query) { q.SearchValues, q.Now = op("=", "title", "zz expired"), t0+100 }},
		{"after expiry", func(q *rmcontent.Query) { q.SearchValues, q.Now = op("=", "title", "zz expired"), t0+500 }},
		{"scheduled", func(q *rmcontent.Query) { q.SearchValues = op("=", "title", "scheduled") }},
		{"deleted", func(q *rmcontent.Query) { q.SearchValues = op("=", "title", "deleted") }},
		{"app", func(q *rmcontent.Query) {
			q.AllApps, q.Apps, q.SearchValues = false, []string{"a1"}, op("=", "title", "Hello World")
		}},
		{"other app", func(q *rmcontent.Query) {
			q.AllApps, q.Apps, q.SearchValues = false, []string{"a2"}, op("=", "title", "Hello World")
		}},
		{"module right", func(q *rmcontent.Query) {
			q.AllApps, q.Apps, q.VisibleModules, q.SearchValues = false, []string{"a2"}, []string{"m1"}, op("=", "title", "Hello World")
		}},
		{"item right", func(q *rmcontent.Query) {
			q.AllApps, q.VisibleItems, q.SearchValues = false, []string{"i2"}, op("=", "active", false)
		}},
		{"item right and another app", func(q *rmcontent.Query) {
			q.AllApps, q.Apps, q.VisibleItems, q.SearchValues = false, []string{"a2"}, []string{"i2"}, op("=", "active", false)
		}},
		{"item right elsewhere", func(q *rmcontent.Query) {
			q.AllApps, q.VisibleItems, q.SearchValues = false, []string{"i1"}, op("=", "active", false)
		}},
		{"multi-valued", func(q *rmcontent.Query) { q.SearchValues = op("=", "cats", "b") }},
		{"not published-only", func(q *rmcontent.Query) { q.PublishedOnly, q.SearchValues = false, op("=", "active", true) }},
	} {
		q := f.q()
		q.PublishedOnly = true
		c.mod(&q)
		want := len(f.search(q).Items)
		q.Count, q.Limit = true, 1
		if res := f.search(q); res.Total != want {
			t.Errorf("%s: total %d, want %d", c.name, res.Total, want)
		}
	}
}

// A published-only count of "long text = X" counts the items that hold X,
// as the page finds them: long text has no key rows (it is searched from
// the items' values), and the count read content_keys alone (keyCount),
// so it was 0.
func TestSearchCountLongTextEquality(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.module(t0-10_000, "m1", "a1", field("title", "01"), field("body", "12"))
	f.item(t0-9000, "i1", "a1", "m1", "one", map[string]any{"title": "a", "body": "Hello"}, t0-5000)
	f.item(t0-8000, "i2", "a1", "m1", "two", map[string]any{"title": "b", "body": "Bye"}, t0-5000)
	q := f.q()
	q.PublishedOnly, q.Count, q.Limit = true, true, 10
	q.SearchValues = op("=", "body", "Hello")
	if res := f.search(q); !slices.Equal(ids(res.Items), []string{"i1"}) || res.Total != 1 {
		t.Errorf("body = Hello: %v, total %d; want [i1], total 1", ids(res.Items), res.Total)
	}
}

// in and !in with null in the list match, on a long text field as on the
// others, the items without a value; they were refused (a 400: "cannot
// compare with <nil>").
func TestSearchLongTextInWithNull(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.module(t0-10_000, "m1", "a1", field("title", "01"), field("body", "12"))
	f.item(t0-9000, "i1", "a1", "m1", "one", map[string]any{"body": "Hello"}, t0-5000)
	f.item(t0-8000, "i2", "a1", "m1", "two", map[string]any{"title": "no body"}, t0-5000)
	f.item(t0-7000, "i3", "a1", "m1", "three", map[string]any{"body": "Bye", "title": "x"}, t0-5000)
	runValues(t, f, []searchCase{
		{"in with null", op("in", "body", []any{"Hello", nil}), []string{"i1", "i2"}},
		{"in null alone", op("in", "body", []any{nil}), []string{"i2"}},
		{"!in with null", op("!in", "body", []any{"Hello", nil}), []string{"i3"}},
		{"as on a text field", op("in", "title", []any{"x", nil}), []string{"i1", "i3"}},
	})
}

// TestSearchTypedColumns checks the paths that read content_fields (the
// module's typed columns) against the general one: the page-with-total
// statement against a full sorted search cut into pages, and a search of
// two modules (where a field may have a column in one and not the other)
// against the union of each module's.
func TestSearchTypedColumns(t *testing.T) {
	t.Parallel()
	f := catalog(t)
	exprs := []*rmcontent.Expr{
		op("=", "title", "Hello World"),
		op("!=", "title", "Hello World"),
		op("in", "title", []any{"hello there", "100% pure_", "nothing"}),
		op("!in", "title", []any{"hello there", nil}),
		op("like", "title", "ell"),
		op("=", "active", true),
		op("=", "author", "i1"),
		op("=", "title", nil),
		op("!=", "price", nil),
		and(op(">=", "price", num("0")), op("like", "title", "hel")),
		or(op("=", "active", false), op("<", "date", num("1700000002500"))),
		and(op("=", "active", true), op(">", "price", num("-100"))),
	}
	sorts := []string{"values.price desc", "values.title asc", "values.active desc,values.price asc", "values.date asc"}
	for _, e := range exprs {
		for _, s := range sorts {
			keys, err := rmcontent.ParseSort(s)
			if err != nil {
				t.Fatal(err)
			}
			q := f.q()
			q.AllApps, q.Apps, q.PublishedOnly, q.SearchValues, q.Sort = false, []string{"a1"}, true, e, keys
			all := ids(f.search(q).Items)
			for off := 0; off <= len(all)+1; off += 2 {
				q.Offset, q.Limit, q.Count = off, 2, true
				res := f.search(q)
				want := all[min(off, len(all)):min(off+2, len(all))]
				if res.Total != len(all) || !slices.Equal(ids(res.Items), want) {
					t.Errorf("%+v sorted %q, offset %d: total %d items %v, want %d %v", *e, s, off, res.Total, ids(res.Items), len(all), want)
				}
			}
		}
		// Two modules: m1 keeps title in a column, m2 too but it holds
		// none of m1's other fields; the union of the single-module
		// searches.
		q := f.q()
		q.SearchValues, q.Sort = e, []rmcontent.SortKey{{Field: "title"}}
		var want []string
		for _, m := range []string{"m1", "m2"} {
			q.ModuleIDs = []string{m}
			want = append(want, ids(f.search(q).Items)...)
		}
		q.ModuleIDs = []string{"m1", "m2"}
		got := ids(f.search(q).Items)
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("%+v over m1 and m2: %v, want %v", *e, got, want)
		}
	}
	// A sort over two modules by a field in a column: j1 (m2) sorts
	// among m1's items by its title.
	q := f.q()
	q.ModuleIDs, q.Sort, q.SearchValues = []string{"m1", "m2"}, []rmcontent.SortKey{{Field: "title", Desc: true}}, op("like", "title", "hello")
	if got := ids(f.search(q).Items); !slices.Equal(got, []string{"j1", "i1", "i2"}) {
		t.Errorf("sort over two modules: %v", got)
	}
}

// The store keeps decoded modules by row version: every change to a
// module is read back, by Module and by Modules alike.
func TestModuleReadsFollowChanges(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.module(t0, "m1", "a1", field("title", "01"))
	read := func() (rmcontent.Module, rmcontent.Module) {
		t.Helper()
		one, err := f.store.Module(f.ctx, "m1")
		if err != nil {
			t.Fatal(err)
		}
		list, err := f.store.Modules(f.ctx, rmcontent.ModuleQuery{AllApps: true, IDs: []string{"m1"}})
		if err != nil || len(list) != 1 {
			t.Fatalf("modules %v, %v", list, err)
		}
		return one, list[0]
	}
	names := func(m rmcontent.Module) string {
		var out []string
		for _, fd := range m.Fields {
			out = append(out, fd.Name+":"+m.Slots[fd.Name])
		}
		return m.Name + " " + strings.Join(out, ",")
	}
	for i, step := range []struct {
		ev   interface{ EventType() string }
		want string
	}{
		{nil, "m1 title:t1"},
		{content.ModuleFieldsChanged{ModuleID: "m1", App: "a1", Fields: []content.Field{field("price", "02"), field("title", "01"), field("name", "01")}},
			"m1 price:n1,title:t1,name:t2"},
		{content.ModuleRenamed{ModuleID: "m1", App: "a1", Name: "Products"}, "Products price:n1,title:t1,name:t2"},
		{content.ModuleFieldsChanged{ModuleID: "m1", App: "a1", Fields: []content.Field{field("name", "01")}}, "Products name:t1"},
	} {
		if step.ev != nil {
			f.apply(t0+int64(i), step.ev)
		}
		for n := range 2 { // the second read comes from the decoded versions
			one, listed := read()
			if names(one) != step.want || names(listed) != step.want {
				t.Errorf("step %d, read %d: Module %q, Modules %q, want %q", i, n, names(one), names(listed), step.want)
			}
		}
	}
}

// Text equality on a column is answered through equality tokens for values
// of at most projections/content.EqTokenMax characters and through the
// column for longer ones: both find the same items, alone or mixed in one
// list, negated or not.
func TestSearchEqualityOnLongTexts(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.module(t0, "m1", "a1", field("title", "01"), field("author", "11"))
	short := strings.Repeat("é", projcontent.EqTokenMax)
	long := strings.Repeat("é", projcontent.EqTokenMax) + "x"
	longer := "A title far longer than any label"
	f.item(t0+1, "i1", "a1", "m1", "one", map[string]any{"title": short, "author": "i2"}, t0)
	f.item(t0+2, "i2", "a1", "m1", "two", map[string]any{"title": long, "author": "i9876543210abcdef0123456"}, t0)
	f.item(t0+3, "i3", "a1", "m1", "three", map[string]any{"title": longer}, t0)
	f.item(t0+4, "i4", "a1", "m1", "four", map[string]any{}, t0)
	runValues(t, f, []searchCase{
		{"= short", op("=", "title", short), []string{"i1"}},
		{"= long", op("=", "title", long), []string{"i2"}},
		{"= longer, other case", op("=", "title", strings.ToUpper(longer)), []string{}},
		{"!= long", op("!=", "title", long), []string{"i1", "i3", "i4"}},
		{"in short and long", op("in", "title", []any{short, longer, "none"}), []string{"i1", "i3"}},
		{"in long only", op("in", "title", []any{long}), []string{"i2"}},
		{"!in long and short", op("!in", "title", []any{long, short}), []string{"i3", "i4"}},
		{"like and = long", and(op("like", "title", "far"), op("=", "title", longer)), []string{"i3"}},
		{"= relation id", op("=", "author", "i9876543210abcdef0123456"), []string{"i2"}},
	})
	q := f.q()
	q.RelatedTo = []rmcontent.Relation{{Field: "author", IDs: []string{"i2", "i9876543210abcdef0123456"}}}
	if got := ids(f.search(q).Items); !slices.Equal(got, []string{"i1", "i2"}) {
		t.Errorf("relatedTo a short and a long id: %v", got)
	}
}

// KnownModule is a module as this store last read it: a change shows once
// the module is read again, and a module found deleted is known no more.
func TestKnownModule(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	f.module(t0, "m1", "a1", field("title", "01"))
	if _, ok := f.store.KnownModule("m1"); ok {
		t.Fatal("m1 is known before it was read")
	}
	read := func() []rmcontent.Module {
		t.Helper()
		mods, err := f.store.Modules(f.ctx, rmcontent.ModuleQuery{AllApps: true, IDs: []string{"m1"}})
		if err != nil {
			t.Fatal(err)
		}
		return mods
	}
	read()
	if m, ok := f.store.KnownModule("m1"); !ok || m.Revision != 1 || len(m.Fields) != 1 || m.Slots["title"] == "" {
		t.Fatalf("after a read: %+v, %v", m, ok)
	}
	f.apply(t0+1, content.ModuleFieldsChanged{ModuleID: "m1", App: "a1", Fields: []content.Field{field("title", "01"), field("price", "02")}})
	if m, _ := f.store.KnownModule("m1"); m.Revision != 1 || len(m.Fields) != 1 {
		t.Errorf("before it is read again: %+v, want the module as read (revision 1)", m)
	}
	read()
	if m, ok := f.store.KnownModule("m1"); !ok || m.Revision != 2 || len(m.Fields) != 2 || m.Slots["price"] == "" {
		t.Errorf("read again after a change: %+v, %v", m, ok)
	}
	f.apply(t0+2, content.ModuleDeleted{ModuleID: "m1", App: "a1", By: "Ann"})
	if mods := read(); len(mods) != 0 {
		t.Fatalf("deleted module listed: %+v", mods)
	}
	if m, ok := f.store.KnownModule("m1"); ok {
		t.Errorf("a module found deleted is still known: %+v", m)
	}
}

// Texts longer than the projection keeps in its indexes (KeyCut: at most
// MaxKeyText characters and MaxKeyBytes bytes) are searched whole, by
// every operator, whichever table keeps the field (a typed column: title
// in m1, body in m2; key rows: body in m1, title in m2, the localized
// headline, the list words) and whichever path compiles the search (the
// general one, the page with its total, the one-trip statement, several
// modules), in scripts of one, three and four bytes a character. i1 and
// i2 share a long start; i3 is what the projection keeps of them.
func TestSearchTextsPastTheCut(t *testing.T) {
	t.Parallel()
	for _, a := range []struct {
		name     string
		lo, hi   rune
		wordSize int
	}{
		{"one byte", 'a', 'z', 6},
		{"three bytes", 0x4E00, 0x9FFF, 3},  // CJK ideographs
		{"four bytes", 0x1F300, 0x1F5FF, 3}, // pictographs
	} {
		t.Run(a.name, func(t *testing.T) {
			// Past both bounds of the cut, and random, so that PostgreSQL
			// cannot compress it: 500 characters of three or four bytes each
			// were once cut by characters alone, and made index entries too
			// large to insert (the projection stopped).
			rng := rand.New(rand.NewPCG(uint64(a.lo), 7))
			var b strings.Builder
			b.WriteString("lorem ")
			for b.Len() <= 2*projcontent.MaxKeyBytes || utf8.RuneCountInString(b.String()) <= projcontent.MaxKeyText {
				for range a.wordSize {
					b.WriteRune(a.lo + rng.Int32N(a.hi-a.lo+1))
				}
				b.WriteByte(' ')
			}
			textsPastTheCut(t, b.String())
		})
	}
}

func textsPastTheCut(t *testing.T, shared string) {
	f := newFixture(t)
	var pads []content.Field
	for i := 2; i <= projcontent.TextSlots; i++ {
		pads = append(pads, field(fmt.Sprintf("pad%d", i), "01"))
	}
	rest := []content.Field{field("headline", "15"), field("words", "14")}
	f.module(t0-10_000, "m1", "a1", slices.Concat([]content.Field{field("title", "01")}, pads, []content.Field{field("body", "01")}, rest)...)
	f.module(t0-10_000, "m2", "a1", slices.Concat([]content.Field{field("body", "01")}, pads, []content.Field{field("title", "01")}, rest)...)
	long1, long2 := shared+"needle", shared+"thread"
	cut := projcontent.KeyCut(long1)
	if cut == long1 || cut != projcontent.KeyCut(long2) {
		t.Fatalf("the texts are not cut alike: %d and %d bytes kept of %d", len(cut), len(projcontent.KeyCut(long2)), len(long1))
	}
	words := strings.Fields(shared)
	first, last := "lor", words[len(words)-1]
	short := "a short text"
	at := t0 - 9000
	for _, m := range []struct{ module, prefix string }{{"m1", "i"}, {"m2", "j"}} {
		for n, v := range []string{long1, long2, cut, short, ""} {
			vals := map[string]any{}
			if v != "" {
				vals = map[string]any{"title": v, "body": v, "headline": map[string]any{"en-US": v}, "words": []any{v}}
			}
			at += 10
			f.item(at, fmt.Sprintf("%s%d", m.prefix, n+1), "a1", m.module, "item", vals, t0)
		}
	}
	m1, err := f.store.Module(f.ctx, "m1")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		op    string
		value any
		want  []int // items of each module, by number
	}{
		{"like", "needle", []int{1}},
		{"like", "NEEDLE", []int{1}},
		{"like", last + " thread", []int{2}},
		{"like", first, []int{1, 2, 3}},
		{"=", long1, []int{1}},
		{"=", cut, []int{3}},
		{"=", short, []int{4}},
		{"!=", long1, []int{2, 3, 4, 5}},
		{"!=", cut, []int{1, 2, 4, 5}},
		{"in", []any{long1, short}, []int{1, 4}},
		{"in", []any{cut}, []int{3}},
		{"in", []any{long2, cut, nil}, []int{2, 3, 5}},
		{"!in", []any{long1, cut}, []int{2, 4, 5}},
		{">", long1, []int{2}},
		{">=", long1, []int{1, 2}},
		{"<", long2, []int{1, 3, 4}},
		{"<=", cut, []int{3, 4}},
		{">", cut, []int{1, 2}},
		{"<", shared + "o", []int{1, 3, 4}},
	}
	named := func(prefix string, ns []int) []string {
		out := []string{}
		for _, n := range ns {
			out = append(out, fmt.Sprintf("%s%d", prefix, n))
		}
		return out
	}
	show := func(v any) string {
		s := fmt.Sprint(v)
		for _, x := range [][2]string{{"long1", long1}, {"long2", long2}, {"shared", shared}, {"cut", cut}} {
			s = strings.ReplaceAll(s, x[1], x[0])
		}
		return s
	}
	for _, prop := range []string{"title", "body", "headline", "words"} {
		for _, c := range cases {
			e := op(c.op, prop, c.value)
			name := fmt.Sprintf("%s %s %s", prop, c.op, show(c.value))
			want := named("i", c.want)

			q := f.q()
			q.SearchValues = e
			if got := ids(f.search(q).Items); !slices.Equal(got, want) {
				t.Errorf("%s: got %v, want %v", name, got, want)
			}
			if prop == "headline" {
				q.Locale = "en-US"
				if got := ids(f.search(q).Items); !slices.Equal(got, want) {
					t.Errorf("%s in en-US: got %v, want %v", name, got, want)
				}
				continue
			}

			// Published-only, paged and counted, sorted by a column (the
			// page with its total; a single equality is counted apart);
			// then with the module as read (one statement).
			q = f.q()
			q.AllApps, q.Apps, q.PublishedOnly, q.SearchValues = false, []string{"a1"}, true, e
			q.Count, q.Limit, q.Sort = true, 10, []rmcontent.SortKey{{Field: "pad2"}}
			for _, shape := range []string{"paged", "one statement"} {
				if shape == "one statement" {
					q.Slots, q.Revision = m1.Slots, m1.Revision
				}
				res := f.search(q)
				if got := ids(res.Items); !sameItems(got, want) || res.Total != len(want) {
					t.Errorf("%s, %s: got %v (total %d), want %v", name, shape, got, res.Total, want)
				}
			}

			// Two modules, which keep the field in different tables.
			q = f.q()
			q.ModuleIDs, q.SearchValues = []string{"m1", "m2"}, e
			want = append(want, named("j", c.want)...)
			if got := ids(f.search(q).Items); !sameItems(got, want) {
				t.Errorf("%s, m1 and m2: got %v, want %v", name, got, want)
			}
		}
	}
}

func sameItems(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	slices.Sort(a)
	slices.Sort(b)
	return slices.Equal(a, b)
}

// A search of several modules that define a field differently (price a
// number in m1, a text in m2, absent from m3; code a text in m1, a
// boolean in m2) judges each item by its own module's definition: it
// finds the union of the searches of each module alone, whether it names
// the modules or searches all of them. A sort by such a field is refused.
func TestSearchModulesDefiningAFieldDifferently(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	defs := map[string]map[string]content.Field{}
	module := func(id string, fields ...content.Field) {
		defs[id] = map[string]content.Field{}
		for _, fd := range fields {
			defs[id][fd.Name] = fd
		}
		f.apply(t0, content.ModuleCreated{ModuleID: id, App: "a1", Name: id, Fields: fields, By: "Ann"})
	}
	module("m1", field("price", "02"), field("code", "01"), field("title", "01"))
	module("m2", field("code", "08"), field("price", "01"), field("title", "01"))
	module("m3", field("title", "01"))
	f.item(t0+1, "i1", "a1", "m1", "one", map[string]any{"price": num("10"), "code": "true", "title": "Hello"}, t0)
	f.item(t0+2, "i2", "a1", "m1", "two", map[string]any{"price": num("30"), "code": "abc", "title": "World"}, t0)
	f.item(t0+3, "j1", "a1", "m2", "three", map[string]any{"price": "20", "code": true, "title": "Hello"}, t0)
	f.item(t0+4, "j2", "a1", "m2", "four", map[string]any{"price": "cheap", "code": false, "title": "World"}, t0)
	f.item(t0+5, "k1", "a1", "m3", "five", map[string]any{"title": "Hello"}, t0)
	all := map[string]content.Field{} // one definition per name, as a caller without ModuleFields has
	for _, m := range []string{"m3", "m2", "m1"} {
		for n, fd := range defs[m] {
			all[n] = fd
		}
	}
	exprs := []*rmcontent.Expr{
		op(">", "price", num("15")),
		op("=", "price", "cheap"),
		op("like", "price", "che"),
		op("=", "price", nil),
		op("!=", "price", nil),
		op("=", "code", true),
		op("=", "code", "abc"),
		or(op(">", "price", num("15")), op("=", "code", false)),
		and(op("like", "title", "hel"), op("!=", "price", "20")),
		op("like", "title", "wor"), // defined alike: compiled once
		op("=", "code", nil),       // absent from m3
	}
	for _, e := range exprs {
		var want []string
		for _, m := range []string{"m1", "m2", "m3"} {
			q := rmcontent.Query{AllApps: true, ModuleIDs: []string{m}, Fields: defs[m], Now: now, SearchValues: e}
			if res, err := f.store.Search(f.ctx, q); err == nil { // a value the module's type cannot take finds none there
				want = append(want, ids(res.Items)...)
			} else if !fault.Is(err, fault.Invalid) {
				t.Fatalf("%+v in %s: %v", *e, m, err)
			}
		}
		slices.Sort(want)
		for _, named := range []bool{true, false} {
			q := rmcontent.Query{AllApps: true, Fields: all, ModuleFields: defs, Now: now, SearchValues: e}
			if named {
				q.ModuleIDs = []string{"m1", "m2", "m3"}
			}
			got := ids(f.search(q).Items)
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Errorf("%+v over m1, m2 and m3 (named: %v): %v, want %v", *e, named, got, want)
			}
		}
	}
	q := rmcontent.Query{AllApps: true, ModuleIDs: []string{"m1", "m2"}, Fields: all, ModuleFields: defs, Now: now,
		Sort: []rmcontent.SortKey{{Field: "price"}}}
	wantInvalid(t, f, "sort by a field of two types", q, "price")
	q.Sort = []rmcontent.SortKey{{Field: "title", Desc: true}}
	if got := ids(f.search(q).Items); !slices.Equal(got, []string{"j2", "i2", "j1", "i1"}) {
		t.Errorf("sort by a field defined alike: %v", got)
	}
}
