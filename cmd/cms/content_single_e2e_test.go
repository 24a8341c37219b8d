package main

import (
	"encoding/json"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
)

// Single-item modules (isSingle): the module's one item is reserved while
// it lives; deleting it (alone, in a batch, by a truncate) frees the
// module, restoring it claims it again, and the flag can be turned on only
// on a module with at most one live item.

// singleModule creates a module of app, single-item or not, with one text
// field.
func (ts *testServer) singleModule(app, name string, single bool) moduleView {
	ts.t.Helper()
	b := moduleBody(app, name, fld("title", ftText))
	b["isSingle"] = single
	return ts.createModule(ts.admin, b)
}

// setSingle PUTs the module back with isSingle set to single.
func (ts *testServer) setSingle(m moduleView, single bool) response {
	ts.t.Helper()
	b := moduleBody(m.App, m.Name, fld("title", ftText))
	b["isSingle"] = single
	return ts.put(modulePath+"/"+m.ID, ts.admin, b)
}

// postItem posts a new item named name into module m.
func (ts *testServer) postItem(m moduleView, name string) response {
	ts.t.Helper()
	return ts.post(instancePath, ts.admin, itemBody(m.ID, name, map[string]any{"title": name}))
}

// expectTaken asserts the 409 of a single-item module that holds its item:
// the message and extra name the module, never the item holding it (the
// caller needs write on the module, not read on that item).
func expectTaken(t *testing.T, r response, m moduleView, holder string) {
	t.Helper()
	ex := haloExtra(t, r, 409)
	var e haloErr
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Error == nil || !strings.Contains(e.Error.Message, m.Name) {
		t.Errorf("%s: the message does not name module %s", r, m.Name)
	}
	if strings.Contains(string(r.Body), holder) {
		t.Errorf("%s: the answer names the holding item %s", r, holder)
	}
	if _, named := ex["item"]; ex != nil && (ex["module"] != m.ID || named) {
		t.Errorf("%s: extra %v, want module %s and no item", r, ex, m.ID)
	}
}

func (ts *testServer) deleteItem(id string) {
	ts.t.Helper()
	ts.mustJSON(ts.do(request{method: "DELETE", path: instancePath + "/" + id, token: ts.admin}), 200, nil)
}

