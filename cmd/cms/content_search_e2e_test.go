package main

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/rights"
)

// Search (wire-reference §5.2, §5.3) and sync (§5.6), as the SDKs call
// them, against a small data set in every publication state.

// searchData is the data set of TestContentSearch.
type searchData struct {
	app, appB           appView
	appTok, appBTok     string
	news, authors, bNew moduleView
	ann, bob            instView
	// n1..n4 are published; n5 a concept, n6 scheduled, n7 archived, n8
	// deleted, n9 expired; b1 a published item of app B's News.
	n  [10]instView
	b1 instView
}

const bigValue = "9007199254740993" // 2^53+1: not a float64

func setUpSearch(t *testing.T, ts *testServer) *searchData {
	d := &searchData{app: ts.createApp("Search App"), appB: ts.createApp("Search App B")}
	d.appTok, d.appBTok = ts.appToken(d.app), ts.appToken(d.appB)
	d.authors = ts.createModule(ts.admin, moduleBody(d.app.ID, "Authors", fld("name", ftText)))
	d.news = ts.createModule(ts.admin, moduleBody(d.app.ID, "News",
		fld("title", ftText), fld("price", ftNumber), fld("date", ftDate), fld("active", ftBoolean), fld("big", ftNumber),
		fld("category", ftChoice, "rules", rules{"values": []string{"sports", "tech", "food"}}),
		fld("author", ftRelation, "rules", rules{"module": d.authors.ID}), fld("related", ftMultiRelation),
		fld("headline", ftLocalized)))
	d.bNew = ts.createModule(ts.admin, moduleBody(d.appB.ID, "News", fld("title", ftText)))
	past := nowMS() - 60_000
	pub := func(module, name string, values map[string]any, kv ...any) instView {
		time.Sleep(3 * time.Millisecond) // distinct createdAt
		return ts.createItem(ts.admin, itemBody(module, name, values, append([]any{"publishedAt", past}, kv...)...))
	}
	d.ann = pub(d.authors.ID, "Ann", map[string]any{"name": "Ann"})
	d.bob = pub(d.authors.ID, "Bob", map[string]any{"name": "Bob"})
	tag := func(v string) map[string]any {
		return map[string]any{"name": "Platform Name", "value": v, "tagType": "000000000000000000000001"}
	}
	d.n[1] = pub(d.news.ID, "Alpha road", map[string]any{"title": "Alpha road", "price": 10, "date": 1_000_000_000_000, "active": true,
		"big": json.Number(bigValue), "category": "sports", "author": d.ann.ID, "related": []string{d.ann.ID},
		"headline": map[string]any{"en-US": "Hello", "es-ES": "Hola"}}, "tags", []any{tag("android")})
	d.n[2] = pub(d.news.ID, "Beta trip", map[string]any{"title": "Beta trip", "price": 20, "date": 1_500_000_000_000, "active": false,
		"big": json.Number("9007199254740992"), "category": "tech", "author": d.bob.ID, "related": []string{d.ann.ID, d.bob.ID},
		"headline": map[string]any{"en-US": "Good", "es-ES": "Bueno"}}, "tags", []any{tag("android"), tag("ios")})
	d.n[3] = pub(d.news.ID, "Gamma road", map[string]any{"title": "Gamma road", "price": 30, "date": 1_600_000_000_000, "active": true,
		"big": 1, "category": "food"}, "tags", []any{tag("ios")})
	d.n[4] = pub(d.news.ID, "Delta", map[string]any{"title": "Delta", "price": 40, "date": 1_700_000_000_000, "active": false,
		"big": 2, "category": "tech"})
	d.n[5] = ts.createItem(ts.admin, itemBody(d.news.ID, "Epsilon concept", map[string]any{"title": "Epsilon", "price": 50}))
	d.n[6] = pub(d.news.ID, "Zeta scheduled", map[string]any{"title": "Zeta", "price": 60}, "publishedAt", nowMS()+time.Hour.Milliseconds())
	d.n[7] = pub(d.news.ID, "Eta archived", map[string]any{"title": "Eta", "price": 70}, "archivedAt", nowMS()-1000)
	d.n[8] = pub(d.news.ID, "Theta deleted", map[string]any{"title": "Theta", "price": 80})
	ts.mustNum(ts.do(request{method: "DELETE", path: instancePath + "/" + d.n[8].ID, token: ts.admin}), 200, &d.n[8])
	d.n[9] = pub(d.news.ID, "Iota expired", map[string]any{"title": "Iota", "price": 90}, "removedAt", nowMS()-1000)
	d.b1 = pub(d.bNew.ID, "B news", map[string]any{"title": "Alpha road"})
	return d
}

// ids of the data set's news items by number.
func (d *searchData) nids(ns ...int) []string {
	out := make([]string, len(ns))
	for i, n := range ns {
		out[i] = d.n[n].ID
	}
	return out
}

// label names the news items of ids, for messages.
func (d *searchData) label(ids []string) string {
	var out []string
	for _, id := range ids {
		name := id
		for n, it := range d.n {
			if it.ID == id && id != "" {
				name = "n" + string(rune('0'+n))
			}
		}
		if id == d.b1.ID {
			name = "b1"
		}
		out = append(out, name)
	}
	return "[" + strings.Join(out, " ") + "]"
}

