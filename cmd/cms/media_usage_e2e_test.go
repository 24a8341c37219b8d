package main

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/projection"
)

// TestMediaUsedInAndDeleteProtection: an item and a push that use a file
// are listed as its uses; deleting it is refused, naming them, until
// forced.
func TestMediaUsedInAndDeleteProtection(t *testing.T) {
	ts := startContentServer(t)
	app := ts.createApp("Media app")
	var f mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "hero.jpg", testJPEG(t, 64, 64)), 201, &f)
	m := ts.createModule(ts.admin, moduleBody(app.ID, "Pages", fld("hero", ftImage), fld("clip", ftVideo)))
	// An item names the file by its id and keeps its URL (apps read URLs).
	it := ts.createItem(ts.admin, itemBody(m.ID, "Home", map[string]any{"hero": f.ID}))
	if it.Values["hero"] != f.URL {
		t.Fatalf("item value %v, want the file's URL %s", it.Values["hero"], f.URL)
	}
	// A video field refuses an image; another app's file is unknown here.
	if r := ts.post(instancePath, ts.admin, itemBody(m.ID, "Bad", map[string]any{"clip": "media:" + f.ID})); r.Status != 400 {
		t.Fatalf("image in a video field: %s", r)
	}
	otherApp := ts.createApp("Other app")
	var foreign mediaView
	ts.mustJSON(ts.upload(ts.admin, otherApp.ID, "x.jpg", testJPEG(t, 8, 8)), 201, &foreign)
	if r := ts.post(instancePath, ts.admin, itemBody(m.ID, "Bad", map[string]any{"hero": foreign.ID})); r.Status != 400 {
		t.Fatalf("another app's file: %s", r)
	}
	got := ts.mediaWithUses(f.ID, 1)
	if got.Uses != 1 || len(got.UsedIn) != 1 || got.UsedIn[0].ID != it.ID || got.UsedIn[0].Name != "Home" {
		t.Fatalf("used in: %+v", got)
	}
	r := ts.do(request{method: http.MethodDelete, path: mediaPath + "/" + f.ID, token: ts.admin})
	if r.Status != 409 || !strings.Contains(string(r.Body), `"usedIn":[{"type":"item","id":"`+it.ID+`","name":"Home"`) {
		t.Fatalf("delete while used: %s", r)
	}
	// The item no longer uses it: the delete goes through.
	ts.mustJSON(ts.put(instancePath+"/"+it.ID, ts.admin, itemBody(m.ID, "Home", map[string]any{"hero": "https://elsewhere.example/x.jpg"})), 200, nil)
	if got = ts.mediaWithUses(f.ID, 0); got.Uses != 0 {
		t.Fatalf("uses after the edit: %+v", got)
	}
	var g mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "other.jpg", testJPEG(t, 32, 32)), 201, &g)
	ts.createItem(ts.admin, itemBody(m.ID, "About", map[string]any{"hero": g.URL}))
	if r := ts.do(request{method: http.MethodDelete, path: mediaPath + "/" + g.ID, token: ts.admin}); r.Status != 409 {
		t.Fatalf("delete while used: %s", r)
	}
	if r := ts.do(request{method: http.MethodDelete, path: mediaPath + "/" + g.ID + "?force=true", token: ts.admin}); r.Status != 204 {
		t.Fatalf("forced delete: %s", r)
	}
	if r := ts.get(mediaPath+"/"+g.ID, ts.admin); r.Status != 404 {
		t.Fatalf("deleted file: %s", r)
	}
	if r := ts.fetch(g.URL, "", nil); r.Status != 404 {
		t.Fatalf("deleted file's URL: %s", r)
	}

	// The library and its uses rebuild from the log to the same tables,
	// and answer alike.
	before := ts.get(mediaPath+"?app="+app.ID, ts.admin)
	for _, size := range []int{1, 10_000} {
		if _, err := ts.app.runtime.RebuildWith(context.Background(), "media", projection.RebuildOptions{BatchSize: size, Verify: true}); err != nil {
			t.Fatalf("rebuild in batches of %d: %v", size, err)
		}
		if after := ts.get(mediaPath+"?app="+app.ID, ts.admin); string(after.Body) != string(before.Body) {
			t.Fatalf("after the rebuild in batches of %d:\n%s\nwas\n%s", size, after.Body, before.Body)
		}
	}
}

