package main

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Modules ("content structures"), their fields and module types, through
// the real program over HTTP.

// newsFields is a module with a field of several kinds: a required text
// with rules, a ranged number, choice fields with their options in
// rules.values and in format.values.
func newsFields() []map[string]any {
	return []map[string]any{
		fld("title", ftText, "required", true, "rules", rules{"minLength": 1, "maxLength": 50}),
		fld("price", ftNumber, "rules", rules{"min": 0, "max": 1000}),
		fld("category", ftChoice, "rules", rules{"values": []string{"a", "b"}}),
		fld("labels", ftMultiChoice, "rules", rules{"values": []string{"x", "y", "z"}}),
		fld("size", ftDropdown, "format", map[string]any{"values": []string{"S", "M", "L"}}),
	}
}

func TestContentModules(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Content App")
	other := ts.createApp("Other App")

	var news moduleView
	t.Run("create", func(t *testing.T) {
		ts := ts.with(t)
		before := nowMS()
		body := moduleBody(app.ID, "News", newsFields()...)
		body["tags"] = []map[string]any{{"name": "Platform Name", "value": "android", "tagType": "000000000000000000000001"}}
		r := ts.post(modulePath, ts.admin, body)
		ts.mustJSON(r, 201, &news)
		var raw map[string]any
		ts.mustNum(r, 201, &raw)
		for k, want := range map[string]string{"id": "string", "app": "string", "name": "string", "isSingle": "boolean",
			"customerId": "number", "tags": "array", "pushTemplates": "array", "importers": "array", "exporters": "array",
			"externalId": "null", "createdAt": "number", "deletedAt": "null", "fields": "array"} {
			if got, ok := raw[k]; !ok || jsonKind(got) != want {
				t.Errorf("%s: %q is %v (%s), want a JSON %s", r, k, got, jsonKind(got), want)
			}
		}
		for _, k := range []string{"updatedAt", "createdBy", "updatedBy", "deletedBy"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("%s: no key %q", r, k)
			}
		}
		for _, k := range []string{"pushTemplates", "importers", "exporters"} {
			if a, _ := raw[k].([]any); len(a) != 0 {
				t.Errorf("%s: %s = %v, want []", r, k, raw[k])
			}
		}
		if news.App != app.ID || news.Name != "News" || news.IsSingle || news.CustomerID != 1 {
			t.Errorf("created module %+v", news)
		}
		if news.CreatedAt < before-1000 || news.CreatedAt > nowMS()+1000 {
			t.Errorf("createdAt %d is not the creation time in epoch ms (%d..%d)", news.CreatedAt, before, nowMS())
		}
		if news.CreatedBy == nil || *news.CreatedBy != "Administrator" {
			t.Errorf("createdBy %v, want the admin's display name", news.CreatedBy)
		}
		if len(news.Tags) != 1 || news.Tags[0].Name != "Platform Name" || news.Tags[0].Value != "android" {
			t.Errorf("tags %+v", news.Tags)
		}
		checkNewsFields(t, news)
	})
	if news.ID == "" {
		t.Fatal("no module to go on with")
	}

	t.Run("get", func(t *testing.T) {
		ts := ts.with(t)
		for _, p := range slashes(modulePath + "/" + news.ID) {
			var m moduleView
			ts.mustJSON(ts.get(p+"?withFields=true", ts.admin), 200, &m)
			if m.ID != news.ID || m.Name != "News" {
				t.Errorf("GET %s: %+v", p, m)
			}
			checkNewsFields(t, m)
		}
		expectHaloError(t, ts.get(modulePath+"/5f0000000000000000000000", ts.admin), 404)
		expectHaloError(t, ts.get(modulePath+"/"+news.ID, ""), 401)
		// Flags are true or false, nothing else.
		for _, p := range []string{modulePath + "?skip=maybe", modulePath + "?withFields=5",
			modulePath + "/" + news.ID + "?withFields=no", instancePath + "?skip=maybe"} {
			expectHaloError(t, ts.get(p, ts.admin), 400)
		}
	})

	// A second module created through the trailing-slash path, and one in
	// another app.
	offers := ts.createModule(ts.admin, moduleBody(app.ID, "Offers", fld("title", ftText)))
	var viaSlash moduleView
	time.Sleep(3 * time.Millisecond) // a later createdAt than Offers: the list's first item
	ts.mustJSON(ts.post(modulePath+"/", ts.admin, moduleBody(app.ID, "Events", fld("when", ftDate))), 201, &viaSlash)
	foreign := ts.createModule(ts.admin, moduleBody(other.ID, "Foreign", fld("title", ftText)))

	t.Run("list skip=true", func(t *testing.T) {
		ts := ts.with(t)
		for _, p := range slashes(modulePath) {
			var raw []map[string]any
			ts.mustNum(ts.get(p+"?skip=true&app="+app.ID, ts.admin), 200, &raw)
			var got []string
			for _, m := range raw {
				got = append(got, fmt.Sprint(m["id"]))
				if _, ok := m["fields"]; ok {
					t.Errorf("GET %s?skip=true without withFields: module %v has fields", p, m["name"])
				}
			}
			if want := []string{news.ID, offers.ID, viaSlash.ID}; !sameSet(got, want) {
				t.Errorf("GET %s?skip=true&app=A: %v, want %v", p, got, want)
			}
		}
		var all []moduleView
		ts.mustJSON(ts.get(modulePath+"?skip=true", ts.admin), 200, &all)
		var got []string
		for _, m := range all {
			got = append(got, m.ID)
		}
		if want := []string{news.ID, offers.ID, viaSlash.ID, foreign.ID}; !sameSet(got, want) {
			t.Errorf("admin's module list %v, want %v", got, want)
		}
		var withFields []moduleView
		ts.mustJSON(ts.get(modulePath+"?skip=true&withFields=true&app="+app.ID, ts.admin), 200, &withFields)
		for _, m := range withFields {
			if m.ID == news.ID {
				checkNewsFields(t, m)
			}
			if len(m.Fields) == 0 {
				t.Errorf("withFields=true: module %s has no fields", m.Name)
			}
		}
		// A module without fields: "fields" is [] with withFields=true, absent
		// without.
		bareApp := ts.createApp("Bare App")
		bare := ts.createModule(ts.admin, moduleBody(bareApp.ID, "Bare"))
		for q, want := range map[string]string{"?skip=true&withFields=true": "[]", "?skip=true": "", "?skip=true&withFields=false": ""} {
			var raw []map[string]json.RawMessage
			ts.mustJSON(ts.get(modulePath+q+"&app="+bareApp.ID, ts.admin), 200, &raw)
			found := false
			for _, m := range raw {
				if string(m["id"]) == `"`+bare.ID+`"` {
					found = true
					if got, ok := m["fields"]; string(got) != want || ok != (want != "") {
						t.Errorf("%s: a module without fields has fields %q (present %v), want %q", q, got, ok, want)
					}
				}
			}
			if !found {
				t.Errorf("%s: module Bare not listed", q)
			}
		}
	})

	t.Run("list paginated", func(t *testing.T) {
		ts := ts.with(t)
		var env struct {
			Search     map[string]any   `json:"search"`
			Sort       map[string]any   `json:"sort"`
			Pagination *paginationView  `json:"pagination"`
			Items      []moduleView     `json:"items"`
			Raw        []map[string]any `json:"-"`
		}
		ts.mustJSON(ts.get(modulePath+"?app="+app.ID, ts.admin), 200, &env)
		if env.Pagination == nil || env.Search == nil || env.Sort == nil {
			t.Fatalf("no envelope: %+v", env)
		}
		if f, ok := env.Search["facets"].(map[string]any); !ok || len(f) != 0 {
			t.Errorf("search = %v, want {facets: {}}", env.Search)
		}
		if env.Sort["query"] != "updatedAt desc" {
			t.Errorf("sort = %v, want {query: updatedAt desc}", env.Sort)
		}
		if p := *env.Pagination; p != (paginationView{Page: 1, Limit: 10, Offset: 0, TotalItems: 3, TotalPages: 1}) {
			t.Errorf("pagination %+v, want page 1 limit 10 offset 0 totalItems 3 totalPages 1", p)
		}
		if len(env.Items) != 3 {
			t.Errorf("%d items, want 3", len(env.Items))
		}
		// Most recently changed first: Events was created last.
		if len(env.Items) > 0 && env.Items[0].ID != viaSlash.ID {
			t.Errorf("first item %s, want the newest module (Events)", env.Items[0].Name)
		}
		// Page 2 of size 1.
		var p2 struct {
			Pagination paginationView `json:"pagination"`
			Items      []moduleView   `json:"items"`
		}
		ts.mustJSON(ts.get(modulePath+"/?page=2&limit=1&app="+app.ID, ts.admin), 200, &p2)
		if p2.Pagination != (paginationView{Page: 2, Limit: 1, Offset: 1, TotalItems: 3, TotalPages: 3}) || len(p2.Items) != 1 {
			t.Errorf("page 2 limit 1: %+v with %d items", p2.Pagination, len(p2.Items))
		} else if len(env.Items) == 3 && p2.Items[0].ID != env.Items[1].ID {
			t.Errorf("page 2 limit 1 holds %s, want the second of the full list (%s)", p2.Items[0].Name, env.Items[1].Name)
		}
	})

	t.Run("update", func(t *testing.T) {
		ts := ts.with(t)
		old := ts.module(news.ID)
		title, _ := old.field("title")
		price, _ := old.field("price")
		time.Sleep(5 * time.Millisecond)
		// title keeps its id (sent), price keeps it by name, "summary" is new,
		// "labels" and "size" go.
		tf := fld("title", ftText, "id", title.ID, "required", true, "rules", rules{"maxLength": 80})
		body := moduleBody(app.ID, "News Renamed", tf, fld("price", ftNumber), fld("summary", ftLongText),
			fld("category", ftChoice, "rules", rules{"values": []string{"a", "b", "c"}}))
		body["isSingle"] = false
		var m moduleView
		for i, p := range slashes(modulePath + "/" + news.ID) {
			if i == 1 {
				body["name"] = "News"
			}
			ts.mustJSON(ts.put(p, ts.admin, body), 200, &m)
		}
		if m.Name != "News" || m.ID != news.ID {
			t.Errorf("after the updates: %+v", m)
		}
		if got := m.fieldNames(); !slices.Equal(got, []string{"title", "price", "summary", "category"}) {
			t.Errorf("fields %v, want [title price summary category]", got)
		}
		if f, _ := m.field("title"); f.ID != title.ID || f.Rules["maxLength"] != float64(80) {
			t.Errorf("title: id %s (want %s kept), rules %v", f.ID, title.ID, f.Rules)
		}
		if f, _ := m.field("price"); f.ID != price.ID {
			t.Errorf("price sent by name: id %s, want %s kept", f.ID, price.ID)
		}
		if f, _ := m.field("summary"); f.ID == "" || f.ID == title.ID || f.ID == price.ID {
			t.Errorf("new field summary: id %q", f.ID)
		}
		if f, _ := m.field("category"); !strings.Contains(string(f.Format), `"c"`) {
			t.Errorf("category format %s, want the new values", f.Format)
		}
		got := ts.module(news.ID)
		if got.UpdatedAt == nil || *got.UpdatedAt < got.CreatedAt || !near(*got.UpdatedAt, time.Minute) {
			t.Errorf("updatedAt %v (createdAt %d)", got.UpdatedAt, got.CreatedAt)
		}
		if got.UpdatedBy == nil || *got.UpdatedBy != "Administrator" {
			t.Errorf("updatedBy %v", got.UpdatedBy)
		}
		if len(got.Fields) != 4 {
			t.Errorf("GET after PUT: fields %v", got.fieldNames())
		}
		// The most recently updated module leads the list now.
		var list []moduleView
		ts.mustJSON(ts.get(modulePath+"?skip=true&app="+app.ID, ts.admin), 200, &list)
		if len(list) == 0 || list[0].ID != news.ID {
			t.Errorf("after the update the list starts with %v, want News", list)
		}
		// Unknown module.
		expectHaloError(t, ts.put(modulePath+"/5f0000000000000000000000", ts.admin, body), 404)
		// The module stays in its app and keeps its id: another app or id in
		// the body is a 400 that changes nothing.
		before := ts.module(news.ID)
		moved := moduleBody(other.ID, "News Moved", fld("title", ftText))
		otherID := moduleBody(app.ID, "News Moved", fld("title", ftText))
		otherID["id"] = offers.ID
		for field, b := range map[string]map[string]any{"app": moved, "id": otherID} {
			r := ts.put(modulePath+"/"+news.ID, ts.admin, b)
			expectHaloError(t, r, 400)
			if ex := haloExtra(t, r, 400); ex != nil && ex["field"] != field {
				t.Errorf("%s: extra.field %v, want %s", r, ex["field"], field)
			}
		}
		if after := ts.module(news.ID); after.Name != before.Name || after.App != app.ID || len(after.Fields) != len(before.Fields) {
			t.Errorf("a refused PUT changed the module: %+v", after)
		}
	})

	t.Run("wire shape against the fixtures", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.get(modulePath+"?skip=true&withFields=true&app="+app.ID, ts.admin)
		expectStatus(t, r, 200)
		// Only modules that were updated have updatedAt/updatedBy set, as
		// in the fixture: compare News alone.
		var all []any
		if err := decodeNum(r.Body, &all); err != nil {
			t.Fatal(err)
		}
		var onlyNews []any
		for _, m := range all {
			if m.(map[string]any)["id"] == news.ID {
				onlyNews = append(onlyNews, m)
			}
		}
		if len(onlyNews) != 1 {
			t.Fatalf("News not in %s", r)
		}
		checkShape(t, "modules-list-with-fields.android.json", []any{loadFixture(t, "modules-list-with-fields.android.json")}, onlyNews)

		var env map[string]any
		ts.mustNum(ts.get(modulePath+"?limit=1&app="+app.ID, ts.admin), 200, &env)
		checkShape(t, "modules-list-paginated.ios.json", []any{loadFixture(t, "modules-list-paginated.ios.json")}, env)
		r = ts.get(modulePath+"?skip=true&app="+app.ID, ts.admin)
		expectStatus(t, r, 200)
		checkShapeOf(t, r, "modules-list-not-paginated.android.json")
		checkShapeOf(t, r, "modules-list-not-paginated.ios.json")
	})

	t.Run("duplicate names", func(t *testing.T) {
		ts := ts.with(t)
		ex := haloExtra(t, ts.post(modulePath, ts.admin, moduleBody(app.ID, "nEwS")), 409)
		_ = ex
		expectHaloError(t, ts.post(modulePath, ts.admin, moduleBody(app.ID, " News ")), 409)
		// Another app may use the name.
		ts.createModule(ts.admin, moduleBody(other.ID, "News"))
		// Renaming onto a taken name.
		expectHaloError(t, ts.put(modulePath+"/"+offers.ID, ts.admin, moduleBody(app.ID, "NEWS", fld("title", ftText))), 409)
		if m := ts.module(offers.ID); m.Name != "Offers" {
			t.Errorf("a refused rename changed the name to %q", m.Name)
		}
		// A change of case of one's own name is no conflict.
		var m moduleView
		ts.mustJSON(ts.put(modulePath+"/"+offers.ID, ts.admin, moduleBody(app.ID, "OFFERS", fld("title", ftText))), 200, &m)
		if m.Name != "OFFERS" {
			t.Errorf("renamed to %q, want OFFERS", m.Name)
		}
	})

	t.Run("delete", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.createModule(ts.admin, moduleBody(app.ID, "Short-lived", fld("x", ftText)))
		past := nowMS() - 60_000
		live := ts.createItem(ts.admin, itemBody(m.ID, "live", map[string]any{"x": "a"}, "publishedAt", past))
		draft := ts.createItem(ts.admin, itemBody(m.ID, "draft", map[string]any{"x": "b"}))
		appTok := ts.appToken(app)
		byIDs := map[string]any{"instanceIds": []string{live.ID, draft.ID}, "pagination": map[string]any{"skip": true}}
		if got := ts.searchIDs(appTok, byIDs); !sameSet(got, []string{live.ID}) {
			t.Fatalf("before the module's deletion the app finds %v, want [%s]", got, live.ID)
		}
		for _, p := range slashes(modulePath + "/" + m.ID)[1:] {
			expectStatus(t, ts.do(request{method: "DELETE", path: p, token: ts.admin}), 200)
		}
		// Its items are deleted with it: no search finds them (not even by
		// id, with no module named), the app cannot read them, and they
		// take no more commands.
		for _, tok := range []string{appTok, ts.admin} {
			if got := ts.searchIDs(tok, byIDs); len(got) != 0 {
				t.Errorf("after the module's deletion a search by ids finds %v", got)
			}
		}
		expectHaloError(t, ts.get(instancePath+"/"+live.ID, appTok), 404)
		if it := ts.item(live.ID); it.DeletedAt == nil {
			t.Errorf("an item of a deleted module has no deletedAt: %+v", it)
		}
		expectHaloError(t, ts.put(instancePath+"/"+draft.ID, ts.admin, itemBody(m.ID, "draft", map[string]any{"x": "c"})), 404)
		expectHaloError(t, ts.do(request{method: "DELETE", path: instancePath + "/" + draft.ID, token: ts.admin}), 404)
		expectHaloError(t, ts.post(instancePath+"/"+live.ID+"/publish", ts.admin, map[string]any{}), 404)
		expectStatus(t, ts.get(instancePath+"/"+live.ID+"/history", ts.admin), 200) // the log keeps it
		var list []moduleView
		ts.mustJSON(ts.get(modulePath+"?skip=true&app="+app.ID, ts.admin), 200, &list)
		for _, x := range list {
			if x.ID == m.ID {
				t.Errorf("a deleted module is listed")
			}
		}
		expectHaloError(t, ts.do(request{method: "DELETE", path: modulePath + "/" + m.ID, token: ts.admin}), 404)
		if r := ts.get(modulePath+"/"+m.ID, ts.admin); r.Status != 404 {
			var dm moduleView
			ts.mustJSON(r, 200, &dm)
			if dm.DeletedAt == nil {
				t.Errorf("GET of a deleted module: %s, want 404 or deletedAt set", r)
			}
		}
		// The name is free again.
		ts.createModule(ts.admin, moduleBody(app.ID, "short-lived"))
		// Items cannot be created in a deleted module.
		expectHaloError(t, ts.post(instancePath, ts.admin, itemBody(m.ID, "x", nil)), 404)
	})

	t.Run("restore after a field change", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.createModule(ts.admin, moduleBody(app.ID, "Changing", fld("price", ftNumber)))
		it := ts.createItem(ts.admin, itemBody(m.ID, "priced", map[string]any{"price": 5}))
		expectStatus(t, ts.do(request{method: "DELETE", path: instancePath + "/" + it.ID, token: ts.admin}), 200)
		// No live item holds a price, so the change is accepted...
		ts.mustJSON(ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Changing", fld("price", ftText))), 200, &moduleView{})
		// ...and the deleted item, whose price is a number, cannot come back
		// into a module whose price is a text.
		expectHaloError(t, ts.post(instancePath+"/"+it.ID+"/restore", ts.admin, map[string]any{}), 409)
		if got := ts.item(it.ID); got.DeletedAt == nil {
			t.Errorf("a refused restore brought the item back")
		}
		// Back to a number, it can.
		ts.mustJSON(ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Changing", fld("price", ftNumber))), 200, &moduleView{})
		if got := ts.transit(ts.admin, it.ID, "restore", map[string]any{}); got.DeletedAt != nil {
			t.Errorf("restored item still deleted: %+v", got)
		}
	})

	t.Run("rights", func(t *testing.T) {
		ts := ts.with(t)
		_, none := ts.userWith("mod-nobody")
		_, reader := ts.userWith("mod-reader", grantTo{app: app.ID, perms: []string{"read"}})
		_, writer := ts.userWith("mod-writer", grantTo{app: app.ID, perms: []string{"write"}})
		_, updater := ts.userWith("mod-updater", grantTo{app: app.ID, module: offers.ID, perms: []string{"update", "read"}})
		_, deleter := ts.userWith("mod-deleter", grantTo{app: app.ID, module: offers.ID, perms: []string{"delete"}})

		expectHaloError(t, ts.post(modulePath, "", moduleBody(app.ID, "NoToken")), 401)
		expectHaloError(t, ts.post(modulePath, none, moduleBody(app.ID, "ByNobody")), 403)
		expectHaloError(t, ts.post(modulePath, reader, moduleBody(app.ID, "ByReader")), 403)
		expectHaloError(t, ts.post(modulePath, writer, moduleBody(other.ID, "WrongApp")), 403)
		wm := ts.createModule(writer, moduleBody(app.ID, "ByWriter", fld("t", ftText)))
		if wm.CreatedBy == nil || *wm.CreatedBy != "User mod-writer" {
			t.Errorf("createdBy %v, want the writer's display name", wm.CreatedBy)
		}

		body := moduleBody(app.ID, "OFFERS", fld("title", ftText), fld("extra", ftText))
		expectHaloError(t, ts.put(modulePath+"/"+offers.ID, writer, body), 403)
		expectHaloError(t, ts.put(modulePath+"/"+offers.ID, deleter, body), 403)
		expectHaloError(t, ts.put(modulePath+"/"+news.ID, updater, body), 403)
		expectStatus(t, ts.put(modulePath+"/"+offers.ID, updater, body), 200)

		expectHaloError(t, ts.do(request{method: "DELETE", path: modulePath + "/" + offers.ID, token: updater}), 403)
		expectHaloError(t, ts.do(request{method: "DELETE", path: modulePath + "/" + news.ID, token: deleter}), 403)
		expectHaloError(t, ts.do(request{method: "DELETE", path: modulePath + "/" + offers.ID}), 401)

		// Reads: nobody sees no modules of the app; the reader sees them.
		var list []moduleView
		ts.mustJSON(ts.get(modulePath+"?skip=true", none), 200, &list)
		if len(list) != 0 {
			t.Errorf("a user without rights lists %d modules", len(list))
		}
		list = nil
		ts.mustJSON(ts.get(modulePath+"?skip=true", reader), 200, &list)
		for _, m := range list {
			if m.App != app.ID {
				t.Errorf("the reader of app A lists module %s of app %s", m.Name, m.App)
			}
		}
		if len(list) < 4 {
			t.Errorf("the reader lists %d modules of app A, want all of them", len(list))
		}
		if r := ts.get(modulePath+"/"+foreign.ID, reader); r.Status != 403 && r.Status != 404 {
			t.Errorf("%s: the reader of app A read a module of app B", r)
		}
		expectStatus(t, ts.do(request{method: "DELETE", path: modulePath + "/" + offers.ID, token: deleter}), 200)
	})
}

