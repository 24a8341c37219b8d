package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/halocms/halocms/adapters/projection"
)

// The Android flow of wire reference §6.1: GET by the cached id (404 for
// an unknown one), POST with the collected system tags, GET, PUT with
// replaceTokens, and a 404 on a PUT of an unknown app user.
func TestAppUsersAndroidFlow(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Android app")
	tok := ts.appToken(app)

	r := ts.get(appUserPath+"/57f63492df4b73110013feca", tok)
	expectHaloError(t, r, http.StatusNotFound)
	r = ts.put(appUserPath+"/57f63492df4b73110013feca", tok, map[string]any{"devices": []any{}, "tags": []any{}, "replaceTokens": true})
	expectHaloError(t, r, http.StatusNotFound)

	// Android adds a trailing slash and leaves nulls out.
	body := map[string]any{
		"devices":       []map[string]any{{"platform": "android", "token": "cuPIPCMl5tQ:APA91bFt5JY2xDntg"}},
		"tags":          androidTags(),
		"replaceTokens": true,
	}
	r = ts.post(appUserPath+"/", tok, body)
	var u appUserView
	ts.mustJSON(r, http.StatusCreated, &u)
	checkShapeOf(t, r, "appuser-response-system-and-user-tags.android.json")
	if !aliasRe.MatchString(u.Alias) || !objectIDRe.MatchString(u.ID) {
		t.Fatalf("alias %q id %q", u.Alias, u.ID)
	}
	if string(u.AppID) != "1" || string(u.CustomerID) != "1" || string(u.DeletedAt) != "null" {
		t.Errorf("appId %s customerId %s deletedAt %s: want the integers 1 and 1 (the first app) and null", u.AppID, u.CustomerID, u.DeletedAt)
	}
	if !near(u.CreatedAt, 60e9) || u.UpdatedAt != u.CreatedAt {
		t.Errorf("createdAt %d updatedAt %d", u.CreatedAt, u.UpdatedAt)
	}
	if len(u.Tags) != 14 || len(u.Devices) != 1 || u.Devices[0].Platform != "android" {
		t.Fatalf("tags %d devices %+v", len(u.Tags), u.Devices)
	}
	for _, tg := range u.Tags {
		if tg.ID == "" || tg.TagType == "" {
			t.Errorf("tag %+v: every tag has an id and a type", tg)
		}
	}
	if m, _ := u.tag("Afghanistan"); m.ID != "000000000000000000000100" || m.Value != "" || m.TagType != marketTag {
		t.Errorf("market tag %+v: its fixed id and type kept, value \"\" (never null)", m)
	}

	r = ts.get(appUserPath+"/"+u.ID, tok)
	var got appUserView
	ts.mustJSON(r, http.StatusOK, &got)
	checkShapeOf(t, r, "appuser-response.android.json")
	if got.ID != u.ID || got.Alias != u.Alias || len(got.Tags) != len(u.Tags) {
		t.Errorf("GET %+v, want what POST answered", got)
	}

	// A PUT as Android sends it: the app user as read, with a new token,
	// one tag changed and one dropped.
	tags := []map[string]any{}
	for _, tg := range got.Tags {
		switch tg.Name {
		case "Test Device":
			continue
		case "Application Version":
			tags = append(tags, map[string]any{"name": tg.Name, "value": "2.1.0", "tagType": systemTag})
		default:
			tags = append(tags, map[string]any{"id": tg.ID, "name": tg.Name, "value": tg.Value, "tagType": tg.TagType})
		}
	}
	put := map[string]any{"id": u.ID, "alias": u.Alias, "appId": "1", "devices": []map[string]any{{"platform": "android", "token": "new-token"}},
		"tags": tags, "replaceTokens": true}
	var up appUserView
	ts.mustJSON(ts.put(appUserPath+"/"+u.ID+"/", tok, put), http.StatusOK, &up)
	if len(up.Devices) != 1 || up.Devices[0].Token != "new-token" {
		t.Errorf("devices %+v: replaceTokens true replaces them", up.Devices)
	}
	if _, ok := up.tag("Test Device"); ok || len(up.Tags) != 13 {
		t.Errorf("tags %v: the dropped tag must be gone", up.Tags)
	}
	if v, _ := up.tag("Application Version"); v.Value != "2.1.0" {
		t.Errorf("changed tag %+v", v)
	}
	if p, _ := up.tag("Platform Name"); p.ID != func() string { x, _ := u.tag("Platform Name"); return x.ID }() {
		t.Errorf("a tag sent back with its id keeps it: %+v", p)
	}
	if up.UpdatedAt < up.CreatedAt || up.CreatedAt != u.CreatedAt || up.Alias != u.Alias {
		t.Errorf("after PUT: %+v", up)
	}

	// replaceTokens false merges by token.
	put["replaceTokens"] = false
	put["devices"] = []map[string]any{{"platform": "android", "token": "second-token"}}
	ts.mustJSON(ts.put(appUserPath+"/"+u.ID, tok, put), http.StatusOK, &up)
	if toks := []string{up.Devices[0].Token, up.Devices[len(up.Devices)-1].Token}; len(up.Devices) != 2 || !slices.Equal(toks, []string{"new-token", "second-token"}) {
		t.Errorf("devices %+v: replaceTokens false adds the sent token", up.Devices)
	}
	if got := ts.appUser(tok, u.ID); len(got.Devices) != 2 {
		t.Errorf("GET after PUT: devices %+v", got.Devices)
	}
}

