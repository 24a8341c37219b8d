package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"
)

// The search answer cache serves an app's repeated searches, and never an
// answer that differs from what the search would answer now: after any
// change to the app's content (in any process: the version lives in
// PostgreSQL), after a scheduled publication or expiry takes effect, and
// never across apps or to CMS users, whose answers depend on their rights.
func TestContentSearchCache(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Cached")
	other := ts.createApp("Other")
	appTok, otherTok := ts.appToken(app), ts.appToken(other)
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "News", fld("title", ftText)))
	ts.createModule(ts.admin, moduleBody(other.ID, "News", fld("title", ftText)))
	past := nowMS() - 60_000
	first := ts.createItem(ts.admin, itemBody(mod.ID, "first", map[string]any{"title": "First"}, "publishedAt", past))

	body := map[string]any{"moduleName": "News", "pagination": map[string]any{"skip": true}}
	search := func(t *testing.T, token, wantCache string) []string {
		t.Helper()
		r := ts.with(t).post(searchPath, token, body)
		if r.Status != 200 {
			t.Fatalf("%s: want 200", r)
		}
		if got := r.Header.Get("X-Cache"); got != wantCache {
			t.Errorf("X-Cache %q, want %q", got, wantCache)
		}
		return itemIDs(decodeSearch(t, r).items)
	}

	t.Run("a repeated search is a hit with the same answer", func(t *testing.T) {
		a := search(t, appTok, "miss")
		b := search(t, appTok, "hit")
		if !sameSet(a, []string{first.ID}) || !sameSet(b, a) {
			t.Fatalf("answers %v then %v, want [%s] twice", a, b, first.ID)
		}
	})

	t.Run("another app's token never gets the answer", func(t *testing.T) {
		if got := search(t, otherTok, "miss"); len(got) != 0 {
			t.Fatalf("other app sees %v", got)
		}
	})

	t.Run("a CMS user's search is not cached", func(t *testing.T) {
		search(t, ts.admin, "")
		search(t, ts.admin, "")
	})

	t.Run("a write makes the next search fresh", func(t *testing.T) {
		search(t, appTok, "hit")
		second := ts.createItem(ts.admin, itemBody(mod.ID, "second", map[string]any{"title": "Second"}, "publishedAt", past))
		if got := search(t, appTok, "stale"); !sameSet(got, []string{first.ID, second.ID}) {
			t.Fatalf("after a create: %v", got)
		}
		ts.transit(ts.admin, second.ID, "unpublish", nil)
		if got := search(t, appTok, "stale"); !sameSet(got, []string{first.ID}) {
			t.Fatalf("after an unpublish: %v", got)
		}
		search(t, appTok, "hit")
	})

	t.Run("a module change makes the next search fresh", func(t *testing.T) {
		search(t, appTok, "hit")
		ts.with(t).mustJSON(ts.put(modulePath+"/"+mod.ID, ts.admin, moduleBody(app.ID, "Renamed", fld("title", ftText))), 200, &moduleView{})
		if got := search(t, appTok, "stale"); len(got) != 0 {
			t.Fatalf("module News renamed: still found %v", got)
		}
		ts.with(t).mustJSON(ts.put(modulePath+"/"+mod.ID, ts.admin, moduleBody(app.ID, "News", fld("title", ftText))), 200, &moduleView{})
	})

	t.Run("a scheduled publication and expiry take effect without a write", func(t *testing.T) {
		search(t, appTok, "stale")
		search(t, appTok, "hit")
		// 3 s ahead, and checked only when the search was still early:
		// the write may wait on a loaded machine.
		at := nowMS() + 3000
		sched := ts.createItem(ts.admin, itemBody(mod.ID, "scheduled", map[string]any{"title": "Later"},
			"publishedAt", at, "removedAt", at+1500))
		if got := search(t, appTok, "stale"); nowMS() < at && !sameSet(got, []string{first.ID}) {
			t.Fatalf("before its date: %v", got)
		}
		search(t, appTok, "hit")
		time.Sleep(time.Until(time.UnixMilli(at)) + 50*time.Millisecond)
		if got := search(t, appTok, "stale"); !sameSet(got, []string{first.ID, sched.ID}) {
			t.Fatalf("after its publication date: %v", got)
		}
		search(t, appTok, "hit")
		time.Sleep(time.Until(time.UnixMilli(at+1500)) + 50*time.Millisecond)
		if got := search(t, appTok, "stale"); !sameSet(got, []string{first.ID}) {
			t.Fatalf("after its expiry: %v", got)
		}
	})
}

// With CMS_READ_CONCURRENCY 1 the searches run one at a time: many at
// once all wait their turn and all get the right answer, by app tokens
// (cache bypassed) and CMS users alike.
func TestContentSearchesWaitInLine(t *testing.T) {
	t.Parallel()
	ts := startServer(t, withConfig(func(c *Config) { c.ReadYourWrites, c.ReadConcurrency = 20*time.Second, 1 }))
	app := ts.createApp("InLine")
	appTok := ts.appToken(app)
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "News", fld("title", ftText)))
	past := nowMS() - 60_000
	var want []string
	for _, title := range []string{"apple pie", "apple tart", "banana"} {
		want = append(want, ts.createItem(ts.admin, itemBody(mod.ID, title, map[string]any{"title": title}, "publishedAt", past)).ID)
	}
	body, _ := json.Marshal(map[string]any{"moduleIds": []string{mod.ID}, "searchValues": map[string]any{
		"condition": "and", "operands": []any{
			map[string]any{"operation": "like", "property": "title", "value": "apple", "type": "string"},
			map[string]any{"operation": "!=", "property": "title", "value": "x", "type": "string"}}},
		"sort": "values.title asc", "pagination": map[string]any{"page": 1, "limit": 10}})
	atOnce(t, 24, func(i int) error {
		tok := appTok
		if i%2 == 1 {
			tok = ts.admin
		}
		req, _ := http.NewRequest(http.MethodPost, ts.base+searchPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok)
		req.Header.Set("Cache-Control", "no-cache")
		resp, err := ts.client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		var page struct {
			Pagination struct{ TotalItems int } `json:"pagination"`
			Items      []struct{ ID string }    `json:"items"`
		}
		if err := json.NewDecoder(resp.Body).Decode(&page); err != nil || resp.StatusCode != 200 {
			return fmt.Errorf("search %d: status %d, %v", i, resp.StatusCode, err)
		}
		var got []string
		for _, it := range page.Items {
			got = append(got, it.ID)
		}
		if page.Pagination.TotalItems != 2 || !sameSet(got, []string{want[0], want[1]}) {
			return fmt.Errorf("search %d: total %d, items %v, want %v", i, page.Pagination.TotalItems, got, want[:2])
		}
		return nil
	})
}