// TestMediaRights: each action needs its right on the app; app tokens
// may not manage the library.
func TestMediaRights(t *testing.T) {
	ts := startContentServer(t)
	app := ts.createApp("Media app")
	other := ts.createApp("Other app")
	var f mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "a.jpg", testJPEG(t, 16, 16)), 201, &f)
	_, reader := ts.userWith("reader", grantTo{app: app.ID, perms: []string{"read"}})
	_, outsider := ts.userWith("outsider", grantTo{app: other.ID, perms: []string{"read", "write", "update", "delete"}})
	appTok := ts.appToken(app)
	for name, c := range map[string]struct {
		r      response
		status int
	}{
		"reader lists":          {ts.get(mediaPath+"?app="+app.ID, reader), 200},
		"reader uploads":        {ts.upload(reader, app.ID, "b.jpg", testJPEG(t, 8, 8)), 403},
		"reader renames":        {ts.do(request{method: http.MethodPatch, path: mediaPath + "/" + f.ID, token: reader, body: map[string]any{"name": "x"}}), 403},
		"reader deletes":        {ts.do(request{method: http.MethodDelete, path: mediaPath + "/" + f.ID, token: reader}), 403},
		"outsider lists":        {ts.get(mediaPath+"?app="+app.ID, outsider), 403},
		"outsider reads a file": {ts.get(mediaPath+"/"+f.ID, outsider), 403},
		"app token lists":       {ts.get(mediaPath+"?app="+app.ID, appTok), 403},
		"app token uploads":     {ts.upload(appTok, app.ID, "b.jpg", testJPEG(t, 8, 8)), 403},
		"no token":              {ts.get(mediaPath+"?app="+app.ID, ""), 401},
		"unknown app":           {ts.upload(ts.admin, "aaaaaaaaaaaaaaaaaaaaaaaa", "b.jpg", testJPEG(t, 8, 8)), 400},
	} {
		if c.r.Status != c.status {
			t.Errorf("%s: %s, want %d", name, c.r, c.status)
		}
	}
}

// TestMediaSignedAccess: an app whose media is signed serves its files to
// signed URLs, to CMS users who may read the app, and to the app's own
// tokens for what its published content uses; to no one else.
func TestMediaSignedAccess(t *testing.T) {
	ts := startContentServer(t)
	app := ts.createApp("Private app")
	ts.mustJSON(ts.put("/api/media/settings", ts.admin, map[string]any{"app": app.ID, "access": "signed"}), 200, nil)
	var used, unused mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "used.jpg", testJPEG(t, 16, 16)), 201, &used)
	ts.mustJSON(ts.upload(ts.admin, app.ID, "unused.jpg", testJPEG(t, 16, 16)), 201, &unused)
	if !strings.Contains(used.URL, "signature=") {
		t.Fatalf("a signed app's file URL is not signed: %s", used.URL)
	}
	// A signed URL of the server's own is the file itself, not an external reference.
	var own mediaView
	ts.mustJSON(ts.post(mediaPath+"/updateByUrl", ts.admin, map[string]any{"app": app.ID, "url": used.URL, "action": "save"}), 200, &own)
	if own.ID != used.ID || own.External {
		t.Fatalf("updateByUrl of a signed own URL: %+v", own)
	}
	m := ts.createModule(ts.admin, moduleBody(app.ID, "Pages", fld("hero", ftImage)))
	stable, _ := url.Parse(used.URL)
	stable.RawQuery = ""
	it := ts.createItem(ts.admin, itemBody(m.ID, "Home", map[string]any{"hero": stable.String()}))
	appTok := ts.appToken(app)
	// A concept references nothing an app may read yet.
	if r := ts.fetch(stable.String(), appTok, nil); r.Status != 403 {
		t.Fatalf("app token, concept: %s", r)
	}
	ts.transit(ts.admin, it.ID, "publish", nil)
	// The media projection follows the publication within moments (the
	// publish waits for the content projections only).
	deadline := time.Now().Add(10 * time.Second)
	for ts.fetch(stable.String(), appTok, nil).Status != 200 && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
	}
	for name, c := range map[string]struct {
		url, token string
		status     int
	}{
		"anonymous":                  {stable.String(), "", 401},
		"signed URL":                 {used.URL, "", 200},
		"tampered signature":         {strings.Replace(used.URL, "signature=", "signature=x", 1), "", 401},
		"CMS user":                   {stable.String(), ts.admin, 200},
		"app token, published item":  {stable.String(), appTok, 200},
		"app token, unused file":     {strings.Split(unused.URL, "?")[0], appTok, 403},
		"signed URL of another file": {strings.Split(unused.URL, "?")[0] + "?" + strings.Split(used.URL, "?")[1], "", 401},
	} {
		if r := ts.fetch(c.url, c.token, nil); r.Status != c.status {
			t.Errorf("%s: %s, want %d", name, r, c.status)
		}
	}
}

