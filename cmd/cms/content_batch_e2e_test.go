package main

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"
)

// Batch (wire-reference §5.8): every operation kind, per-operation
// failures beside successes, exact counters, rights per operation, and the
// body size limit.

type batchOp struct {
	Operation string          `json:"operation"`
	Position  int             `json:"position"`
	Success   bool            `json:"success"`
	Module    string          `json:"module"`
	Data      json.RawMessage `json:"data"`
}

type counter struct {
	Total   int `json:"total"`
	Success int `json:"success"`
	Failure int `json:"failure"`
}

type batchAnswer struct {
	Operations []batchOp           `json:"operations"`
	Results    map[string]*counter `json:"results"`
}

// find returns the operation of kind at position.
func (b batchAnswer) find(kind string, pos int) (batchOp, bool) {
	for _, o := range b.Operations {
		if o.Operation == kind && o.Position == pos && kind != "truncate" {
			return o, true
		}
	}
	return batchOp{}, false
}

// errorOf decodes a failed operation's data.error.
func (o batchOp) errorOf(t *testing.T) (status int, extra map[string]any) {
	t.Helper()
	var d struct {
		Error *struct {
			Status  int            `json:"status"`
			Message string         `json:"message"`
			Extra   map[string]any `json:"extra"`
			Type    string         `json:"type"`
		} `json:"error"`
	}
	if err := decodeNum(o.Data, &d); err != nil || d.Error == nil {
		t.Errorf("%s #%d: data %s is not {error: ...}", o.Operation, o.Position, o.Data)
		return 0, nil
	}
	if d.Error.Type != "HaloError" || d.Error.Message == "" || d.Error.Extra == nil {
		t.Errorf("%s #%d: error %+v, want type HaloError, a message and an extra object", o.Operation, o.Position, *d.Error)
	}
	return d.Error.Status, d.Error.Extra
}

// instanceOf decodes a successful operation's instance.
func (o batchOp) instanceOf(t *testing.T) instView {
	t.Helper()
	var it instView
	if err := decodeNum(o.Data, &it); err != nil || it.ID == "" {
		t.Errorf("%s #%d: data %s is not an instance", o.Operation, o.Position, o.Data)
	}
	return it
}

// expectOp asserts the operation exists with the outcome: success, or the
// error status.
func (b batchAnswer) expectOp(t *testing.T, kind string, pos int, status int) batchOp {
	t.Helper()
	o, ok := b.find(kind, pos)
	if !ok {
		t.Errorf("no operation %s #%d in the answer", kind, pos)
		return o
	}
	if status == 0 {
		if !o.Success {
			t.Errorf("%s #%d failed: %s", kind, pos, o.Data)
		}
		return o
	}
	if o.Success {
		t.Errorf("%s #%d succeeded, want a %d: %s", kind, pos, status, o.Data)
		return o
	}
	if got, _ := o.errorOf(t); got != status {
		t.Errorf("%s #%d: error status %d, want %d: %s", kind, pos, got, status, o.Data)
	}
	return o
}

func (b batchAnswer) expectCounts(t *testing.T, want map[string]counter) {
	t.Helper()
	for k, w := range want {
		got := b.Results[k]
		if got == nil {
			t.Errorf("results.%s missing", k)
			continue
		}
		if *got != w {
			t.Errorf("results.%s = %+v, want %+v", k, *got, w)
		}
	}
}

// moduleState lists a module's live items as "name@revision", sorted.
func (ts *testServer) moduleState(module string) []string {
	ts.t.Helper()
	var list []instView
	ts.mustNum(ts.get(instancePath+"?skip=true&module="+module, ts.admin), 200, &list)
	out := []string{}
	for _, it := range list {
		out = append(out, fmt.Sprintf("%s@%d", it.Name, it.Revision))
	}
	return sorted(out)
}