// The iOS flow: POST without a trailing slash, with every key iOS sends
// (appId and dates echoed as numbers, possibly fractional), then GET and
// PUT; tags of the three types.
func TestAppUsersIOSFlow(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	ts.createApp("first")
	app := ts.createApp("iOS app")
	tok := ts.appToken(app)

	body := `{"devices":[{"platform":"ios","token":"c123"}],"tags":[
		{"name":"Platform Name","value":"ios","tagType":"000000000000000000000001"},
		{"name":"female","value":"true"},
		{"name":"score","value":42,"tagType":"000000000000000000000002"},
		{"id":"000000000000000000000188","name":"Spain","tagType":"000000000000000000000003"}],
		"updatedAt":0}`
	r := ts.post(appUserPath, tok, body)
	var u appUserView
	ts.mustJSON(r, http.StatusCreated, &u)
	checkShapeOf(t, r, "appuser-response.ios.json")
	if string(u.AppID) != "2" {
		t.Errorf("appId %s, want 2 (the second app created)", u.AppID)
	}
	if f, _ := u.tag("female"); f.TagType != userTag {
		t.Errorf("a tag without a type is a user tag: %+v", f)
	}
	if s, _ := u.tag("score"); s.Value != "42" {
		t.Errorf("a number value is taken as its text: %+v", s)
	}

	// iOS PUTs the device as it holds it: appId as read, dates as doubles.
	put := `{"id":"` + u.ID + `","appId":2,"alias":"` + u.Alias + `","devices":[{"platform":"ios","token":"c456"}],
		"tags":[{"id":"` + u.Tags[0].ID + `","name":"Platform Name","value":"ios","tagType":"000000000000000000000001"}],
		"updatedAt":1474972364317.25}`
	var up appUserView
	ts.mustJSON(ts.put(appUserPath+"/"+u.ID, tok, put), http.StatusOK, &up)
	if len(up.Devices) != 1 || up.Devices[0].Token != "c456" || len(up.Tags) != 1 {
		t.Errorf("after PUT (replaceTokens defaults to true): %+v", up)
	}
	got := ts.appUser(tok, u.ID)
	if got.Devices[0].Token != "c456" || got.Tags[0].ID != u.Tags[0].ID {
		t.Errorf("GET %+v", got)
	}
	// The query string's replaceTokens (iOS 1.x) is read when the body has none.
	ts.mustJSON(ts.put(appUserPath+"/"+u.ID+"?replaceTokens=false", tok, `{"devices":[{"platform":"ios","token":"c789"}]}`), http.StatusOK, &up)
	if len(up.Devices) != 2 {
		t.Errorf("replaceTokens=false in the query: devices %+v", up.Devices)
	}
}