func TestContentSingleItemModules(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Single App")

	t.Run("deleting the item frees the module", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.singleModule(app.ID, "Settings", true)
		a := ts.createItem(ts.admin, itemBody(m.ID, "a", map[string]any{"title": "a"}))
		expectTaken(t, ts.postItem(m, "second"), m, a.ID)
		ts.deleteItem(a.ID)
		var b instView
		ts.mustNum(ts.postItem(m, "b"), 201, &b)
		expectTaken(t, ts.postItem(m, "third"), m, b.ID)
		if got := ts.moduleState(m.ID); len(got) != 1 || got[0] != "b@0" {
			t.Errorf("live items %v, want b only", got)
		}
	})

	t.Run("a batch delete frees the module", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.singleModule(app.ID, "Batch settings", true)
		a := ts.createItem(ts.admin, itemBody(m.ID, "a", map[string]any{"title": "a"}))
		var ans batchAnswer
		ts.mustNum(ts.post(batchPath, ts.admin, map[string]any{"deleted": []any{map[string]any{"id": a.ID}}}), 200, &ans)
		ans.expectOp(t, "delete", 0, 0)
		b := ts.createItem(ts.admin, itemBody(m.ID, "b", map[string]any{"title": "b"}))
		expectTaken(t, ts.postItem(m, "third"), m, b.ID)
		// A batch that creates into the module is held to the same rule.
		ts.mustNum(ts.post(batchPath, ts.admin, map[string]any{
			"deleted": []any{map[string]any{"id": b.ID}},
			"created": []any{itemBody(m.ID, "c", map[string]any{"title": "c"}), itemBody(m.ID, "d", map[string]any{"title": "d"})},
		}), 200, &ans)
		ans.expectOp(t, "create", 0, 409) // creates run before deletes: b still holds it
		ans.expectOp(t, "create", 1, 409)
		ans.expectOp(t, "delete", 0, 0)
		ts.createItem(ts.admin, itemBody(m.ID, "e", map[string]any{"title": "e"}))
	})

	t.Run("a truncate frees the module", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.singleModule(app.ID, "Truncated settings", true)
		a := ts.createItem(ts.admin, itemBody(m.ID, "a", map[string]any{"title": "a"}))
		var ans batchAnswer
		ts.mustNum(ts.post(batchPath, ts.admin, map[string]any{"truncate": []any{map[string]any{"module": m.ID}},
			"created": []any{itemBody(m.ID, "b", map[string]any{"title": "b"})}}), 200, &ans)
		ans.expectCounts(t, map[string]counter{"truncate": {Success: 1}, "create": {Success: 1}})
		if ts.item(a.ID).DeletedAt == nil {
			t.Errorf("the truncate left %s live", a.ID)
		}
		b, ok := ans.find("create", 0)
		if !ok {
			t.Fatalf("no create in %+v", ans)
		}
		expectTaken(t, ts.postItem(m, "third"), m, b.instanceOf(t).ID)
		var again batchAnswer
		ts.mustNum(ts.post(batchPath, ts.admin, map[string]any{"truncated": []any{map[string]any{"module": m.ID}}}), 200, &again)
		again.expectCounts(t, map[string]counter{"truncate": {Success: 1}})
		ts.createItem(ts.admin, itemBody(m.ID, "c", map[string]any{"title": "c"}))
	})

	t.Run("restoring while another item holds the module", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.singleModule(app.ID, "Restored settings", true)
		a := ts.createItem(ts.admin, itemBody(m.ID, "a", map[string]any{"title": "a"}))
		ts.deleteItem(a.ID)
		b := ts.createItem(ts.admin, itemBody(m.ID, "b", map[string]any{"title": "b"}))
		expectTaken(t, ts.post(instancePath+"/"+a.ID+"/restore", ts.admin, nil), m, b.ID)
		if ts.item(a.ID).DeletedAt == nil {
			t.Errorf("a refused restore brought %s back", a.ID)
		}
		// Once b is gone, a comes back and holds the module again.
		ts.deleteItem(b.ID)
		ts.transit(ts.admin, a.ID, "restore", nil)
		expectTaken(t, ts.postItem(m, "c"), m, a.ID)
		expectTaken(t, ts.post(instancePath+"/"+b.ID+"/restore", ts.admin, nil), m, a.ID)
		if got := ts.moduleState(m.ID); len(got) != 1 || !strings.HasPrefix(got[0], "a@") {
			t.Errorf("live items %v, want a only", got)
		}
	})

	t.Run("turning isSingle on", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.singleModule(app.ID, "Became single", false)
		a := ts.createItem(ts.admin, itemBody(m.ID, "a", map[string]any{"title": "a"}))
		b := ts.createItem(ts.admin, itemBody(m.ID, "b", map[string]any{"title": "b"}))
		r := ts.setSingle(m, true)
		ex := haloExtra(t, r, 409)
		if ex != nil {
			_, ids := affectedItems(ex)
			if !sameSet(ids, []string{a.ID, b.ID}) || fmt.Sprint(ex["affectedCount"]) != "2" || ex["field"] != "isSingle" {
				t.Errorf("%s: extra %v, want affectedItems %s and %s, affectedCount 2, field isSingle", r, ex, a.ID, b.ID)
			}
		}
		if ts.module(m.ID).IsSingle {
			t.Fatalf("a refused change made the module single-item")
		}
		c := ts.createItem(ts.admin, itemBody(m.ID, "c", map[string]any{"title": "c"})) // still a plain module

		// With one live item left, the flag is accepted and that item holds the module.
		ts.deleteItem(a.ID)
		ts.deleteItem(b.ID)
		var got moduleView
		ts.mustJSON(ts.setSingle(m, true), 200, &got)
		if !got.IsSingle || !ts.module(m.ID).IsSingle {
			t.Fatalf("isSingle not kept: %+v", got)
		}
		expectTaken(t, ts.postItem(m, "d"), m, c.ID)
		expectTaken(t, ts.post(instancePath+"/"+a.ID+"/restore", ts.admin, nil), m, c.ID)
	})

	t.Run("turning isSingle on an empty module, off and on again", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.singleModule(app.ID, "Toggled", false)
		expectStatus(t, ts.setSingle(m, true), 200)
		a := ts.createItem(ts.admin, itemBody(m.ID, "a", map[string]any{"title": "a"}))
		expectTaken(t, ts.postItem(m, "x"), m, a.ID)

		// Off: any number of items again.
		expectStatus(t, ts.setSingle(m, false), 200)
		b := ts.createItem(ts.admin, itemBody(m.ID, "b", map[string]any{"title": "b"}))
		// On again: refused with two items, accepted with one.
		expectHaloError(t, ts.setSingle(m, true), 409)
		ts.deleteItem(a.ID)
		expectStatus(t, ts.setSingle(m, true), 200)
		expectTaken(t, ts.postItem(m, "y"), m, b.ID)
		// Deleting its item frees it as ever.
		ts.deleteItem(b.ID)
		ts.createItem(ts.admin, itemBody(m.ID, "c", map[string]any{"title": "c"}))
	})
	t.Run("creates racing a restore: one wins", func(t *testing.T) {
		ts := ts.with(t)
		m := ts.singleModule(app.ID, "Raced", true)
		a := ts.createItem(ts.admin, itemBody(m.ID, "a", map[string]any{"title": "a"}))
		ts.deleteItem(a.ID)
		var won atomic.Int32
		atOnce(t, 6, func(i int) error {
			var r response
			if i == 0 {
				r = ts.post(instancePath+"/"+a.ID+"/restore", ts.admin, nil)
			} else {
				r = ts.postItem(m, fmt.Sprintf("racer %d", i))
			}
			switch r.Status {
			case 200, 201:
				won.Add(1)
			case 409:
			default:
				return fmt.Errorf("%s: want 200/201 or 409", r)
			}
			return nil
		})
		live := ts.moduleItems(m.ID)
		if won.Load() != 1 || len(live) != 1 {
			t.Fatalf("%d writes won, %d live items; want one", won.Load(), len(live))
		}
		ts.deleteItem(live[0].ID)
		ts.createItem(ts.admin, itemBody(m.ID, "after", map[string]any{"title": "after"}))
	})
}

// moduleItems lists a module's live items.
func (ts *testServer) moduleItems(module string) []instView {
	ts.t.Helper()
	var list []instView
	ts.mustNum(ts.get(instancePath+"?skip=true&module="+module, ts.admin), 200, &list)
	return list
}
