package main

import (
	"testing"
	"time"
)

// Preview as the app: a CMS user's search with previewAt answers what the
// app's token would get at that instant, scheduled publications and
// expiries applied; it needs the read right on the modules, an app's token
// may not ask for it, and its answers are never cached.
func TestContentPreviewAsApp(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Preview App")
	other := ts.createApp("Preview Other App")
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "News", articleFields()...))
	now := nowMS()
	hour, day := time.Hour.Milliseconds(), 24*time.Hour.Milliseconds()
	item := func(name string, kv ...any) string {
		return ts.createItem(ts.admin, itemBody(mod.ID, name, map[string]any{"title": name}, kv...)).ID
	}
	live := item("live", "publishedAt", now-hour)
	scheduled := item("scheduled", "publishedAt", now+2*day)
	expiring := item("expiring", "publishedAt", now-hour, "removedAt", now+day)
	archiving := item("archiving", "publishedAt", now-hour, "archivedAt", now+day)
	draft := item("draft")
	deleted := item("deleted", "publishedAt", now-hour)
	expectStatus(t, ts.do(request{method: "DELETE", path: instancePath + "/" + deleted, token: ts.admin}), 200)

	search := func(extra ...any) map[string]any {
		b := map[string]any{"moduleIds": []string{mod.ID}, "sort": "name asc"}
		for i := 0; i+1 < len(extra); i += 2 {
			b[extra[i].(string)] = extra[i+1]
		}
		return b
	}
	appTok := ts.appToken(app)
	nowView := []string{live, expiring, archiving}
	later := []string{live, scheduled}

	t.Run("as the app now and later", func(t *testing.T) {
		ts := ts.with(t)
		if got := ts.searchIDs(appTok, search()); !sameSet(got, nowView) {
			t.Fatalf("the app's token sees %v, want %v", got, nowView)
		}
		if got := ts.searchIDs(ts.admin, search("previewAt", nowMS())); !sameSet(got, nowView) {
			t.Errorf("preview now: %v, want what the app sees %v", got, nowView)
		}
		if got := ts.searchIDs(ts.admin, search("previewAt", now+3*day)); !sameSet(got, later) {
			t.Errorf("preview in 3 days: %v, want %v (scheduled published, expired and archived gone)", got, later)
		}
		// Between: the scheduled item is not yet out, the others have not
		// yet ended.
		if got := ts.searchIDs(ts.admin, search("previewAt", now+12*hour)); !sameSet(got, nowView) {
			t.Errorf("preview in 12 hours: %v, want %v", got, nowView)
		}
		// Without previewAt the CMS user sees every live item, drafts too.
		if got := ts.searchIDs(ts.admin, search()); !sameSet(got, []string{live, scheduled, expiring, archiving, draft}) {
			t.Errorf("the CMS view: %v", got)
		}
		// The paginated answer counts as the app's would.
		res := ts.search(ts.admin, search("previewAt", now+3*day))
		if res.pagination.TotalItems != len(later) {
			t.Errorf("preview total %d, want %d", res.pagination.TotalItems, len(later))
		}
		// A date as a string of digits, as HALO's clients send dates.
		if got := ts.searchIDs(ts.admin, search("previewAt", "1")); len(got) != 0 {
			t.Errorf("preview in 1970: %v, want nothing", got)
		}
		expectViolationField(t, ts.post(searchPath, ts.admin, search("previewAt", "soon")), "previewAt")
		expectViolationField(t, ts.post(searchPath, ts.admin, search("previewAt", -5)), "previewAt")
	})

	t.Run("rights", func(t *testing.T) {
		ts := ts.with(t)
		_, appReader := ts.userWith("preview-app-reader", grantTo{app: app.ID, perms: []string{"read"}})
		_, modReader := ts.userWith("preview-module-reader", grantTo{app: app.ID, module: mod.ID, perms: []string{"read"}})
		_, itemReader := ts.userWith("preview-item-reader", grantTo{app: app.ID, item: live, perms: []string{"read"}})
		_, stranger := ts.userWith("preview-stranger", grantTo{app: other.ID, perms: []string{"read"}})
		for _, tok := range []string{appReader, modReader} {
			if got := ts.searchIDs(tok, search("previewAt", now+3*day)); !sameSet(got, later) {
				t.Errorf("a reader's preview: %v, want %v", got, later)
			}
		}
		// A right on one item, or on another app, does not cover the module.
		expectHaloError(t, ts.post(searchPath, itemReader, search("previewAt", nowMS())), 403)
		expectHaloError(t, ts.post(searchPath, stranger, search("previewAt", nowMS())), 403)
		// Without modules named, a preview spans the modules the user may
		// read whole: the stranger's app has no items.
		if got := ts.searchIDs(stranger, map[string]any{"previewAt": nowMS()}); len(got) != 0 {
			t.Errorf("the stranger's own preview: %v", got)
		}
		// An app's token sees its app as it is now: previewAt is a 400.
		expectViolationField(t, ts.post(searchPath, appTok, search("previewAt", now+3*day)), "previewAt")
	})

	t.Run("never cached", func(t *testing.T) {
		ts := ts.with(t)
		_, reader := ts.userWith("preview-cache-reader", grantTo{app: app.ID, perms: []string{"read"}})
		body := search("previewAt", now+3*day)
		for range 2 {
			r := ts.post(searchPath, reader, body)
			expectStatus(t, r, 200)
			if c := r.Header.Get("X-Cache"); c != "" {
				t.Errorf("a preview went through the answer cache: X-Cache %q", c)
			}
		}
		// The app's own answers are cached and stay its own.
		for range 2 {
			if got := ts.searchIDs(appTok, search()); !sameSet(got, nowView) {
				t.Errorf("the app's token after previews: %v, want %v", got, nowView)
			}
		}
	})
}

// expectViolationField asserts a 400 whose extra names field.
func expectViolationField(t testing.TB, r response, field string) {
	t.Helper()
	if ex := haloExtra(t, r, 400); ex != nil && ex["field"] != field {
		t.Errorf("%s: extra.field %v, want %q", r, ex["field"], field)
	}
}
