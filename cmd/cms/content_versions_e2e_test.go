package main

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"
)

// Versions of content items: reads and writes carry the revision as an
// ETag; a write with If-Match is refused (412, the current item in
// extra.current) when the item moved on, and changes nothing.

// ifMatch is a request with an If-Match header (none when tag is empty).
func ifMatch(method, path, token, tag string, body any) request {
	rq := request{method: method, path: path, token: token, body: body}
	if tag != "" {
		rq.header = http.Header{"If-Match": {tag}}
	}
	return rq
}

func etag(rev int64) string { return `"` + strconv.FormatInt(rev, 10) + `"` }

// expectETag asserts an answer's ETag is the revision its body shows.
func expectETag(t testing.TB, r response, it instView) {
	t.Helper()
	if got := r.Header.Get("ETag"); got != etag(it.Revision) {
		t.Errorf("%s: ETag %q, want %q (its revision)", r, got, etag(it.Revision))
	}
}

// expectPrecondition asserts a 412 whose extra.current is the item as a
// GET answers it, and that the item did not change.
func expectPrecondition(t testing.TB, ts *testServer, r response, before instView) {
	t.Helper()
	ex := haloExtra(t, r, http.StatusPreconditionFailed)
	var now map[string]any
	ts.mustNum(ts.get(instancePath+"/"+before.ID, ts.admin), 200, &now)
	if cur, ok := ex["current"].(map[string]any); !ok || fmt.Sprint(cur) != fmt.Sprint(now) {
		t.Errorf("%s: extra.current is not the item as GET answers it:\n current %v\n GET     %v", r, ex["current"], now)
	}
	if after := ts.item(before.ID); after.Revision != before.Revision || after.Name != before.Name {
		t.Errorf("%s changed the item: revision %d → %d, name %q → %q", r.req, before.Revision, after.Revision, before.Name, after.Name)
	}
}