// TestMediaUpdateByURL: HALO's save or delete of a reference by URL.
func TestMediaUpdateByURL(t *testing.T) {
	ts := startContentServer(t)
	app := ts.createApp("Media app")
	const ext = "https://cdn.example.com/cats/tom.jpg"
	var a, b mediaView
	ts.mustJSON(ts.post(mediaPath+"/updateByUrl", ts.admin, map[string]any{"app": app.ID, "url": ext, "action": "save", "tags": []string{"cats"}}), 200, &a)
	if !a.External || a.URL != ext || a.Name != "tom.jpg" || a.Kind != "image" {
		t.Fatalf("saved: %+v", a)
	}
	ts.mustJSON(ts.post(mediaPath+"/updateByUrl", ts.admin, map[string]any{"app": app.ID, "url": ext, "action": "save"}), 200, &b)
	if b.ID != a.ID {
		t.Fatalf("saved twice: two files %s and %s", a.ID, b.ID)
	}
	// The server's own URL answers the file itself.
	var up, own mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "own.jpg", testJPEG(t, 8, 8)), 201, &up)
	ts.mustJSON(ts.post(mediaPath+"/updateByUrl", ts.admin, map[string]any{"app": app.ID, "url": up.URL, "action": "save"}), 200, &own)
	if own.ID != up.ID {
		t.Fatalf("own URL: %s, want %s", own.ID, up.ID)
	}
	if r := ts.fetch(ts.base+"/media/"+a.ID+"/tom.jpg", "", nil); r.Status != 302 || r.Header.Get("Location") != ext {
		t.Fatalf("reference: %s", r)
	}
	for name, body := range map[string]map[string]any{
		"bad action":   {"app": app.ID, "url": ext, "action": "keep"},
		"not http":     {"app": app.ID, "url": "file:///etc/passwd", "action": "save"},
		"fetch is off": {"app": app.ID, "url": ext, "action": "save", "fetch": true},
		"unknown app":  {"app": "aaaaaaaaaaaaaaaaaaaaaaaa", "url": ext, "action": "save"},
	} {
		r := ts.post(mediaPath+"/updateByUrl", ts.admin, body)
		if r.Status/100 != 4 {
			t.Errorf("%s: %s", name, r)
		}
	}
	var del mediaView
	ts.mustJSON(ts.post(mediaPath+"/updateByUrl", ts.admin, map[string]any{"app": app.ID, "url": ext, "action": "delete"}), 200, &del)
	if !del.Deleted || del.ID != a.ID {
		t.Fatalf("deleted: %+v", del)
	}
	if r := ts.post(mediaPath+"/updateByUrl", ts.admin, map[string]any{"app": app.ID, "url": ext, "action": "delete"}); r.Status != 404 {
		t.Fatalf("deleted twice: %s", r)
	}
}