func TestContentBatch(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Batch App")
	appTok := ts.appToken(app)
	m := ts.createModule(ts.admin, moduleBody(app.ID, "Batch", fld("title", ftText, "required", true, "rules", rules{"maxLength": 30}), fld("n", ftNumber)))
	tm := ts.createModule(ts.admin, moduleBody(app.ID, "Truncate me", fld("title", ftText)))
	tm2 := ts.createModule(ts.admin, moduleBody(app.ID, "Truncated too", fld("title", ftText)))
	item := func(module, name string) instView {
		return ts.createItem(ts.admin, itemBody(module, name, map[string]any{"title": name}))
	}
	var tIDs, t2IDs []string
	for i := range 3 {
		tIDs = append(tIDs, item(tm.ID, fmt.Sprintf("t%d", i)).ID)
	}
	for i := range 2 {
		t2IDs = append(t2IDs, item(tm2.ID, fmt.Sprintf("u%d", i)).ID)
	}
	e := make([]instView, 6)
	for i := 1; i <= 5; i++ {
		e[i] = item(m.ID, fmt.Sprintf("e%d", i))
	}
	// e2 moves on after "the client" read it.
	staleE2 := e[2].Revision
	ts.mustNum(ts.put(instancePath+"/"+e[2].ID, ts.admin, itemBody(m.ID, "e2", map[string]any{"title": "e2 moved"})), 200, &e[2])
	var e5full map[string]any
	ts.mustNum(ts.get(instancePath+"/"+e[5].ID, ts.admin), 200, &e5full)
	past := nowMS() - 1000

	body := map[string]any{
		"truncate":  []map[string]any{{"module": tm.ID}},
		"truncated": []map[string]any{{"module": tm2.ID}},
		"created": []map[string]any{
			itemBody(m.ID, "c1", map[string]any{"title": "c1"}, "publishedAt", past),
			itemBody(m.ID, "c2", map[string]any{"title": 5}),
			itemBody(m.ID, "c3", map[string]any{"title": "c3", "n": 3}),
		},
		"updated": []map[string]any{
			itemBody(m.ID, "e1 upd", map[string]any{"title": "e1 upd"}, "id", e[1].ID, "revision", e[1].Revision),
			itemBody(m.ID, "e2 lost", map[string]any{"title": "e2 lost"}, "id", e[2].ID, "revision", staleE2),
			itemBody(m.ID, "ghost", map[string]any{"title": "ghost"}, "id", "5f00000000000000000000ee"),
		},
		"createdOrUpdated": []map[string]any{
			itemBody(m.ID, "e3 upd", map[string]any{"title": "e3 upd"}, "id", e[3].ID),
			itemBody(m.ID, "cu new", map[string]any{"title": "cu new"}),
			itemBody(m.ID, "cu bad", map[string]any{"title": "cu bad", "n": "x"}),
			itemBody(m.ID, "cu id", map[string]any{"title": "cu id"}, "id", "5f00000000000000000000cd"),
		},
		"deleted": []any{
			map[string]any{"id": e[4].ID},
			e5full, // Android sends whole instances
			map[string]any{"id": "5f00000000000000000000dd"},
		},
	}
	var ans batchAnswer
	batchResp := ts.post(batchPath, ts.admin, body)
	ts.mustNum(batchResp, 200, &ans)

	if len(ans.Operations) != 15 {
		t.Errorf("%d operations, want 15", len(ans.Operations))
	}
	ans.expectCounts(t, map[string]counter{
		"total":          {Total: 15, Success: 10, Failure: 5},
		"truncate":       {Success: 2, Failure: 0},
		"create":         {Success: 2, Failure: 1},
		"update":         {Success: 1, Failure: 2},
		"createOrUpdate": {Success: 3, Failure: 1},
		"delete":         {Success: 2, Failure: 1},
	})

	// Truncates: one per module, with the deleted ids.
	truncs := map[string][]string{}
	for _, o := range ans.Operations {
		if o.Operation != "truncate" {
			continue
		}
		if !o.Success {
			t.Errorf("truncate of %s failed: %s", o.Module, o.Data)
		}
		var del []struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(o.Data, &del); err != nil {
			t.Errorf("truncate data %s: %v", o.Data, err)
		}
		for _, d := range del {
			truncs[o.Module] = append(truncs[o.Module], d.ID)
		}
		if _, ok := truncs[o.Module]; !ok {
			truncs[o.Module] = []string{}
		}
	}
	if !sameSet(truncs[tm.ID], tIDs) || !sameSet(truncs[tm2.ID], t2IDs) || len(truncs) != 2 {
		t.Errorf("truncates deleted %v, want %s: %v and %s: %v", truncs, tm.ID, tIDs, tm2.ID, t2IDs)
	}

	c1 := ans.expectOp(t, "create", 0, 0).instanceOf(t)
	if c1.Name != "c1" || c1.Module != m.ID || c1.Revision != 0 || c1.PublishedAt == nil || *c1.PublishedAt != past {
		t.Errorf("created c1: %+v", c1)
	}
	o := ans.expectOp(t, "create", 1, 400)
	if _, ex := o.errorOf(t); ex["field"] != "title" || ex["error"] != "validator.8" {
		t.Errorf("create #1: extra %v, want field title, validator.8", ex)
	}
	c3 := ans.expectOp(t, "create", 2, 0).instanceOf(t)
	if c3.Values["title"] != "c3" || fmt.Sprint(c3.Values["n"]) != "3" || len(c3.Values) != 2 {
		t.Errorf("created c3: values %v, want title c3 and n 3", c3.Values)
	}

	if u := ans.expectOp(t, "update", 0, 0).instanceOf(t); u.ID != e[1].ID || u.Name != "e1 upd" || u.Revision <= e[1].Revision {
		t.Errorf("update #0: %+v", u)
	}
	o = ans.expectOp(t, "update", 1, 409)
	if _, ex := o.errorOf(t); ex["id"] != e[2].ID || ex["name"] != "e2" || fmt.Sprint(ex["revision"]) != fmt.Sprint(e[2].Revision) {
		t.Errorf("update #1: the 409's extra %v is not the current e2 (revision %d)", ex, e[2].Revision)
	}
	ans.expectOp(t, "update", 2, 404)

	if u := ans.expectOp(t, "createOrUpdate", 0, 0).instanceOf(t); u.ID != e[3].ID || u.Name != "e3 upd" {
		t.Errorf("createOrUpdate #0: %+v", u)
	}
	cuNew := ans.expectOp(t, "createOrUpdate", 1, 0).instanceOf(t)
	o = ans.expectOp(t, "createOrUpdate", 2, 400)
	if _, ex := o.errorOf(t); ex["field"] != "n" || ex["error"] != "validator.3" {
		t.Errorf("createOrUpdate #2: extra %v, want field n, validator.3", ex)
	}
	cuID := ans.expectOp(t, "createOrUpdate", 3, 0).instanceOf(t)

	for i, want := range []string{e[4].ID, e[5].ID} {
		if d := ans.expectOp(t, "delete", i, 0).instanceOf(t); d.ID != want || d.DeletedAt == nil {
			t.Errorf("delete #%d: %+v", i, d)
		}
	}
	ans.expectOp(t, "delete", 2, 404)
	checkShapeOf(t, batchResp, "content-batch-response.android.json")

	// Everything is visible through GET, the list and search.
	t.Run("visible afterwards", func(t *testing.T) {
		ts := ts.with(t)
		for id, name := range map[string]string{c1.ID: "c1", c3.ID: "c3", cuNew.ID: "cu new", cuID.ID: "cu id", e[1].ID: "e1 upd", e[2].ID: "e2", e[3].ID: "e3 upd"} {
			if got := ts.item(id); got.Name != name || got.DeletedAt != nil {
				t.Errorf("GET %s: name %q deletedAt %v, want %q", id, got.Name, got.DeletedAt, name)
			}
		}
		for _, id := range []string{e[4].ID, e[5].ID} {
			if got := ts.item(id); got.DeletedAt == nil {
				t.Errorf("GET %s: not deleted", id)
			}
		}
		for _, id := range append(slices.Clone(tIDs), t2IDs...) {
			if got := ts.item(id); got.DeletedAt == nil {
				t.Errorf("GET %s: not deleted by the truncate", id)
			}
		}
		want := []string{"c1", "c3", "cu id", "cu new", "e1 upd", "e2", "e3 upd"}
		var list []instView
		ts.mustNum(ts.get(instancePath+"?skip=true&module="+m.ID, ts.admin), 200, &list)
		if got := sorted(itemNames(list)); !slices.Equal(got, want) {
			t.Errorf("module list %v, want %v", got, want)
		}
		for _, mod := range []string{tm.ID, tm2.ID} {
			list = nil
			ts.mustNum(ts.get(instancePath+"?skip=true&module="+mod, ts.admin), 200, &list)
			if len(list) != 0 {
				t.Errorf("truncated module lists %v", itemNames(list))
			}
		}
		res := ts.search(ts.admin, map[string]any{"moduleIds": []string{m.ID}, "pagination": map[string]any{"skip": true}})
		for _, n := range want {
			if !slices.Contains(itemNames(res.items), n) {
				t.Errorf("search lacks %q: %v", n, itemNames(res.items))
			}
		}
		if got := ts.searchIDs(appTok, map[string]any{"moduleIds": []string{m.ID}}); !slices.Equal(got, []string{c1.ID}) {
			t.Errorf("the app sees %v, want only the published c1", got)
		}
	})

	t.Run("deleted items", func(t *testing.T) {
		ts := ts.with(t)
		gone := ts.item(e[4].ID) // deleted by the batch above
		var a batchAnswer
		ts.mustNum(ts.post(batchPath, ts.admin, map[string]any{
			"deleted": []map[string]any{{"id": e[4].ID}},
			"updated": []map[string]any{itemBody(m.ID, "e4 back", map[string]any{"title": "e4 back"}, "id", e[4].ID)},
		}), 200, &a)
		// A repeated delete succeeds and changes nothing; an update is a
		// conflict whose extra is the deleted item.
		if d := a.expectOp(t, "delete", 0, 0).instanceOf(t); d.ID != e[4].ID || d.DeletedAt == nil || d.Revision != gone.Revision {
			t.Errorf("delete of a deleted item: %+v, want it as it was (revision %d)", d, gone.Revision)
		}
		o := a.expectOp(t, "update", 0, 409)
		if _, ex := o.errorOf(t); ex["id"] != e[4].ID || ex["deletedAt"] == nil {
			t.Errorf("update of a deleted item: extra %v, want the deleted item", ex)
		}
		if got := ts.item(e[4].ID); got.Revision != gone.Revision || got.Name != gone.Name {
			t.Errorf("the batch changed the deleted item: %+v", got)
		}
	})

	t.Run("rights per operation", func(t *testing.T) {
		ts := ts.with(t)
		_, reader := ts.userWith("batch-reader", grantTo{app: app.ID, perms: []string{"read"}})
		_, writer := ts.userWith("batch-writer", grantTo{app: app.ID, module: m.ID, perms: []string{"write", "read"}})
		cur := ts.item(e[1].ID)
		b := map[string]any{
			"truncate":         []map[string]any{{"module": m.ID}},
			"created":          []map[string]any{itemBody(m.ID, "sneaky", map[string]any{"title": "sneaky"})},
			"updated":          []map[string]any{itemBody(m.ID, "sneaky upd", map[string]any{"title": "x"}, "id", e[1].ID, "revision", cur.Revision)},
			"createdOrUpdated": []map[string]any{itemBody(m.ID, "sneaky cu", map[string]any{"title": "x"}, "id", e[3].ID)},
			"deleted":          []map[string]any{{"id": e[2].ID}},
		}
		before := ts.moduleState(m.ID)
		// A caller who may write, update and delete nothing anywhere is
		// refused the whole batch, whatever it holds: ids of other apps,
		// unknown ids, a body that does not decode.
		foreign := map[string]any{"deleted": []map[string]any{{"id": "5f00000000000000000000dd"}, {"id": e[2].ID}},
			"truncate": []map[string]any{{"module": m.ID}, {"module": "nope"}}}
		for _, tok := range []string{reader, appTok} {
			for _, body := range []any{b, foreign, `{"created": [`} {
				expectHaloError(t, ts.post(batchPath+"/", tok, body), 403)
			}
		}
		if after := ts.moduleState(m.ID); !slices.Equal(before, after) {
			t.Errorf("a refused batch changed the module:\n before %v\n after  %v", before, after)
		}
		// Write on the module: creates pass, the rest is refused.
		var a batchAnswer
		ts.mustNum(ts.post(batchPath, writer, b), 200, &a)
		a.expectOp(t, "create", 0, 0)
		a.expectOp(t, "update", 0, 403)
		a.expectOp(t, "delete", 0, 403)
		a.expectCounts(t, map[string]counter{"total": {Total: 5, Success: 1, Failure: 4}})
		if got := ts.item(e[2].ID); got.DeletedAt != nil {
			t.Errorf("the writer deleted e2")
		}
		expectHaloError(t, ts.post(batchPath, "", b), 401)
	})

	t.Run("bad bodies", func(t *testing.T) {
		ts := ts.with(t)
		before := ts.moduleState(m.ID)
		expectHaloError(t, ts.post(batchPath, ts.admin, `{"created": [`), 400)
		expectHaloError(t, ts.post(batchPath, ts.admin, map[string]any{"created": "not a list"}), 400)
		if after := ts.moduleState(m.ID); !slices.Equal(before, after) {
			t.Errorf("a refused batch changed the module")
		}
		// An empty batch is answered with zero counters.
		var a batchAnswer
		ts.mustNum(ts.post(batchPath, ts.admin, map[string]any{}), 200, &a)
		if len(a.Operations) != 0 || a.Results["total"] == nil || *a.Results["total"] != (counter{}) {
			t.Errorf("empty batch: %+v", a)
		}
	})

	t.Run("body size", func(t *testing.T) {
		ts := ts.with(t)
		big := ts.createModule(ts.admin, moduleBody(app.ID, "Big", fld("title", ftText), fld("text", ftLongText)))
		chunk := strings.Repeat("0123456789abcdef", 1<<16) // 1 MiB
		var creates []map[string]any
		for i := range 3 {
			creates = append(creates, itemBody(big.ID, fmt.Sprintf("big %d", i), map[string]any{"text": chunk}))
		}
		var a batchAnswer
		ts.mustNum(ts.post(batchPath, ts.admin, map[string]any{"created": creates}), 200, &a)
		a.expectCounts(t, map[string]counter{"total": {Total: 3, Success: 3}})
		var list []instView
		ts.mustNum(ts.get(instancePath+"?skip=true&module="+big.ID, ts.admin), 200, &list)
		if len(list) != 3 || len(list) > 0 && list[0].Values["text"] != chunk {
			t.Errorf("%d big items stored", len(list))
		}
		// Over 16 MiB: 413, nothing stored.
		var many []map[string]any
		for i := range 17 {
			many = append(many, itemBody(big.ID, fmt.Sprintf("too big %d", i), map[string]any{"text": chunk}))
		}
		raw, _ := json.Marshal(map[string]any{"created": many})
		if len(raw) <= 16<<20 {
			t.Fatalf("body of %d bytes is not over 16 MiB", len(raw))
		}
		expectHaloError(t, ts.post(batchPath, ts.admin, raw), 413)
		list = nil
		ts.mustNum(ts.get(instancePath+"?skip=true&module="+big.ID, ts.admin), 200, &list)
		if len(list) != 3 {
			t.Errorf("after the refused batch the module holds %d items", len(list))
		}
	})
}