func TestContentVersions(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Versions App")
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Articles", articleFields()...))
	path := func(id string) string { return instancePath + "/" + id }
	body := func(name string) map[string]any { return itemBody(mod.ID, name, map[string]any{"title": name}) }

	t.Run("ETag on reads and writes", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.post(instancePath, ts.admin, body("one"))
		var it instView
		ts.mustNum(r, 201, &it)
		expectETag(t, r, it)
		r = ts.get(path(it.ID), ts.admin)
		ts.mustNum(r, 200, &it)
		expectETag(t, r, it)
		if r.Header.Get("ETag") != `"0"` {
			t.Errorf("a new item's ETag %q, want \"0\"", r.Header.Get("ETag"))
		}
	})

	t.Run("PUT with If-Match", func(t *testing.T) {
		ts := ts.with(t)
		it := ts.createItem(ts.admin, body("v0"))
		// The current revision: the write happens, a new ETag.
		r := ts.do(ifMatch("PUT", path(it.ID), ts.admin, etag(it.Revision), body("v1")))
		var up instView
		ts.mustNum(r, 200, &up)
		expectETag(t, r, up)
		if up.Revision != it.Revision+1 || up.Name != "v1" {
			t.Fatalf("PUT at the current revision: %+v", up)
		}
		// The revision read before that write: 412, nothing changes.
		expectPrecondition(t, ts, ts.do(ifMatch("PUT", path(it.ID), ts.admin, etag(it.Revision), body("lost"))), up)
		// A revision from the future is not the current one either.
		expectPrecondition(t, ts, ts.do(ifMatch("PUT", path(it.ID), ts.admin, etag(up.Revision+3), body("lost"))), up)
		// W/"n" names revision n; * any revision.
		ts.mustNum(ts.do(ifMatch("PUT", path(it.ID), ts.admin, `W/`+etag(up.Revision), body("v2"))), 200, &up)
		ts.mustNum(ts.do(ifMatch("PUT", path(it.ID), ts.admin, `*`, body("v3"))), 200, &up)
		if up.Name != "v3" || up.Revision != it.Revision+3 {
			t.Errorf("after W/ and *: %+v", up)
		}
		// Without If-Match, as the HALO SDKs write: the last write wins.
		r = ts.put(path(it.ID), ts.admin, body("v4"))
		ts.mustNum(r, 200, &up)
		expectETag(t, r, up)
		// An If-Match that is not one revision: 400, nothing changes.
		for _, bad := range []string{`3`, `"x"`, `"1", "2"`, `"-1"`, `W/`} {
			r := ts.do(ifMatch("PUT", path(it.ID), ts.admin, bad, body("bad")))
			if ex := haloExtra(t, r, 400); ex != nil && ex["header"] != "If-Match" {
				t.Errorf("%s (If-Match %s): extra %v, want header If-Match", r, bad, ex)
			}
		}
		// If-Match and the body's revision must agree.
		expectHaloError(t, ts.do(ifMatch("PUT", path(it.ID), ts.admin, etag(up.Revision),
			itemBody(mod.ID, "bad", map[string]any{"title": "bad"}, "revision", up.Revision-1))), 400)
		if got := ts.item(it.ID); got.Revision != up.Revision || got.Name != "v4" {
			t.Errorf("refused writes changed the item: %+v", got)
		}
		// Both, the same: the write happens. The body's stale revision
		// alone is still HALO's 409.
		ts.mustNum(ts.do(ifMatch("PUT", path(it.ID), ts.admin, etag(up.Revision),
			itemBody(mod.ID, "v5", map[string]any{"title": "v5"}, "revision", up.Revision))), 200, &up)
		expectHaloError(t, ts.put(path(it.ID), ts.admin, itemBody(mod.ID, "x", map[string]any{"title": "x"}, "revision", up.Revision-1)), 409)
	})

	t.Run("state commands, history restore and DELETE with If-Match", func(t *testing.T) {
		ts := ts.with(t)
		it := ts.createItem(ts.admin, body("states"))
		ts.mustNum(ts.put(path(it.ID), ts.admin, body("states 2")), 200, &it)
		for _, step := range []struct{ method, path string }{
			{"POST", "/publish"}, {"POST", "/unpublish"}, {"POST", "/archive"}, {"POST", "/unarchive"},
			{"POST", "/history/0/restore"}, {"DELETE", ""}, {"POST", "/restore"},
		} {
			stale := etag(it.Revision - 1)
			expectPrecondition(t, ts, ts.do(ifMatch(step.method, path(it.ID)+step.path, ts.admin, stale, nil)), it)
			expectHaloError(t, ts.do(ifMatch(step.method, path(it.ID)+step.path, ts.admin, "nope", nil)), 400)
			r := ts.do(ifMatch(step.method, path(it.ID)+step.path, ts.admin, etag(it.Revision), nil))
			var next instView
			ts.mustNum(r, 200, &next)
			expectETag(t, r, next)
			if next.Revision != it.Revision+1 {
				t.Errorf("%s %s at the current revision: revision %d → %d", step.method, step.path, it.Revision, next.Revision)
			}
			it = next
		}
		// The query's revision and If-Match must agree on DELETE too.
		expectHaloError(t, ts.do(ifMatch("DELETE", path(it.ID)+"?revision="+strconv.FormatInt(it.Revision+1, 10), ts.admin,
			etag(it.Revision), nil)), 400)
	})

	t.Run("refusals come first", func(t *testing.T) {
		ts := ts.with(t)
		it := ts.createItem(ts.admin, body("guarded"))
		_, reader := ts.userWith("versions-reader", grantTo{app: app.ID, perms: []string{"read"}})
		r := ts.get(path(it.ID), reader)
		expectStatus(t, r, 200)
		if r.Header.Get("ETag") != etag(it.Revision) {
			t.Errorf("a reader's GET: ETag %q", r.Header.Get("ETag"))
		}
		// Someone who may not update learns nothing of the revision or
		// of what is wrong with the header.
		expectHaloError(t, ts.do(ifMatch("PUT", path(it.ID), reader, etag(it.Revision+1), body("x"))), 403)
		expectHaloError(t, ts.do(ifMatch("PUT", path(it.ID), reader, "nope", body("x"))), 403)
		expectHaloError(t, ts.do(ifMatch("POST", path(it.ID)+"/publish", reader, etag(it.Revision+1), nil)), 403)
	})
}
