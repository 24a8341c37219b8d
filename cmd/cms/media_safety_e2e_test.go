package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/halocms/halocms/adapters/clamd/clamdtest"
	cmdmedia "github.com/halocms/halocms/commands/media"
)

// externalFiles serves a JPEG at /pics/cat.jpg and the EICAR test file
// at /eicar.txt, as a site the library fetches from.
func externalFiles(t testing.TB, jpg []byte) *httptest.Server {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /pics/cat.jpg", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write(jpg) })
	mux.HandleFunc("GET /eicar.txt", func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(clamdtest.EICAR)) })
	s := httptest.NewServer(mux)
	t.Cleanup(s.Close)
	return s
}

func byURL(app, url string, fetch bool) map[string]any {
	return map[string]any{"app": app, "url": url, "action": "save", "fetch": fetch}
}

// TestMediaVirusScanning: with CMS_MEDIA_CLAMD every upload and every
// fetched file is scanned by a real clamd; malware is refused and
// nothing is kept; clamd down refuses uploads (503) rather than keep
// them unscanned.
func TestMediaVirusScanning(t *testing.T) {
	clamd := clamdtest.Run(t)
	ts := startServer(t, withConfig(func(c *Config) {
		c.Media.ClamdAddr = clamd.Addr
		c.Media.FetchURLs, c.Media.FetchAllowPrivate = true, true
	}))
	app := ts.createApp("Scanned app")

	msg, extra := haloErrorOf(t, ts.upload(ts.admin, app.ID, "eicar.txt", []byte(clamdtest.EICAR)), 400)
	if virus, _ := extra["virus"].(string); !strings.HasPrefix(virus, clamdtest.Signature) || !strings.Contains(msg, "malware") {
		t.Fatalf("EICAR refused with %q %v", msg, extra)
	}
	if n := ts.mediaFiles("objects/blobs"); n != 0 {
		t.Fatalf("%d blobs kept after a refused upload", n)
	}
	if n := ts.mediaFiles("tmp"); n != 0 {
		t.Fatalf("%d staged files left after a refused upload", n)
	}

	var clean mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "notes.txt", []byte("nothing to see here\n")), 201, &clean)
	if clean.MIME != "text/plain" || ts.mediaFiles("objects/blobs") != 1 {
		t.Fatalf("clean upload: %+v, %d blobs", clean, ts.mediaFiles("objects/blobs"))
	}

	// Fetched files are scanned like uploads.
	jpg := testJPEG(t, 40, 30)
	ext := externalFiles(t, jpg)
	msg, extra = haloErrorOf(t, ts.post(mediaPath+"/updateByUrl", ts.admin, byURL(app.ID, ext.URL+"/eicar.txt", true)), 400)
	if virus, _ := extra["virus"].(string); !strings.HasPrefix(virus, clamdtest.Signature) {
		t.Fatalf("fetched EICAR refused with %q %v", msg, extra)
	}
	var fetched mediaView
	ts.mustJSON(ts.post(mediaPath+"/updateByUrl", ts.admin, byURL(app.ID, ext.URL+"/pics/cat.jpg", true)), 200, &fetched)
	if fetched.External || fetched.Kind != "image" || fetched.Width != 40 || ts.mediaFiles("objects/blobs") != 2 {
		t.Fatalf("fetched: %+v, %d blobs", fetched, ts.mediaFiles("objects/blobs"))
	}

	// A resumable upload is scanned when its last byte arrives; malware
	// is refused and the upload removed.
	eicar := []byte(clamdtest.EICAR)
	up := ts.tusPath(ts.tusCreate(ts.admin, uploadsPath, int64(len(eicar)), tusMeta("app", app.ID, "filename", "eicar.com")))
	last := ts.tusPatch(ts.admin, up, 0, eicar)
	if last.Status != 400 || !strings.Contains(string(last.Body), clamdtest.Signature) || len(ts.uploadFiles()) != 0 {
		t.Fatalf("resumable EICAR: %s, upload files %v", last, ts.uploadFiles())
	}

	clamd.Stop()
	// clamd down: a finished resumable upload is kept, to be retried.
	later := []byte("a clean file sent in one chunk\n")
	up = ts.tusPath(ts.tusCreate(ts.admin, uploadsPath, int64(len(later)), tusMeta("app", app.ID, "filename", "later.txt")))
	if r := ts.tusPatch(ts.admin, up, 0, later); r.Status != 503 || len(ts.uploadFiles()) == 0 {
		t.Fatalf("resumable upload while clamd is down: %s, upload files %v", r, ts.uploadFiles())
	}
	r := ts.upload(ts.admin, app.ID, "later.txt", []byte("another clean file\n"))
	msg, _ = haloErrorOf(t, r, 503)
	if !strings.Contains(msg, "virus scanner is unavailable") || strings.Contains(msg, clamd.Addr) || r.Header.Get("Retry-After") != "10" {
		t.Fatalf("clamd down: %q, Retry-After %q", msg, r.Header.Get("Retry-After"))
	}
	haloErrorOf(t, ts.post(mediaPath+"/updateByUrl", ts.admin, byURL(app.ID, ext.URL+"/pics/cat.jpg?again", true)), 503)
	if n := ts.mediaFiles("objects/blobs"); n != 2 {
		t.Fatalf("%d blobs after uploads refused unscanned, want 2", n)
	}
}

