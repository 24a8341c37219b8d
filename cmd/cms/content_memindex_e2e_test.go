package main

import (
	"net/http"
	"regexp"
	"slices"
	"testing"
	"time"
)

// An app's searches of one module's typed columns are answered from the
// in-memory copy of the module once it is loaded (X-Search-Index:
// memory), with the answer PostgreSQL gives; after a write, through this
// process or another, the next search still runs in memory and sees it
// (read your writes): the copy is brought forward by the rows written
// since its version. No-cache searches
// too: the copy is not an answer cache, it is checked against the app's
// content version by the statement that reads the page's items.
func TestContentSearchInMemory(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	other := ts.another(t) // writes, as another process would
	app := ts.createApp("Shop")
	appTok := ts.appToken(app)
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Products", fld("title", ftText), fld("category", ftText), fld("price", ftNumber)))
	past := nowMS() - 60_000
	for i, p := range []struct {
		title, cat string
		price      int
	}{{"Amber lamp", "home", 30}, {"amber mug", "home", 10}, {"Blue mug", "home", 20}, {"Amber tee", "wear", 50}} {
		ts.createItem(ts.admin, itemBody(mod.ID, "p"+string(rune('a'+i)), map[string]any{"title": p.title, "category": p.cat, "price": p.price}, "publishedAt", past))
	}
	body := map[string]any{"moduleIds": []string{mod.ID}, "sort": "values.price desc", "pagination": map[string]any{"page": 1, "limit": 10},
		"searchValues": map[string]any{"condition": "and", "operands": []map[string]any{
			{"operation": "=", "property": "category", "value": "home", "type": "string"},
			{"operation": "like", "property": "title", "value": "AMBER", "type": "string"}}}}
	search := func(t *testing.T) (titles []string, index string) {
		t.Helper()
		r := ts.with(t).do(request{method: http.MethodPost, path: searchPath, token: appTok, body: body,
			header: http.Header{"Cache-Control": {"no-cache"}}})
		if r.Status != 200 {
			t.Fatalf("%s: want 200", r)
		}
		res := decodeSearch(t, r)
		for _, it := range res.items {
			titles = append(titles, it.Values["title"].(string))
		}
		if !res.paginated || res.pagination.TotalItems != len(titles) {
			t.Fatalf("%s: want a total of %d", r, len(titles))
		}
		return titles, r.Header.Get("X-Search-Index")
	}
	inMemory := func(t *testing.T, want ...string) {
		t.Helper()
		deadline := time.Now().Add(10 * time.Second)
		for {
			titles, index := search(t)
			if !slices.Equal(titles, want) {
				t.Fatalf("found %q (%s), want %q", titles, index, want)
			}
			if index == "memory" {
				return
			}
			if index != "postgresql" || time.Now().After(deadline) {
				t.Fatalf("X-Search-Index %q, want memory within 10 s", index)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}

	inMemory(t, "Amber lamp", "amber mug")
	ts.createItem(ts.admin, itemBody(mod.ID, "pe", map[string]any{"title": "AMBER vase", "category": "home", "price": 40}, "publishedAt", past))
	if titles, index := search(t); index != "memory" || !slices.Equal(titles, []string{"AMBER vase", "Amber lamp", "amber mug"}) {
		t.Fatalf("right after a write: %q from %s, want the new item, from memory", titles, index)
	}
	other.createItem(other.admin, itemBody(mod.ID, "pf", map[string]any{"title": "amber bowl", "category": "home", "price": 35}, "publishedAt", past))
	if titles, index := search(t); index != "memory" || !slices.Equal(titles, []string{"AMBER vase", "amber bowl", "Amber lamp", "amber mug"}) {
		t.Fatalf("right after a write through another process: %q from %s, want the new item, from memory", titles, index)
	}

	m := string(ts.get("/metrics", "").Body)
	for _, index := range []string{"memory", "postgresql"} {
		if !regexp.MustCompile(`cms_content_searches_total\{index="` + index + `"\} [1-9]`).MatchString(m) {
			t.Errorf("/metrics counts no search by %s", index)
		}
	}
}