func TestContentSearch(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	d := setUpSearch(t, ts)
	published := d.nids(1, 2, 3, 4)

	// expect runs a search as the app (skip true) and compares the ids,
	// in order when ordered is set.
	expect := func(t *testing.T, what string, body map[string]any, ordered bool, want ...int) {
		t.Helper()
		b := map[string]any{"moduleName": "News"}
		for k, v := range body {
			b[k] = v
		}
		got := ts.with(t).searchIDs(d.appTok, b)
		w := d.nids(want...)
		if ordered && !slices.Equal(got, w) || !ordered && !sameSet(got, w) {
			t.Errorf("%s: got %s, want %s", what, d.label(got), d.label(w))
		}
	}

	t.Run("Android bodies", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.post(searchPath, d.appTok, map[string]any{"moduleName": "News", "pagination": map[string]any{"page": 1, "limit": 10, "skip": true}})
		res := decodeSearch(t, r)
		if res.paginated || !sameSet(itemIDs(res.items), published) {
			t.Errorf("skip true: paginated %v, items %s", res.paginated, d.label(itemIDs(res.items)))
		}
		checkShapeOf(t, r, "content-search-not-paginated.android.json")
		// No pagination: the envelope, page 1 of 10.
		r = ts.post(searchPath+"/", d.appTok, map[string]any{"moduleName": "News"})
		res = decodeSearch(t, r)
		if !res.paginated || res.pagination != (paginationView{Page: 1, Limit: 10, Offset: 0, TotalItems: 4, TotalPages: 1}) {
			t.Errorf("no pagination: paginated %v %+v", res.paginated, res.pagination)
		}
		checkShapeOf(t, r, "content-search-paginated.android.json")
		res = ts.search(d.appTok, map[string]any{"moduleName": "News", "pagination": map[string]any{"page": 2, "limit": 3, "skip": false}})
		if !res.paginated || res.pagination != (paginationView{Page: 2, Limit: 3, Offset: 3, TotalItems: 4, TotalPages: 2}) || len(res.items) != 1 {
			t.Errorf("page 2 of 3: paginated %v %+v, %d items", res.paginated, res.pagination, len(res.items))
		}
		// page, limit and skip true together (Android's onePage, a
		// third-party consumer): skip wins, the answer is the bare array of
		// every match.
		res = ts.search(d.appTok, map[string]any{"moduleName": "News", "sort": "createdAt asc", "pagination": map[string]any{"page": 1, "limit": 2, "skip": true}})
		if res.paginated || !slices.Equal(itemIDs(res.items), published) {
			t.Errorf("page 1 limit 2 skip true: paginated %v %s, want the array of n1..n4", res.paginated, d.label(itemIDs(res.items)))
		}
	})

	t.Run("iOS bodies", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.post(searchPath, d.appTok, map[string]any{"moduleIds": []string{d.news.ID}, "pagination": map[string]any{"skip": "true"},
			"segmentMode": "partial", "locale": "en-US"})
		res := decodeSearch(t, r)
		if res.paginated || !sameSet(itemIDs(res.items), published) {
			t.Errorf(`skip "true": paginated %v, items %s`, res.paginated, d.label(itemIDs(res.items)))
		}
		r = ts.post(searchPath, d.appTok, map[string]any{"moduleNames": []string{"News"},
			"pagination": map[string]any{"page": 1, "limit": 2, "skip": "false"}, "segmentMode": "partial"})
		res = decodeSearch(t, r)
		if !res.paginated || res.pagination != (paginationView{Page: 1, Limit: 2, Offset: 0, TotalItems: 4, TotalPages: 2}) || len(res.items) != 2 {
			t.Errorf(`skip "false": paginated %v %+v, %d items`, res.paginated, res.pagination, len(res.items))
		}
		checkShapeOf(t, r, "content-search-paginated-news.ios.json")
		checkShapeOf(t, r, "content-search-paginated-with-tags.ios.json")
		var env map[string]any
		if decodeNum(r.Body, &env) == nil {
			checkShape(t, "pagination-info.ios.json", []any{loadFixture(t, "pagination-info.ios.json")}, env["pagination"])
		}
	})

	t.Run("operators", func(t *testing.T) {
		num := func(o string, v any) map[string]any {
			return map[string]any{"searchValues": op(o, "price", v, "number")}
		}
		expect(t, "price > 20", num(">", 20), false, 3, 4)
		expect(t, "price >= 20", num(">=", 20), false, 2, 3, 4)
		expect(t, "price < 20", num("<", 20), false, 1)
		expect(t, "price <= 20", num("<=", 20), false, 1, 2)
		expect(t, "price = 30", num("=", 30), false, 3)
		expect(t, "price != 30", num("!=", 30), false, 1, 2, 4)
		expect(t, "price in [10 40]", num("in", []int{10, 40}), false, 1, 4)
		expect(t, "price !in [10 40]", num("!in", []int{10, 40}), false, 2, 3)
		expect(t, "price = 20.0", num("=", 20.0), false, 2)

		date := func(o string, v int64) map[string]any {
			return map[string]any{"searchValues": op(o, "date", v, "date")}
		}
		expect(t, "date >= 1.5e12", date(">=", 1_500_000_000_000), false, 2, 3, 4)
		expect(t, "date < 1.5e12", date("<", 1_500_000_000_000), false, 1)
		expect(t, "date = 1.6e12", date("=", 1_600_000_000_000), false, 3)

		text := func(o string, v any) map[string]any {
			return map[string]any{"searchValues": op(o, "title", v, "string")}
		}
		expect(t, "title = Delta", text("=", "Delta"), false, 4)
		expect(t, "title != Delta", text("!=", "Delta"), false, 1, 2, 3)
		expect(t, "title in", text("in", []string{"Alpha road", "Delta"}), false, 1, 4)
		expect(t, "title !in", text("!in", []string{"Alpha road", "Delta"}), false, 2, 3)
		expect(t, "title like road", text("like", "road"), false, 1, 3)
		expect(t, "title like lph", text("like", "lph"), false, 1)
		expect(t, "category in [tech]", map[string]any{"searchValues": op("in", "category", []string{"tech"}, "string")}, false, 2, 4)

		// Booleans travel with type "string" from both SDKs.
		expect(t, "active = true", map[string]any{"searchValues": op("=", "active", true, "string")}, false, 1, 3)
		expect(t, "active != true", map[string]any{"searchValues": op("!=", "active", true, "string")}, false, 2, 4)
		expect(t, "active = false", map[string]any{"searchValues": op("=", "active", false, "string")}, false, 2, 4)

		// A long value keeps its precision, in the filter and the answer.
		expect(t, "big = 2^53+1", map[string]any{"searchValues": op("=", "big", json.Number(bigValue), "number")}, false, 1)
		expect(t, "big = 2^53", map[string]any{"searchValues": op("=", "big", json.Number("9007199254740992"), "number")}, false, 2)
		expect(t, "big > 2^53", map[string]any{"searchValues": op(">", "big", json.Number("9007199254740992"), "number")}, false, 1)
		res := ts.with(t).search(d.appTok, map[string]any{"instanceIds": d.nids(1), "moduleName": "News", "pagination": map[string]any{"skip": true}})
		if len(res.raw) != 1 {
			t.Errorf("n1 not found by id")
		} else if v, _ := res.raw[0]["values"].(map[string]any); v["big"] != json.Number(bigValue) {
			t.Errorf("big read back as %v, want %s", v["big"], bigValue)
		}

		// null, and/or trees, metaSearch.
		expect(t, "author is null", map[string]any{"searchValues": op("=", "author", nil, "null")}, false, 3, 4)
		expect(t, "author is not null", map[string]any{"searchValues": op("!=", "author", nil, "null")}, false, 1, 2)
		expect(t, "price = 10 or price = 40", map[string]any{"searchValues": cond("or", op("=", "price", 10, "number"), op("=", "price", 40, "number"))}, false, 1, 4)
		expect(t, "active and price > 10", map[string]any{"searchValues": cond("and", op("=", "active", true, "string"), op(">", "price", 10, "number"))}, false, 3)
		expect(t, "nested", map[string]any{"searchValues": cond("or", cond("and", op("=", "active", false, "string"), op(">", "price", 30, "number")),
			op("like", "title", "Alpha", "string"))}, false, 1, 4)
		expect(t, "metaSearch name like Gamma", map[string]any{"metaSearch": op("like", "name", "Gamma", "string")}, false, 3)
		expect(t, "metaSearch createdAt >=", map[string]any{"metaSearch": op(">=", "createdAt", *d.n[3].CreatedAt, "date")}, false, 3, 4)
		expect(t, "metaSearch removedAt is null", map[string]any{"metaSearch": op("=", "removedAt", nil, "null")}, false, 1, 2, 3, 4)
		now := nowMS()
		androidPublished := cond("and", op("<=", "publishedAt", now, "date"), op("=", "deletedAt", nil, "null"),
			cond("or", op(">", "removedAt", now, "date"), op("=", "removedAt", nil, "null")))
		expect(t, "the Android published filter", map[string]any{"metaSearch": androidPublished}, false, 1, 2, 3, 4)
		expect(t, "both trees", map[string]any{"metaSearch": op("like", "name", "road", "string"), "searchValues": op(">", "price", 10, "number")}, false, 3)
		expect(t, "instanceIds", map[string]any{"instanceIds": d.nids(2, 4, 5)}, false, 2, 4)
	})

	t.Run("relatedTo", func(t *testing.T) {
		rel := func(field string, ids ...string) map[string]any {
			return map[string]any{"relatedTo": []map[string]any{{"fieldName": field, "instanceIds": ids}}}
		}
		expect(t, "author Ann", rel("author", d.ann.ID), false, 1)
		expect(t, "author Bob", rel("author", d.bob.ID), false, 2)
		expect(t, "author Ann or Bob", rel("author", d.ann.ID, d.bob.ID), false, 1, 2)
		expect(t, "author *", rel("author", "*"), false, 1, 2)
		expect(t, "related Bob", rel("related", d.bob.ID), false, 2)
		expect(t, "related Ann", rel("related", d.ann.ID), false, 1, 2)
		expect(t, "related *", rel("related", "*"), false, 1, 2)
		// Only relation fields relate: a text field's values are no ids.
		expect(t, "title *", rel("title", "*"), false)
		expect(t, "title = an item's title", rel("title", "Alpha road"), false)
	})

	t.Run("include", func(t *testing.T) {
		ts := ts.with(t)
		get := func(include []string) map[string]map[string]any {
			res := ts.search(d.appTok, map[string]any{"moduleName": "News", "instanceIds": d.nids(1, 2), "include": include,
				"pagination": map[string]any{"skip": true}})
			out := map[string]map[string]any{}
			for _, it := range res.raw {
				v, _ := it["values"].(map[string]any)
				out[it["id"].(string)] = v
			}
			return out
		}
		all := get([]string{"all"})
		v1 := all[d.n[1].ID]
		if a, ok := v1["author"].(map[string]any); !ok || a["id"] != d.ann.ID || a["name"] != "Ann" {
			t.Errorf("include all: n1.author = %v, want Ann's instance", v1["author"])
		} else if av, _ := a["values"].(map[string]any); av["name"] != "Ann" {
			t.Errorf("include all: n1.author.values = %v", a["values"])
		}
		if rs, ok := all[d.n[2].ID]["related"].([]any); !ok || len(rs) != 2 {
			t.Errorf("include all: n2.related = %v", all[d.n[2].ID]["related"])
		} else {
			for _, r := range rs {
				if o, ok := r.(map[string]any); !ok || (o["id"] != d.ann.ID && o["id"] != d.bob.ID) {
					t.Errorf("include all: n2.related element %v", r)
				}
			}
		}
		only := get([]string{"author"})
		if a, ok := only[d.n[2].ID]["author"].(map[string]any); !ok || a["id"] != d.bob.ID {
			t.Errorf(`include ["author"]: n2.author = %v`, only[d.n[2].ID]["author"])
		}
		if rs, _ := only[d.n[2].ID]["related"].([]any); len(rs) != 2 || rs[0] != d.ann.ID {
			t.Errorf(`include ["author"]: n2.related = %v, want the ids`, only[d.n[2].ID]["related"])
		}
		none := get(nil)
		if none[d.n[1].ID]["author"] != d.ann.ID {
			t.Errorf("no include: n1.author = %v, want the id", none[d.n[1].ID]["author"])
		}
	})

	t.Run("fields projection", func(t *testing.T) {
		ts := ts.with(t)
		for _, fields := range [][]string{{"values.title"}, {"title"}, {"values.title", "price"}} {
			res := ts.search(d.appTok, map[string]any{"moduleName": "News", "fields": fields, "pagination": map[string]any{"skip": true}})
			if len(res.raw) != 4 {
				t.Errorf("fields %v: %d items", fields, len(res.raw))
			}
			want := []string{"title"}
			if len(fields) == 2 {
				want = []string{"price", "title"}
			}
			for _, it := range res.raw {
				v, _ := it["values"].(map[string]any)
				if got := keysOf(v); !slices.Equal(got, want) {
					t.Errorf("fields %v: values keys %v, want %v", fields, got, want)
				}
				if it["id"] == nil || it["name"] == nil {
					t.Errorf("fields %v: the projection dropped id or name: %v", fields, it)
				}
			}
		}
	})

	t.Run("segments", func(t *testing.T) {
		tag := func(v string) map[string]any { return map[string]any{"name": "Platform Name", "value": v} }
		seg := func(mode string, tags ...map[string]any) map[string]any {
			return map[string]any{"segmentMode": mode, "segmentTags": tags}
		}
		expect(t, "partial android", seg("partial", tag("android")), false, 1, 2)
		expect(t, "partial ios", seg("partial", tag("ios")), false, 2, 3)
		expect(t, "partial android+ios", seg("partial", tag("android"), tag("ios")), false, 1, 2, 3)
		expect(t, "total android+ios", seg("total", tag("android"), tag("ios")), false, 2)
		expect(t, "total android", seg("total", tag("android")), false, 1, 2)
		expect(t, "partial web", seg("partial", tag("web")), false)
		// iOS's SearchQuery.tags(_:) sends "tags": they add to segmentTags.
		expect(t, "iOS tags, total", map[string]any{"segmentMode": "total", "tags": []any{tag("android"), tag("ios")}}, false, 2)
		expect(t, "iOS tags with segmentTags, partial", map[string]any{"segmentMode": "partial",
			"segmentTags": []any{tag("web")}, "tags": []any{tag("ios")}}, false, 2, 3)
	})

	t.Run("sort", func(t *testing.T) {
		expect(t, "values.price desc", map[string]any{"sort": "values.price desc"}, true, 4, 3, 2, 1)
		expect(t, "values.price asc", map[string]any{"sort": "values.price asc"}, true, 1, 2, 3, 4)
		expect(t, "createdAt asc", map[string]any{"sort": "createdAt asc"}, true, 1, 2, 3, 4)
		expect(t, "createdAt desc", map[string]any{"sort": "createdAt desc"}, true, 4, 3, 2, 1)
		expect(t, "name desc", map[string]any{"sort": "name desc"}, true, 3, 4, 2, 1)
		expect(t, "values.category asc, values.price desc", map[string]any{"sort": "values.category asc,values.price desc"}, true, 3, 1, 4, 2)
		expect(t, "values.date desc", map[string]any{"sort": "values.date desc"}, true, 4, 3, 2, 1)
		// The sort applies before pagination.
		res := ts.with(t).search(d.appTok, map[string]any{"moduleName": "News", "sort": "values.price desc", "pagination": map[string]any{"page": 2, "limit": 2}})
		if !slices.Equal(itemIDs(res.items), d.nids(2, 1)) {
			t.Errorf("page 2 of price desc: %s, want [n2 n1]", d.label(itemIDs(res.items)))
		}
	})

	t.Run("locale", func(t *testing.T) {
		ts := ts.with(t)
		headline := func(locale string) any {
			b := map[string]any{"moduleName": "News", "instanceIds": d.nids(1), "pagination": map[string]any{"skip": true}}
			if locale != "" {
				b["locale"] = locale
			}
			res := ts.search(d.appTok, b)
			if len(res.raw) != 1 {
				t.Fatalf("locale %q: %d items", locale, len(res.raw))
			}
			v, _ := res.raw[0]["values"].(map[string]any)
			return v["headline"]
		}
		if h := headline("es-ES"); h != "Hola" {
			t.Errorf("locale es-ES: headline %v, want Hola", h)
		}
		if h := headline("en-US"); h != "Hello" {
			t.Errorf("locale en-US: headline %v, want Hello", h)
		}
		if h, ok := headline("").(map[string]any); !ok || h["es-ES"] != "Hola" || h["en-US"] != "Hello" {
			t.Errorf("no locale: headline %v, want the object", h)
		}
	})

	t.Run("include with locale", func(t *testing.T) {
		// Every item's values, included ones too, are resolved with the
		// fields of the item's own module: Trips relates to Places, whose
		// label only Places has, whose title is localized in Places only,
		// and whose info is localized in Trips only (an Object in Places).
		ts := ts.with(t)
		app := ts.createApp("Include Locale App")
		tok := ts.appToken(app)
		places := ts.createModule(ts.admin, moduleBody(app.ID, "Places",
			fld("label", ftLocalized), fld("title", ftText, "localized", true), fld("info", ftObject), fld("ref", ftText)))
		trips := ts.createModule(ts.admin, moduleBody(app.ID, "Trips",
			fld("title", ftText), fld("info", ftLocalized), fld("ref", ftRelation),
			fld("place", ftRelation, "rules", rules{"module": places.ID}), fld("stops", ftMultiRelation)))
		past := nowMS() - 60_000
		loc := func(en, es string) map[string]any { return map[string]any{"en-US": en, "es-ES": es} }
		p1 := ts.createItem(ts.admin, itemBody(places.ID, "Madrid", map[string]any{"label": loc("Capital", "Capital ES"),
			"title": loc("Madrid city", "Ciudad de Madrid"), "info": map[string]any{"en-US": "not a text", "size": 3}}, "publishedAt", past))
		// p2's ref is a text that happens to be an item's id: never populated.
		p2 := ts.createItem(ts.admin, itemBody(places.ID, "Sevilla", map[string]any{"label": loc("South", "Sur"),
			"title": loc("Seville", "Sevilla"), "ref": p1.ID}, "publishedAt", past))
		trip := ts.createItem(ts.admin, itemBody(trips.ID, "Spain", map[string]any{"title": "Spain trip",
			"info": loc("Two cities", "Dos ciudades"), "ref": p2.ID, "place": p1.ID, "stops": []string{p1.ID, p2.ID}}, "publishedAt", past))

		// wantPlace checks a Places item's values in es-ES, v being either
		// the item (included) or its values.
		wantPlace := func(what string, v any, p instView) {
			t.Helper()
			o, ok := v.(map[string]any)
			if !ok {
				t.Errorf("%s: %v, want the %s item", what, v, p.Name)
				return
			}
			if o["id"] != nil {
				if o["id"] != p.ID {
					t.Errorf("%s: item %v, want %s", what, o["id"], p.ID)
				}
				o, _ = o["values"].(map[string]any)
			}
			switch p.ID {
			case p1.ID:
				if o["label"] != "Capital ES" || o["title"] != "Ciudad de Madrid" {
					t.Errorf("%s: label %v, title %v, want them in es-ES", what, o["label"], o["title"])
				}
				if info, ok := o["info"].(map[string]any); !ok || info["en-US"] != "not a text" || info["size"] != json.Number("3") {
					t.Errorf("%s: info %v, want the object as it is", what, o["info"])
				}
			case p2.ID:
				if o["label"] != "Sur" || o["title"] != "Sevilla" || o["ref"] != p1.ID {
					t.Errorf("%s: label %v, title %v, ref %v, want them in es-ES and the ref as text", what, o["label"], o["title"], o["ref"])
				}
			}
		}
		wantTrip := func(what string, v map[string]any, included bool) {
			t.Helper()
			if v["title"] != "Spain trip" || v["info"] != "Dos ciudades" {
				t.Errorf("%s: trip title %v, info %v, want the text and es-ES", what, v["title"], v["info"])
			}
			if !included {
				return
			}
			wantPlace(what+": trip.place", v["place"], p1)
			wantPlace(what+": trip.ref", v["ref"], p2)
			if stops, ok := v["stops"].([]any); !ok || len(stops) != 2 {
				t.Errorf("%s: trip.stops %v, want both places", what, v["stops"])
			} else {
				wantPlace(what+": trip.stops[0]", stops[0], p1)
				wantPlace(what+": trip.stops[1]", stops[1], p2)
			}
		}
		valuesOf := func(res searchResult) map[string]map[string]any {
			out := map[string]map[string]any{}
			for _, it := range res.raw {
				v, _ := it["values"].(map[string]any)
				out[it["id"].(string)] = v
			}
			return out
		}

		bodies := map[string]map[string]any{
			// Android: a real boolean skip, field names prefixed with values.
			"Android": {"moduleName": "Trips", "include": []string{"all"}, "locale": "es-ES",
				"pagination": map[string]any{"page": 1, "limit": 10, "skip": true}},
			"Android with fields": {"moduleName": "Trips", "include": []string{"all"}, "locale": "es-ES",
				"fields":     []string{"values.title", "values.info", "values.ref", "values.place", "values.stops"},
				"pagination": map[string]any{"page": 1, "limit": 10, "skip": true}},
			// iOS: module names, skip as a string, segmentMode always.
			"iOS": {"moduleNames": []string{"Trips"}, "include": []string{"ref", "place", "stops"}, "locale": "es-ES",
				"pagination": map[string]any{"skip": "true"}, "segmentMode": "partial"},
			"by module id": {"moduleIds": []string{trips.ID}, "include": true, "locale": "es-ES", "pagination": map[string]any{"skip": true}},
		}
		for name, body := range bodies {
			got := valuesOf(ts.search(tok, body))
			if len(got) != 1 || got[trip.ID] == nil {
				t.Errorf("%s: got %v, want the trip", name, keysOf(got))
				continue
			}
			wantTrip(name, got[trip.ID], true)
		}
		// Both modules in one search: each item by its own module, and
		// relations populated as its own module defines them.
		for _, tok := range []string{tok, ts.admin} {
			got := valuesOf(ts.search(tok, map[string]any{"moduleNames": []string{"Trips", "Places"}, "include": []string{"all"},
				"locale": "es-ES", "pagination": map[string]any{"skip": true}}))
			if len(got) != 3 {
				t.Errorf("Trips and Places: %d items, want 3", len(got))
				continue
			}
			wantTrip("Trips and Places", got[trip.ID], true)
			wantPlace("Trips and Places: Madrid", got[p1.ID], p1)
			wantPlace("Trips and Places: Sevilla", got[p2.ID], p2)
		}
		// Every module the app sees, without include.
		got := valuesOf(ts.search(tok, map[string]any{"instanceIds": []string{trip.ID, p1.ID, p2.ID}, "locale": "es-ES",
			"pagination": map[string]any{"skip": true}}))
		wantTrip("all modules", got[trip.ID], false)
		wantPlace("all modules: Madrid", got[p1.ID], p1)
		wantPlace("all modules: Sevilla", got[p2.ID], p2)
		// The list of instances, of every module the app sees.
		var list []map[string]any
		ts.mustNum(ts.get(instancePath+"?locale=es-ES&skip=true", tok), 200, &list)
		got = valuesOf(searchResult{raw: list})
		wantTrip("instance list", got[trip.ID], false)
		wantPlace("instance list: Madrid", got[p1.ID], p1)
		wantPlace("instance list: Sevilla", got[p2.ID], p2)
	})

	t.Run("visibility", func(t *testing.T) {
		ts := ts.with(t)
		all := append(d.nids(1, 2, 3, 4, 5, 6, 7, 8, 9), d.b1.ID)
		// The app token: published items of its own app only.
		got := ts.searchIDs(d.appTok, map[string]any{"instanceIds": all})
		if !sameSet(got, published) {
			t.Errorf("app A by ids: %s, want the published n1..n4", d.label(got))
		}
		got = ts.searchIDs(d.appBTok, map[string]any{"moduleName": "News"})
		if !slices.Equal(got, []string{d.b1.ID}) {
			t.Errorf("app B's News: %s, want [b1]", d.label(got))
		}
		if r := ts.post(searchPath, d.appTok, map[string]any{"moduleIds": []string{d.bNew.ID}, "pagination": map[string]any{"skip": true}}); r.Status == 200 {
			if res := decodeSearch(t, r); len(res.items) != 0 {
				t.Errorf("app A searching app B's module got %s", d.label(itemIDs(res.items)))
			}
		} else {
			expectHaloError(t, r, 403)
		}
		// The CMS sees every state.
		got = ts.searchIDs(ts.admin, map[string]any{"moduleIds": []string{d.news.ID}})
		for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 9} {
			if !slices.Contains(got, d.n[n].ID) {
				t.Errorf("the admin's search lacks n%d (%s)", n, d.n[n].Name)
			}
		}
		// A user who reads the News module sees its items in every state,
		// and nothing of other modules.
		_, reader := ts.userWith("news-reader", grantTo{app: d.app.ID, module: d.news.ID, perms: []string{"read"}})
		got = ts.searchIDs(reader, map[string]any{"moduleIds": []string{d.news.ID}})
		for _, n := range []int{1, 5, 6, 7, 9} {
			if !slices.Contains(got, d.n[n].ID) {
				t.Errorf("the News reader's search lacks n%d (%s)", n, d.n[n].Name)
			}
		}
		for _, body := range []map[string]any{{"moduleIds": []string{d.authors.ID}}, {"instanceIds": []string{d.ann.ID, d.b1.ID}}} {
			body["pagination"] = map[string]any{"skip": true}
			if r := ts.post(searchPath, reader, body); r.Status == 200 {
				if res := decodeSearch(t, r); len(res.items) != 0 {
					t.Errorf("the News reader found %v outside News", itemNames(res.items))
				}
			} else {
				expectHaloError(t, r, 403)
			}
		}
		// A user without rights sees nothing.
		_, nobody := ts.userWith("search-nobody")
		for _, body := range []map[string]any{{"moduleName": "News"}, {"moduleIds": []string{d.news.ID}}, {"instanceIds": all}} {
			body["pagination"] = map[string]any{"skip": true}
			if r := ts.post(searchPath, nobody, body); r.Status == 200 {
				if res := decodeSearch(t, r); len(res.items) != 0 {
					t.Errorf("a user without rights found %v", itemNames(res.items))
				}
			} else {
				expectHaloError(t, r, 403)
			}
		}
		expectHaloError(t, ts.post(searchPath, "", map[string]any{"moduleName": "News"}), 401)
	})

	t.Run("bad input", func(t *testing.T) {
		ts := ts.with(t)
		deep := func(n int) map[string]any {
			node := op("=", "price", 10, "number")
			for i := 1; i < n; i++ {
				node = cond("and", node, op(">", "price", 0, "number"))
			}
			return node
		}
		bad := map[string]any{
			"unknown operator":            map[string]any{"moduleName": "News", "searchValues": op("~=", "price", 1, "number")},
			"unknown metaSearch property": map[string]any{"moduleName": "News", "metaSearch": op("=", "colour", "red", "string")},
			"like with 2 characters":      map[string]any{"moduleName": "News", "searchValues": op("like", "title", "ro", "string")},
			"tree deeper than 32":         map[string]any{"moduleName": "News", "searchValues": deep(40)},
			"malformed JSON":              `{"moduleName": "News", "searchValues": {`,
			"unknown sort field":          map[string]any{"moduleName": "News", "sort": "bogus asc"},
			"sort direction":              map[string]any{"moduleName": "News", "sort": "createdAt sideways"},
			"unknown condition":           map[string]any{"moduleName": "News", "searchValues": cond("xor", op("=", "price", 1, "number"), op("=", "price", 2, "number"))},
			"unknown type":                map[string]any{"moduleName": "News", "searchValues": op("=", "price", 1, "integer")},
			"unknown segmentMode":         map[string]any{"moduleName": "News", "segmentMode": "some"},
		}
		for name, body := range bad {
			r := ts.post(searchPath, d.appTok, body)
			if r.Status != 400 {
				t.Errorf("%s: %s, want 400", name, r)
				continue
			}
			expectHaloError(t, r, 400)
		}
		// The lists of a tree hold at most 1,000 values in all (each is
		// compared with every candidate's values), and a type is a string.
		list := func(n int) []any {
			out := make([]any, n)
			for i := range out {
				out[i] = fmt.Sprintf("v%d", i)
			}
			return out
		}
		for name, body := range map[string]map[string]any{
			"one list of 1,001": {"moduleName": "News", "searchValues": op("in", "title", list(1001), "string")},
			"two lists of 501":  {"moduleName": "News", "searchValues": cond("and", op("in", "title", list(501), "string"), op("!in", "title", list(501), "string"))},
			"type 5":            {"moduleName": "News", "searchValues": map[string]any{"operation": "=", "property": "price", "value": 1, "type": 5}},
			"boolean = maybe":   {"moduleName": "News", "searchValues": op("=", "active", "maybe", "string")},
			"boolean = 1":       {"moduleName": "News", "searchValues": op("=", "active", 1, "number")},
			"boolean > true":    {"moduleName": "News", "searchValues": op(">", "active", true, "boolean")},
			"boolean like":      {"moduleName": "News", "searchValues": op("like", "active", "tru", "string")},
		} {
			if r := ts.post(searchPath, d.appTok, body); r.Status != 400 {
				t.Errorf("%s: %s, want 400", name, r)
			} else {
				expectHaloError(t, r, 400)
			}
		}
		expectStatus(t, ts.post(searchPath, d.appTok, map[string]any{"moduleName": "News", "searchValues": op("in", "title", list(1000), "string")}), 200)
		// An operation without a property names the tree it is in.
		for tree, want := range map[string]string{"searchValues": "searchValues", "metaSearch": "metaSearch"} {
			r := ts.post(searchPath, d.appTok, map[string]any{"moduleName": "News", tree: map[string]any{"operation": "=", "value": 1, "type": "number"}})
			if ex := haloExtra(t, r, 400); ex != nil && ex["field"] != want {
				t.Errorf("%s: extra.field %v, want %s", r, ex["field"], want)
			}
		}
		// A field's sort key with a bad direction: field names may hold
		// spaces, so the message says both.
		r := ts.post(searchPath, d.appTok, map[string]any{"moduleName": "News", "sort": "values.price sideways"})
		expectHaloError(t, r, 400)
		if !strings.Contains(string(r.Body), `\"sideways\" a direction`) {
			t.Errorf("%s: the message does not name the direction", r)
		}
		expectStatus(t, ts.post(searchPath, d.appTok, map[string]any{"moduleName": "News", "searchValues": deep(5)}), 200)
		// A body over 1 MiB.
		huge := []byte(`{"moduleName": "News", "instanceIds": ["` + strings.Repeat("x", 1<<20) + `"]}`)
		expectHaloError(t, ts.post(searchPath, d.appTok, huge), 413)
		// Still serving.
		expectStatus(t, ts.post(searchPath, d.appTok, map[string]any{"moduleName": "News"}), 200)
	})
}