// Bad input is a 400 in HALO's shape (413 for an oversize body) and
// changes nothing.
func TestAppUsersBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("app")
	tok := ts.appToken(app)
	u := ts.createAppUser(tok, map[string]any{"devices": []map[string]any{{"platform": "ios", "token": "keep"}},
		"tags": []map[string]any{{"name": "color", "value": "red"}}})
	count := func() int {
		return ts.segment(ts.admin, map[string]any{"appId": app.ID}).Pagination.TotalItems
	}
	before := ts.appUser(tok, u.ID)

	// The fixture: an attribute HALO does not know.
	r := ts.post(appUserPath, tok, `{"blah": 1, "devices": []}`)
	msg, extra := haloErrorOf(t, r, http.StatusBadRequest)
	if msg != "One or more fields have validation problems" || extra["blah"] != "undefined_attribute" {
		t.Errorf("unknown attribute: %q %v", msg, extra)
	}
	checkShapeOf(t, r, "error-400-appuser-validation.ios.json")

	long := strings.Repeat("x", 501)
	for _, c := range []struct {
		name  string
		body  any
		field string
		code  string
	}{
		{"nested unknown attribute", `{"devices":[{"platform":"ios","token":"t","model":"x"}]}`, "devices[0].model", "undefined_attribute"},
		{"platform", `{"devices":[{"platform":"windows","token":"t"}]}`, "devices[0].platform", "invalid_value"},
		{"empty token", `{"devices":[{"platform":"android","token":""}]}`, "devices[0].token", "required"},
		{"tag type", `{"tags":[{"name":"a","value":"b","tagType":"000000000000000000000009"}]}`, "tags[0].tagType", "invalid_value"},
		{"tag name", `{"tags":[{"name":"","value":"b"}]}`, "tags[0].name", "required"},
		{"long tag value", `{"tags":[{"name":"a","value":"` + long + `"}]}`, "tags[0].value", "too_long"},
		{"devices not a list", `{"devices":{"platform":"ios"}}`, "devices", "invalid_value"},
		{"email type", `{"email":42}`, "email", "invalid_value"},
		{"bad email", `{"email":"not an address"}`, "email", "invalid_value"},
		{"tag value object", `{"tags":[{"name":"a","value":{"x":1}}]}`, "tags[0].value", "invalid_value"},
	} {
		for _, method := range []string{http.MethodPost, http.MethodPut} {
			path := appUserPath
			if method == http.MethodPut {
				path += "/" + u.ID
			}
			r := ts.do(request{method: method, path: path, token: tok, body: c.body})
			msg, extra := haloErrorOf(t, r, http.StatusBadRequest)
			if msg != "One or more fields have validation problems" || extra[c.field] != c.code {
				t.Errorf("%s %s: %q %v, want %s: %s", method, c.name, msg, extra, c.field, c.code)
			}
		}
	}
	many := make([]map[string]any, 201)
	for i := range many {
		many[i] = map[string]any{"name": "t", "value": strings.Repeat("v", i%7) + string(rune('a'+i%26)) + strings.Repeat("w", i/26)}
	}
	r = ts.post(appUserPath, tok, map[string]any{"tags": many})
	if _, extra := haloErrorOf(t, r, http.StatusBadRequest); extra["tags"] != "too_many" {
		t.Errorf("201 tags: %v", extra)
	}
	for _, b := range []string{`{"devices": [`, `[]`, `null`, `"x"`, `{} {}`, ``} {
		expectHaloError(t, ts.post(appUserPath, tok, b), http.StatusBadRequest)
		expectHaloError(t, ts.put(appUserPath+"/"+u.ID, tok, b), http.StatusBadRequest)
	}
	// The body's id must be the path's.
	expectHaloError(t, ts.put(appUserPath+"/"+u.ID, tok, `{"id":"000000000000000000000001"}`), http.StatusBadRequest)
	// Over the body limit.
	big := bytes.Repeat([]byte("a"), 2<<20)
	r = ts.post(appUserPath, tok, []byte(`{"email":"`+string(big)+`"}`))
	expectHaloError(t, r, http.StatusRequestEntityTooLarge)

	if n := count(); n != 1 {
		t.Errorf("%d app users after bad input, want 1", n)
	}
	after := ts.appUser(tok, u.ID)
	b1, _ := json.Marshal(before)
	b2, _ := json.Marshal(after)
	if !bytes.Equal(b1, b2) {
		t.Errorf("the app user changed:\n%s\n%s", b1, b2)
	}
}