// checkNewsFields checks the fields of newsFields() as the API answers
// them: ids, module, the embedded field type, format and rules.
func checkNewsFields(t *testing.T, m moduleView) {
	t.Helper()
	want := map[string]int{"title": ftText, "price": ftNumber, "category": ftChoice, "labels": ftMultiChoice, "size": ftDropdown}
	if got := m.fieldNames(); !slices.Equal(got, []string{"title", "price", "category", "labels", "size"}) {
		t.Errorf("module %s: fields %v, want [title price category labels size] in order", m.Name, got)
		return
	}
	seen := map[string]bool{}
	for _, f := range m.Fields {
		n := want[f.Name]
		if f.ID == "" || seen[f.ID] || f.Module != m.ID || f.CustomerID != 1 {
			t.Errorf("field %s: id %q module %q customerId %d", f.Name, f.ID, f.Module, f.CustomerID)
		}
		seen[f.ID] = true
		ft := f.FieldType
		if ft.ID != ftID(n) || ft.Name != fieldTypeNames[n] || ft.IsLongValue != fieldTypeLong[n] || len(ft.Rules) == 0 {
			t.Errorf("field %s: fieldType %+v, want id %s name %s isLongValue %v with rules", f.Name, ft, ftID(n), fieldTypeNames[n], fieldTypeLong[n])
		}
		for _, r := range ft.Rules {
			if r.Rule == "" || !strings.HasPrefix(r.Error, "validator.") || r.Params == nil {
				t.Errorf("field %s: rule %+v", f.Name, r)
			}
		}
		var format map[string]any
		if err := json.Unmarshal(f.Format, &format); err != nil {
			t.Errorf("field %s: format %s is not an object", f.Name, f.Format)
		}
		switch f.Name {
		case "title":
			if !f.Required || f.Localized || f.Rules["minLength"] != float64(1) || f.Rules["maxLength"] != float64(50) {
				t.Errorf("title: required %v localized %v rules %v", f.Required, f.Localized, f.Rules)
			}
			if f.Description != "the title field" {
				t.Errorf("title: description %q", f.Description)
			}
			if len(format) != 0 {
				t.Errorf("title: format %s, want {}", f.Format)
			}
		case "price":
			if f.Required || f.Rules["min"] != float64(0) || f.Rules["max"] != float64(1000) {
				t.Errorf("price: required %v rules %v", f.Required, f.Rules)
			}
		case "category", "labels", "size":
			opts := map[string][]any{"category": {"a", "b"}, "labels": {"x", "y", "z"}, "size": {"S", "M", "L"}}[f.Name]
			if vs, _ := format["values"].([]any); !slices.Equal(vs, opts) {
				t.Errorf("%s: format %s, want values %v", f.Name, f.Format, opts)
			}
			if vs, _ := f.Rules["values"].([]any); !slices.Equal(vs, opts) {
				t.Errorf("%s: rules %v, want values %v", f.Name, f.Rules, opts)
			}
		}
	}
}