// syncView is a SyncResult.
type syncView struct {
	SyncTimestamp json.Number `json:"syncTimestamp"`
	Created       []instView  `json:"created"`
	Updated       []instView  `json:"updated"`
	Deleted       []struct {
		ID string `json:"id"`
	} `json:"deleted"`
}

func (s syncView) deletedIDs() []string {
	out := []string{}
	for _, x := range s.Deleted {
		out = append(out, x.ID)
	}
	return out
}

// syncMargin is how far before fromSync the server looks for changes
// (domain/content.SyncMargin): changes within it are reported again,
// which the SDKs merge. The test leaves this much time between its writes
// and the syncs whose answers it checks exactly.
const syncMargin = 2000 * time.Millisecond

func TestContentSync(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Sync App")
	appB := ts.createApp("Sync App B")
	tok, tokB := ts.appToken(app), ts.appToken(appB)
	feed := ts.createModule(ts.admin, moduleBody(app.ID, "Feed", fld("title", ftText), fld("headline", ftLocalized)))
	past := nowMS() - 60_000
	pub := func(name string, kv ...any) instView {
		return ts.createItem(ts.admin, itemBody(feed.ID, name, map[string]any{"title": name,
			"headline": map[string]any{"en-US": name + " en", "es-ES": name + " es"}}, append([]any{"publishedAt", past}, kv...)...))
	}
	s1, s2, s3 := pub("s1"), pub("s2"), pub("s3")
	s4 := ts.createItem(ts.admin, itemBody(feed.ID, "s4 concept", map[string]any{"title": "s4"}))
	expiresAt := nowMS() + syncMargin.Milliseconds() + 2500
	s5 := pub("s5", "removedAt", expiresAt)
	time.Sleep(syncMargin + 100*time.Millisecond)

	syncOf := func(token string, body any) (syncView, response) {
		t.Helper()
		r := ts.post(syncPath, token, body)
		var s syncView
		ts.mustNum(r, 200, &s)
		if s.Created == nil || s.Updated == nil || s.Deleted == nil {
			t.Errorf("%s: created, updated and deleted must be arrays", r)
		}
		return s, r
	}

	// First sync: every published item, as created.
	first, r := syncOf(tok, map[string]any{"moduleName": "Feed", "locale": "en-US"})
	beforeExpiry := nowMS() < expiresAt
	ts1, err := first.SyncTimestamp.Int64()
	if err != nil || !near(ts1, time.Minute) {
		t.Errorf("syncTimestamp %v, want now in ms", first.SyncTimestamp)
	}
	want := []string{s1.ID, s2.ID, s3.ID, s5.ID}
	if !beforeExpiry {
		want = want[:3]
	}
	if !sameSet(itemIDs(first.Created), want) || len(first.Updated) != 0 || len(first.Deleted) != 0 {
		t.Errorf("first sync: created %v updated %v deleted %v, want created s1 s2 s3 s5", itemNames(first.Created), itemNames(first.Updated), first.deletedIDs())
	}
	if slices.Contains(itemIDs(first.Created), s4.ID) {
		t.Errorf("a concept was synced")
	}
	for _, it := range first.Created {
		if it.Values["headline"] != it.Name+" en" {
			t.Errorf("locale en-US: %s headline %v", it.Name, it.Values["headline"])
		}
	}
	checkShapeOf(t, r, "content-sync-first.android.json")

	// The SDKs' immediate second call: nothing new.
	again, r := syncOf(tok, map[string]any{"moduleName": "Feed", "fromSync": ts1, "toSync": nowMS()})
	if len(again.Created)+len(again.Updated)+len(again.Deleted) != 0 {
		t.Errorf("up-to-date sync: %s", r)
	}
	checkShapeOf(t, r, "content-sync-up-to-date.android.json")

	// Changes after the first sync: s1 edited, s2 deleted, s3 unpublished,
	// s5 expires (no write), s6 published and s7 a concept are new.
	time.Sleep(5 * time.Millisecond)
	ts.mustNum(ts.put(instancePath+"/"+s1.ID, ts.admin, itemBody(feed.ID, "s1 updated", map[string]any{"title": "s1 updated"}, "publishedAt", past)), 200, &s1)
	expectStatus(t, ts.do(request{method: "DELETE", path: instancePath + "/" + s2.ID, token: ts.admin}), 200)
	ts.transit(ts.admin, s3.ID, "unpublish", nil)
	s6 := pub("s6")
	s7 := ts.createItem(ts.admin, itemBody(feed.ID, "s7 concept", map[string]any{"title": "s7"}))
	time.Sleep(time.Until(time.UnixMilli(expiresAt + 150)))

	// Incremental, by module id, with float timestamps as iOS sends them.
	inc, r := syncOf(tok, map[string]any{"moduleId": feed.ID, "fromSync": float64(ts1) + 0.25, "toSync": float64(nowMS()) + 0.5, "locale": "es-ES"})
	if !slices.Equal(itemIDs(inc.Created), []string{s6.ID}) {
		t.Errorf("incremental created %v, want [s6]", itemNames(inc.Created))
	}
	if !slices.Equal(itemIDs(inc.Updated), []string{s1.ID}) {
		t.Errorf("incremental updated %v, want [s1]", itemNames(inc.Updated))
	} else if inc.Updated[0].Name != "s1 updated" || inc.Updated[0].Values["title"] != "s1 updated" {
		t.Errorf("incremental updated s1 = %+v", inc.Updated[0])
	}
	// deleted covers s2 (deleted), s3 (unpublished) and s5 (expired),
	// never a live item, and never a concept (s4, s7): an app does not
	// learn its drafts' ids.
	gone := []string{s2.ID, s3.ID}
	if beforeExpiry {
		gone = append(gone, s5.ID) // the client got s5 in the first sync
	}
	for _, id := range gone {
		if !slices.Contains(inc.deletedIDs(), id) {
			t.Errorf("incremental deleted %v lacks %s", inc.deletedIDs(), id)
		}
	}
	for _, id := range []string{s1.ID, s6.ID, s4.ID, s7.ID} {
		if slices.Contains(inc.deletedIDs(), id) {
			t.Errorf("incremental deleted %v names %s, which is live or a concept", inc.deletedIDs(), id)
		}
	}
	for _, it := range append(slices.Clone(inc.Created), inc.Updated...) {
		if it.Values["headline"] != nil && it.Values["headline"] != it.Name+" es" {
			t.Errorf("locale es-ES: %s headline %v", it.Name, it.Values["headline"])
		}
	}
	if len(inc.Created) == 1 && inc.Created[0].Values["headline"] != "s6 es" {
		t.Errorf("locale es-ES: s6 headline %v", inc.Created[0].Values["headline"])
	}
	checkShapeOf(t, r, "content-sync-incremental-with-deletion.android.json")
	checkShapeOf(t, r, "content-sync-incremental-large.ios.json")
	ts2, _ := inc.SyncTimestamp.Int64()
	if ts2 <= ts1 {
		t.Errorf("syncTimestamp went from %d to %d", ts1, ts2)
	}

	// Up to date again, by name with a float fromSync, once the changes
	// are older than the margin.
	time.Sleep(syncMargin + 100*time.Millisecond)
	// As iOS syncs by name: "moduleId" is always sent, empty then.
	last, _ := syncOf(tok, map[string]any{"moduleId": "", "moduleName": "Feed", "locale": "en-US", "fromSync": float64(nowMS()) + 0.9})
	if len(last.Created)+len(last.Updated)+len(last.Deleted) != 0 {
		t.Errorf("sync with nothing changed: created %v updated %v deleted %v", itemNames(last.Created), itemNames(last.Updated), last.deletedIDs())
	}
	// A full sync now: s1 and s6.
	full, _ := syncOf(tok, map[string]any{"moduleName": "Feed"})
	if !sameSet(itemIDs(full.Created), []string{s1.ID, s6.ID}) {
		t.Errorf("full sync now: %v, want s1 s6", itemNames(full.Created))
	}
	// The CMS admin syncs too (published items only).
	adm, _ := syncOf(ts.admin, map[string]any{"moduleId": feed.ID})
	if !sameSet(itemIDs(adm.Created), []string{s1.ID, s6.ID}) {
		t.Errorf("admin full sync: %v, want s1 s6", itemNames(adm.Created))
	}

	// Another app does not get this app's items.
	if r := ts.post(syncPath, tokB, map[string]any{"moduleId": feed.ID}); r.Status == 200 {
		var s syncView
		ts.mustNum(r, 200, &s)
		if len(s.Created)+len(s.Updated) != 0 {
			t.Errorf("app B synced app A's module: %v", itemNames(s.Created))
		}
	} else if r.Status != 403 && r.Status != 404 {
		t.Errorf("%s: want 200 (empty), 403 or 404", r)
	}
	if r := ts.post(syncPath, tokB, map[string]any{"moduleName": "Feed"}); r.Status == 200 {
		var s syncView
		ts.mustNum(r, 200, &s)
		if len(s.Created)+len(s.Updated) != 0 {
			t.Errorf("app B synced app A's Feed by name: %v", itemNames(s.Created))
		}
	} else if r.Status != 404 {
		t.Errorf("%s: want 200 (empty) or 404", r)
	}
	// Bad input.
	expectHaloError(t, ts.post(syncPath, tok, map[string]any{}), 400)
	expectHaloError(t, ts.post(syncPath, tok, `{"moduleName": `), 400)
	expectHaloError(t, ts.post(syncPath, tok, map[string]any{"moduleName": "Feed", "fromSync": "yesterday"}), 400)
	expectHaloError(t, ts.post(syncPath, "", map[string]any{"moduleName": "Feed"}), 401)
	if r := ts.post(syncPath, tok, map[string]any{"moduleName": "No such module"}); r.Status != 404 && r.Status != 400 {
		t.Errorf("%s: want 404 or 400", r)
	}
}

