package main

import (
	"bytes"
	"fmt"
	"image/png"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestMediaPathsAndVersions: a name that looks like a transform is a name;
// a new version's URL serves at once after a replacement; a signed app's
// versions are not told to someone who may not read the file.
func TestMediaPathsAndVersions(t *testing.T) {
	ts := startServer(t)
	app := ts.createApp("Media app")
	jpg := testJPEG(t, 64, 48)
	var f mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "t_shirt", jpg), 201, &f)
	if r := ts.fetch(f.URL, "", nil); r.Status != 200 || !bytes.Equal(r.Body, jpg) {
		t.Fatalf("a file named t_shirt at its own URL: %s", r)
	}
	if r := ts.fetch(ts.base+"/media/"+f.ID+"/not_a_transform/x.jpg", "", nil); r.Status != 404 {
		t.Fatalf("two segments that are no transform: %s", r)
	}
	// The record is in memory now; a replacement's URL serves at once.
	jpg2 := testJPEG(t, 32, 24)
	ctype, body := multipartBody(t, nil, "new.jpg", jpg2)
	var rep mediaView
	ts.mustJSON(ts.sendMultipart(http.MethodPut, mediaPath+"/"+f.ID+"/content", ts.admin, ctype, body), 200, &rep)
	if r := ts.fetch(rep.ContentURL, "", nil); r.Status != 200 || !bytes.Equal(r.Body, jpg2) {
		t.Fatalf("the new version's URL right after the replacement: %s", r)
	}

	private := ts.createApp("Private app")
	ts.mustJSON(ts.put("/api/media/settings", ts.admin, map[string]any{"app": private.ID, "access": "signed"}), 200, nil)
	var p mediaView
	ts.mustJSON(ts.upload(ts.admin, private.ID, "secret.jpg", jpg), 201, &p)
	wrong := ts.base + "/media/" + p.ID + "/" + strings.Repeat("0", 64) + "/secret.jpg"
	right := strings.Split(p.ContentURL, "?")[0]
	if a, b := ts.fetch(wrong, "", nil), ts.fetch(right, "", nil); a.Status != 401 || b.Status != 401 {
		t.Fatalf("versions told to an anonymous caller: wrong %d, right %d", a.Status, b.Status)
	}
}

// TestMediaUploadBodies: an upload with an Idempotency-Key is streamed like
// any other (not buffered to be replayed); fields beyond the bound are
// refused before anything is stored.
func TestMediaUploadBodies(t *testing.T) {
	ts := startServer(t)
	app := ts.createApp("Media app")
	ctype, body := multipartBody(t, [][2]string{{"app", app.ID}}, "a.jpg", testJPEG(t, 16, 16))
	r := ts.do(request{method: http.MethodPost, path: mediaPath, token: ts.admin, body: body,
		header: http.Header{"Content-Type": {ctype}, "Idempotency-Key": {"upload-1"}}})
	if r.Status != 201 || r.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("upload with an Idempotency-Key: %s", r)
	}
	var fields [][2]string
	for i := 0; i < 100; i++ {
		fields = append(fields, [2]string{"tags", fmt.Sprintf("t%d", i)})
	}
	ctype, body = multipartBody(t, append([][2]string{{"app", app.ID}}, fields...), "b.jpg", testJPEG(t, 16, 16))
	if r := ts.sendMultipart(http.MethodPost, mediaPath, ts.admin, ctype, body); r.Status != 400 {
		t.Fatalf("100 fields before the file: %s", r)
	}
}

// TestMediaUsesAcrossApps: another app's item that holds a file's URL is
// refused, and cannot keep the file from being deleted; an archived item
// no longer lets the app read a signed app's file.
func TestMediaUsesAcrossApps(t *testing.T) {
	ts := startContentServer(t)
	a, b := ts.createApp("App A"), ts.createApp("App B")
	var f mediaView
	ts.mustJSON(ts.upload(ts.admin, b.ID, "b.jpg", testJPEG(t, 16, 16)), 201, &f)
	m := ts.createModule(ts.admin, moduleBody(a.ID, "Pages", fld("hero", ftImage)))
	if r := ts.post(instancePath, ts.admin, itemBody(m.ID, "Borrowed", map[string]any{"hero": f.URL})); r.Status != 400 {
		t.Fatalf("another app's file by URL: %s", r)
	}

	ts.mustJSON(ts.put("/api/media/settings", ts.admin, map[string]any{"app": a.ID, "access": "signed"}), 200, nil)
	var g mediaView
	ts.mustJSON(ts.upload(ts.admin, a.ID, "a.jpg", testJPEG(t, 16, 16)), 201, &g)
	stable := strings.Split(g.URL, "?")[0]
	it := ts.createItem(ts.admin, itemBody(m.ID, "Home", map[string]any{"hero": stable}))
	ts.transit(ts.admin, it.ID, "publish", nil)
	appTok := ts.appToken(a)
	status := func(want int) int {
		deadline := time.Now().Add(10 * time.Second)
		for {
			if got := ts.fetch(stable, appTok, nil).Status; got == want || time.Now().After(deadline) {
				return got
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	if got := status(200); got != 200 {
		t.Fatalf("published: %d", got)
	}
	ts.transit(ts.admin, it.ID, "archive", nil)
	if got := status(403); got != 403 {
		t.Fatalf("archived: the app still reads the file (%d)", got)
	}
}

// TestMediaSignedTransforms: without a signature the file server makes one
// side from its list; the API signs any transform for a reader of the app,
// and a forged signature is refused.
func TestMediaSignedTransforms(t *testing.T) {
	ts := startServer(t)
	app := ts.createApp("Media app")
	var f mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "cat.jpg", testJPEG(t, 800, 600)), 201, &f)
	if r := ts.fetch(f.URL+"?w=640&h=480&fit=cover", "", nil); r.Status != 403 {
		t.Fatalf("an unsigned crop: %s", r)
	}
	var signed struct {
		URL string `json:"url"`
	}
	ts.mustJSON(ts.get(mediaPath+"/"+f.ID+"/transform?w=640&h=480&fit=cover&fm=png", ts.admin), 200, &signed)
	r := ts.fetch(signed.URL, "", nil)
	img, err := png.Decode(bytes.NewReader(r.Body))
	if r.Status != 200 || err != nil || img.Bounds().Dx() != 640 || img.Bounds().Dy() != 480 {
		t.Fatalf("the signed crop: %s (%v)", r, err)
	}
	if r := ts.fetch(strings.Replace(signed.URL, "sig=", "sig=x", 1), "", nil); r.Status != 403 {
		t.Fatalf("a forged signature: %s", r)
	}
	if r := ts.fetch(strings.Replace(signed.URL, "w=640", "w=400", 1), "", nil); r.Status != 403 {
		t.Fatalf("a signature of another transform: %s", r)
	}
	if r := ts.get(mediaPath+"/"+f.ID+"/transform?w=640", ts.appToken(app)); r.Status != 403 {
		t.Fatalf("an app token asking for a signature: %s", r)
	}
	if r := ts.get(mediaPath+"/"+f.ID+"/transform?w=99999", ts.admin); r.Status != 400 {
		t.Fatalf("out of bounds: %s", r)
	}
}