func TestContentModuleFieldChanges(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Fields App")

	t.Run("bad field definitions", func(t *testing.T) {
		ts := ts.with(t)
		cases := map[string][]map[string]any{
			"unknown type":               {fld("x", 99)},
			"type not a catalog id":      {{"name": "x", "type": "text"}},
			"min > max":                  {fld("n", ftNumber, "rules", rules{"min": 10, "max": 1})},
			"minLength > maxLength":      {fld("t", ftText, "rules", rules{"minLength": 10, "maxLength": 1})},
			"bad pattern":                {fld("t", ftText, "rules", rules{"pattern": "([a-z"})},
			"choice without values":      {fld("c", ftChoice)},
			"multi choice, empty values": {fld("c", ftMultiChoice, "rules", rules{"values": []string{}})},
			"dropdown without values":    {fld("c", ftDropdown, "format", map[string]any{})},
			"duplicate field name":       {fld("a", ftText), fld("A", ftNumber)},
			"empty field name":           {fld("", ftText)},
			"min on a text":              {fld("t", ftText, "rules", rules{"min": 1})},
			"default not a valid value":  {fld("c", ftChoice, "rules", rules{"values": []string{"a"}, "default": "b"})},
		}
		for name, fields := range cases {
			r := ts.post(modulePath, ts.admin, moduleBody(app.ID, "Bad "+name, fields...))
			if r.Status != 400 {
				t.Errorf("%s: %s, want 400", name, r)
				continue
			}
			expectHaloError(t, r, 400)
		}
		expectHaloError(t, ts.post(modulePath, ts.admin, moduleBody(app.ID, "")), 400)
		expectHaloError(t, ts.post(modulePath, ts.admin, map[string]any{"name": "No app"}), 400)
		expectHaloError(t, ts.post(modulePath, ts.admin, `{"app": "`+app.ID+`", "name": `), 400)
		var list []moduleView
		ts.mustJSON(ts.get(modulePath+"?skip=true&app="+app.ID, ts.admin), 200, &list)
		if len(list) != 0 {
			t.Errorf("refused modules were created: %d", len(list))
		}
		// The same on an update, which changes nothing.
		m := ts.createModule(ts.admin, moduleBody(app.ID, "Good", fld("t", ftText)))
		for name, fields := range cases {
			r := ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Good", fields...))
			if r.Status != 400 {
				t.Errorf("PUT %s: %s, want 400", name, r)
			}
		}
		if got := ts.module(m.ID).fieldNames(); !slices.Equal(got, []string{"t"}) {
			t.Errorf("refused updates changed the fields to %v", got)
		}
	})

	t.Run("incompatible change", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.createModule(ts.admin, moduleBody(app.ID, "Catalog", fld("title", ftText), fld("count", ftText)))
		a := ts.createItem(ts.admin, itemBody(m.ID, "with title", map[string]any{"title": "A", "count": "12"}))
		b := ts.createItem(ts.admin, itemBody(m.ID, "without title", map[string]any{"count": "many"}))
		_ = a

		// Making title required: b lacks it.
		r := ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Catalog", fld("title", ftText, "required", true), fld("count", ftText)))
		ex := haloExtra(t, r, 409)
		checkAffected(t, r, ex, map[string]string{b.ID: "title"}, "validator.required")

		// count from Text to Number: both items hold strings.
		r = ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Catalog", fld("title", ftText), fld("count", ftNumber)))
		ex = haloExtra(t, r, 409)
		checkAffected(t, r, ex, map[string]string{a.ID: "count", b.ID: "count"}, "validator.3")

		// Removing a field some item holds a value of: unknown field.
		r = ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Catalog", fld("title", ftText)))
		ex = haloExtra(t, r, 409)
		checkAffected(t, r, ex, map[string]string{a.ID: "count", b.ID: "count"}, "")

		// A max length that one item exceeds.
		r = ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Catalog", fld("title", ftText), fld("count", ftText, "rules", rules{"maxLength": 2})))
		ex = haloExtra(t, r, 409)
		checkAffected(t, r, ex, map[string]string{b.ID: "count"}, "validator.10")

		if got := ts.module(m.ID); !slices.Equal(got.fieldNames(), []string{"title", "count"}) {
			t.Errorf("refused changes changed the fields: %v", got.fieldNames())
		} else if f, _ := got.field("title"); f.Required {
			t.Errorf("a refused change made title required")
		} else if f, _ := got.field("count"); f.FieldType.ID != ftID(ftText) {
			t.Errorf("a refused change made count a %s", f.FieldType.Name)
		}

		// Compatible changes pass: a new optional field, a looser rule.
		expectStatus(t, ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Catalog", fld("title", ftText),
			fld("count", ftText, "rules", rules{"maxLength": 10}), fld("note", ftLongText))), 200)
		// Once b is deleted, title can become required.
		expectStatus(t, ts.do(request{method: "DELETE", path: instancePath + "/" + b.ID, token: ts.admin}), 200)
		expectStatus(t, ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Catalog", fld("title", ftText, "required", true),
			fld("count", ftText), fld("note", ftLongText))), 200)
		if f, _ := ts.module(m.ID).field("title"); !f.Required {
			t.Errorf("title is not required after the accepted change")
		}
	})

	t.Run("a relation given another target module", func(t *testing.T) {
		ts := ts.with(t)
		au := ts.createModule(ts.admin, moduleBody(app.ID, "Authors", fld("title", ftText)))
		other := ts.createModule(ts.admin, moduleBody(app.ID, "Others", fld("title", ftText)))
		author := ts.createItem(ts.admin, itemBody(au.ID, "author", map[string]any{"title": "a"}))
		stranger := ts.createItem(ts.admin, itemBody(other.ID, "stranger", map[string]any{"title": "s"}))
		art := ts.createModule(ts.admin, moduleBody(app.ID, "Articles", fld("title", ftText), fld("co", ftMultiRelation)))
		a1 := ts.createItem(ts.admin, itemBody(art.ID, "a1", map[string]any{"title": "1", "co": []any{author.ID, stranger.ID}}))
		ts.createItem(ts.admin, itemBody(art.ID, "a2", map[string]any{"title": "2", "co": []any{author.ID}}))
		narrowed := moduleBody(app.ID, "Articles", fld("title", ftText), fld("co", ftMultiRelation, "rules", rules{"module": au.ID}))
		r := ts.put(modulePath+"/"+art.ID, ts.admin, narrowed)
		expectHaloError(t, r, 409)
		if ex := haloExtra(t, r, 409); ex != nil {
			var first map[string]any
			if list, _ := ex["affectedItems"].([]any); len(list) > 0 {
				first, _ = list[0].(map[string]any)
			}
			if fmt.Sprint(ex["affectedCount"]) != "1" || first["id"] != a1.ID || first["field"] != "co" || first["error"] != "validator.relationTarget" {
				t.Errorf("narrowing the relation's target: extra %v, want a1 on co (validator.relationTarget)", ex)
			}
		}
		if f, _ := ts.module(art.ID).field("co"); f.Rules["module"] != nil {
			t.Errorf("the refused change set the target: %v", f.Rules)
		}
		// Its stray item deleted, the change goes through.
		expectStatus(t, ts.do(request{method: "DELETE", path: instancePath + "/" + stranger.ID, token: ts.admin}), 200)
		expectStatus(t, ts.put(modulePath+"/"+art.ID, ts.admin, narrowed), 200)
	})

	t.Run("null is no value", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.createModule(ts.admin, moduleBody(app.ID, "Nulls", fld("title", ftText), fld("subtitle", ftText)))
		// A field items hold only as null can be removed (iOS sends every
		// key it knows, null when empty).
		y := ts.createItem(ts.admin, itemBody(m.ID, "y", map[string]any{"title": "y", "subtitle": nil}))
		expectStatus(t, ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Nulls", fld("title", ftText))), 200)
		// A null for a field the module no longer has is dropped, not refused;
		// a value for it still is.
		var got instView
		ts.mustNum(ts.put(instancePath+"/"+y.ID, ts.admin, itemBody(m.ID, "y2", map[string]any{"title": "y", "subtitle": nil, "bogus": nil})), 200, &got)
		if _, ok := got.Values["subtitle"]; ok || got.Name != "y2" {
			t.Errorf("after the PUT: %+v, want no subtitle key", got)
		}
		expectViolation(t, ts.put(instancePath+"/"+y.ID, ts.admin, itemBody(m.ID, "y3", map[string]any{"title": "y", "subtitle": "x"})), "subtitle", "validator.unknown")
	})
}