// A search of one module by id uses the module as the server last read
// it, checked by the search statement against the module's revision: a
// change of the module's fields through another server, or its deletion,
// shows in the very next search, as when every search read the module.
func TestContentSearchKnownModule(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	reader := ts.another(t) // searches; ts makes the changes
	app := ts.createApp("Known")
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Shop", fld("title", ftText)))
	past := nowMS() - 60_000
	alpha := ts.createItem(ts.admin, itemBody(mod.ID, "alpha", map[string]any{"title": "Alpha one"}, "publishedAt", past))
	search := func(t *testing.T, sv map[string]any, sort string) response {
		t.Helper()
		return reader.with(t).post(searchPath, ts.admin, map[string]any{"moduleIds": []string{mod.ID}, "searchValues": sv, "sort": sort,
			"pagination": map[string]any{"page": 1, "limit": 10}})
	}
	byTitle := op("like", "title", "alp", "string")
	for range 2 { // the first reads the module, the second uses it as read
		if r := search(t, byTitle, "values.title asc"); r.Status != 200 || !sameSet(itemIDs(decodeSearch(t, r).items), []string{alpha.ID}) {
			t.Fatalf("%s: want [%s]", r, alpha.ID)
		}
	}

	ts.with(t).mustJSON(ts.put(modulePath+"/"+mod.ID, ts.admin, moduleBody(app.ID, "Shop", fld("title", ftText), fld("price", ftNumber))), 200, &moduleView{})
	priced := ts.createItem(ts.admin, itemBody(mod.ID, "priced", map[string]any{"title": "Alpha two", "price": 5}, "publishedAt", past))
	r := search(t, op(">=", "price", 1, "number"), "values.price desc")
	if r.Status != 200 || !sameSet(itemIDs(decodeSearch(t, r).items), []string{priced.ID}) {
		t.Fatalf("by the field added since the module was last read: %s, want [%s]", r, priced.ID)
	}
	if r := search(t, byTitle, "values.price desc"); r.Status != 200 || len(decodeSearch(t, r).items) != 2 {
		t.Fatalf("%s: want both items", r)
	}

	expectStatus(t, ts.do(request{method: "DELETE", path: modulePath + "/" + mod.ID, token: ts.admin}), 200)
	// As for a module never seen: it has no fields to sort by.
	expectHaloError(t, search(t, byTitle, "values.title asc"), 400)
	if r := search(t, byTitle, ""); r.Status != 200 || len(decodeSearch(t, r).items) != 0 {
		t.Fatalf("the deleted module's items are still found: %s", r)
	}
}

