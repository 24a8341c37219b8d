package main

import (
	"fmt"
	"testing"
)

// A module's allowed tags: a change that would leave a live item holding a
// tag the new list does not allow is refused with a 409 naming the items
// and the tags, and changes nothing; once those items are gone (or when
// the new list allows every tag) the change is accepted.
func TestContentModuleAllowedTags(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Tags App")
	tag := func(v string) map[string]any {
		return map[string]any{"name": "Platform Name", "value": v, "tagType": "000000000000000000000001"}
	}
	moduleWith := func(m moduleView, tags ...map[string]any) map[string]any {
		b := moduleBody(m.App, m.Name, fld("title", ftText))
		b["tags"] = append([]map[string]any{}, tags...)
		return b
	}
	b := moduleBody(app.ID, "Tagged", fld("title", ftText))
	b["tags"] = []map[string]any{tag("A"), tag("B")}
	m := ts.createModule(ts.admin, b)
	a := ts.createItem(ts.admin, itemBody(m.ID, "a", map[string]any{"title": "a"}, "tags", []any{tag("A")}))
	bi := ts.createItem(ts.admin, itemBody(m.ID, "b", map[string]any{"title": "b"}, "tags", []any{tag("B")}))
	ts.createItem(ts.admin, itemBody(m.ID, "none", map[string]any{"title": "none"}))

	// Removing B while b holds it: refused, naming b and B, nothing changed.
	r := ts.put(modulePath+"/"+m.ID, ts.admin, moduleWith(m, tag("A")))
	ex := haloExtra(t, r, 409)
	if ex != nil {
		entries, ids := affectedItems(ex)
		for i, o := range entries {
			held, _ := o["tags"].([]any)
			if len(held) != 1 || fmt.Sprint(held[0].(map[string]any)["value"]) != "B" {
				t.Errorf("%s: item %s's tags %v, want B only", r, ids[i], held)
			}
		}
		if !sameSet(ids, []string{bi.ID}) || fmt.Sprint(ex["affectedCount"]) != "1" || ex["field"] != "tags" {
			t.Errorf("%s: extra %v, want affectedItems %s, affectedCount 1, field tags", r, ex, bi.ID)
		}
		if tags, _ := ex["tags"].([]any); len(tags) != 1 || fmt.Sprint(tags[0].(map[string]any)["value"]) != "B" {
			t.Errorf("%s: extra tags %v, want B", r, ex["tags"])
		}
	}
	if got := ts.module(m.ID); len(got.Tags) != 2 {
		t.Fatalf("a refused change left the module with tags %+v", got.Tags)
	}
	// b can still be updated, keeping its tag.
	expectStatus(t, ts.put(instancePath+"/"+bi.ID, ts.admin,
		itemBody(m.ID, "b2", map[string]any{"title": "b2"}, "tags", []any{tag("B")})), 200)

	// Once b is deleted, B can go: a keeps A, which is still allowed.
	ts.deleteItem(bi.ID)
	var got moduleView
	ts.mustJSON(ts.put(modulePath+"/"+m.ID, ts.admin, moduleWith(m, tag("A"))), 200, &got)
	if len(got.Tags) != 1 || got.Tags[0].Value != "A" || len(ts.module(m.ID).Tags) != 1 {
		t.Fatalf("tags %+v, want A only", got.Tags)
	}
	expectStatus(t, ts.put(instancePath+"/"+a.ID, ts.admin,
		itemBody(m.ID, "a2", map[string]any{"title": "a2"}, "tags", []any{tag("A")})), 200)

	// An empty list allows every tag: always accepted.
	ts.mustJSON(ts.put(modulePath+"/"+m.ID, ts.admin, moduleWith(m)), 200, &got)
	if len(got.Tags) != 0 || len(ts.module(m.ID).Tags) != 0 {
		t.Fatalf("tags %+v, want none", got.Tags)
	}
	ts.createItem(ts.admin, itemBody(m.ID, "c", map[string]any{"title": "c"}, "tags", []any{tag("C")}))
}