// Every endpoint needs a token (401); another app's token sees another
// app's app users as unknown (404); CMS users need read on the app to see
// and search them, and never write them; app tokens do not list them.
func TestAppUsersRights(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	appA, appB := ts.createApp("A"), ts.createApp("B")
	tokA, tokB := ts.appToken(appA), ts.appToken(appB)
	u := ts.createAppUser(tokA, map[string]any{"tags": []map[string]any{{"name": "color", "value": "red"}}})

	for _, rq := range []request{
		{method: http.MethodPost, path: appUserPath, body: `{}`},
		{method: http.MethodGet, path: appUserPath + "/" + u.ID},
		{method: http.MethodPut, path: appUserPath + "/" + u.ID, body: `{}`},
		{method: http.MethodPost, path: appUserSearchPath, body: `{"appId": 1}`},
		{method: http.MethodPost, path: registerPath, body: `{}`},
		{method: http.MethodPost, path: loginPath, body: `{}`},
		{method: http.MethodPost, path: identifiedSearch, body: `{"appId": 1}`},
		{method: http.MethodGet, path: pocketSelfPath},
		{method: http.MethodPut, path: pocketPath, body: `{}`},
		{method: http.MethodPut, path: pocketSelfPath, body: `{}`},
	} {
		expectHaloError(t, ts.do(rq), http.StatusUnauthorized)
		rq.token = "not-a-token"
		expectHaloError(t, ts.do(rq), http.StatusUnauthorized)
	}

	// Another app's token: 404, for reads and writes.
	expectHaloError(t, ts.get(appUserPath+"/"+u.ID, tokB), http.StatusNotFound)
	expectHaloError(t, ts.put(appUserPath+"/"+u.ID, tokB, `{"devices":[]}`), http.StatusNotFound)
	// A body appId of another app is ignored: the token's app is used.
	other := ts.createAppUser(tokB, map[string]any{"appId": 1})
	if string(other.AppID) != "2" {
		t.Errorf("appId %s: the token's app (2), whatever the body says", other.AppID)
	}

	search := map[string]any{"appId": appA.ID, "tags": []map[string]any{{"name": "color"}}}
	_, none := ts.userWith("nobody")
	_, readerB := ts.userWith("readerb", grantTo{app: appB.ID, perms: []string{"read", "write", "update", "delete"}})
	_, readerA := ts.userWith("readera", grantTo{app: appA.ID, perms: []string{"read"}})
	for _, tok := range []string{none, readerB} {
		expectHaloError(t, ts.post(appUserSearchPath, tok, search), http.StatusForbidden)
		expectHaloError(t, ts.get(appUserPath+"/"+u.ID, tok), http.StatusForbidden)
		expectHaloError(t, ts.post(identifiedSearch, tok, map[string]any{"appId": appA.ID}), http.StatusForbidden)
	}
	if p := ts.segment(readerA, search); !slices.Equal(p.ids(), []string{u.ID}) {
		t.Errorf("reader of A: %v", p.ids())
	}
	// The app's number works as appId too.
	if p := ts.segment(readerA, map[string]any{"appId": 1}); p.Pagination.TotalItems != 1 {
		t.Errorf("by number: %+v", p.Pagination)
	}
	ts.mustJSON(ts.post(identifiedSearch, readerA, map[string]any{"appId": appA.ID}), http.StatusOK, nil)
	if got := ts.appUser(readerA, u.ID); got.ID != u.ID {
		t.Errorf("reader of A reads %+v", got)
	}
	// CMS users never write app users; app tokens never list them.
	for _, tok := range []string{readerA, none} {
		expectHaloError(t, ts.post(appUserPath, tok, `{"appId": 1}`), http.StatusForbidden)
		expectHaloError(t, ts.put(appUserPath+"/"+u.ID, tok, `{}`), http.StatusForbidden)
	}
	expectHaloError(t, ts.post(appUserSearchPath, tokA, search), http.StatusForbidden)
	expectHaloError(t, ts.post(identifiedSearch, tokA, map[string]any{"appId": appA.ID}), http.StatusForbidden)
	// Admins: anything, naming the app for a creation.
	created := ts.createAppUser(ts.admin, map[string]any{"appId": 1})
	if string(created.AppID) != "1" {
		t.Errorf("admin-created app user in app %s", created.AppID)
	}
	expectHaloError(t, ts.post(appUserPath, ts.admin, `{}`), http.StatusBadRequest)
	expectHaloError(t, ts.post(appUserPath, ts.admin, `{"appId": 99}`), http.StatusBadRequest)
	if p := ts.segment(ts.admin, map[string]any{"appId": appA.ID}); p.Pagination.TotalItems != 2 {
		t.Errorf("admin search: %+v", p.Pagination)
	}
}