// A text longer than the search indexes keep of it (their first 500
// characters) is searched whole: a like finds a word past the 600th
// character, and =, !=, in and > tell apart titles that share their first
// 600 characters, for an app token (the one-statement search of typed
// columns) as for an admin, in a text field and in a localized one.
func TestContentSearchLongTexts(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Long texts")
	appTok := ts.appToken(app)
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Articles", fld("title", ftText), fld("rank", ftNumber),
		fld("headline", ftLocalized)))
	shared := strings.Repeat("lorem ipsum ", 50) // 600 characters
	past := nowMS() - 60_000
	var items []instView
	for rank, title := range []string{shared + "needle", shared + "thread", string([]rune(shared)[:500]), "a short title"} {
		items = append(items, ts.createItem(ts.admin, itemBody(mod.ID, fmt.Sprintf("item %d", rank), map[string]any{"title": title,
			"rank": rank, "headline": map[string]any{"en-US": title}}, "publishedAt", past)))
	}
	for _, field := range []string{"title", "headline"} {
		for _, c := range []struct {
			op    string
			value any
			want  []int
		}{
			{"like", "needle", []int{0}},
			{"like", "IPSUM THREAD", []int{1}},
			{"=", shared + "needle", []int{0}},
			{"=", string([]rune(shared)[:500]), []int{2}},
			{"!=", shared + "needle", []int{1, 2, 3}},
			{"in", []string{shared + "thread", "a short title"}, []int{1, 3}},
			{"!in", []string{shared + "thread"}, []int{0, 2, 3}},
			{">", shared + "needle", []int{1}},
		} {
			var want []string
			for _, n := range c.want {
				want = append(want, items[n].ID)
			}
			for who, token := range map[string]string{"app": appTok, "admin": ts.admin} {
				res := ts.search(token, map[string]any{"moduleIds": []string{mod.ID}, "searchValues": op(c.op, field, c.value, "string"),
					"sort": "values.rank desc", "pagination": map[string]any{"page": 1, "limit": 10}})
				if got := itemIDs(res.items); !sameSet(got, want) || res.pagination.TotalItems != len(want) {
					t.Errorf("%s, %s %s %.20q...: %v (total %d), want %v", who, field, c.op, fmt.Sprint(c.value), got,
						res.pagination.TotalItems, want)
				}
			}
		}
	}
}