// checkAffected asserts extra.affectedItems lists exactly want (item id →
// field) and affectedCount agrees.
func checkAffected(t *testing.T, r response, ex map[string]any, want map[string]string, code string) {
	t.Helper()
	if ex == nil {
		return
	}
	entries, ids := affectedItems(ex)
	got := map[string]string{}
	for i, m := range entries {
		id := ids[i]
		got[id], _ = m["field"].(string)
		if code != "" && m["error"] != code {
			t.Errorf("%s: affected item %v: error %v, want %s", r, id, m["error"], code)
		}
		if s, _ := m["rule"].(string); s == "" {
			t.Errorf("%s: affected item %v has no rule", r, id)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: affectedItems %v, want %v", r, got, want)
	}
	if n, _ := ex["affectedCount"].(json.Number); n.String() != fmt.Sprint(len(want)) {
		t.Errorf("%s: affectedCount %v, want %d", r, ex["affectedCount"], len(want))
	}
}

func TestContentModuleTypes(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Types App")
	_, editor := ts.userWith("type-editor", grantTo{app: app.ID, perms: []string{"read", "write", "update", "delete"}})

	typeBody := func(name string, single bool, fields ...map[string]any) map[string]any {
		return map[string]any{"name": name, "isSingle": single, "fields": fields}
	}
	var article, config moduleTypeView
	t.Run("create", func(t *testing.T) {
		ts := ts.with(t)
		ts.mustJSON(ts.post(moduleTypePath, ts.admin, typeBody("Article", false,
			fld("title", ftText, "required", true, "rules", rules{"maxLength": 120}),
			fld("body", ftLongText), fld("kind", ftChoice, "rules", rules{"values": []string{"news", "blog"}}))), 201, &article)
		if article.ID == "" || article.Name != "Article" || article.IsSingle || len(article.Fields) != 3 {
			t.Fatalf("created type %+v", article)
		}
		for _, f := range article.Fields {
			if f.CreatedAt == nil || f.UpdatedAt == nil || !near(*f.CreatedAt, time.Minute) || !near(*f.UpdatedAt, time.Minute) {
				t.Errorf("created type's field %s: createdAt %v, updatedAt %v; want now", f.Name, f.CreatedAt, f.UpdatedAt)
			}
		}
		ts.mustJSON(ts.post(moduleTypePath+"/", ts.admin, typeBody("Config", true, fld("endpoint", ftWebsite))), 201, &config)
		if !config.IsSingle || len(config.Fields) != 1 || config.Fields[0].FieldType.ID != ftID(ftWebsite) {
			t.Errorf("created type %+v", config)
		}
		// Admins only.
		expectHaloError(t, ts.post(moduleTypePath, editor, typeBody("Mine", false)), 403)
		expectHaloError(t, ts.post(moduleTypePath, "", typeBody("Mine", false)), 401)
		// Refused before the body's own faults.
		for _, body := range []any{`{"name": `, map[string]any{"isSingle": true}, typeBody("Bad", false, fld("x", 42))} {
			expectHaloError(t, ts.post(moduleTypePath, editor, body), 403)
			expectHaloError(t, ts.put(moduleTypePath+"/5f00000000000000000000aa", editor, body), 403)
		}
		expectHaloError(t, ts.post(moduleTypePath, ts.admin, typeBody("Bad", false, fld("x", 42))), 400)
		expectHaloError(t, ts.post(moduleTypePath, ts.admin, typeBody("", false)), 400)
		if ex := haloExtra(t, ts.put(moduleTypePath+"/"+strings.Repeat("a", 65), ts.admin, typeBody("Long", false)), 400); ex != nil && ex["field"] != "id" {
			t.Errorf("a 65-character type id: extra %v, want field id", ex)
		}
	})
	if article.ID == "" {
		t.Fatal("no type")
	}

	t.Run("read and change", func(t *testing.T) {
		ts := ts.with(t)
		for _, p := range slashes(moduleTypePath) {
			var list []moduleTypeView
			ts.mustJSON(ts.get(p, editor), 200, &list)
			var got []string
			for _, x := range list {
				got = append(got, x.ID)
			}
			if !sameSet(got, []string{article.ID, config.ID}) {
				t.Errorf("GET %s: %v", p, got)
			}
		}
		expectHaloError(t, ts.get(moduleTypePath, ""), 401)
		body := typeBody("Article", false, fld("title", ftText, "required", true, "rules", rules{"maxLength": 120}),
			fld("body", ftLongText), fld("kind", ftChoice, "rules", rules{"values": []string{"news", "blog", "page"}}), fld("cover", ftImage))
		expectHaloError(t, ts.put(moduleTypePath+"/"+article.ID, editor, body), 403)
		var up moduleTypeView
		ts.mustJSON(ts.put(moduleTypePath+"/"+article.ID+"/", ts.admin, body), 200, &up)
		if up.ID != article.ID || len(up.Fields) != 4 {
			t.Errorf("updated type %+v", up)
		}
		if up.Fields[0].ID != article.Fields[0].ID {
			t.Errorf("title's id changed from %s to %s", article.Fields[0].ID, up.Fields[0].ID)
		}
		article = up
	})

	t.Run("module from a type", func(t *testing.T) {
		ts := ts.with(t)
		b := moduleBody(app.ID, "Blog")
		b["moduleType"] = article.ID
		delete(b, "fields")
		m := ts.createModule(editor, b)
		got := ts.module(m.ID)
		if !slices.Equal(got.fieldNames(), []string{"title", "body", "kind", "cover"}) {
			t.Fatalf("module from type: fields %v", got.fieldNames())
		}
		if f, _ := got.field("title"); !f.Required || f.FieldType.ID != ftID(ftText) || f.Module != m.ID {
			t.Errorf("copied title %+v", f)
		}
		// The copied rules hold.
		expectViolation(t, ts.post(instancePath, editor, itemBody(m.ID, "x", map[string]any{"kind": "other", "title": "t"})), "kind", "validator.16")
		ts.createItem(editor, itemBody(m.ID, "ok", map[string]any{"kind": "page", "title": "t"}))
		// An unknown module type.
		b["moduleType"] = "5f00000000000000000000ff"
		b["name"] = "Ghost"
		if r := ts.post(modulePath, editor, b); r.Status != 400 && r.Status != 404 {
			t.Errorf("%s: a module of an unknown type, want 400 or 404", r)
		}
	})

	var doc map[string]any
	t.Run("download", func(t *testing.T) {
		ts := ts.with(t)
		ts.mustNum(ts.get(moduleTypePath+"/download", ts.admin), 200, &doc)
		if doc["version"] != json.Number("1") {
			t.Errorf("version %v, want 1", doc["version"])
		}
		types, _ := doc["moduleTypes"].([]any)
		if len(types) != 2 {
			t.Fatalf("download holds %d types, want 2: %v", len(types), doc)
		}
		var one map[string]any
		ts.mustNum(ts.get(moduleTypePath+"/download/"+config.ID, ts.admin), 200, &one)
		if ts1, _ := one["moduleTypes"].([]any); len(ts1) != 1 || ts1[0].(map[string]any)["id"] != config.ID {
			t.Errorf("download/%s: %v", config.ID, one)
		}
		expectHaloError(t, ts.get(moduleTypePath+"/download/5f00000000000000000000ff", ts.admin), 404)
	})

	t.Run("import into a fresh server", func(t *testing.T) {
		if doc == nil {
			t.Skip("no download")
		}
		fresh := startContentServer(t)
		var res struct {
			Imported    int              `json:"imported"`
			ModuleTypes []moduleTypeView `json:"moduleTypes"`
		}
		expectHaloError(t, fresh.post(moduleTypePath+"/import", "", doc), 401)
		fresh.mustJSON(fresh.post(moduleTypePath+"/import", fresh.admin, doc), 200, &res)
		if res.Imported != 2 || len(res.ModuleTypes) != 2 {
			t.Errorf("import answered %+v", res)
		}
		var orig, copied []moduleTypeView
		ts.mustJSON(ts.get(moduleTypePath, ts.admin), 200, &orig)
		fresh.mustJSON(fresh.get(moduleTypePath, fresh.admin), 200, &copied)
		if a, b := typesText(orig), typesText(copied); a != b {
			t.Errorf("the imported types differ from the originals:\n orig %s\n copy %s", a, b)
		}
		// Importing again is an upsert: still two.
		fresh.mustJSON(fresh.post(moduleTypePath+"/import/", fresh.admin, doc), 200, &res)
		copied = nil
		fresh.mustJSON(fresh.get(moduleTypePath, fresh.admin), 200, &copied)
		if len(copied) != 2 {
			t.Errorf("after a second import: %d types", len(copied))
		}
		expectHaloError(t, fresh.post(moduleTypePath+"/import", fresh.admin, map[string]any{"version": 1, "moduleTypes": []any{
			map[string]any{"id": "bad-type", "name": "Bad", "isSingle": false, "fields": []any{fld("x", 77)}}}}), 400)
	})

	// A document is checked whole before anything is saved: a type without
	// an id (an import saves each under its id, and a download always
	// carries them), a bad id or an id given twice refuses the import and
	// changes nothing.
	t.Run("import is all or nothing", func(t *testing.T) {
		fresh := startContentServer(t)
		good := map[string]any{"id": "type-good", "name": "Good", "isSingle": false, "fields": []any{fld("title", ftText)}}
		for name, c := range map[string]struct {
			second map[string]any
			field  string
		}{
			"no id":       {map[string]any{"name": "No id", "isSingle": false, "fields": []any{}}, "id"},
			"empty id":    {map[string]any{"id": "", "name": "Empty id", "isSingle": false, "fields": []any{}}, "id"},
			"bad id":      {map[string]any{"id": "bad id!", "name": "Bad id", "isSingle": false, "fields": []any{}}, "id"},
			"repeated id": {map[string]any{"id": "type-good", "name": "Again", "isSingle": true, "fields": []any{}}, "id"},
		} {
			r := fresh.post(moduleTypePath+"/import", fresh.admin, map[string]any{"version": 1, "moduleTypes": []any{good, c.second}})
			if ex := haloExtra(t, r, 400); ex != nil && (ex["field"] != c.field || fmt.Sprint(ex["moduleType"]) != "1") {
				t.Errorf("%s: extra %v, want field %s of moduleType 1", name, ex, c.field)
			}
			var list []moduleTypeView
			fresh.mustJSON(fresh.get(moduleTypePath, fresh.admin), 200, &list)
			if len(list) != 0 {
				t.Errorf("%s: a refused import saved %+v", name, list)
			}
		}
		// Imported twice, a document holds as many types as it lists.
		doc := map[string]any{"version": 1, "moduleTypes": []any{good}}
		for range 2 {
			fresh.mustJSON(fresh.post(moduleTypePath+"/import", fresh.admin, doc), 200, nil)
		}
		var list []moduleTypeView
		fresh.mustJSON(fresh.get(moduleTypePath, fresh.admin), 200, &list)
		if len(list) != 1 || list[0].ID != "type-good" {
			t.Errorf("after importing one type twice: %+v", list)
		}

		// A document the event store refuses only at append time (a NUL
		// character, which jsonb cannot hold, in its last type) saves none
		// of its types: not the replacement of an existing one, nor a new
		// one before the refused one.
		changed := map[string]any{"id": "type-good", "name": "Good again", "isSingle": true, "fields": []any{fld("body", ftText)}}
		other := map[string]any{"id": "type-other", "name": "Other", "isSingle": false, "fields": []any{}}
		refused := map[string]any{"id": "type-nul", "name": "Nul\u0000name", "isSingle": false, "fields": []any{}}
		expectHaloError(t, fresh.post(moduleTypePath+"/import", fresh.admin, map[string]any{"version": 1,
			"moduleTypes": []any{changed, other, refused}}), 400)
		list = nil
		fresh.mustJSON(fresh.get(moduleTypePath, fresh.admin), 200, &list)
		if len(list) != 1 || list[0].ID != "type-good" || list[0].Name != "Good" || list[0].IsSingle {
			t.Errorf("a document refused at append time left %+v, want type-good unchanged", list)
		}
		// Without the refused type, the same document saves both.
		var res struct {
			Imported    int              `json:"imported"`
			ModuleTypes []moduleTypeView `json:"moduleTypes"`
		}
		fresh.mustJSON(fresh.post(moduleTypePath+"/import", fresh.admin, map[string]any{"version": 1,
			"moduleTypes": []any{changed, other}}), 200, &res)
		if res.Imported != 2 || len(res.ModuleTypes) != 2 || res.ModuleTypes[0].Name != "Good again" || res.ModuleTypes[1].ID != "type-other" {
			t.Errorf("import answered %+v", res)
		}
		list = nil
		fresh.mustJSON(fresh.get(moduleTypePath, fresh.admin), 200, &list)
		var names []string
		for _, mt := range list {
			names = append(names, mt.Name)
		}
		if !sameSet(names, []string{"Good again", "Other"}) {
			t.Errorf("after the import the server lists %v, want Good again and Other", names)
		}
	})

	t.Run("delete", func(t *testing.T) {
		ts := ts.with(t)
		expectHaloError(t, ts.do(request{method: "DELETE", path: moduleTypePath + "/" + config.ID, token: editor}), 403)
		if r := ts.do(request{method: "DELETE", path: moduleTypePath + "/" + config.ID, token: ts.admin}); r.Status != 200 && r.Status != 204 {
			t.Errorf("%s: want 200 or 204", r)
		}
		var list []moduleTypeView
		ts.mustJSON(ts.get(moduleTypePath, ts.admin), 200, &list)
		if len(list) != 1 || list[0].ID != article.ID {
			t.Errorf("after the delete: %+v", list)
		}
		expectHaloError(t, ts.do(request{method: "DELETE", path: moduleTypePath + "/" + config.ID, token: ts.admin}), 404)
	})
}

// typesText is a comparable text of module types: ids, names, single flags
// and each field's id, name, type, required flag and rules.
func typesText(ts []moduleTypeView) string {
	var parts []string
	for _, t := range ts {
		var fs []string
		for _, f := range t.Fields {
			rb, _ := json.Marshal(f.Rules)
			fs = append(fs, fmt.Sprintf("%s:%s:%s:%v:%s", f.ID, f.Name, f.FieldType.ID, f.Required, rb))
		}
		parts = append(parts, fmt.Sprintf("%s/%s/%v[%s]", t.ID, t.Name, t.IsSingle, strings.Join(fs, " ")))
	}
	slices.Sort(parts)
	return strings.Join(parts, "; ")
}

// The SDKs list modules with the app token (wire-reference §3, call 5):
// an app sees its own app's modules, with fields when asked, and cannot
// change them. Module types are readable by any CMS user.
func TestContentModulesAsApp(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app, other := ts.createApp("SDK App"), ts.createApp("SDK Other")
	tok := ts.appToken(app)
	mine := ts.createModule(ts.admin, moduleBody(app.ID, "Mine", fld("title", ftText)))
	theirs := ts.createModule(ts.admin, moduleBody(other.ID, "Theirs", fld("title", ftText)))

	var list []moduleView
	ts.mustJSON(ts.get(modulePath+"/?skip=true&withFields=true", tok), 200, &list)
	if len(list) != 1 || list[0].ID != mine.ID || len(list[0].Fields) != 1 {
		t.Errorf("the app lists %+v, want only its module with its field", list)
	}
	var env struct {
		Pagination paginationView `json:"pagination"`
		Items      []moduleView   `json:"items"`
	}
	ts.mustJSON(ts.get(modulePath, tok), 200, &env)
	if env.Pagination.TotalItems != 1 || len(env.Items) != 1 || env.Items[0].ID != mine.ID {
		t.Errorf("the app's paginated list: %+v", env)
	}
	var m moduleView
	ts.mustJSON(ts.get(modulePath+"/"+mine.ID+"?withFields=true", tok), 200, &m)
	if m.ID != mine.ID || len(m.Fields) != 1 {
		t.Errorf("the app reads its module as %+v", m)
	}
	if r := ts.get(modulePath+"/"+theirs.ID, tok); r.Status != 403 && r.Status != 404 {
		t.Errorf("%s: the app read another app's module", r)
	}
	expectHaloError(t, ts.post(modulePath, tok, moduleBody(app.ID, "By the app")), 403)
	expectHaloError(t, ts.put(modulePath+"/"+mine.ID, tok, moduleBody(app.ID, "Mine", fld("title", ftText), fld("x", ftText))), 403)
	expectHaloError(t, ts.do(request{method: "DELETE", path: modulePath + "/" + mine.ID, token: tok}), 403)

	var mt moduleTypeView
	ts.mustJSON(ts.post(moduleTypePath, ts.admin, map[string]any{"name": "T", "isSingle": false, "fields": []any{fld("a", ftText)}}), 201, &mt)
	_, nobody := ts.userWith("types-nobody")
	var types []moduleTypeView
	ts.mustJSON(ts.get(moduleTypePath, nobody), 200, &types)
	if len(types) != 1 || types[0].ID != mt.ID {
		t.Errorf("a CMS user without rights reads module types %+v", types)
	}
	expectHaloError(t, ts.do(request{method: "DELETE", path: moduleTypePath + "/" + mt.ID, token: nobody}), 403)
	expectHaloError(t, ts.post(moduleTypePath+"/import", nobody, map[string]any{"version": 1, "moduleTypes": []any{}}), 403)
}

// Every content path answers the same with and without a trailing slash.
func TestContentTrailingSlashes(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Slash App")
	m := ts.createModule(ts.admin, moduleBody(app.ID, "Slashes", fld("title", ftText)))
	it := ts.createItem(ts.admin, itemBody(m.ID, "slashed", map[string]any{"title": "v0"}))
	ts.mustNum(ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(m.ID, "slashed", map[string]any{"title": "v1"})), 200, &it)
	var mt moduleTypeView
	ts.mustJSON(ts.post(moduleTypePath, ts.admin, map[string]any{"name": "T", "isSingle": false, "fields": []any{fld("a", ftText)}}), 201, &mt)
	cases := []struct {
		method, path string
		body         any
		status       int
	}{
		{"GET", modulePath, nil, 200},
		{"GET", modulePath + "/" + m.ID, nil, 200},
		{"PUT", modulePath + "/" + m.ID, moduleBody(app.ID, "Slashes", fld("title", ftText)), 200},
		{"GET", moduleTypePath, nil, 200},
		{"PUT", moduleTypePath + "/" + mt.ID, map[string]any{"name": "T", "isSingle": false, "fields": []any{fld("a", ftText)}}, 200},
		{"GET", moduleTypePath + "/download", nil, 200},
		{"GET", moduleTypePath + "/download/" + mt.ID, nil, 200},
		{"GET", instancePath + "?module=" + m.ID, nil, 200},
		{"GET", instancePath + "/" + it.ID, nil, 200},
		{"PUT", instancePath + "/" + it.ID, itemBody(m.ID, "slashed", map[string]any{"title": "v1"}), 200},
		{"POST", instancePath + "/" + it.ID + "/publish", nil, 200},
		{"POST", instancePath + "/" + it.ID + "/unpublish", nil, 200},
		{"POST", instancePath + "/" + it.ID + "/archive", nil, 200},
		{"POST", instancePath + "/" + it.ID + "/unarchive", nil, 200},
		{"POST", instancePath + "/" + it.ID + "/restore", nil, 200},
		{"GET", instancePath + "/" + it.ID + "/history", nil, 200},
		{"POST", instancePath + "/" + it.ID + "/history/0/restore", nil, 200},
		{"POST", searchPath, map[string]any{"moduleIds": []string{m.ID}}, 200},
		{"POST", syncPath, map[string]any{"moduleId": m.ID}, 200},
		{"POST", batchPath, map[string]any{}, 200},
	}
	for _, c := range cases {
		for _, p := range slashes(strings.SplitN(c.path, "?", 2)[0]) {
			if q := strings.SplitN(c.path, "?", 2); len(q) == 2 {
				p += "?" + q[1]
			}
			r := ts.do(request{method: c.method, path: p, token: ts.admin, body: c.body})
			if r.Status != c.status {
				t.Errorf("%s: want %d", r, c.status)
			}
		}
	}
}

