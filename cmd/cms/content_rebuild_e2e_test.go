package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/adapters/projection"
	projcontent "github.com/halocms/halocms/projections/content"
)

// TestContentRebuildAnswersAlike builds content through the API (modules
// of most field types, a module made from a module type, a module whose
// fields, name and tags change, a module deleted with its items; items
// concept, published, scheduled, expired, archived and unarchived,
// unpublished, deleted, restored, edited, reverted, written by a batch),
// then rebuilds the content projection twice, in batches of one event and
// in one batch of every event, while the server keeps running. After each
// rebuild every table must hold the same rows as the live version did, and
// every search, sync and read the same answer, byte for byte.
//
// The rebuilds run with RebuildOptions.Verify, which compares content_versions
// on its apps only (every Apply stamps the apps it touches with a version
// from the clock, see bumpVersions and Projector.ComparedColumns); the
// tables are also compared here, row by row with the rows shown when they
// differ, and content_versions by what it promises (checkContentVersions).
func TestContentRebuildAnswersAlike(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	ctx := context.Background()
	appA, appB := ts.createApp("Rebuild App"), ts.createApp("Rebuild App B")
	tokA, tokB := ts.appToken(appA), ts.appToken(appB)
	past := nowMS() - 60_000
	future := nowMS() + time.Hour.Milliseconds()
	tag := func(v string) map[string]any {
		return map[string]any{"name": "Platform Name", "value": v, "tagType": "000000000000000000000001"}
	}
	loc := func(en, es string) map[string]any { return map[string]any{"en-US": en, "es-ES": es} }
	tStart := nowMS()

	// Module types: one saved, changed and kept, one deleted.
	typeBody := func(name string, fields ...map[string]any) map[string]any {
		return map[string]any{"name": name, "isSingle": false, "fields": fields}
	}
	var article, doomed moduleTypeView
	ts.mustJSON(ts.post(moduleTypePath, ts.admin, typeBody("Article", fld("title", ftText), fld("body", ftLongText))), 201, &article)
	ts.mustJSON(ts.put(moduleTypePath+"/"+article.ID, ts.admin, typeBody("Article", fld("title", ftText), fld("body", ftLongText),
		fld("kind", ftChoice, "rules", rules{"values": []string{"news", "blog"}}))), 200, &article)
	ts.mustJSON(ts.post(moduleTypePath, ts.admin, typeBody("Doomed", fld("x", ftNumber))), 201, &doomed)
	expectStatus(t, ts.do(request{method: "DELETE", path: moduleTypePath + "/" + doomed.ID, token: ts.admin}), 204)

	// Modules. News has more text-like and numeric fields than
	// content_fields has columns (author and at go to content_keys), and
	// multi-valued, localized, long, object and list fields.
	authors := ts.createModule(ts.admin, moduleBody(appA.ID, "Authors", fld("name", ftText), fld("bio", ftLocalized)))
	news := ts.createModule(ts.admin, moduleBody(appA.ID, "News",
		fld("title", ftText), fld("subtitle", ftText), fld("link", ftWebsite), fld("color", ftColor), fld("active", ftBoolean),
		fld("category", ftChoice, "rules", rules{"values": []string{"sports", "tech", "food"}}),
		fld("author", ftRelation, "rules", rules{"module": authors.ID}),
		fld("price", ftNumber), fld("date", ftDate), fld("rank", ftNumber), fld("weight", ftNumber), fld("at", ftTime),
		fld("related", ftMultiRelation), fld("labels", ftMultiChoice, "rules", rules{"values": []string{"x", "y", "z"}}),
		fld("headline", ftLocalized), fld("body", ftLongText), fld("data", ftObject), fld("items", ftList)))
	blogBody := moduleBody(appA.ID, "Blog")
	blogBody["moduleType"] = article.ID
	delete(blogBody, "fields")
	blog := ts.createModule(ts.admin, blogBody)
	gone := ts.createModule(ts.admin, moduleBody(appA.ID, "Gone", fld("title", ftText), fld("price", ftNumber)))
	changing := ts.createModule(ts.admin, moduleBody(appA.ID, "Changing", fld("title", ftText), fld("price", ftNumber)))
	newsB := ts.createModule(ts.admin, moduleBody(appB.ID, "News", fld("title", ftText)))

	var all []string // every item's id
	create := func(module, name string, values map[string]any, kv ...any) instView {
		t.Helper()
		time.Sleep(2 * time.Millisecond) // distinct createdAt: creation order is the default sort
		it := ts.createItem(ts.admin, itemBody(module, name, values, kv...))
		all = append(all, it.ID)
		return it
	}
	ann := create(authors.ID, "Ann", map[string]any{"name": "Ann", "bio": loc("Writer", "Escritora")}, "publishedAt", past)
	bob := create(authors.ID, "Bob", map[string]any{"name": "Bob", "bio": loc("Editor", "Editor")}, "publishedAt", past)
	create(authors.ID, "Carl", map[string]any{"name": "Carl"}) // a concept

	// Long texts, cut in their columns: subtitle in content_fields (x2),
	// the Spanish headline in content_keys (x); ñ takes two bytes.
	longSub := strings.Repeat("ñandú corre ", 60) + "finale"
	longHead := strings.Repeat("titular largo ", 45) + "remate"
	newsValues := func(i int) map[string]any {
		cats := []string{"sports", "tech", "food"}
		v := map[string]any{
			"title": fmt.Sprintf("Story %02d road", i), "subtitle": fmt.Sprintf("sub %d", i), "link": fmt.Sprintf("https://example.com/%d", i),
			"color": fmt.Sprintf("#%06x", i*0x111111%0x1000000), "active": i%2 == 0, "category": cats[i%3],
			"price": 10 * i, "date": 1_000_000_000_000 + int64(i)*86_400_000, "rank": i % 4, "weight": 1.5 * float64(i), "at": 3_600_000 * (i % 5),
			"labels": []string{"x", "y", "z"}[:1+i%3], "headline": loc(fmt.Sprintf("Headline %d", i), fmt.Sprintf("Titular %d", i)),
			"body": strings.Repeat(fmt.Sprintf("body %d ", i), 40), "data": map[string]any{"n": i, "tags": []any{"a", i}},
			"items": []any{i, fmt.Sprint("e", i), nil},
		}
		if i%3 != 0 {
			v["author"] = ann.ID
			v["related"] = []string{ann.ID, bob.ID}[:1+i%2]
		}
		return v
	}
	n := make([]instView, 14)
	pubAt := func(at int64) []any { return []any{"publishedAt", at} }
	for i := 1; i <= 13; i++ {
		var kv []any
		switch i {
		case 3: // a concept
		case 4: // scheduled
			kv = pubAt(future)
		case 5: // expired
			kv = append(pubAt(past), "removedAt", nowMS()-1000)
		default:
			kv = pubAt(past)
		}
		if i <= 2 {
			kv = append(kv, "tags", []any{tag([]string{"android", "ios"}[i-1])})
		}
		v := newsValues(i)
		if i == 1 {
			v["subtitle"], v["headline"] = longSub, loc("Short headline", longHead)
		}
		n[i] = create(news.ID, fmt.Sprintf("n%d", i), v, kv...)
	}
	b1 := create(blog.ID, "Welcome", map[string]any{"title": "Welcome", "body": "hello", "kind": "blog"}, "publishedAt", past)
	create(blog.ID, "Draft post", map[string]any{"title": "Draft", "kind": "news"})
	g := []instView{
		create(gone.ID, "g live", map[string]any{"title": "g live", "price": 1}, "publishedAt", past),
		create(gone.ID, "g concept", map[string]any{"title": "g concept", "price": 2}),
		create(gone.ID, "g deleted", map[string]any{"title": "g deleted", "price": 3}, "publishedAt", past),
		create(gone.ID, "g scheduled", map[string]any{"title": "g scheduled", "price": 4}, "publishedAt", future),
	}
	c1 := create(changing.ID, "c1", map[string]any{"title": "c one", "price": 5}, "publishedAt", past)
	create(changing.ID, "c2", map[string]any{"title": "c two"})
	create(newsB.ID, "B story", map[string]any{"title": "Story 01 road"}, "publishedAt", past)

	// Past the sync margin: a sync from tMid lists only what changes next.
	time.Sleep(syncMargin + 100*time.Millisecond)
	tMid := nowMS()
	time.Sleep(5 * time.Millisecond)

	// State changes and edits.
	edit := func(id string, body map[string]any) instView {
		t.Helper()
		var it instView
		ts.mustNum(ts.put(instancePath+"/"+id, ts.admin, body), 200, &it)
		return it
	}
	v2 := newsValues(2)
	v2["title"], v2["price"], v2["labels"] = "Story 02 edited", 222, []string{"z"}
	edit(n[2].ID, itemBody(news.ID, "n2 edited", v2, "publishedAt", past, "tags", []any{tag("android"), tag("web")}))
	ts.transit(ts.admin, n[6].ID, "archive", nil)
	ts.deleteItem(n[7].ID)
	ts.deleteItem(n[8].ID)
	ts.transit(ts.admin, n[8].ID, "restore", nil)
	v9 := newsValues(9)
	v9["title"] = "Story 09 changed"
	edit(n[9].ID, itemBody(news.ID, "n9 changed", v9, "publishedAt", past))
	var reverted instView
	ts.mustNum(ts.post(instancePath+"/"+n[9].ID+"/history/0/restore", ts.admin, nil), 200, &reverted)
	if reverted.Name != "n9" {
		t.Fatalf("reverted to revision 0: name %q", reverted.Name)
	}
	ts.transit(ts.admin, n[10].ID, "unpublish", nil)
	edit(n[11].ID, itemBody(news.ID, "n11", newsValues(11), "publishedAt", past, "removedAt", future)) // expiry set
	ts.transit(ts.admin, n[11].ID, "archive", map[string]any{"archivedAt": future + 1000})
	ts.transit(ts.admin, n[12].ID, "archive", nil)
	ts.transit(ts.admin, n[12].ID, "unarchive", nil)
	// A batch: items created and one deleted in one transaction.
	var batch batchAnswer
	ts.mustNum(ts.post(batchPath, ts.admin, map[string]any{
		"created": []map[string]any{
			itemBody(news.ID, "batch 1", newsValues(21), "publishedAt", past),
			itemBody(news.ID, "batch 2", newsValues(22), "publishedAt", past, "tags", []any{tag("ios")}),
		},
		"deleted": []any{map[string]any{"id": n[13].ID}},
	}), 200, &batch)
	var batched []string
	for _, o := range batch.Operations {
		if !o.Success {
			t.Fatalf("batch operation %s %d failed: %s", o.Operation, o.Position, o.Data)
		}
		if o.Operation == "create" {
			id := o.instanceOf(t).ID
			batched, all = append(batched, id), append(all, id)
		}
	}
	if len(batched) != 2 {
		t.Fatalf("batch created %v", batched)
	}
	// Gone goes with its items, one deleted before.
	ts.deleteItem(g[2].ID)
	expectStatus(t, ts.do(request{method: "DELETE", path: modulePath + "/" + gone.ID, token: ts.admin}), 200)
	// Changing: renamed, given tags, a field added before the others (the
	// typed columns move) and a localized one after; then written again.
	chBody := moduleBody(appA.ID, "Changed", fld("code", ftText), fld("title", ftText), fld("price", ftNumber), fld("note", ftLocalized))
	chBody["tags"] = []map[string]any{tag("android"), tag("ios")}
	ts.mustJSON(ts.put(modulePath+"/"+changing.ID, ts.admin, chBody), 200, &moduleView{})
	edit(c1.ID, itemBody(changing.ID, "c1", map[string]any{"code": "C-1", "title": "c one", "price": 5, "note": loc("note", "nota")},
		"publishedAt", past, "tags", []any{tag("ios")}))
	create(changing.ID, "c3", map[string]any{"code": "C-3", "title": "c three", "price": 7}, "publishedAt", past)

	time.Sleep(5 * time.Millisecond)
	tEnd := nowMS()

	// What the app sees live, and what a sync since tMid must drop: the
	// answers compared below are not empty or all failures.
	live := append([]string{n[1].ID, n[2].ID, n[8].ID, n[9].ID, n[11].ID, n[12].ID}, batched...)
	if got := ts.searchIDs(tokA, map[string]any{"moduleIds": []string{news.ID}}); !sameSet(got, live) {
		t.Fatalf("the app's News: %v, want %v", got, live)
	}
	var inc syncView
	ts.mustNum(ts.post(syncPath, tokA, map[string]any{"moduleId": news.ID, "fromSync": tMid, "toSync": tEnd}), 200, &inc)
	for _, id := range []string{n[6].ID, n[7].ID, n[10].ID, n[13].ID} {
		if !slices.Contains(inc.deletedIDs(), id) {
			t.Errorf("sync since tMid: deleted %v lacks %s", inc.deletedIDs(), id)
		}
	}
	if slices.Contains(inc.deletedIDs(), n[3].ID) {
		t.Errorf("sync since tMid lists the concept n3 as deleted")
	}

	probes := contentRebuildProbes(tokA, tokB, news, authors, blog, gone, changing, newsB, ann, bob, b1, g, n,
		tStart, tMid, tEnd, all)
	before := runContentProbes(t, ts, probes)
	for _, name := range keysOf(before) {
		if a := before[name]; a.status != 200 && !strings.HasPrefix(name, "sync Gone") && !strings.HasPrefix(name, "get gone") {
			t.Errorf("%s: status %d before the rebuild: %s", name, a.status, a.body)
		}
	}
	tables := contentTables(t, ts)
	versions := contentVersions(t, ts)
	for _, tb := range []string{"content_modules", "content_module_types", "content_items", "content_keys", "content_fields"} {
		if len(tables[tb]) == 0 {
			t.Fatalf("%s is empty", tb)
		}
	}
	if t.Failed() {
		t.FailNow()
	}
	// The log as the live version saw it: the rebuilt one must have
	// replayed it all, with no content event appended meanwhile.
	countEvents := func() (events, content int64) {
		t.Helper()
		if err := ts.app.pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE event_type LIKE 'content.%') FROM events`).
			Scan(&events, &content); err != nil {
			t.Fatal(err)
		}
		return events, content
	}
	logSize, contentEvents := countEvents()

	version := 1
	for _, size := range []int{1, 100_000} {
		res, err := ts.app.runtime.RebuildWith(ctx, "content", projection.RebuildOptions{BatchSize: size, Verify: true})
		if err != nil {
			t.Fatalf("rebuild in batches of %d: %v", size, err)
		}
		version++
		if _, c := countEvents(); res.Version != version || res.Events < logSize || c != contentEvents {
			t.Fatalf("rebuild in batches of %d: %+v, want version %d and at least %d events (%d content events in the log, %d at the snapshot)",
				size, res, version, logSize, c, contentEvents)
		}
		what := fmt.Sprintf("after the rebuild in batches of %d", size)
		compareContentTables(t, what, tables, contentTables(t, ts))
		versions = checkContentVersions(t, what, versions, contentVersions(t, ts))
		after := runContentProbes(t, ts, probes)
		for _, name := range keysOf(before) {
			b, a := before[name], after[name]
			if a.status != b.status || a.body != b.body {
				t.Errorf("%s, %s: the answer changed (status %d, now %d) at %s", what, name, b.status, a.status, diffAt(b.body, a.body))
			}
			// A cached answer must not outlive the tables it came from.
			if a.cache == "hit" {
				t.Errorf("%s, %s: answered from the cache filled before the rebuild", what, name)
			}
		}
	}

	// The live runner goes on into the new version.
	later := ts.createItem(ts.admin, itemBody(news.ID, "after the rebuilds", newsValues(30), "publishedAt", past))
	if got := ts.searchIDs(tokA, map[string]any{"moduleIds": []string{news.ID}, "instanceIds": []string{later.ID}}); !slices.Equal(got, []string{later.ID}) {
		t.Errorf("an item created after the rebuilds: the app finds %v", got)
	}
}

// contentProbe is one read whose answer must not change with a rebuild.
type contentProbe struct {
	name   string
	method string
	path   string
	token  string
	body   any
	cached bool // an app token's search: asked through the cache too
}

// contentRebuildProbes are the reads compared across the rebuilds: the
// admin's searches (every item, deleted ones too), the apps' searches on
// every kind of field (typed columns, key rows, texts past their cut,
// relations, tags, locales, sorts, pages), syncs at fixed instants, and
// the modules, module types and items as read one by one.
func contentRebuildProbes(tokA, tokB string, news, authors, blog, gone, changing, newsB moduleView,
	ann, bob, b1 instView, g []instView, n []instView, tStart, tMid, tEnd int64, all []string) []contentProbe {
	var ps []contentProbe
	skip := map[string]any{"skip": true}
	search := func(name, token string, body map[string]any) {
		if _, ok := body["pagination"]; !ok {
			body["pagination"] = skip
		}
		ps = append(ps, contentProbe{name: "search " + name, method: http.MethodPost, path: searchPath, token: token, body: body, cached: token != ""})
	}
	admin := func(name string, body map[string]any) {
		if _, ok := body["pagination"]; !ok {
			body["pagination"] = skip
		}
		ps = append(ps, contentProbe{name: "admin search " + name, method: http.MethodPost, path: searchPath, body: body})
	}
	inNews := func(kv ...any) map[string]any {
		b := map[string]any{"moduleIds": []string{news.ID}}
		for i := 0; i+1 < len(kv); i += 2 {
			b[kv[i].(string)] = kv[i+1]
		}
		return b
	}

	admin("everything", map[string]any{"sort": "createdAt asc"})
	admin("deleted", map[string]any{"metaSearch": op("!=", "deletedAt", nil, "null"), "sort": "name asc"})
	admin("News page 2", inNews("pagination", map[string]any{"page": 2, "limit": 4}, "sort", "values.price desc"))
	admin("News by state", inNews("metaSearch", cond("or", op("=", "publishedAt", nil, "null"), op(">", "publishedAt", nowMS(), "date"),
		op("!=", "archivedAt", nil, "null"), op("!=", "removedAt", nil, "null"))))
	admin("Gone items by id", map[string]any{"instanceIds": itemIDs(g), "metaSearch": op("!=", "deletedAt", nil, "null")})
	admin("Changed", map[string]any{"moduleIds": []string{changing.ID}, "searchValues": op("like", "title", "c t", "string")})

	search("News", tokA, inNews())
	search("News paginated", tokA, inNews("pagination", map[string]any{"page": 1, "limit": 3}, "sort", "name desc"))
	search("News by name", tokA, map[string]any{"moduleName": "News", "locale": "es-ES", "sort": "values.headline asc"})
	search("title like", tokA, inNews("searchValues", op("like", "title", "road", "string")))
	search("subtitle like past the cut", tokA, inNews("searchValues", op("like", "subtitle", "finale", "string")))
	search("headline like past the cut", tokA, inNews("locale", "es-ES", "searchValues", op("like", "headline", "remate", "string")))
	search("headline =", tokA, inNews("locale", "en-US", "searchValues", op("=", "headline", "Headline 2", "string")))
	search("price range", tokA, inNews("searchValues", cond("and", op(">=", "price", 20, "number"), op("<", "price", 120, "number")), "sort", "values.price desc"))
	search("weight and rank", tokA, inNews("searchValues", cond("or", op(">", "weight", 10, "number"), op("=", "rank", 1, "number"))))
	search("at (content_keys number)", tokA, inNews("searchValues", op("in", "at", []int{0, 3_600_000}, "number"), "sort", "values.at asc,name asc"))
	search("author (content_keys text)", tokA, inNews("searchValues", op("=", "author", ann.ID, "string")))
	search("author null", tokA, inNews("searchValues", op("=", "author", nil, "null")))
	search("category and active", tokA, inNews("searchValues", cond("and", op("in", "category", []string{"tech", "food"}, "string"),
		op("=", "active", true, "string")), "sort", "values.category asc,values.date desc"))
	search("labels", tokA, inNews("searchValues", op("in", "labels", []string{"z"}, "string")))
	search("color and link", tokA, inNews("searchValues", cond("or", op("=", "color", "#222222", "string"), op("like", "link", "com/1", "string"))))
	search("date", tokA, inNews("searchValues", op(">=", "date", 1_000_000_000_000+5*86_400_000, "date"), "sort", "values.date asc"))
	search("related", tokA, inNews("relatedTo", []map[string]any{{"fieldName": "related", "instanceIds": []string{bob.ID}}}))
	search("author any", tokA, inNews("relatedTo", []map[string]any{{"fieldName": "author", "instanceIds": []string{"*"}}}))
	search("segments partial", tokA, inNews("segmentMode", "partial", "segmentTags", []any{map[string]any{"name": "Platform Name", "value": "ios"}}))
	search("segments total", tokA, inNews("segmentMode", "total", "segmentTags", []any{
		map[string]any{"name": "Platform Name", "value": "android"}, map[string]any{"name": "Platform Name", "value": "web"}}))
	search("include all", tokA, inNews("include", []string{"all"}, "sort", "createdAt desc"))
	search("metaSearch", tokA, inNews("metaSearch", cond("and", op("like", "name", "atch", "string"), op("=", "removedAt", nil, "null"))))
	search("instanceIds", tokA, map[string]any{"instanceIds": all})
	search("Authors", tokA, map[string]any{"moduleIds": []string{authors.ID}, "locale": "es-ES"})
	search("Blog", tokA, map[string]any{"moduleName": "Blog"})
	search("Changed", tokA, map[string]any{"moduleName": "Changed", "sort": "values.code desc"})
	search("Changed by code", tokA, map[string]any{"moduleIds": []string{changing.ID}, "searchValues": op("=", "code", "C-1", "string")})
	search("app B", tokB, map[string]any{"moduleName": "News"})

	sync := func(name, token string, body map[string]any) {
		ps = append(ps, contentProbe{name: "sync " + name, method: http.MethodPost, path: syncPath, token: token, body: body})
	}
	for _, to := range []int64{tMid, tEnd} {
		sync(fmt.Sprintf("News first to %d", to-tStart), tokA, map[string]any{"moduleId": news.ID, "toSync": to})
	}
	for _, from := range []int64{tStart, tMid, tEnd} {
		sync(fmt.Sprintf("News from %d", from-tStart), tokA, map[string]any{"moduleId": news.ID, "fromSync": from, "toSync": tEnd, "locale": "en-US"})
	}
	sync("Changed", tokA, map[string]any{"moduleName": "Changed", "fromSync": tStart, "toSync": tEnd})
	sync("Authors", tokA, map[string]any{"moduleId": authors.ID, "toSync": tEnd, "locale": "es-ES"})
	sync("Blog", "", map[string]any{"moduleId": blog.ID, "fromSync": tStart, "toSync": tEnd})
	sync("Gone", tokA, map[string]any{"moduleId": gone.ID, "fromSync": tStart, "toSync": tEnd})
	sync("app B", tokB, map[string]any{"moduleId": newsB.ID, "toSync": tEnd})

	get := func(name, token, path string) {
		ps = append(ps, contentProbe{name: "get " + name, method: http.MethodGet, path: path, token: token})
	}
	get("modules", "", modulePath+"?skip=true&withFields=true")
	get("module types", "", moduleTypePath)
	get("News items", "", instancePath+"?module="+news.ID+"&skip=true")
	get("Blog items page", "", instancePath+"?module="+blog.ID+"&page=1&limit=1")
	get("gone module", "", modulePath+"/"+gone.ID+"?withFields=true")
	for _, id := range all {
		get("item "+id, "", instancePath+"/"+id)
	}
	get("b1 as the app", tokA, instancePath+"/"+b1.ID)
	return ps
}

// contentAnswer is an answer as compared: its status, its body (a sync's
// without syncTimestamp, which the server's horizon may hold back) and, for
// a search through the cache, X-Cache.
type contentAnswer struct {
	status int
	body   string
	cache  string
}

// runContentProbes asks every probe as the admin where it names no token;
// app tokens' searches twice, past the cache and through it.
func runContentProbes(t *testing.T, ts *testServer, probes []contentProbe) map[string]contentAnswer {
	t.Helper()
	out := map[string]contentAnswer{}
	for _, p := range probes {
		tok := p.token
		if tok == "" {
			tok = ts.admin
		}
		rq := request{method: p.method, path: p.path, token: tok, body: p.body}
		if p.cached {
			r := ts.do(rq)
			out[p.name+" (cache)"] = contentAnswer{status: r.Status, body: string(r.Body), cache: r.Header.Get("X-Cache")}
			rq.header = http.Header{"Cache-Control": {"no-cache"}}
		}
		r := ts.do(rq)
		body := string(r.Body)
		if p.path == syncPath && r.Status == 200 {
			var m map[string]json.RawMessage
			if err := json.Unmarshal(r.Body, &m); err != nil {
				t.Fatalf("%s: %v", r, err)
			}
			delete(m, "syncTimestamp")
			b, err := json.Marshal(m)
			if err != nil {
				t.Fatal(err)
			}
			body = string(b)
		}
		out[p.name] = contentAnswer{status: r.Status, body: body}
	}
	return out
}

// contentTables reads every row of the content tables but content_versions
// (see checkContentVersions) as text, sorted, through the public views.
func contentTables(t *testing.T, ts *testServer) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, tb := range (projcontent.Projector{}).Tables() {
		if tb == "content_versions" {
			continue
		}
		row := "r::text"
		if tb == "content_fields" { // but the versions of the batches that wrote them (the clock)
			row = "(to_jsonb(r) - 'version')::text"
		}
		rows, err := ts.app.pool.Query(context.Background(), `SELECT `+row+` FROM `+tb+` r ORDER BY 1`)
		if err != nil {
			t.Fatal(err)
		}
		out[tb], err = pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
	}
	return out
}

func compareContentTables(t *testing.T, what string, live, rebuilt map[string][]string) {
	t.Helper()
	for _, tb := range keysOf(live) {
		onlyLive, onlyRebuilt := multisetDiff(live[tb], rebuilt[tb]), multisetDiff(rebuilt[tb], live[tb])
		if len(onlyLive)+len(onlyRebuilt) > 0 {
			t.Errorf("%s, %s: %d rows only in the live version, %d only in the rebuilt one\n  live:    %s\n  rebuilt: %s",
				what, tb, len(onlyLive), len(onlyRebuilt), clipRows(strings.Join(onlyLive, "\n           ")), clipRows(strings.Join(onlyRebuilt, "\n           ")))
			if len(onlyLive) == 1 && len(onlyRebuilt) == 1 {
				t.Errorf("%s, %s: the row differs at %s", what, tb, diffAt(onlyLive[0], onlyRebuilt[0]))
			}
		}
	}
}

// multisetDiff returns the rows of a that b does not hold (as often).
func multisetDiff(a, b []string) []string {
	left := map[string]int{}
	for _, r := range b {
		left[r]++
	}
	var out []string
	for _, r := range a {
		if left[r] > 0 {
			left[r]--
		} else {
			out = append(out, r)
		}
	}
	return out
}

func contentVersions(t *testing.T, ts *testServer) map[string]int64 {
	t.Helper()
	rows, err := ts.app.pool.Query(context.Background(), `SELECT app, version FROM content_versions`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	var app string
	var v int64
	_, err = pgx.ForEachRow(rows, []any{&app, &v}, func() error { out[app] = v; return nil })
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// checkContentVersions: an app's content version is stamped from the
// clock, so that it never repeats, not even across a rebuild (a cached
// search answer is served while its app's version is the one it was
// computed at). The rebuilt table must name the same apps, each with a
// greater version. It returns the rebuilt versions.
func checkContentVersions(t *testing.T, what string, live, rebuilt map[string]int64) map[string]int64 {
	t.Helper()
	if !slices.Equal(keysOf(live), keysOf(rebuilt)) {
		t.Errorf("%s: content_versions has apps %v, the live version had %v", what, keysOf(rebuilt), keysOf(live))
	}
	for app, v := range live {
		if w, ok := rebuilt[app]; ok && w <= v {
			t.Errorf("%s: app %s's content version %d, not greater than the live %d", what, app, w, v)
		}
	}
	return rebuilt
}

// diffAt shows where a and b first differ: their bytes around there.
func diffAt(a, b string) string {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	from := max(0, i-100)
	part := func(s string) string { return s[min(from, len(s)):min(i+150, len(s))] }
	return fmt.Sprintf("byte %d:\n    %q\n    %q", i, part(a), part(b))
}

func clipRows(s string) string {
	if len(s) > 1500 {
		return s[:1500] + "..."
	}
	return s
}