// The CMS's state filters (wire-reference §5.1 "Content states") reach
// the search as metaSearch trees built exactly per the state table, with
// now as a date value. One module holds an item in every state; a CMS
// user (the admin, and a user with only the read right on the app) gets
// exactly the items of the state asked for, and an app token, sending no
// metaSearch at all, only the published one.
func TestContentSearchStateFilters(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("States App")
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Stories", fld("title", ftText)))
	item := func(name string, kv ...any) instView {
		return ts.createItem(ts.admin, itemBody(mod.ID, name, map[string]any{"title": name}, kv...))
	}
	past := nowMS() - 60_000
	concept := item("concept")
	published := ts.transit(ts.admin, item("published").ID, "publish", nil)
	scheduled := ts.transit(ts.admin, item("scheduled").ID, "publish", map[string]any{"publishedAt": nowMS() + time.Hour.Milliseconds()})
	expired := item("expired", "publishedAt", past, "removedAt", nowMS()-1000)
	archived := ts.transit(ts.admin, item("archived", "publishedAt", past).ID, "archive", nil)
	deleted := item("deleted", "publishedAt", past)
	ts.mustNum(ts.do(request{method: "DELETE", path: instancePath + "/" + deleted.ID, token: ts.admin}), 200, &deleted)
	if scheduled.PublishedAt == nil || !near(*scheduled.PublishedAt-time.Hour.Milliseconds(), time.Minute) ||
		archived.ArchivedAt == nil || archived.PublishedAt == nil || deleted.DeletedAt == nil {
		t.Fatalf("set-up: scheduled %+v, archived %+v, deleted %+v", scheduled, archived, deleted)
	}
	names := map[string]string{}
	for _, it := range []instView{concept, published, scheduled, expired, archived, deleted} {
		names[it.ID] = it.Name
	}
	label := func(ids []string) []string {
		out := make([]string, len(ids))
		for i, id := range ids {
			if out[i] = names[id]; out[i] == "" {
				out[i] = id
			}
		}
		return sorted(out)
	}
	ids := func(its ...instView) []string { return itemIDs(its) }

	now := nowMS()
	isNull := func(p string) map[string]any { return op("=", p, nil, "null") }
	atOrBefore := func(p string) map[string]any { return op("<=", p, now, "date") }
	notExpired := cond("or", op(">", "removedAt", now, "date"), isNull("removedAt"))
	trees := []struct {
		name string
		tree map[string]any
		want []string
	}{
		// The SDKs' Published filter does not name archivedAt: an item
		// published and then archived keeps its publishedAt and matches.
		{"Published (SDKs)", cond("and", atOrBefore("publishedAt"), isNull("deletedAt"), notExpired), ids(published, archived)},
		{"Published (with archivedAt == null)", cond("and", atOrBefore("publishedAt"), isNull("deletedAt"), notExpired, isNull("archivedAt")), ids(published)},
		{"Concept", cond("and", isNull("publishedAt"), isNull("archivedAt"), isNull("removedAt"), isNull("deletedAt")), ids(concept)},
		{"Expired", cond("and", atOrBefore("removedAt"), isNull("deletedAt")), ids(expired)},
		{"Archived", cond("and", atOrBefore("archivedAt"), isNull("deletedAt")), ids(archived)},
		{"Archived (iOS)", cond("and", atOrBefore("archivedAt"), isNull("deletedAt"), isNull("removedAt")), ids(archived)},
		{"Deleted", op("!=", "deletedAt", nil, "null"), ids(deleted)},
		{"no metaSearch", nil, ids(concept, published, scheduled, expired, archived)},
	}

	_, reader := ts.userWith("states-reader", grantTo{app: app.ID, perms: []string{"read"}})
	for _, who := range []struct{ name, token string }{{"admin", ts.admin}, {"app reader", reader}} {
		t.Run(who.name, func(t *testing.T) {
			ts := ts.with(t)
			for _, c := range trees {
				body := map[string]any{"moduleIds": []string{mod.ID}}
				if c.tree != nil {
					body["metaSearch"] = c.tree
				}
				if got := ts.searchIDs(who.token, body); !sameSet(got, c.want) {
					t.Errorf("%s: got %v, want %v", c.name, label(got), label(c.want))
				}
			}
			// Both skip forms of the Concept filter: an absent skip
			// answers the envelope, skip true the bare array.
			body := map[string]any{"moduleIds": []string{mod.ID}, "metaSearch": trees[2].tree}
			res := ts.search(who.token, body)
			if !res.paginated || res.pagination != (paginationView{Page: 1, Limit: 10, Offset: 0, TotalItems: 1, TotalPages: 1}) ||
				!sameSet(itemIDs(res.items), ids(concept)) {
				t.Errorf("Concept without skip: paginated %v %+v, items %v", res.paginated, res.pagination, label(itemIDs(res.items)))
			}
			body["pagination"] = map[string]any{"skip": true}
			res = ts.search(who.token, body)
			if res.paginated || !sameSet(itemIDs(res.items), ids(concept)) {
				t.Errorf("Concept with skip true: paginated %v, items %v", res.paginated, label(itemIDs(res.items)))
			}
		})
	}

	t.Run("app token", func(t *testing.T) {
		ts := ts.with(t)
		appTok := ts.appToken(app)
		if got := ts.searchIDs(appTok, map[string]any{"moduleName": "Stories"}); !sameSet(got, ids(published)) {
			t.Errorf("no metaSearch: got %v, want [published]", label(got))
		}
		res := ts.search(appTok, map[string]any{"moduleName": "Stories"})
		if !res.paginated || res.pagination.TotalItems != 1 || !sameSet(itemIDs(res.items), ids(published)) {
			t.Errorf("no metaSearch, no skip: paginated %v %+v, items %v", res.paginated, res.pagination, label(itemIDs(res.items)))
		}
	})
}