// stallContentProjection holds the content projection's checkpoint row, so
// that the projection cannot apply anything (it takes the row FOR UPDATE
// SKIP LOCKED per batch) until the returned release is called: a
// projection lag longer than the read-your-writes bound, on demand.
func stallContentProjection(t *testing.T, ts *testServer) (release func()) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, ts.dbURL)
	if err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var n int
	if err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM projection_checkpoints WHERE name = 'content' FOR UPDATE) x`).Scan(&n); err != nil || n != 1 {
		t.Fatalf("locking the content checkpoint: %d rows, %v", n, err)
	}
	done := false
	release = func() {
		if !done {
			done = true
			tx.Rollback(ctx)
			conn.Close(ctx)
		}
	}
	t.Cleanup(release)
	return release
}

// A write that succeeded answers with what it wrote, even when the read
// model has not caught up within the read-your-writes bound (300 ms here):
// the answer must not be a 404 for the module just created, nor the old
// state of the module just changed.
func TestContentWritesAnswerWhileProjectionLags(t *testing.T) {
	t.Parallel()
	// A short read-your-writes bound keeps the stall short: the stalling
	// transaction holds back the whole server's xmin, which delays every
	// projection of every test running beside this one.
	ts := startServer(t, withConfig(func(c *Config) { c.ReadYourWrites = 300 * time.Millisecond }))
	app := ts.createApp("Lagging App")
	m := ts.createModule(ts.admin, moduleBody(app.ID, "Before", fld("title", ftText)))
	first := ts.createItem(ts.admin, itemBody(m.ID, "first", map[string]any{"title": "x"}))
	relm := ts.createModule(ts.admin, moduleBody(app.ID, "Relations", fld("to", ftRelation)))
	strict := ts.createModule(ts.admin, moduleBody(app.ID, "Strict", fld("code", ftText)))
	trunc := ts.createModule(ts.admin, moduleBody(app.ID, "Truncate", fld("code", ftText)))
	gone := ts.createModule(ts.admin, moduleBody(app.ID, "Gone", fld("code", ftText)))

	release := stallContentProjection(t, ts)
	r := ts.post(modulePath, ts.admin, moduleBody(app.ID, "During", fld("title", ftText)))
	var created moduleView
	if expectStatus(t, r, 201) {
		ts.mustJSON(r, 201, &created)
		if created.ID == "" || created.Name != "During" || len(created.Fields) != 1 {
			t.Errorf("module created while the projection lags: answered %s", r)
		}
	}
	r = ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Renamed", fld("title", ftText)))
	var up moduleView
	if expectStatus(t, r, 200) {
		ts.mustJSON(r, 200, &up)
		if up.Name != "Renamed" || len(up.Fields) != 1 {
			t.Errorf("module renamed while the projection lags: answered name %q fields %v, want Renamed [title]", up.Name, up.fieldNames())
		}
	}
	// A field change that items might not satisfy is checked against the
	// module's items in the read model: while it lags behind the log, the
	// change is refused (409, try again) rather than checked against an
	// incomplete list. One that keeps every item valid (an optional field
	// added) reads no items, and goes through.
	r = ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Renamed", fld("title", ftText), fld("extra", ftNumber, "required", true)))
	if r.Status != 409 || !strings.Contains(r.String(), "catching up") {
		t.Errorf("%s: a field change while the projection lags, want 409 catching up", r)
	}
	expectStatus(t, ts.put(modulePath+"/"+m.ID, ts.admin, moduleBody(app.ID, "Renamed", fld("title", ftText), fld("extra", ftNumber))), 200)
	// Items answer from the command's result (they already do).
	var it instView
	ts.mustNum(ts.post(instancePath, ts.admin, itemBody(m.ID, "second", map[string]any{"title": "y"})), 201, &it)
	if it.ID == "" || it.Name != "second" {
		t.Errorf("item created while the projection lags: %+v", it)
	}
	// An item created by the previous request is a valid relation target.
	expectStatus(t, ts.post(instancePath, ts.admin, itemBody(relm.ID, "points at first", map[string]any{"to": first.ID})), 201)
	if r := ts.post(instancePath, ts.admin, itemBody(relm.ID, "points at second", map[string]any{"to": it.ID})); r.Status != 201 {
		t.Errorf("%s: a relation to the item created by the previous request is refused while the projection lags", r)
	}
	// A field change is checked against every item, the newest too.
	lacking := ts.createItem(ts.admin, itemBody(strict.ID, "no code", nil))
	r = ts.put(modulePath+"/"+strict.ID, ts.admin, moduleBody(app.ID, "Strict", fld("code", ftText, "required", true)))
	if r.Status != 409 {
		t.Errorf("%s: making code required while item %s lacks it, want 409", r, lacking.ID)
	}
	// A truncate lists the module's items from the read model: while it
	// lags, the operation fails with a 409 (try again) instead of missing
	// the newest items.
	ts.createItem(ts.admin, itemBody(trunc.ID, "newest", nil))
	var ans batchAnswer
	ts.mustNum(ts.post(batchPath, ts.admin, map[string]any{"truncate": []map[string]any{{"module": trunc.ID}}}), 200, &ans)
	if len(ans.Operations) != 1 || ans.Operations[0].Success || !strings.Contains(string(ans.Operations[0].Data), `"status":409`) {
		t.Errorf("truncate while the projection lags: %+v, want a 409 failure", ans.Operations)
	}
	// A deleted module is answered deleted.
	r = ts.do(request{method: "DELETE", path: modulePath + "/" + gone.ID, token: ts.admin})
	var dm moduleView
	if expectStatus(t, r, 200) {
		ts.mustJSON(r, 200, &dm)
		if dm.DeletedAt == nil {
			t.Errorf("module deleted while the projection lags: answered %s, want deletedAt set", r)
		}
	}
	release()
	// Once the projection catches up, everything is there.
	deadline := time.Now().Add(20 * time.Second)
	for {
		var list []moduleView
		ts.mustJSON(ts.get(modulePath+"?skip=true&app="+app.ID, ts.admin), 200, &list)
		var got []string
		for _, x := range list {
			got = append(got, x.Name)
		}
		if sameSet(got, []string{"Renamed", "During", "Relations", "Strict", "Truncate"}) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("after the lag the app lists %v", got)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// Modules as HALO itself defines them: every module of the
// modules-list-with-fields fixture, posted back into an app, is created with
// its fields (a localized text's default is one text there), and each field
// type carries the fixture's rules.
func TestContentModulesFromHALO(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("HALO App")
	fixture, _ := loadFixture(t, "modules-list-with-fields.android.json").([]any)
	if len(fixture) == 0 {
		t.Fatal("the fixture lists no modules")
	}
	wantRules := map[string][]string{}
	for _, m := range fixture {
		body := m.(map[string]any)
		body["app"] = app.ID
		var got moduleView
		ts.mustJSON(ts.post(modulePath, ts.admin, body), 201, &got)
		fields, _ := body["fields"].([]any)
		if len(got.Fields) != len(fields) {
			t.Errorf("module %v: %d fields, want the fixture's %d", body["name"], len(got.Fields), len(fields))
		}
		for _, f := range fields {
			ft := f.(map[string]any)["fieldType"].(map[string]any)
			var rs []string
			for _, r := range ft["rules"].([]any) {
				rs = append(rs, r.(map[string]any)["rule"].(string))
			}
			wantRules[ft["id"].(string)] = rs
		}
		for _, f := range got.Fields {
			var rs []string
			for _, r := range f.FieldType.Rules {
				rs = append(rs, r.Rule)
			}
			if want, ok := wantRules[f.FieldType.ID]; ok && !slices.Equal(rs, want) {
				t.Errorf("field type %s (%s): rules %v, want the fixture's %v", f.FieldType.ID, f.FieldType.Name, rs, want)
			}
		}
	}
	if len(wantRules) < 21 {
		t.Errorf("the fixture covers %d field types, want all 21", len(wantRules))
	}
}

// A module belongs to an app that exists, and a relation field targets a
// module of the same app: anything else is refused and creates nothing.
func TestContentModuleReferences(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Refs App")
	other := ts.createApp("Other Refs App")
	target := ts.createModule(ts.admin, moduleBody(app.ID, "Authors", fld("name", ftText)))
	foreign := ts.createModule(ts.admin, moduleBody(other.ID, "Foreign", fld("name", ftText)))

	r := ts.post(modulePath, ts.admin, moduleBody("5f0000000000000000000999", "Orphan", fld("name", ftText)))
	if ex := haloExtra(t, r, 400); ex == nil || ex["field"] != "app" {
		t.Errorf("%s: extra.field %v, want app", r, ex["field"])
	}

	relTo := func(name, module string) map[string]any {
		return moduleBody(app.ID, name, fld("author", ftRelation, "rules", rules{"module": module}))
	}
	for _, bad := range []string{foreign.ID, "5f0000000000000000000998"} {
		r := ts.post(modulePath, ts.admin, relTo("Posts", bad))
		expectHaloError(t, r, 400)
		if ex := haloExtra(t, r, 400); ex != nil && ex["field"] != "author" {
			t.Errorf("%s: extra.field %v, want author", r, ex["field"])
		}
	}
	var list []moduleView
	ts.mustJSON(ts.get(modulePath+"?skip=true", ts.admin), 200, &list)
	for _, m := range list {
		if m.Name == "Orphan" || m.Name == "Posts" {
			t.Errorf("a refused create made module %s (%s)", m.Name, m.ID)
		}
	}

	posts := ts.createModule(ts.admin, relTo("Posts", target.ID))
	// A change may point the field at the module itself, not at another app's.
	self := relTo("Posts", posts.ID)
	ts.mustJSON(ts.put(modulePath+"/"+posts.ID, ts.admin, self), 200, &posts)
	expectHaloError(t, ts.put(modulePath+"/"+posts.ID, ts.admin, relTo("Posts", foreign.ID)), 400)
	if f, _ := ts.module(posts.ID).field("author"); f.Rules["module"] != posts.ID {
		t.Errorf("after a refused change the target is %v, want %s", f.Rules["module"], posts.ID)
	}
}

// A body over 1 MiB is a 413 in HALO's shape on every content write and
// read that takes one, and changes nothing.
func TestContentOversizeBodies(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Big App")
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Notes", fld("body", ftLongText)))
	it := ts.createItem(ts.admin, itemBody(mod.ID, "note", map[string]any{"body": "short"}))
	big := strings.Repeat("x", 1<<20)
	for name, r := range map[string]response{
		"module create": ts.post(modulePath, ts.admin, moduleBody(app.ID, big, fld("body", ftLongText))),
		"module update": ts.put(modulePath+"/"+mod.ID, ts.admin, moduleBody(app.ID, big, fld("body", ftLongText))),
		"item create":   ts.post(instancePath, ts.admin, itemBody(mod.ID, "big", map[string]any{"body": big})),
		"item update":   ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(mod.ID, "note", map[string]any{"body": big})),
		"sync":          ts.post(syncPath, ts.admin, map[string]any{"moduleId": mod.ID, "locale": big}),
		"type import":   ts.post("/api/core/moduletype/import", ts.admin, map[string]any{"name": big}),
	} {
		if r.Status != 413 {
			t.Errorf("%s: %s, want 413", name, r)
			continue
		}
		expectHaloError(t, r, 413)
	}
	if m := ts.module(mod.ID); m.Name != "Notes" {
		t.Errorf("module renamed to %d characters", len(m.Name))
	}
	if got := ts.item(it.ID); got.Values["body"] != "short" || got.Revision != it.Revision {
		t.Errorf("item after refused updates: %v (revision %d, was %d)", got.Values, got.Revision, it.Revision)
	}
	var list []moduleView
	ts.mustJSON(ts.get(modulePath+"?skip=true&app="+app.ID, ts.admin), 200, &list)
	if len(list) != 1 {
		t.Errorf("%d modules after refused creates, want 1", len(list))
	}
}
