package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"
)

// Content items ("instances"): create, update, delete as both SDKs send
// them, strict validation, states, history and rights.

func articleFields() []map[string]any {
	return []map[string]any{
		fld("title", ftText, "required", true, "rules", rules{"maxLength": 20}),
		fld("body", ftLongText),
		fld("price", ftNumber, "rules", rules{"min": 0, "max": 100}),
	}
}

func TestContentItems(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Items App")
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Articles", articleFields()...))

	var android instView
	t.Run("create, Android style", func(t *testing.T) {
		ts := ts.with(t)
		before := nowMS()
		// Android leaves out nulls and posts to the trailing-slash path.
		r := ts.post(instancePath+"/", ts.admin, map[string]any{"module": mod.ID, "name": "From Android SDK",
			"values": map[string]any{"title": "Hello", "price": 12.5}, "tags": []any{}, "publishedAt": before - 1000})
		ts.mustNum(r, 201, &android)
		if android.Module != mod.ID || android.Name != "From Android SDK" || android.Values["title"] != "Hello" ||
			android.Values["price"] != json.Number("12.5") {
			t.Errorf("created %+v", android)
		}
		if android.Revision != 0 || android.UpdatedAt != nil || android.DeletedAt != nil || android.CustomerID != 1 {
			t.Errorf("a new instance: revision %d updatedAt %v deletedAt %v customerId %d", android.Revision, android.UpdatedAt, android.DeletedAt, android.CustomerID)
		}
		if android.CreatedAt == nil || *android.CreatedAt < before-1000 || *android.CreatedAt > nowMS()+1000 {
			t.Errorf("createdAt %v is not the creation time", android.CreatedAt)
		}
		if android.PublishedAt == nil || *android.PublishedAt != before-1000 {
			t.Errorf("publishedAt %v, want %d", android.PublishedAt, before-1000)
		}
		if android.CreatedBy == nil || *android.CreatedBy != "Administrator" {
			t.Errorf("createdBy %v", android.CreatedBy)
		}
		var raw map[string]any
		ts.mustNum(r, 201, &raw)
		for _, k := range []string{"id", "module", "name", "values", "tags", "createdAt", "updatedAt", "publishedAt", "removedAt",
			"archivedAt", "deletedAt", "createdBy", "updatedBy", "deletedBy", "customerId", "pushSchedule", "externalId", "revision"} {
			if _, ok := raw[k]; !ok {
				t.Errorf("%s: no key %q", r, k)
			}
		}
		if raw["pushSchedule"] != nil || raw["removedAt"] != nil || raw["archivedAt"] != nil || raw["externalId"] != nil {
			t.Errorf("%s: pushSchedule, removedAt, archivedAt and externalId must be null", r)
		}
		checkShapeOf(t, r, "content-instance-save-response.android.json")
		// GET answers the same.
		var got map[string]any
		checkShapeOf(t, ts.get(instancePath+"/"+android.ID, ts.admin), "content-instance.ios.json")
		ts.mustNum(ts.get(instancePath+"/"+android.ID, ts.admin), 200, &got)
		if fmt.Sprint(got) != fmt.Sprint(raw) {
			t.Errorf("GET differs from the create answer:\n %v\n %v", got, raw)
		}
	})

	var ios instView
	t.Run("create, iOS style", func(t *testing.T) {
		ts := ts.with(t)
		// iOS sends every key, nulls included, and its own createdAt; the
		// server keeps its own createdAt.
		body := map[string]any{"module": mod.ID, "name": "From iOS", "values": map[string]any{"title": "Hi", "body": "text"},
			"tags":      []map[string]any{{"name": "Platform Name", "value": "ios", "tagType": "000000000000000000000001"}},
			"createdAt": 1000, "updatedAt": nil, "publishedAt": nil, "removedAt": nil, "archivedAt": nil, "deletedAt": nil,
			"createdBy": nil, "customerId": 1, "pushSchedule": nil, "externalId": "ext-1"}
		ts.mustNum(ts.post(instancePath, ts.admin, body), 201, &ios)
		if ios.CreatedAt == nil || !near(*ios.CreatedAt, time.Minute) {
			t.Errorf("createdAt %v: the client's createdAt was not ignored", ios.CreatedAt)
		}
		if ios.PublishedAt != nil || ios.Values["body"] != "text" || len(ios.Tags) != 1 || ios.Tags[0].Value != "ios" {
			t.Errorf("created %+v", ios)
		}
		if string(ios.ExternalID) != `"ext-1"` {
			t.Errorf("externalId %s, want \"ext-1\"", ios.ExternalID)
		}
		// Missing module, unknown module, missing name.
		expectHaloError(t, ts.post(instancePath, ts.admin, map[string]any{"name": "x", "values": map[string]any{"title": "a"}}), 400)
		expectHaloError(t, ts.post(instancePath, ts.admin, itemBody("5f0000000000000000000000", "x", map[string]any{"title": "a"})), 404)
		expectHaloError(t, ts.post(instancePath, ts.admin, itemBody(mod.ID, "", map[string]any{"title": "a"})), 400)
		expectHaloError(t, ts.post(instancePath, ts.admin, `{"module": "`+mod.ID+`", "name": `), 400)
		expectHaloError(t, ts.post(instancePath, "", itemBody(mod.ID, "x", map[string]any{"title": "a"})), 401)
	})
	if android.ID == "" || ios.ID == "" {
		t.Fatal("no items")
	}

	t.Run("update", func(t *testing.T) {
		ts := ts.with(t)
		time.Sleep(2 * time.Millisecond)
		// Android: the changed fields, no nulls; values are replaced whole
		// and a date left out is unset.
		var up instView
		ts.mustNum(ts.put(instancePath+"/"+android.ID, ts.admin, map[string]any{"module": mod.ID, "name": "Renamed",
			"values": map[string]any{"title": "Hello again"}, "tags": []any{}}), 200, &up)
		if up.Name != "Renamed" || up.Values["title"] != "Hello again" || up.Values["price"] != nil {
			t.Errorf("updated %+v", up)
		}
		if up.PublishedAt != nil {
			t.Errorf("publishedAt %v after a PUT without it, want null", *up.PublishedAt)
		}
		if up.Revision <= android.Revision || up.UpdatedAt == nil || up.UpdatedBy == nil || up.CreatedAt == nil || android.CreatedAt == nil || *up.CreatedAt != *android.CreatedAt {
			t.Errorf("after the PUT: revision %d (was %d) updatedAt %v updatedBy %v createdAt %v", up.Revision, android.Revision, up.UpdatedAt, up.UpdatedBy, up.CreatedAt)
		}
		if got := ts.item(android.ID); got.Name != "Renamed" || got.Revision != up.Revision {
			t.Errorf("GET after PUT: %+v", got)
		}
		// iOS: echoes the whole instance it read, read-only keys included,
		// with the current revision.
		var cur map[string]any
		ts.mustNum(ts.get(instancePath+"/"+ios.ID, ts.admin), 200, &cur)
		cur["name"] = "iOS edited"
		cur["values"] = map[string]any{"title": "Edited", "price": 100}
		cur["publishedAt"] = nowMS()
		var up2 instView
		ts.mustNum(ts.put(instancePath+"/"+ios.ID+"/", ts.admin, cur), 200, &up2)
		if up2.Name != "iOS edited" || up2.Values["price"] != json.Number("100") || up2.PublishedAt == nil || up2.Revision <= ios.Revision {
			t.Errorf("iOS update: %+v", up2)
		}
		// Content unchanged: a PUT of the same content is no new revision.
		cur2 := map[string]any{}
		ts.mustNum(ts.get(instancePath+"/"+ios.ID, ts.admin), 200, &cur2)
		var same instView
		ts.mustNum(ts.put(instancePath+"/"+ios.ID, ts.admin, cur2), 200, &same)
		if same.Revision != up2.Revision {
			t.Errorf("an unchanged PUT moved the revision from %d to %d", up2.Revision, same.Revision)
		}
		// An item cannot move to another module.
		other := ts.createModule(ts.admin, moduleBody(app.ID, "Other", fld("title", ftText)))
		expectHaloError(t, ts.put(instancePath+"/"+ios.ID, ts.admin, itemBody(other.ID, "moved", map[string]any{"title": "x"})), 400)
		expectHaloError(t, ts.put(instancePath+"/5f0000000000000000000000", ts.admin, itemBody(mod.ID, "x", map[string]any{"title": "x"})), 404)
		expectHaloError(t, ts.get(instancePath+"/5f0000000000000000000000", ts.admin), 404)
		expectHaloError(t, ts.do(request{method: "DELETE", path: instancePath + "/5f0000000000000000000000", token: ts.admin}), 404)
	})

	t.Run("revision conflict", func(t *testing.T) {
		ts := ts.with(t)
		it := ts.item(android.ID)
		stale := it.Revision
		body := itemBody(mod.ID, "first writer", map[string]any{"title": "one"}, "revision", stale)
		var up instView
		ts.mustNum(ts.put(instancePath+"/"+it.ID, ts.admin, body), 200, &up)
		if up.Revision <= stale {
			t.Fatalf("revision %d after a write at %d", up.Revision, stale)
		}
		var current map[string]any
		ts.mustNum(ts.get(instancePath+"/"+it.ID, ts.admin), 200, &current)
		// The second writer read the same revision.
		r := ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(mod.ID, "second writer", map[string]any{"title": "two"}, "revision", stale))
		ex := haloExtra(t, r, 409)
		if fmt.Sprint(ex) != fmt.Sprint(current) {
			t.Errorf("409 extra is not the current instance:\n extra   %v\n current %v", ex, current)
		}
		if got := ts.item(it.ID); got.Name != "first writer" || got.Revision != up.Revision {
			t.Errorf("a stale write changed the item: %+v", got)
		}
		// A revision from the future is stale too; the current one passes.
		expectHaloError(t, ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(mod.ID, "x", map[string]any{"title": "x"}, "revision", up.Revision+5)), 409)
		expectStatus(t, ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(mod.ID, "third", map[string]any{"title": "3"}, "revision", up.Revision)), 200)

		// State commands and restoring a revision take the revision read
		// too: stale, a 409 with the current item, and nothing changes.
		now := ts.item(it.ID)
		current = nil
		ts.mustNum(ts.get(instancePath+"/"+it.ID, ts.admin), 200, &current)
		for _, path := range []string{"/unpublish", "/archive", "/history/0/restore"} {
			r := ts.post(instancePath+"/"+it.ID+path, ts.admin, map[string]any{"revision": now.Revision - 1})
			if ex := haloExtra(t, r, 409); ex != nil && fmt.Sprint(ex) != fmt.Sprint(current) {
				t.Errorf("%s: 409 extra is not the current instance:\n extra   %v\n current %v", path, ex, current)
			}
		}
		if got := ts.item(it.ID); got.Revision != now.Revision || got.Name != "third" {
			t.Errorf("stale commands changed the item: revision %d → %d, name %q", now.Revision, got.Revision, got.Name)
		}
		var back instView
		ts.mustNum(ts.post(instancePath+"/"+it.ID+"/history/0/restore", ts.admin, map[string]any{"revision": now.Revision}), 200, &back)
		ts.mustNum(ts.post(instancePath+"/"+it.ID+"/archive", ts.admin, map[string]any{"revision": back.Revision}), 200, &back)
		if back.Revision != now.Revision+2 || back.ArchivedAt == nil {
			t.Errorf("restore and archive at the current revision: revision %d (want %d), archivedAt %v", back.Revision, now.Revision+2, back.ArchivedAt)
		}
	})

	t.Run("delete and restore", func(t *testing.T) {
		ts := ts.with(t)
		it := ts.createItem(ts.admin, itemBody(mod.ID, "doomed", map[string]any{"title": "bye"}))
		var del instView
		ts.mustNum(ts.do(request{method: "DELETE", path: instancePath + "/" + it.ID + "/", token: ts.admin}), 200, &del)
		if del.ID != it.ID || del.DeletedAt == nil || !near(*del.DeletedAt, time.Minute) || del.DeletedBy == nil || *del.DeletedBy != "Administrator" {
			t.Errorf("DELETE answered %+v", del)
		}
		// Deleting it again (a retried DELETE) answers the deleted item and
		// changes nothing.
		var again instView
		ts.mustNum(ts.do(request{method: "DELETE", path: instancePath + "/" + it.ID + "?revision=0", token: ts.admin}), 200, &again)
		if again.ID != it.ID || again.DeletedAt == nil || again.Revision != del.Revision {
			t.Errorf("second DELETE answered %+v, want the item as the first left it (revision %d)", again, del.Revision)
		}
		// A deleted item is not listed.
		var list []instView
		ts.mustNum(ts.get(instancePath+"?skip=true&module="+mod.ID, ts.admin), 200, &list)
		if slices.Contains(itemIDs(list), it.ID) {
			t.Errorf("a deleted item is listed")
		}
		// Editing a deleted item is a conflict whose extra is the item as the
		// server has it (HALO's 409), deleted.
		r := ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(mod.ID, "edit", map[string]any{"title": "x"}))
		expectHaloError(t, r, 409)
		var e haloErr
		if json.Unmarshal(r.Body, &e) == nil && e.Error != nil &&
			(e.Error.Extra["id"] != it.ID || e.Error.Extra["deletedAt"] == nil || e.Error.Extra["name"] != "doomed") {
			t.Errorf("edit of a deleted item: extra %v, want the deleted item", e.Error.Extra)
		}
		if got := ts.item(it.ID); got.Name != "doomed" || got.Revision != del.Revision {
			t.Errorf("the refused edit changed the item: %+v", got)
		}
		res := ts.transit(ts.admin, it.ID, "restore", nil)
		if res.DeletedAt != nil || res.Name != "doomed" {
			t.Errorf("restored %+v", res)
		}
		list = nil
		ts.mustNum(ts.get(instancePath+"?skip=true&module="+mod.ID, ts.admin), 200, &list)
		if !slices.Contains(itemIDs(list), it.ID) {
			t.Errorf("a restored item is not listed")
		}
	})

	t.Run("list", func(t *testing.T) {
		ts := ts.with(t)
		var all []instView
		ts.mustNum(ts.get(instancePath+"/?skip=true&module="+mod.ID, ts.admin), 200, &all)
		if len(all) < 3 {
			t.Fatalf("%d items listed", len(all))
		}
		var env struct {
			Pagination paginationView `json:"pagination"`
			Items      []instView     `json:"items"`
		}
		ts.mustNum(ts.get(instancePath+"?module="+mod.ID+"&page=2&limit=2", ts.admin), 200, &env)
		want := paginationView{Page: 2, Limit: 2, Offset: 2, TotalItems: len(all), TotalPages: (len(all) + 1) / 2}
		if env.Pagination != want || len(env.Items) != min(2, len(all)-2) {
			t.Errorf("page 2 limit 2: %+v with %d items, want %+v", env.Pagination, len(env.Items), want)
		}
		env.Pagination = paginationView{}
		ts.mustNum(ts.get(instancePath+"?module="+mod.ID, ts.admin), 200, &env)
		if env.Pagination.Page != 1 || env.Pagination.Limit != 10 || env.Pagination.TotalItems != len(all) {
			t.Errorf("default pagination %+v", env.Pagination)
		}
	})

	t.Run("single-item module", func(t *testing.T) {
		ts := ts.with(t)
		b := moduleBody(app.ID, "Settings", fld("endpoint", ftWebsite))
		b["isSingle"] = true
		single := ts.createModule(ts.admin, b)
		if !single.IsSingle {
			t.Errorf("isSingle not kept")
		}
		ts.createItem(ts.admin, itemBody(single.ID, "the one", map[string]any{"endpoint": "https://example.com"}))
		expectHaloError(t, ts.post(instancePath, ts.admin, itemBody(single.ID, "a second", map[string]any{"endpoint": "https://example.org"})), 409)
		expectHaloError(t, ts.post(instancePath+"/", ts.admin, itemBody(single.ID, "a third", nil)), 409)
		var list []instView
		ts.mustNum(ts.get(instancePath+"?skip=true&module="+single.ID, ts.admin), 200, &list)
		if len(list) != 1 {
			t.Errorf("a single-item module holds %d items", len(list))
		}
	})
}