// Two modules of an app may define the same field name differently: a
// search of both judges each item by its own module's field (a number
// comparison finds the number module's items, a text one the text
// module's), named or not, and a sort by that field is a 400, not a
// server error.
func TestContentSearchFieldDefinedDifferently(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Two shapes")
	appTok := ts.appToken(app)
	shop := ts.createModule(ts.admin, moduleBody(app.ID, "Shop", fld("title", ftText), fld("price", ftNumber)))
	wish := ts.createModule(ts.admin, moduleBody(app.ID, "Wishes", fld("title", ftText), fld("price", ftText)))
	past := nowMS() - 60_000
	dear := ts.createItem(ts.admin, itemBody(shop.ID, "dear", map[string]any{"title": "Dear", "price": 30}, "publishedAt", past))
	cheap := ts.createItem(ts.admin, itemBody(shop.ID, "cheap", map[string]any{"title": "Cheap", "price": 3}, "publishedAt", past))
	free := ts.createItem(ts.admin, itemBody(wish.ID, "free", map[string]any{"title": "Free", "price": "free"}, "publishedAt", past))
	for _, c := range []struct {
		sv   map[string]any
		want []string
	}{
		{op("<", "price", 10, "number"), []string{cheap.ID}}, // "free" < "10" as texts: false
		{op(">=", "price", 30, "number"), []string{dear.ID, free.ID}},
		{op("=", "price", "free", "string"), []string{free.ID}},
		{op("like", "price", "fre", "string"), []string{free.ID}},
	} {
		for _, mods := range [][]string{{shop.ID, wish.ID}, nil} {
			for who, token := range map[string]string{"app": appTok, "admin": ts.admin} {
				body := map[string]any{"searchValues": c.sv, "sort": "values.title asc", "pagination": map[string]any{"page": 1, "limit": 10}}
				if mods != nil {
					body["moduleIds"] = mods
				}
				if got := itemIDs(ts.search(token, body).items); !sameSet(got, c.want) {
					t.Errorf("%s, %v over %v: %v, want %v", who, c.sv, mods, got, c.want)
				}
			}
		}
	}
	r := ts.with(t).post(searchPath, ts.admin, map[string]any{"moduleIds": []string{shop.ID, wish.ID}, "sort": "values.price desc"})
	expectHaloError(t, r, 400)
	if !strings.Contains(r.String(), "price") {
		t.Errorf("the sort's 400 does not name the field: %s", r)
	}
}

// A sync while the content read model is behind the log (here its runner
// is held back by a transaction open on another database, which hides
// newer events from the runners of every database) answers a
// syncTimestamp no later than the first change it does not show yet, so
// that the next sync reports that change, however long it took to be
// applied. Answered "up to now", a change recorded more than syncMargin
// before the answer would never reach the client. And an answer never
// goes back before the client's fromSync (Android sends toSync from the
// device's clock).
func TestContentSyncWhileTheReadModelIsBehind(t *testing.T) {
	// Not parallel: for seconds it holds back the projection runners of
	// every database (see hideNewEvents), which would stall the other
	// tests' writes that wait for them.
	ts, app, feed, syncOf, ts1 := syncedFeed(t, "Lagging App")

	if s, at := syncOf(map[string]any{"moduleId": feed.ID, "fromSync": ts1, "toSync": ts1 - 20_000}); at < ts1 {
		t.Errorf("toSync 20 s before fromSync: syncTimestamp %d, before fromSync %d (%d created)", at, ts1, len(s.Created))
	}

	// The hider holds the runners back while the item is appended, as the
	// create command does without its wait for the read model, and
	// committed; the sync comes more than syncMargin after the item's
	// stamp.
	ctx := context.Background()
	hider := hideNewEvents(t)
	stamped := ts.appendItem(app.ID, feed.ID, "late")
	time.Sleep(syncMargin + 500*time.Millisecond)
	behind, ts2 := syncOf(map[string]any{"moduleId": feed.ID, "fromSync": ts1, "toSync": nowMS()})
	// A client whose last sync came after the item's stamp: not lowered
	// below its fromSync (the item is within syncMargin of it).
	recent := stamped.UnixMilli() + 1000
	if _, at := syncOf(map[string]any{"moduleId": feed.ID, "fromSync": recent}); at < recent {
		t.Errorf("fromSync %d while the read model is behind: syncTimestamp %d, before it", recent, at)
	}
	if err := hider.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if len(behind.Created) != 0 {
		t.Fatalf("the runner was held back, yet the sync shows %v", itemNames(behind.Created))
	}
	if ts2 > stamped.UnixMilli() {
		t.Errorf("syncTimestamp %d while the item stamped %d is not applied: its next sync would miss it", ts2, stamped.UnixMilli())
	}
	if ts2 < ts1 {
		t.Errorf("syncTimestamp %d, before the fromSync %d", ts2, ts1)
	}
	ts.syncedOnce(syncOf, feed.ID, "late")
	next, _ := syncOf(map[string]any{"moduleId": feed.ID, "fromSync": ts2, "toSync": nowMS()})
	if names := itemNames(next.Created); !slices.Equal(names, []string{"late"}) {
		t.Errorf("the sync after the item was applied, from %d: created %v, want [late]", ts2, names)
	}
}