// Segments: any (partial) or all (total) of the tags, by id or by name
// (case-insensitive) and value, page by page with the total.
func TestAppUsersSegments(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("segments")
	tok := ts.appToken(app)
	mk := func(tags ...map[string]any) string {
		return ts.createAppUser(tok, map[string]any{"tags": tags, "devices": []map[string]any{{"platform": "android", "token": "t"}}}).ID
	}
	tag := func(name, value string) map[string]any { return map[string]any{"name": name, "value": value} }
	spain := map[string]any{"id": "000000000000000000000188", "name": "Spain", "tagType": marketTag}
	a := mk(tag("Color", "red"), tag("Size", "L"))
	b := mk(tag("color", "blue"), spain)
	c := mk(tag("Size", "L"), spain)
	d := mk()
	ids := func(body map[string]any) []string {
		body["appId"] = app.ID
		return sorted(ts.segment(ts.admin, body).ids())
	}
	for _, c := range []struct {
		name string
		body map[string]any
		want []string
	}{
		{"all", map[string]any{}, []string{a, b, c, d}},
		{"name and value, any case", map[string]any{"tags": []any{tag("COLOR", "red")}}, []string{a}},
		{"name only", map[string]any{"tags": []any{map[string]any{"name": "color"}}}, []string{a, b}},
		{"by id", map[string]any{"tags": []any{map[string]any{"id": "000000000000000000000188"}}}, []string{b, c}},
		{"partial", map[string]any{"tags": []any{tag("color", "red"), map[string]any{"id": "000000000000000000000188"}}, "mode": "partial"}, []string{a, b, c}},
		{"total", map[string]any{"tags": []any{tag("size", "L"), map[string]any{"id": "000000000000000000000188"}}, "mode": "total"}, []string{c}},
		{"total none", map[string]any{"tags": []any{tag("color", "red"), tag("color", "blue")}, "mode": "TOTAL"}, nil},
	} {
		if got := ids(c.body); !slices.Equal(got, sorted(c.want)) {
			t.Errorf("%s: %v, want %v", c.name, got, sorted(c.want))
		}
	}
	p := ts.segment(ts.admin, map[string]any{"appId": app.ID, "pagination": map[string]any{"page": 2, "limit": 3}})
	if p.Pagination.TotalItems != 4 || p.Pagination.TotalPages != 2 || len(p.Items) != 1 || p.Pagination.Page != 2 {
		t.Errorf("page 2 of 3: %+v", p)
	}
	// A rebuild (in small batches) gives the live tables back, row for
	// row, and the segments read the same from it.
	ts.register(tok, "r@example.com", "rebuild-password", "")
	res, err := ts.app.runtime.RebuildWith(context.Background(), "appusers", projection.RebuildOptions{BatchSize: 3, Verify: true})
	if err != nil || res.Version < 2 {
		t.Fatalf("rebuild: %+v %v", res, err)
	}
	if got := ids(map[string]any{"tags": []any{map[string]any{"name": "color"}}}); !slices.Equal(got, sorted([]string{a, b})) {
		t.Errorf("after the rebuild: %v", got)
	}
	for _, bad := range []map[string]any{
		{"appId": app.ID, "mode": "some"},
		{"appId": app.ID, "tags": []any{map[string]any{"value": "x"}}},
		{"appId": app.ID, "pagination": map[string]any{"limit": 5000}},
		{"appId": app.ID, "extra": 1},
		{},
	} {
		expectHaloError(t, ts.post(appUserSearchPath, ts.admin, bad), http.StatusBadRequest)
	}
}