// typeCase is one field type with a value it refuses (and the validator
// code) and one it accepts.
type typeCase struct {
	typ       int
	rules     map[string]any
	bad       any
	code      string
	good      any
	localized bool
}

func TestContentItemValidation(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Validation App")
	targets := ts.createModule(ts.admin, moduleBody(app.ID, "Targets", fld("title", ftText)))
	target := ts.createItem(ts.admin, itemBody(targets.ID, "target", map[string]any{"title": "t"}))
	elsewhere := ts.createModule(ts.admin, moduleBody(app.ID, "Elsewhere", fld("title", ftText)))
	foreignItem := ts.createItem(ts.admin, itemBody(elsewhere.ID, "elsewhere", map[string]any{"title": "e"}))

	abc := rules{"values": []string{"a", "b", "c"}}
	cases := []typeCase{
		{typ: ftText, bad: 42, code: "validator.8", good: "hello"},
		{typ: ftNumber, bad: "12", code: "validator.3", good: 12.5},
		{typ: ftWebsite, bad: "not a url", code: "validator.1", good: "https://example.com/x"},
		{typ: ftYoutube, bad: "https://vimeo.com/1", code: "validator.2", good: "https://www.youtube.com/watch?v=abc"},
		{typ: ftImage, bad: 5, code: "validator.1", good: "https://example.com/a.png"},
		{typ: ftDate, bad: "2020-01-01", code: "validator.4", good: 1577836800000},
		{typ: ftTime, bad: "10:30", code: "validator.4", good: 3600000},
		{typ: ftBoolean, bad: "true", code: "validator.6", good: true},
		{typ: ftColor, bad: "red", code: "validator.7", good: "#1a2b3c"},
		{typ: ftMultiRelation, bad: "not-an-array", code: "validator.9", good: []string{target.ID}},
		{typ: ftRelation, bad: 123, code: "validator.8", good: target.ID},
		{typ: ftLongText, bad: map[string]any{"a": 1}, code: "validator.8", good: strings.Repeat("long ", 400)},
		{typ: ftObject, bad: []int{1}, code: "validator.11", good: map[string]any{"a": 1, "b": []int{2}}},
		{typ: ftList, bad: map[string]any{"a": 1}, code: "validator.12", good: []any{1, "x", nil}},
		{typ: ftLocalized, bad: "plain", code: "validator.11", good: map[string]any{"en-US": "hi", "es-ES": "hola"}},
		{typ: ftVideo, bad: "ftp://example.com/v.mp4", code: "validator.1", good: "https://example.com/v.mp4"},
		{typ: ftMultiChoice, rules: abc, bad: "a", code: "validator.15", good: []string{"a", "b"}},
		{typ: ftChoice, rules: abc, bad: "z", code: "validator.16", good: "a"},
		{typ: ftMultiDropdown, rules: abc, bad: []string{"z"}, code: "validator.15", good: []string{"c"}},
		{typ: ftDropdown, rules: abc, bad: []string{"a"}, code: "validator.16", good: "b"},
		{typ: ftAudio, bad: "just text", code: "validator.1", good: "https://example.com/a.mp3"},
		// A localized Text field takes an object of locale → text.
		{typ: ftText, localized: true, bad: "plain", code: "validator.11", good: map[string]any{"en-US": "x"}},
	}
	var fields []map[string]any
	for i, c := range cases {
		f := fld(fmt.Sprintf("f%02d", i+1), c.typ)
		if c.rules != nil {
			f["rules"] = c.rules
		}
		if c.localized {
			f["localized"] = true
		}
		fields = append(fields, f)
	}
	all := ts.createModule(ts.admin, moduleBody(app.ID, "All types", fields...))
	if len(all.Fields) != len(cases) {
		t.Fatalf("module with %d fields, want %d", len(all.Fields), len(cases))
	}

	t.Run("every field type", func(t *testing.T) {
		ts := ts.with(t)
		good := map[string]any{}
		for i, c := range cases {
			name := fmt.Sprintf("f%02d", i+1)
			what := fmt.Sprintf("%s (%s)", name, fieldTypeNames[c.typ])
			r := ts.post(instancePath, ts.admin, itemBody(all.ID, "bad "+name, map[string]any{name: c.bad}))
			if r.Status != 400 {
				t.Errorf("%s: a wrong value %v: %s, want 400", what, c.bad, r)
			} else {
				expectViolation(t, r, name, c.code)
			}
			it := ts.post(instancePath, ts.admin, itemBody(all.ID, "good "+name, map[string]any{name: c.good}))
			if !expectStatus(t, it, 201) {
				t.Errorf("%s: the valid value %v was refused", what, c.good)
			}
			good[name] = c.good
		}
		// Every valid value at once, and read back as sent.
		it := ts.createItem(ts.admin, itemBody(all.ID, "all good", good))
		got := ts.item(it.ID)
		for name, v := range good {
			want, _ := json.Marshal(v)
			have, _ := json.Marshal(got.Values[name])
			if string(want) != string(have) {
				t.Errorf("%s: read back %s, sent %s", name, have, want)
			}
		}
		// More wrong values of a few types.
		more := []struct {
			field, code string
			value       any
		}{
			{"f15", "validator.14", map[string]any{"en-US": 5}},
			{"f15", "validator.13", map[string]any{"not a locale!": "x"}},
			{"f17", "validator.15", []string{"a", "z"}},
			{"f09", "validator.7", "#12345"},
			{"f08", "validator.6", 1},
			{"f02", "validator.3", true},
			{"f06", "validator.4", []any{1577836800000}},
			{"f10", "validator.9", []any{1}},
		}
		for _, m := range more {
			expectViolation(t, ts.post(instancePath, ts.admin, itemBody(all.ID, "bad", map[string]any{m.field: m.value})), m.field, m.code)
		}
		// Relations must name existing items.
		expectViolation(t, ts.post(instancePath, ts.admin, itemBody(all.ID, "bad", map[string]any{"f10": []string{target.ID, "5f00000000000000000000aa"}})), "f10", "")
		expectViolation(t, ts.post(instancePath, ts.admin, itemBody(all.ID, "bad", map[string]any{"f11": "5f00000000000000000000aa"})), "f11", "")
		var list []instView
		ts.mustNum(ts.get(instancePath+"?skip=true&module="+all.ID, ts.admin), 200, &list)
		if len(list) != len(cases)+1 {
			t.Errorf("%d items in the module, want %d (refused values created items?)", len(list), len(cases)+1)
		}
		// Dates in fractional milliseconds (as iOS computes them) are kept
		// to the millisecond, rounded down.
		frac := ts.createItem(ts.admin, itemBody(all.ID, "fractional dates", map[string]any{"f06": 1577836800000.9, "f07": 3600000.25}))
		if v := ts.item(frac.ID).Values; fmt.Sprint(v["f06"], " ", v["f07"]) != "1577836800000 3600000" {
			t.Errorf("fractional dates read back as %v and %v, want 1577836800000 and 3600000", v["f06"], v["f07"])
		}
		_ = foreignItem
	})

	t.Run("required, unknown, rules", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.createModule(ts.admin, moduleBody(app.ID, "Ruled",
			fld("title", ftText, "required", true, "rules", rules{"minLength": 2, "maxLength": 5}),
			fld("code", ftText, "rules", rules{"pattern": "[A-Z]{3}"}),
			fld("size", ftText, "rules", rules{"values": []string{"S", "M"}}),
			fld("qty", ftNumber, "rules", rules{"min": 0, "max": 10}),
			fld("when", ftDate, "rules", rules{"min": 1000, "max": 2000000000000}),
			fld("photo", ftImage, "rules", rules{"mediaTypes": []string{"jpg"}}),
			fld("author", ftRelation, "rules", rules{"module": targets.ID}),
		))
		ok := map[string]any{"title": "abc"}
		with := func(k string, v any) map[string]any {
			vs := map[string]any{"title": "abc"}
			if k == "title" {
				delete(vs, "title")
			}
			if v != nil || k != "title" {
				vs[k] = v
			}
			return vs
		}
		post := func(values map[string]any) response {
			return ts.post(instancePath, ts.admin, itemBody(m.ID, "ruled", values))
		}
		expectViolation(t, post(map[string]any{}), "title", "validator.required")
		expectViolation(t, post(map[string]any{"title": nil}), "title", "validator.required")
		expectViolation(t, post(map[string]any{"title": ""}), "title", "validator.required")
		expectViolation(t, post(map[string]any{"title": "abc", "nope": 1}), "nope", "validator.unknown")
		expectViolation(t, post(with("title", "abcdef")), "title", "validator.10")
		expectViolation(t, post(with("title", "a")), "title", "validator.10")
		expectViolation(t, post(with("code", "abc")), "code", "validator.pattern")
		expectViolation(t, post(with("code", "ABCD")), "code", "validator.pattern")
		expectViolation(t, post(with("size", "L")), "size", "")
		expectViolation(t, post(with("qty", 11)), "qty", "validator.range")
		expectViolation(t, post(with("qty", -1)), "qty", "validator.range")
		expectViolation(t, post(with("when", 999)), "when", "validator.range")
		expectViolation(t, post(with("photo", "https://example.com/a.png")), "photo", "")
		expectViolation(t, post(with("author", foreignItem.ID)), "author", "")
		for _, v := range []map[string]any{ok, with("code", "XYZ"), with("size", "M"), with("qty", 10), with("qty", 0),
			with("when", 1577836800000), with("photo", "https://example.com/a.JPG"), with("author", target.ID), with("title", "abcde")} {
			expectStatus(t, post(v), 201)
		}
		// A relation names a live item of the module's own app.
		free := ts.createModule(ts.admin, moduleBody(app.ID, "Free relations", fld("to", ftRelation), fld("many", ftMultiRelation)))
		otherApp := ts.createApp("Validation Other App")
		otherMod := ts.createModule(ts.admin, moduleBody(otherApp.ID, "Theirs", fld("title", ftText)))
		theirs := ts.createItem(ts.admin, itemBody(otherMod.ID, "theirs", map[string]any{"title": "t"}))
		gone := ts.createItem(ts.admin, itemBody(free.ID, "gone", nil))
		expectStatus(t, ts.do(request{method: "DELETE", path: instancePath + "/" + gone.ID, token: ts.admin}), 200)
		// An item deleted with its module: its own stream never says so.
		doomed := ts.createModule(ts.admin, moduleBody(app.ID, "Doomed", fld("title", ftText)))
		orphan := ts.createItem(ts.admin, itemBody(doomed.ID, "orphan", map[string]any{"title": "o"}))
		expectStatus(t, ts.do(request{method: "DELETE", path: modulePath + "/" + doomed.ID, token: ts.admin}), 200)
		for name, vals := range map[string]map[string]any{
			"another app's item":          {"to": theirs.ID},
			"a deleted item":              {"to": gone.ID},
			"an item of a deleted module": {"to": orphan.ID},
			"in a list":                   {"many": []any{target.ID, theirs.ID}},
		} {
			field := "to"
			if _, ok := vals["many"]; ok {
				field = "many"
			}
			r := ts.post(instancePath, ts.admin, itemBody(free.ID, name, vals))
			expectViolation(t, r, field, "")
		}
		expectStatus(t, ts.post(instancePath, ts.admin, itemBody(free.ID, "fine", map[string]any{"to": target.ID, "many": []any{target.ID}})), 201)
		// The same checks on update; the item stays as it was.
		it := ts.createItem(ts.admin, itemBody(m.ID, "to edit", ok))
		expectViolation(t, ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(m.ID, "edited", with("qty", 50))), "qty", "validator.range")
		expectViolation(t, ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(m.ID, "edited", map[string]any{})), "title", "validator.required")
		expectViolation(t, ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(m.ID, "edited", with("ghost", 1))), "ghost", "validator.unknown")
		if got := ts.item(it.ID); got.Name != "to edit" || got.Revision != 0 {
			t.Errorf("refused updates changed the item: %+v", got)
		}
		// A relation the item holds already is not checked again: its
		// related item deleted since, the item is still saved with it; a
		// new relation to a deleted item is still refused.
		gone2 := ts.createItem(ts.admin, itemBody(free.ID, "gone later", nil))
		holder := ts.createItem(ts.admin, itemBody(free.ID, "holder", map[string]any{"to": gone2.ID, "many": []any{target.ID, gone2.ID}}))
		expectStatus(t, ts.do(request{method: "DELETE", path: instancePath + "/" + gone2.ID, token: ts.admin}), 200)
		expectStatus(t, ts.put(instancePath+"/"+holder.ID, ts.admin, itemBody(free.ID, "holder renamed",
			map[string]any{"to": gone2.ID, "many": []any{gone2.ID}})), 200)
		expectViolation(t, ts.put(instancePath+"/"+holder.ID, ts.admin, itemBody(free.ID, "holder again",
			map[string]any{"to": gone2.ID, "many": []any{gone2.ID, gone.ID}})), "many", "")
		if got := ts.item(holder.ID); got.Name != "holder renamed" {
			t.Errorf("holder: %+v", got)
		}
		// A revert that would bring back a relation to an item deleted
		// since is refused as such an edit is.
		rel := ts.createItem(ts.admin, itemBody(free.ID, "relating", map[string]any{"to": target.ID}))
		gone3 := ts.createItem(ts.admin, itemBody(free.ID, "gone third", nil))
		var relNow instView
		ts.mustNum(ts.put(instancePath+"/"+rel.ID, ts.admin, itemBody(free.ID, "relating", map[string]any{"to": gone3.ID})), 200, &relNow)
		ts.mustNum(ts.put(instancePath+"/"+rel.ID, ts.admin, itemBody(free.ID, "relating", map[string]any{"to": target.ID})), 200, &relNow)
		expectStatus(t, ts.do(request{method: "DELETE", path: instancePath + "/" + gone3.ID, token: ts.admin}), 200)
		expectViolation(t, ts.post(instancePath+"/"+rel.ID+"/history/1/restore", ts.admin, nil), "to", "")
		if got := ts.item(rel.ID); got.Revision != relNow.Revision || got.Values["to"] != target.ID {
			t.Errorf("the refused revert changed the item: %+v", got)
		}
	})

	// PostgreSQL cannot store a NUL character (\u0000): the value checks
	// refuse it with a 400 naming the field, at any depth of a value.
	t.Run("NUL characters", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.createModule(ts.admin, moduleBody(app.ID, "No NUL", fld("title", ftText), fld("data", ftObject), fld("items", ftList)))
		for _, c := range []struct {
			field string
			value any
		}{
			{"title", "bad\u0000title"},
			{"data", map[string]any{"deep": map[string]any{"er": []any{"fine", "bad\u0000"}}}},
			{"data", map[string]any{"key\u0000": 1}},
			{"items", []any{1, "\u0000"}},
		} {
			expectViolation(t, ts.post(instancePath, ts.admin, itemBody(m.ID, "nul", map[string]any{c.field: c.value})), c.field, "validator.nul")
		}
		for _, field := range []string{"name", "externalId"} {
			b := itemBody(m.ID, "nul", nil, field, "x\u0000")
			if ex := haloExtra(t, ts.post(instancePath, ts.admin, b), 400); ex != nil && ex["field"] != field {
				t.Errorf("a NUL in %s: extra %v, want field %s", field, ex, field)
			}
		}
		it := ts.createItem(ts.admin, itemBody(m.ID, "clean", map[string]any{"title": "clean"}))
		expectViolation(t, ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(m.ID, "clean", map[string]any{"title": "\u0000"})), "title", "validator.nul")
		if got := ts.moduleState(m.ID); !slices.Equal(got, []string{"clean@0"}) {
			t.Errorf("the module holds %v, want only the clean item", got)
		}
	})
}