// TestMediaFetchURL: updateByUrl with fetch: true stores the bytes as an
// upload when CMS_MEDIA_FETCH_URLS is on (here allowed to reach the test
// site on 127.0.0.1), refuses private addresses otherwise, and is
// refused when fetching is off.
func TestMediaFetchURL(t *testing.T) {
	jpg := testJPEG(t, 64, 48)
	ext := externalFiles(t, jpg)
	ts := startServer(t, withConfig(func(c *Config) { c.Media.FetchURLs, c.Media.FetchAllowPrivate = true, true }))
	app := ts.createApp("Fetching app")

	var f mediaView
	ts.mustJSON(ts.post(mediaPath+"/updateByUrl", ts.admin, map[string]any{"app": app.ID, "url": ext.URL + "/pics/cat.jpg",
		"action": "save", "fetch": true, "folder": "pets", "tags": []string{"cats"}}), 200, &f)
	sum := sha256.Sum256(jpg)
	if f.External || f.Name != "cat.jpg" || f.Folder != "pets" || f.MIME != "image/jpeg" || f.Width != 64 || f.Height != 48 ||
		f.SHA256 != hex.EncodeToString(sum[:]) || !strings.HasPrefix(f.URL, ts.base+"/media/") {
		t.Fatalf("fetched: %+v", f)
	}
	if r := ts.fetch(f.ContentURL, "", nil); r.Status != 200 || !bytes.Equal(r.Body, jpg) {
		t.Fatalf("served: %s", r)
	}
	if n := ts.mediaFiles("objects/blobs"); n != 1 {
		t.Fatalf("%d blobs, want 1", n)
	}
	// Named by the caller; this server's own URL answers its file.
	var named, own mediaView
	ts.mustJSON(ts.post(mediaPath+"/updateByUrl", ts.admin, map[string]any{"app": app.ID, "url": ext.URL + "/pics/cat.jpg",
		"action": "save", "fetch": true, "name": "tom.jpg"}), 200, &named)
	if named.Name != "tom.jpg" || named.ID == f.ID || named.SHA256 != f.SHA256 {
		t.Fatalf("named: %+v", named)
	}
	ts.mustJSON(ts.post(mediaPath+"/updateByUrl", ts.admin, byURL(app.ID, f.URL, true)), 200, &own)
	if own.ID != f.ID {
		t.Fatalf("own URL fetched: %+v", own)
	}
	msg, _ := haloErrorOf(t, ts.post(mediaPath+"/updateByUrl", ts.admin, byURL(app.ID, ext.URL+"/missing.jpg", true)), 400)
	if !strings.Contains(msg, "404") {
		t.Fatalf("missing file: %q", msg)
	}

	// Fetching on, private addresses refused (as served).
	guarded := startServer(t, withConfig(func(c *Config) { c.Media.FetchURLs = true }))
	gapp := guarded.createApp("Guarded app")
	for _, u := range []string{ext.URL + "/pics/cat.jpg", "http://localhost:1/x.jpg", "http://169.254.169.254/latest/meta-data/"} {
		msg, extra := haloErrorOf(t, guarded.post(mediaPath+"/updateByUrl", guarded.admin, byURL(gapp.ID, u, true)), 400)
		if !strings.Contains(msg, "private or reserved address") || extra["field"] != "url" {
			t.Fatalf("%s: %q %v", u, msg, extra)
		}
	}
	if n := guarded.mediaFiles("objects/blobs"); n != 0 {
		t.Fatalf("guarded server kept %d blobs", n)
	}

	// Fetching off (the default).
	off := startServer(t)
	oapp := off.createApp("Plain app")
	msg, extra := haloErrorOf(t, off.post(mediaPath+"/updateByUrl", off.admin, byURL(oapp.ID, ext.URL+"/pics/cat.jpg", true)), 403)
	if !strings.Contains(msg, "CMS_MEDIA_FETCH_URLS") || extra["field"] != "fetch" {
		t.Fatalf("fetch off: %q %v", msg, extra)
	}
}

func TestMediaSafetyConfig(t *testing.T) {
	for v, want := range map[string]bool{"": false, "false": false, "true": true} {
		t.Setenv("CMS_MEDIA_FETCH_URLS", v)
		c, err := loadMediaConfig("127.0.0.1:8080")
		if err != nil || c.FetchURLs != want || c.FetchAllowPrivate {
			t.Fatalf("CMS_MEDIA_FETCH_URLS=%q: %+v, %v", v, c, err)
		}
	}
	for _, v := range []string{"yes", "1", "TRUE"} {
		t.Setenv("CMS_MEDIA_FETCH_URLS", v)
		if _, err := loadMediaConfig("127.0.0.1:8080"); err == nil || !strings.Contains(err.Error(), "CMS_MEDIA_FETCH_URLS") {
			t.Fatalf("CMS_MEDIA_FETCH_URLS=%q: %v", v, err)
		}
	}
	t.Setenv("CMS_MEDIA_FETCH_URLS", "")
	cfg := Config{DataDir: t.TempDir()}
	cfg.Media.ClamdAddr = "clamd.example:3310"
	a := &app{cfg: cfg}
	if err := a.mediaSafety(t.Context(), &cmdmedia.Deps{}); err == nil || !strings.Contains(err.Error(), "CMS_MEDIA_CLAMD") {
		t.Fatalf("a bad clamd address: %v", err)
	}
}