// One bad entry fails on its own: the other operations of the batch, and
// of the same append chunk, still run (issue 3: "each failure carrying its
// own status while the others succeed").
func TestContentBatchOwnFailures(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Batch Failures App")
	m := ts.createModule(ts.admin, moduleBody(app.ID, "Own failures", fld("title", ftText), fld("data", ftObject)))

	// An entry PostgreSQL cannot store fails alone: a NUL character is
	// refused by the value checks, a number jsonb cannot hold (in an
	// Object field, whose content is free) by PostgreSQL, which fails the
	// append of the whole chunk, whose entries then run one by one.
	t.Run("a value the store refuses", func(t *testing.T) {
		ts := ts.with(t)
		for name, bad := range map[string]map[string]any{
			"NUL in a text":            {"title": "bad\u0000title"},
			"a number jsonb overflows": {"title": "huge", "data": map[string]any{"n": json.Number("1e1000000")}},
		} {
			before := ts.moduleState(m.ID)
			var a batchAnswer
			ts.mustNum(ts.post(batchPath, ts.admin, map[string]any{"created": []map[string]any{
				itemBody(m.ID, name+" ok 1", map[string]any{"title": "ok 1"}),
				itemBody(m.ID, name+" bad", bad),
				itemBody(m.ID, name+" ok 2", map[string]any{"title": "ok 2"}),
			}}), 200, &a)
			a.expectOp(t, "create", 0, 0)
			o := a.expectOp(t, "create", 1, 400)
			if _, ex := o.errorOf(t); name == "NUL in a text" && (ex["field"] != "title" || ex["error"] != "validator.nul") {
				t.Errorf("a NUL in a text: extra %v, want field title, validator.nul", ex)
			}
			a.expectOp(t, "create", 2, 0)
			a.expectCounts(t, map[string]counter{"total": {Total: 3, Success: 2, Failure: 1}, "create": {Success: 2, Failure: 1}})
			want := sorted(append(before, name+" ok 1@0", name+" ok 2@0"))
			if got := ts.moduleState(m.ID); !slices.Equal(got, want) {
				t.Errorf("%s: the module holds %v, want %v", name, got, want)
			}
		}
	})

	// An entry of the wrong shape is that operation's own 400; the others
	// run. Only a body that is not an object, or a list that is not an
	// array, refuses the whole request.
	t.Run("a wrongly typed entry", func(t *testing.T) {
		ts := ts.with(t)
		gone := ts.createItem(ts.admin, itemBody(m.ID, "to delete", map[string]any{"title": "x"}))
		before := ts.moduleState(m.ID)
		body := `{
			"created": [
				{"module": "` + m.ID + `", "name": "typed ok 1", "values": {"title": "ok"}},
				{"module": "` + m.ID + `", "name": "typed bad", "values": "oops"},
				"` + m.ID + `",
				{"module": "` + m.ID + `", "name": "typed odd", "values": {}, "colour": "red"},
				{"module": "` + m.ID + `", "name": "typed ok 2", "values": {"title": "ok"}, "tags": []}
			],
			"updated": [{"id": 5, "module": "` + m.ID + `", "name": "x"}],
			"deleted": [{"id": "` + gone.ID + `"}, null]
		}`
		var a batchAnswer
		ts.mustNum(ts.post(batchPath, ts.admin, body), 200, &a)
		a.expectOp(t, "create", 0, 0)
		a.expectOp(t, "create", 4, 0)
		a.expectOp(t, "delete", 0, 0)
		for _, c := range []struct {
			kind          string
			pos           int
			field, inText string
		}{
			{"create", 1, "values", "values"},
			{"create", 2, "", "object"},
			{"create", 3, "", "colour"},
			{"update", 0, "id", "id"},
			{"delete", 1, "", "object"},
		} {
			o := a.expectOp(t, c.kind, c.pos, 400)
			var d struct {
				Error struct {
					Message string         `json:"message"`
					Extra   map[string]any `json:"extra"`
				} `json:"error"`
			}
			if err := json.Unmarshal(o.Data, &d); err != nil || !strings.Contains(d.Error.Message, c.inText) ||
				c.field != "" && d.Error.Extra["field"] != c.field {
				t.Errorf("%s #%d: error %s, want a message naming %q (and extra.field %q)", c.kind, c.pos, o.Data, c.inText, c.field)
			}
		}
		a.expectCounts(t, map[string]counter{"total": {Total: 8, Success: 3, Failure: 5}, "create": {Success: 2, Failure: 3},
			"update": {Failure: 1}, "delete": {Success: 1, Failure: 1}})
		want := sorted(append(slices.DeleteFunc(before, func(s string) bool { return s == "to delete@0" }), "typed ok 1@0", "typed ok 2@0"))
		if got := ts.moduleState(m.ID); !slices.Equal(got, want) {
			t.Errorf("the module holds %v, want %v", got, want)
		}

		// A null entry is refused alike when it is the only odd one (the
		// batch then decodes in one pass).
		var n batchAnswer
		ts.mustNum(ts.post(batchPath, ts.admin, `{"created": [{"module": "`+m.ID+`", "name": "beside null", "values": {"title": "ok"}}, null]}`), 200, &n)
		n.expectOp(t, "create", 0, 0)
		if o := n.expectOp(t, "create", 1, 400); !strings.Contains(string(o.Data), "object") {
			t.Errorf("a null entry: %s, want a 400 saying an entry must be an object", o.Data)
		}

		// The whole request is refused: not an object, a list that is
		// not an array, an unknown list.
		for _, bad := range []string{`[]`, `"created"`, `{"created": {"module": "x"}}`, `{"deleted": "` + gone.ID + `"}`, `{"removed": []}`} {
			expectHaloError(t, ts.post(batchPath, ts.admin, bad), 400)
		}
	})
}