func TestContentItemStates(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("States App")
	appTok := ts.appToken(app)
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Posts", fld("title", ftText)))

	// visible reports whether the app token's search finds the item now.
	visible := func(ts *testServer, id string) bool {
		ts.t.Helper()
		got := ts.searchIDs(appTok, map[string]any{"moduleIds": []string{mod.ID}, "instanceIds": []string{id}})
		return slices.Contains(got, id)
	}

	t.Run("publish, unpublish, schedule", func(t *testing.T) {
		ts := ts.with(t)
		it := ts.createItem(ts.admin, itemBody(mod.ID, "concept", map[string]any{"title": "c"}))
		if it.PublishedAt != nil || visible(ts, it.ID) {
			t.Errorf("a concept is published (%v) or visible to the app", it.PublishedAt)
		}
		before := nowMS()
		p := ts.transit(ts.admin, it.ID, "publish", nil)
		if p.PublishedAt == nil || *p.PublishedAt < before-1000 || *p.PublishedAt > nowMS()+1000 {
			t.Errorf("publish: publishedAt %v, want now", p.PublishedAt)
		}
		if p.Revision != it.Revision+1 {
			t.Errorf("publish: revision %d, want %d", p.Revision, it.Revision+1)
		}
		if !visible(ts, it.ID) {
			t.Errorf("a published item is not visible to the app")
		}
		u := ts.transit(ts.admin, it.ID, "unpublish", nil)
		if u.PublishedAt != nil || visible(ts, it.ID) {
			t.Errorf("unpublished: publishedAt %v, visible %v", u.PublishedAt, visible(ts, it.ID))
		}
		future := nowMS() + time.Hour.Milliseconds()
		s := ts.transit(ts.admin, it.ID, "publish/", map[string]any{"publishedAt": future})
		if s.PublishedAt == nil || *s.PublishedAt != future {
			t.Errorf("scheduled: publishedAt %v, want %d", s.PublishedAt, future)
		}
		if visible(ts, it.ID) {
			t.Errorf("a scheduled item is visible to the app before its date")
		}
		// The CMS sees every state.
		if got := ts.searchIDs(ts.admin, map[string]any{"instanceIds": []string{it.ID}, "moduleIds": []string{mod.ID}}); !slices.Equal(got, []string{it.ID}) {
			t.Errorf("the admin's search finds %v, want the scheduled item", got)
		}
		// A scheduled publication that comes due, without any write.
		soon := nowMS() + 700
		ts.transit(ts.admin, it.ID, "publish", map[string]any{"publishedAt": soon})
		// The search must have run before the date for this to count.
		if v := visible(ts, it.ID); v && nowMS() < soon {
			t.Errorf("visible before its publication date")
		}
		time.Sleep(time.Until(time.UnixMilli(soon + 100)))
		if !visible(ts, it.ID) {
			t.Errorf("not visible after its publication date passed")
		}
	})

	t.Run("expiry without any write", func(t *testing.T) {
		ts := ts.with(t)
		removeAt := nowMS() + 1500
		it := ts.createItem(ts.admin, itemBody(mod.ID, "expiring", map[string]any{"title": "e"},
			"publishedAt", nowMS()-1000, "removedAt", removeAt))
		if it.RemovedAt == nil || *it.RemovedAt != removeAt {
			t.Errorf("removedAt %v, want %d", it.RemovedAt, removeAt)
		}
		v := visible(ts, it.ID)
		if nowMS() < removeAt && !v {
			t.Errorf("not visible before its expiry")
		}
		time.Sleep(time.Until(time.UnixMilli(removeAt + 150)))
		if visible(ts, it.ID) {
			t.Errorf("still visible after its expiry")
		}
		if got := ts.item(it.ID); got.Revision != it.Revision {
			t.Errorf("expiry wrote to the item (revision %d -> %d)", it.Revision, got.Revision)
		}
		// removedAt must come after publishedAt.
		expectHaloError(t, ts.post(instancePath, ts.admin, itemBody(mod.ID, "bad dates", nil, "publishedAt", nowMS(), "removedAt", nowMS()-5000)), 400)
		// Publishing again lifts a passed expiry.
		p := ts.transit(ts.admin, it.ID, "publish", nil)
		if p.RemovedAt != nil || !visible(ts, it.ID) {
			t.Errorf("republished: removedAt %v, visible %v", p.RemovedAt, visible(ts, it.ID))
		}
	})

	t.Run("archive", func(t *testing.T) {
		ts := ts.with(t)
		it := ts.createItem(ts.admin, itemBody(mod.ID, "to archive", map[string]any{"title": "a"}, "publishedAt", nowMS()-1000))
		if !visible(ts, it.ID) {
			t.Fatalf("published item not visible")
		}
		a := ts.transit(ts.admin, it.ID, "archive", nil)
		if a.ArchivedAt == nil || !near(*a.ArchivedAt, time.Minute) || visible(ts, it.ID) {
			t.Errorf("archived: archivedAt %v, visible %v", a.ArchivedAt, visible(ts, it.ID))
		}
		u := ts.transit(ts.admin, it.ID, "unarchive", nil)
		if u.ArchivedAt != nil || !visible(ts, it.ID) {
			t.Errorf("unarchived: archivedAt %v, visible %v", u.ArchivedAt, visible(ts, it.ID))
		}
		later := nowMS() + time.Hour.Milliseconds()
		a = ts.transit(ts.admin, it.ID, "archive", map[string]any{"archivedAt": later})
		if a.ArchivedAt == nil || *a.ArchivedAt != later || !visible(ts, it.ID) {
			t.Errorf("archive scheduled: archivedAt %v, visible %v (want still visible)", a.ArchivedAt, visible(ts, it.ID))
		}
	})

	t.Run("delete and restore", func(t *testing.T) {
		ts := ts.with(t)
		it := ts.createItem(ts.admin, itemBody(mod.ID, "to delete", map[string]any{"title": "d"}, "publishedAt", nowMS()-1000))
		ts.mustNum(ts.do(request{method: "DELETE", path: instancePath + "/" + it.ID, token: ts.admin}), 200, &it)
		if it.DeletedAt == nil || visible(ts, it.ID) {
			t.Errorf("deleted: deletedAt %v, visible %v", it.DeletedAt, visible(ts, it.ID))
		}
		r := ts.transit(ts.admin, it.ID, "restore", nil)
		if r.DeletedAt != nil || r.PublishedAt == nil || !visible(ts, it.ID) {
			t.Errorf("restored: deletedAt %v publishedAt %v visible %v", r.DeletedAt, r.PublishedAt, visible(ts, it.ID))
		}
		expectHaloError(t, ts.post(instancePath+"/5f0000000000000000000000/publish", ts.admin, nil), 404)

		// A state command's body is optional, but a body that is there
		// must be valid, also when it comes chunked (no Content-Length).
		draft := ts.createItem(ts.admin, itemBody(mod.ID, "draft", map[string]any{"title": "d"}))
		for _, body := range []string{`{"publishedAt": `, `{"publishedAt": "soon"}`, `{"when": 1}`} {
			rq, err := http.NewRequest("POST", ts.base+instancePath+"/"+draft.ID+"/publish", io.MultiReader(strings.NewReader(body)))
			if err != nil {
				t.Fatal(err)
			}
			rq.Header.Set("Authorization", "Bearer "+ts.admin)
			rq.Header.Set("Content-Type", "application/json")
			resp, err := ts.client.Do(rq)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 400 || rq.ContentLength != 0 {
				t.Errorf("publish with chunked body %s: %d (content length %d), want 400", body, resp.StatusCode, rq.ContentLength)
			}
		}
		if got := ts.item(draft.ID); got.PublishedAt != nil || got.Revision != 0 {
			t.Errorf("bad publish bodies changed the item: publishedAt %v, revision %d", got.PublishedAt, got.Revision)
		}
		// A date the command does not take is refused, not ignored.
		for cmd, body := range map[string]map[string]any{
			"publish": {"archivedAt": nowMS()}, "archive": {"publishedAt": nowMS()}, "unpublish": {"archivedAt": "x"},
			"unarchive": {"publishedAt": nowMS()}, "restore": {"archivedAt": nowMS()},
		} {
			r := ts.post(instancePath+"/"+draft.ID+"/"+cmd, ts.admin, body)
			expectHaloError(t, r, 400)
			if ex := haloExtra(t, r, 400); ex != nil && body[fmt.Sprint(ex["field"])] == nil {
				t.Errorf("%s with %v: extra.field %v, want the key sent", cmd, body, ex["field"])
			}
		}
		// Both dates: the one the command does not take is named.
		for cmd, wrong := range map[string]string{"publish": "archivedAt", "archive": "publishedAt"} {
			r := ts.post(instancePath+"/"+draft.ID+"/"+cmd, ts.admin, map[string]any{"publishedAt": nowMS(), "archivedAt": nowMS()})
			if ex := haloExtra(t, r, 400); ex != nil && ex["field"] != wrong {
				t.Errorf("%s with both dates: extra.field %v, want %s", cmd, ex["field"], wrong)
			}
		}
		if got := ts.item(draft.ID); got.PublishedAt != nil || got.ArchivedAt != nil || got.Revision != 0 {
			t.Errorf("state commands with a date they do not take changed the item: %+v", got)
		}
	})

	t.Run("history", func(t *testing.T) {
		ts := ts.with(t)
		it := ts.createItem(ts.admin, itemBody(mod.ID, "v0", map[string]any{"title": "zero"}))
		ts.mustNum(ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(mod.ID, "v1", map[string]any{"title": "one"})), 200, &it)
		ts.transit(ts.admin, it.ID, "publish", nil)
		_, editor := ts.userWith("history-editor", grantTo{app: app.ID, module: mod.ID, perms: []string{"update", "read"}})
		_, editorDel := ts.userWith("history-deleter", grantTo{app: app.ID, module: mod.ID, perms: []string{"delete", "read"}})
		var last instView
		ts.mustNum(ts.put(instancePath+"/"+it.ID, editor, itemBody(mod.ID, "v3", map[string]any{"title": "three"}, "publishedAt", nowMS()-10)), 200, &last)

		type entry struct {
			Revision int64          `json:"revision"`
			Type     string         `json:"type"`
			At       int64          `json:"at"`
			Actor    string         `json:"actor"`
			By       string         `json:"by"`
			ClientIP string         `json:"clientIp"`
			Changed  []string       `json:"changed"`
			Instance instView       `json:"instance"`
			Raw      map[string]any `json:"-"`
		}
		var hist []entry
		for _, p := range slashes(instancePath + "/" + it.ID + "/history") {
			hist = nil
			ts.mustNum(ts.get(p, ts.admin), 200, &hist)
		}
		if len(hist) < 4 || int64(len(hist)) != last.Revision+1 {
			t.Fatalf("history of %d entries, want %d (revisions 0..%d)", len(hist), last.Revision+1, last.Revision)
		}
		for i, e := range hist {
			byAdmin := i < 3 // then the editor's PUT: an edit and a new publishedAt
			if e.Revision != int64(i) || e.Instance.Revision != int64(i) || e.Type == "" || !near(e.At, time.Minute) ||
				(e.By == "Administrator") != byAdmin || strings.Contains(e.Actor, ts.adminID) != byAdmin || e.By == "" ||
				e.ClientIP == "" || len(e.Changed) == 0 {
				t.Errorf("history entry %d: %+v", i, e)
			}
			// The item after each revision says who created it and who
			// changed it last, as a GET would have then.
			in := e.Instance
			if in.CreatedBy == nil || *in.CreatedBy != "Administrator" || (i == 0) != (in.UpdatedBy == nil) ||
				i > 0 && *in.UpdatedBy != e.By || in.DeletedBy != nil || in.DeletedAt != nil {
				t.Errorf("history entry %d: createdBy %v updatedBy %v deletedBy %v deletedAt %v, want Administrator, %q (none at 0), none",
					i, deref(in.CreatedBy), deref(in.UpdatedBy), deref(in.DeletedBy), in.DeletedAt, e.By)
			}
			if i > 0 && e.At < hist[i-1].At {
				t.Errorf("history not oldest first at %d", i)
			}
		}
		if hist[0].Instance.Name != "v0" || hist[1].Instance.Name != "v1" || hist[len(hist)-1].Instance.Name != "v3" {
			t.Errorf("history names %v %v %v", hist[0].Instance.Name, hist[1].Instance.Name, hist[len(hist)-1].Instance.Name)
		}
		if !slices.ContainsFunc(hist[1].Changed, func(s string) bool { return strings.Contains(s, "title") }) {
			t.Errorf("revision 1 changed %v, want the title", hist[1].Changed)
		}
		if hist[2].Instance.PublishedAt == nil || !slices.ContainsFunc(hist[2].Changed, func(s string) bool { return strings.Contains(s, "publishedAt") }) {
			t.Errorf("revision 2 (publish): %+v", hist[2])
		}

		// An item published by the command, read and sent back with one
		// value changed, records the edit only: the command's date is kept
		// to the millisecond, as the client sends it back.
		pub := ts.createItem(ts.admin, itemBody(mod.ID, "p", map[string]any{"title": "p"}))
		pub = ts.transit(ts.admin, pub.ID, "publish", nil)
		var echoed instView
		ts.mustNum(ts.put(instancePath+"/"+pub.ID, ts.admin, itemBody(mod.ID, "p", map[string]any{"title": "p2"}, "publishedAt", *pub.PublishedAt)), 200, &echoed)
		var ph []entry
		ts.mustNum(ts.get(instancePath+"/"+pub.ID+"/history", ts.admin), 200, &ph)
		if echoed.Revision != pub.Revision+1 || len(ph) != 3 || ph[2].Type != "content.item_edited" {
			t.Errorf("publish then echo: revision %d → %d, history %d entries, last %v; want one edit", pub.Revision, echoed.Revision, len(ph), ph[len(ph)-1].Type)
		}

		// Restore to revision 0: content back, a new revision, dates kept.
		var back instView
		ts.mustNum(ts.post(instancePath+"/"+it.ID+"/history/0/restore", ts.admin, nil), 200, &back)
		if back.Name != "v0" || back.Values["title"] != "zero" || back.Revision != last.Revision+1 {
			t.Errorf("restored to 0: name %q values %v revision %d (want v0, zero, %d)", back.Name, back.Values, back.Revision, last.Revision+1)
		}
		if got := ts.item(it.ID); got.Name != "v0" || got.Revision != back.Revision {
			t.Errorf("GET after the restore: %+v", got)
		}
		hist = nil
		ts.mustNum(ts.get(instancePath+"/"+it.ID+"/history", ts.admin), 200, &hist)
		if int64(len(hist)) != back.Revision+1 || hist[len(hist)-1].Instance.Name != "v0" {
			t.Errorf("after the restore the history has %d entries", len(hist))
		} else if ch := hist[len(hist)-1].Changed; !slices.Equal(ch, []string{"name", "values.title"}) {
			t.Errorf("the restore changed %v, want [name values.title]", ch)
		}
		// Deleted, then restored: the deletion's revision says when and by
		// whom; the restore's no longer does.
		expectStatus(t, ts.do(request{method: "DELETE", path: instancePath + "/" + it.ID, token: editorDel}), 200)
		ts.transit(ts.admin, it.ID, "restore", nil)
		hist = nil
		ts.mustNum(ts.get(instancePath+"/"+it.ID+"/history", ts.admin), 200, &hist)
		if n := len(hist); n >= 2 {
			del, res := hist[n-2], hist[n-1]
			if del.Instance.DeletedAt == nil || *del.Instance.DeletedAt != del.At || deref(del.Instance.DeletedBy) != del.By ||
				del.By == "Administrator" || res.Instance.DeletedAt != nil || res.Instance.DeletedBy != nil {
				t.Errorf("delete then restore in the history: deleted %v by %v (entry by %s), restored %v by %v",
					del.Instance.DeletedAt, deref(del.Instance.DeletedBy), del.By, res.Instance.DeletedAt, deref(res.Instance.DeletedBy))
			}
		}
		expectHaloError(t, ts.post(instancePath+"/"+it.ID+"/history/999/restore", ts.admin, nil), 400)
		expectHaloError(t, ts.post(instancePath+"/"+it.ID+"/history/-1/restore", ts.admin, nil), 400)
		if r := ts.post(instancePath+"/"+it.ID+"/history/abc/restore", ts.admin, nil); r.Status != 400 && r.Status != 404 {
			t.Errorf("%s: want 400 or 404", r)
		}
		expectHaloError(t, ts.get(instancePath+"/5f0000000000000000000000/history", ts.admin), 404)
		expectHaloError(t, ts.get(instancePath+"/"+it.ID+"/history", ""), 401)
	})
}