// A sync while a transaction is open on the database answers a
// syncTimestamp no later than that transaction's start: it may yet commit
// changes, which the next sync must report however late they commit. Here
// the item is appended, and its transaction stays open for more than
// syncMargin across the sync before it commits.
func TestContentSyncWhileATransactionIsOpen(t *testing.T) {
	// Not parallel: its open transaction, which has written, holds back
	// the projection runners of every database for seconds (as
	// hideNewEvents does), which would stall the other tests' writes that
	// wait for them.
	ts, app, feed, syncOf, ts1 := syncedFeed(t, "Slow Writer App")

	ctx := context.Background()
	tx := ts.begin()
	appendItemTx(t, ts, tx, app.ID, feed.ID, "slow")
	var stamped time.Time
	if err := tx.QueryRow(ctx, `SELECT recorded_at FROM events WHERE stream_id = $1`, content.ItemStream("item-slow")).Scan(&stamped); err != nil {
		t.Fatal(err)
	}
	time.Sleep(syncMargin + 500*time.Millisecond)
	during, ts2 := syncOf(map[string]any{"moduleId": feed.ID, "fromSync": ts1})
	if ts2 > stamped.UnixMilli() {
		t.Errorf("syncTimestamp %d while a transaction holding a change stamped %d is still open", ts2, stamped.UnixMilli())
	}
	if len(during.Created) != 0 {
		t.Errorf("nothing committed, yet the sync shows %v", itemNames(during.Created))
	}
	// The metric of how far syncs were held back shows it (seconds).
	m := regexp.MustCompile(`(?m)^cms_sync_held_back_seconds_sum (\S+)$`).FindStringSubmatch(string(ts.get("/metrics", "").Body))
	var held float64
	if len(m) == 2 {
		held, _ = strconv.ParseFloat(m[1], 64)
	}
	if held < syncMargin.Seconds() {
		t.Errorf("cms_sync_held_back_seconds_sum %v, want at least %v after a sync held back for that long", m, syncMargin.Seconds())
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	ts.syncedOnce(syncOf, feed.ID, "slow")
	next, _ := syncOf(map[string]any{"moduleId": feed.ID, "fromSync": ts2})
	if names := itemNames(next.Created); !slices.Equal(names, []string{"slow"}) {
		t.Errorf("the sync after the transaction committed, from %d: created %v, want [slow]", ts2, names)
	}
}

// A transaction that took its id with a first append (here another
// context's event) before another item's transaction began, and appends
// its own item seconds later, comes first in the log with the later item
// stamp. A sync while both wait for the projection answers no later than
// the long transaction's first stamp, so that the next sync reports the
// other item too.
func TestContentSyncWhileALongTransactionIsPending(t *testing.T) {
	// Not parallel: for seconds it holds back the projection runners of
	// every database (see hideNewEvents), which would stall the other
	// tests' writes that wait for them.
	ts, app, feed, syncOf, ts1 := syncedFeed(t, "Long Writer App")
	ctx := context.Background()
	hider := hideNewEvents(t)
	tx := ts.begin()
	if _, err := ts.app.store.AppendTx(ctx, tx, rights.Stream("someone"), event.AnyVersion, event.Event{Data: rights.Granted{
		UserID: "someone", AppID: app.ID, ScopeKind: "app", ScopeID: app.ID, Permissions: []string{"read"}, By: "admin"}}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond)
	ts.appendItem(app.ID, feed.ID, "early") // a later transaction id, an earlier stamp than "late"
	time.Sleep(syncMargin + 500*time.Millisecond)
	appendItemTx(t, ts, tx, app.ID, feed.ID, "late")
	if names, ts2 := syncAcrossTheLag(t, ts, syncOf, feed.ID, ts1, tx, hider, "early", "late"); !slices.Contains(names, "early") {
		t.Errorf("the sync from %d, once both items were applied: created %v, want early among them", ts2, names)
	}
}

// A transaction that decides for seconds before it appends (as a held
// append does) stamps its item when it appends: an item committed by
// another transaction meanwhile is not reported after it.
func TestContentSyncAfterALongDecision(t *testing.T) {
	// Not parallel: for seconds it holds back the projection runners of
	// every database (see hideNewEvents), which would stall the other
	// tests' writes that wait for them.
	ts, app, feed, syncOf, ts1 := syncedFeed(t, "Slow Decider App")
	ctx := context.Background()
	hider := hideNewEvents(t)
	tx := ts.begin()
	// Begun, nothing written.
	if _, err := tx.Exec(ctx, `SELECT 1`); err != nil {
		t.Fatal(err)
	}
	time.Sleep(syncMargin + 500*time.Millisecond)
	ts.appendItem(app.ID, feed.ID, "other")
	appendItemTx(t, ts, tx, app.ID, feed.ID, "held")
	if names, ts2 := syncAcrossTheLag(t, ts, syncOf, feed.ID, ts1, tx, hider, "held", "other"); !slices.Contains(names, "held") {
		t.Errorf("the sync from %d, once both items were applied: created %v, want held among them", ts2, names)
	}
}

// syncAcrossTheLag commits tx and syncs module from fromSync while hider
// holds the runners back; then it ends hider, waits until a first sync
// shows the items named, and returns what a sync from the held-back
// answer lists as created, with that answer's syncTimestamp.
func syncAcrossTheLag(t *testing.T, ts *testServer, syncOf func(map[string]any) (syncView, int64), module string, fromSync int64,
	tx, hider pgx.Tx, names ...string) ([]string, int64) {
	t.Helper()
	ctx := context.Background()
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	_, behind := syncOf(map[string]any{"moduleId": module, "fromSync": fromSync})
	if err := hider.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	ts.syncedOnce(syncOf, module, names...)
	next, _ := syncOf(map[string]any{"moduleId": module, "fromSync": behind})
	return itemNames(next.Created), behind
}

// begin opens a transaction on the server's database, rolled back at the
// end of the test unless committed.
func (ts *testServer) begin() pgx.Tx {
	ts.t.Helper()
	ctx := context.Background()
	tx, err := ts.app.pool.Begin(ctx)
	if err != nil {
		ts.t.Fatal(err)
	}
	ts.t.Cleanup(func() { tx.Rollback(ctx) }) //nolint:errcheck
	return tx
}

// appendItemTx appends, in tx, the creation of a published item of module
// named name, as the create command does.
func appendItemTx(t *testing.T, ts *testServer, tx pgx.Tx, app, module, name string) {
	t.Helper()
	id := "item-" + name
	if _, err := ts.app.store.AppendTx(context.Background(), tx, content.ItemStream(id), event.NoStream, event.Event{Data: content.ItemCreated{
		ItemID: id, App: app, Module: module, Name: name, Values: map[string]any{"title": name},
		PublishedAt: time.Now().Add(-time.Minute), By: "admin"}}); err != nil {
		t.Fatal(err)
	}
}

// syncedFeed starts a server with an app named appName and its module
// Feed, and syncs Feed once with the app's token: it returns them, a
// function that syncs with that token (returning the answer and its
// syncTimestamp), and the first sync's syncTimestamp.
func syncedFeed(t *testing.T, appName string) (*testServer, appView, moduleView, func(map[string]any) (syncView, int64), int64) {
	t.Helper()
	ts := startContentServer(t)
	app := ts.createApp(appName)
	tok := ts.appToken(app)
	feed := ts.createModule(ts.admin, moduleBody(app.ID, "Feed", fld("title", ftText)))
	syncOf := func(body map[string]any) (syncView, int64) {
		t.Helper()
		var s syncView
		ts.mustNum(ts.post(syncPath, tok, body), 200, &s)
		at, err := s.SyncTimestamp.Int64()
		if err != nil {
			t.Fatalf("syncTimestamp %v: %v", s.SyncTimestamp, err)
		}
		return s, at
	}
	_, first := syncOf(map[string]any{"moduleId": feed.ID})
	return ts, app, feed, syncOf, first
}

// syncedOnce waits until a first sync of module lists exactly the items
// named (the projection applied them).
func (ts *testServer) syncedOnce(syncOf func(map[string]any) (syncView, int64), module string, names ...string) {
	ts.t.Helper()
	slices.Sort(names)
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		s, _ := syncOf(map[string]any{"moduleId": module})
		got := itemNames(s.Created)
		slices.Sort(got)
		if slices.Equal(got, names) {
			return
		}
		if time.Now().After(deadline) {
			ts.t.Fatalf("items %v were never applied: a first sync shows %v", names, got)
		}
	}
}

// appendItem appends the creation of a published item of module, as the
// create command does without its wait for the read model, and returns
// its stamp.
func (ts *testServer) appendItem(app, module, name string) time.Time {
	ts.t.Helper()
	ctx := context.Background()
	id := "item-" + name
	if _, err := ts.app.store.Append(ctx, content.ItemStream(id), event.NoStream, event.Event{Data: content.ItemCreated{
		ItemID: id, App: app, Module: module, Name: name, Values: map[string]any{"title": name},
		PublishedAt: time.Now().Add(-time.Minute), By: "admin"}}); err != nil {
		ts.t.Fatal(err)
	}
	var at time.Time
	if err := ts.app.pool.QueryRow(ctx, `SELECT recorded_at FROM events WHERE stream_id = $1`, content.ItemStream(id)).Scan(&at); err != nil {
		ts.t.Fatal(err)
	}
	return at
}

// hideNewEvents opens a transaction with a transaction id on another
// database than the test server's: until it ends, the runners of every
// database read no event committed after it began, and the server's
// database does not see it among its open transactions.
func hideNewEvents(t *testing.T) pgx.Tx {
	t.Helper()
	tx := pgtest.Begin(t, pgtest.ServerURL(t))
	if _, err := tx.Exec(context.Background(), `SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	return tx
}

// A search has CMS_SEARCH_TIMEOUT to answer: past it, it is stopped and
// answered 503 in HALO's shape, and the server goes on serving.
func TestContentSearchTimeBound(t *testing.T) {
	t.Parallel()
	ts := startServer(t, withConfig(func(c *Config) {
		c.ReadYourWrites = 20 * time.Second
		c.SearchTimeout = time.Nanosecond
	}))
	app := ts.createApp("Slow App")
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Notes", fld("title", ftText)))
	it := ts.createItem(ts.admin, itemBody(mod.ID, "note", map[string]any{"title": "a note"}, "publishedAt", nowMS()-1000))
	r := ts.post(searchPath, ts.admin, map[string]any{"moduleIds": []string{mod.ID}})
	expectHaloError(t, r, 503)
	if !strings.Contains(string(r.Body), "took longer than") {
		t.Errorf("%s: the message does not say why", r)
	}
	// Reads and writes other than searches are not bounded by it.
	if got := ts.item(it.ID); got.Name != "note" {
		t.Errorf("GET after a stopped search: %+v", got)
	}
}

// A module deleted after a client's last sync: the client's next sync,
// by id or by name, lists its items as deleted (they went with it), not a
// 404; a first sync of it, or of a name no module had, is a 404.
func TestContentSyncOfADeletedModule(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Doomed App")
	tok := ts.appToken(app)
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Doomed", fld("title", ftText)))
	past := nowMS() - 60_000
	a := ts.createItem(ts.admin, itemBody(mod.ID, "a", map[string]any{"title": "a"}, "publishedAt", past))
	b := ts.createItem(ts.admin, itemBody(mod.ID, "b", map[string]any{"title": "b"}, "publishedAt", past))
	concept := ts.createItem(ts.admin, itemBody(mod.ID, "draft", map[string]any{"title": "draft"}))
	var first syncView
	ts.mustNum(ts.post(syncPath, tok, map[string]any{"moduleName": "Doomed"}), 200, &first)
	if !sameSet(itemIDs(first.Created), []string{a.ID, b.ID}) {
		t.Fatalf("first sync: created %v, want a and b", itemNames(first.Created))
	}
	from, _ := first.SyncTimestamp.Int64()
	expectStatus(t, ts.do(request{method: "DELETE", path: modulePath + "/" + mod.ID, token: ts.admin}), 200)

	for _, body := range []map[string]any{{"moduleName": "Doomed", "fromSync": from}, {"moduleId": mod.ID, "fromSync": from}} {
		var inc syncView
		ts.mustNum(ts.post(syncPath, tok, body), 200, &inc)
		if !sameSet(inc.deletedIDs(), []string{a.ID, b.ID}) || len(inc.Created)+len(inc.Updated) != 0 {
			t.Errorf("sync %v after the module's deletion: created %v updated %v deleted %v, want a and b deleted (not the concept %s)",
				body, itemNames(inc.Created), itemNames(inc.Updated), inc.deletedIDs(), concept.ID)
		}
	}
	expectHaloError(t, ts.post(syncPath, tok, map[string]any{"moduleName": "Doomed"}), 404)
	expectHaloError(t, ts.post(syncPath, tok, map[string]any{"moduleName": "Never", "fromSync": from}), 404)
	// Another app's token does not learn of it.
	other := ts.appToken(ts.createApp("Other Doomed App"))
	expectHaloError(t, ts.post(syncPath, other, map[string]any{"moduleId": mod.ID, "fromSync": from}), 404)
}