func TestContentItemRights(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Rights App")
	other := ts.createApp("Other Rights App")
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Docs", fld("title", ftText)))
	mod2 := ts.createModule(ts.admin, moduleBody(app.ID, "Docs 2", fld("title", ftText)))
	i1 := ts.createItem(ts.admin, itemBody(mod.ID, "one", map[string]any{"title": "1"}))
	i2 := ts.createItem(ts.admin, itemBody(mod.ID, "two", map[string]any{"title": "2"}))

	_, none := ts.userWith("item-nobody")
	_, reader := ts.userWith("item-reader", grantTo{app: app.ID, perms: []string{"read"}})
	_, writer := ts.userWith("item-writer", grantTo{app: app.ID, module: mod.ID, perms: []string{"write", "read"}})
	_, updI1 := ts.userWith("item-updater", grantTo{app: app.ID, item: i1.ID, perms: []string{"update", "read"}})
	_, deleter := ts.userWith("item-deleter", grantTo{app: app.ID, module: mod.ID, perms: []string{"delete"}})
	_, otherApp := ts.userWith("item-other", grantTo{app: other.ID, perms: []string{"read", "write", "update", "delete"}})
	appTok := ts.appToken(app)

	body := func(name string) map[string]any { return itemBody(mod.ID, name, map[string]any{"title": name}) }
	del := func(tok, id string) response {
		return ts.do(request{method: "DELETE", path: instancePath + "/" + id, token: tok})
	}

	// Create: write on the module.
	expectHaloError(t, ts.post(instancePath, "", body("x")), 401)
	for _, tok := range []string{none, reader, updI1, deleter, otherApp, appTok} {
		expectHaloError(t, ts.post(instancePath, tok, body("x")), 403)
	}
	expectHaloError(t, ts.post(instancePath, writer, itemBody(mod2.ID, "x", map[string]any{"title": "x"})), 403)
	created := ts.createItem(writer, body("by writer"))
	if created.CreatedBy == nil || *created.CreatedBy != "User item-writer" {
		t.Errorf("createdBy %v", created.CreatedBy)
	}

	// Update and state commands: update on the item.
	for _, tok := range []string{none, reader, writer, deleter, otherApp, appTok} {
		expectHaloError(t, ts.put(instancePath+"/"+i1.ID, tok, body("edited")), 403)
		expectHaloError(t, ts.post(instancePath+"/"+i1.ID+"/publish", tok, nil), 403)
		expectHaloError(t, ts.post(instancePath+"/"+i1.ID+"/archive", tok, nil), 403)
		expectHaloError(t, ts.post(instancePath+"/"+i1.ID+"/history/0/restore", tok, nil), 403)
	}
	expectHaloError(t, ts.put(instancePath+"/"+i2.ID, updI1, body("edited")), 403)
	expectStatus(t, ts.put(instancePath+"/"+i1.ID, updI1, body("edited by updater")), 200)
	expectStatus(t, ts.post(instancePath+"/"+i1.ID+"/publish", updI1, nil), 200)
	expectHaloError(t, ts.post(instancePath+"/"+i1.ID+"/publish", "", nil), 401)

	// Delete: delete right.
	for _, tok := range []string{none, reader, writer, updI1, otherApp, appTok} {
		expectHaloError(t, del(tok, i2.ID), 403)
	}
	expectHaloError(t, del("", i2.ID), 401)
	expectStatus(t, del(deleter, i2.ID), 200)

	// Reads: read right.
	expectHaloError(t, ts.get(instancePath+"/"+i1.ID, ""), 401)
	for _, tok := range []string{none, otherApp, deleter} {
		if r := ts.get(instancePath+"/"+i1.ID, tok); r.Status != 403 && r.Status != 404 {
			t.Errorf("%s: a user without read read the item", r)
		}
		if r := ts.get(instancePath+"/"+i1.ID+"/history", tok); r.Status != 403 && r.Status != 404 {
			t.Errorf("%s: a user without read read the history", r)
		}
	}
	for _, tok := range []string{reader, updI1, writer} {
		expectStatus(t, ts.get(instancePath+"/"+i1.ID, tok), 200)
	}
	// A right on an item shows its module, and no other.
	var mods []moduleView
	ts.mustJSON(ts.get(modulePath+"?skip=true", updI1), 200, &mods)
	if len(mods) != 1 || mods[0].ID != mod.ID {
		t.Errorf("the item's updater sees modules %v, want only %s", mods, mod.Name)
	}
	expectStatus(t, ts.get(modulePath+"/"+mod.ID, updI1), 200)
	expectOneOf(t, ts.get(modulePath+"/"+mod2.ID, updI1), 403, 404)
	if got := ts.searchIDs(updI1, map[string]any{"moduleName": "Docs"}); !slices.Equal(got, []string{i1.ID}) {
		t.Errorf("the item's updater searching its module finds %v, want [i1]", got)
	}
	if got := ts.item(i2.ID); got.DeletedAt == nil {
		t.Errorf("i2 not deleted")
	}
	if got := ts.item(i1.ID); got.Name != "edited by updater" || got.PublishedAt == nil {
		t.Errorf("i1: %+v", got)
	}
}
