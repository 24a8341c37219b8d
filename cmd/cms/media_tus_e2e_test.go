package main

import (
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"strconv"
	"strings"
	"testing"
)

// TestTusUploadResumes: an upload sent in two chunks, resumed from the
// offset HEAD tells, becomes a library file with the same bytes; the
// answer names it; nothing is left behind.
func TestTusUploadResumes(t *testing.T) {
	ts := startServer(t)
	app := ts.createApp("Tus app")
	_, writer := ts.userWith("writer", grantTo{app: app.ID, perms: []string{"read", "write"}})
	jpg := noisyJPEG(t, 1800, 1400)
	half := len(jpg) / 2
	if half <= 1<<20 {
		t.Fatalf("the test file has %d bytes: its chunks must be over the 1 MiB default body limit", len(jpg))
	}

	// The app by its number, and the collection with a trailing slash.
	meta := tusMeta("app", strconv.Itoa(ts.appNumber(app.ID)), "filename", "big cat.jpg", "folder", "pets", "tags", "cats, big")
	up := ts.tusPath(ts.tusCreate(writer, uploadsPath+"/", int64(len(jpg)), meta))
	if r := ts.tusPatch(writer, up, 0, jpg[:half]); r.Status != 204 || r.Header.Get("Upload-Offset") != strconv.Itoa(half) {
		t.Fatalf("first half: %s %v", r, r.Header)
	}
	// The connection dropped: the client asks where to resume (the
	// upload's path with a trailing slash works too).
	h := ts.tusHead(writer, up+"/")
	if h.Status != 200 || h.Header.Get("Upload-Offset") != strconv.Itoa(half) || h.Header.Get("Upload-Length") != strconv.Itoa(len(jpg)) ||
		h.Header.Get("Tus-Resumable") != "1.0.0" {
		t.Fatalf("HEAD: %s %v", h, h.Header)
	}
	if r := ts.tusPatch(writer, up, 0, jpg[:half]); r.Status != 409 {
		t.Fatalf("PATCH at a stale offset: %s, want 409", r)
	}
	last := ts.tusPatch(writer, up, half, jpg[half:])
	id := last.Header.Get("Media-File-Id")
	if last.Status != 204 || last.Header.Get("Upload-Offset") != strconv.Itoa(len(jpg)) || id == "" ||
		!strings.HasPrefix(last.Header.Get("Media-File-Url"), ts.base+"/media/"+id) {
		t.Fatalf("last chunk: %s %v", last, last.Header)
	}
	var f mediaView
	ts.mustJSON(ts.get(mediaPath+"/"+id, writer), 200, &f)
	sum := sha256.Sum256(jpg)
	if f.App != app.ID || f.Name != "big cat.jpg" || f.Folder != "pets" || strings.Join(f.Tags, ",") != "big,cats" && strings.Join(f.Tags, ",") != "cats,big" ||
		f.SHA256 != hex.EncodeToString(sum[:]) || f.Size != int64(len(jpg)) || f.Width != 1800 || f.Kind != "image" || f.URL != last.Header.Get("Media-File-Url") {
		t.Fatalf("library file: %+v", f)
	}
	if r := ts.fetch(f.URL, "", nil); r.Status != 200 || string(r.Body) != string(jpg) {
		t.Fatalf("served bytes: %s", r)
	}
	// Done: the upload is gone, from the API and the disk.
	if r := ts.tusHead(writer, up); r.Status != 404 {
		t.Fatalf("HEAD after completion: %s, want 404", r)
	}
	if left := ts.uploadFiles(); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
	// Creation with the whole file in its body (creation-with-upload).
	small := testJPEG(t, 32, 32)
	one := ts.do(request{method: http.MethodPost, path: uploadsPath, token: writer, body: small, header: http.Header{
		"Tus-Resumable": {"1.0.0"}, "Upload-Length": {strconv.Itoa(len(small))}, "Upload-Metadata": {tusMeta("app", app.ID, "filename", "small.jpg")},
		"Content-Type": {"application/offset+octet-stream"}}})
	if one.Status != 201 || one.Header.Get("Upload-Offset") != strconv.Itoa(len(small)) || one.Header.Get("Media-File-Id") == "" {
		t.Fatalf("creation with the whole file: %s %v", one, one.Header)
	}
	ts.mustJSON(ts.get(mediaPath+"/"+one.Header.Get("Media-File-Id"), writer), 200, &f)
	if f.Name != "small.jpg" || f.Size != int64(len(small)) {
		t.Fatalf("file created with its upload: %+v", f)
	}
	// The Idempotency-Key middleware leaves creations alone (it would hold
	// their bodies in memory): each is an upload of its own.
	key := http.Header{"Idempotency-Key": {"k-1"}, "Tus-Resumable": {"1.0.0"}, "Upload-Length": {"10"}, "Upload-Metadata": {meta}}
	a := ts.do(request{method: http.MethodPost, path: uploadsPath, token: writer, header: key})
	b := ts.do(request{method: http.MethodPost, path: uploadsPath, token: writer, header: key})
	if ts.tusPath(a) == ts.tusPath(b) || b.Header.Get("Idempotent-Replayed") != "" {
		t.Fatalf("creations with one Idempotency-Key: %v, %v", a.Header, b.Header)
	}
	// Discovery.
	o := ts.do(request{method: http.MethodOptions, path: uploadsPath, token: writer})
	if o.Status != 200 || o.Header.Get("Tus-Version") != "1.0.0" || o.Header.Get("Tus-Max-Size") != strconv.Itoa(100<<20) ||
		!strings.Contains(o.Header.Get("Tus-Extension"), "creation") || strings.Contains(o.Header.Get("Tus-Extension"), "concatenation") {
		t.Fatalf("OPTIONS: %s %v", o, o.Header)
	}
}

// TestTusRights: creating needs write on the app; only the upload's
// creator may see, resume or end it; every request needs a token.
func TestTusRights(t *testing.T) {
	ts := startServer(t)
	app := ts.createApp("Tus app")
	w, writer := ts.userWith("writer", grantTo{app: app.ID, perms: []string{"read", "write"}})
	_, other := ts.userWith("other", grantTo{app: app.ID, perms: []string{"read", "write"}})
	_, reader := ts.userWith("reader", grantTo{app: app.ID, perms: []string{"read"}})
	jpg := testJPEG(t, 64, 64)
	meta := tusMeta("app", app.ID, "filename", "a.jpg")

	expectHaloError(t, ts.tusCreate(reader, uploadsPath, int64(len(jpg)), meta), 403)
	expectHaloError(t, ts.tusCreate("", uploadsPath, int64(len(jpg)), meta), 401)
	expectHaloError(t, ts.tusCreate(ts.appToken(app), uploadsPath, int64(len(jpg)), meta), 403)
	expectHaloError(t, ts.tusCreate(writer, uploadsPath, int64(len(jpg)), tusMeta("filename", "a.jpg")), 400)
	expectHaloError(t, ts.tusCreate(ts.admin, uploadsPath, int64(len(jpg)), tusMeta("app", "aaaaaaaaaaaaaaaaaaaaaaaa")), 400)
	if n := len(ts.uploadFiles()); n != 0 {
		t.Fatalf("%d files kept for refused creations", n)
	}

	up := ts.tusPath(ts.tusCreate(writer, uploadsPath, int64(len(jpg)), meta))
	expectStatus(t, ts.tusPatch(writer, up, 0, jpg[:10]), 204)
	for name, r := range map[string]response{
		"other HEAD":   ts.tusHead(other, up),
		"other PATCH":  ts.tusPatch(other, up, 10, jpg[10:]),
		"other DELETE": ts.do(request{method: http.MethodDelete, path: up, token: other, header: http.Header{"Tus-Resumable": {"1.0.0"}}}),
		"admin PATCH":  ts.tusPatch(ts.admin, up, 10, jpg[10:]),
	} {
		if r.Status != 404 {
			t.Errorf("%s: %s, want 404", name, r)
		}
	}
	for name, r := range map[string]response{
		"no token HEAD":  ts.tusHead("", up),
		"no token PATCH": ts.tusPatch("", up, 10, jpg[10:]),
	} {
		if r.Status != 401 {
			t.Errorf("%s: %s, want 401", name, r)
		}
	}
	expectHaloError(t, ts.tusPatch(ts.appToken(app), up, 10, jpg[10:]), 403)
	expectStatus(t, ts.tusHead(writer, uploadsPath+"/..%2f..%2fmedia-signing.key"), 404)
	// Nothing the others sent reached it.
	if h := ts.tusHead(writer, up); h.Status != 200 || h.Header.Get("Upload-Offset") != "10" {
		t.Fatalf("HEAD by its creator: %s %v", h, h.Header)
	}
	// Rights withdrawn mid-upload: the next chunk is refused.
	ts.mustJSON(ts.revoke(ts.admin, map[string]any{"user": w.ID, "app": app.ID, "permissions": []string{"write"}}), 200, nil)
	expectHaloError(t, ts.tusPatch(writer, up, 10, jpg[10:]), 403)
	// Its creator may end it.
	if r := ts.do(request{method: http.MethodDelete, path: up, token: writer, header: http.Header{"Tus-Resumable": {"1.0.0"}}}); r.Status != 204 {
		t.Fatalf("DELETE by its creator: %s", r)
	}
	expectStatus(t, ts.tusHead(writer, up), 404)
	if n := len(ts.uploadFiles()); n != 0 || ts.libraryCount(app.ID) != 0 {
		t.Fatalf("after DELETE: %d files kept, %d in the library", n, ts.libraryCount(app.ID))
	}
}

// TestTusRefusals: over the upload limit (413) before a byte is taken,
// and a completed file that is not media (415) leaves nothing anywhere.
func TestTusRefusals(t *testing.T) {
	ts := startServer(t, withConfig(func(c *Config) { c.Media.MaxBytes = 1 << 20 }))
	app := ts.createApp("Tus app")
	meta := tusMeta("app", app.ID, "filename", "x.bin")

	expectHaloError(t, ts.tusCreate(ts.admin, uploadsPath, 1<<20+1, meta), 413)
	r := ts.do(request{method: http.MethodPost, path: uploadsPath, token: ts.admin, header: http.Header{
		"Tus-Resumable": {"1.0.0"}, "Upload-Defer-Length": {"1"}, "Upload-Metadata": {meta}}})
	expectHaloError(t, r, 400)
	// A chunk longer than the upload.
	up := ts.tusPath(ts.tusCreate(ts.admin, uploadsPath, 100, meta))
	if r := ts.tusPatch(ts.admin, up, 0, make([]byte, 101)); r.Status != 413 {
		t.Fatalf("chunk past the length: %s, want 413", r)
	}

	// An executable's bytes: refused at completion, as the multipart
	// upload refuses them.
	elf := append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 4000)...)
	up = ts.tusPath(ts.tusCreate(ts.admin, uploadsPath, int64(len(elf)), tusMeta("app", app.ID, "filename", "run.jpg")))
	expectStatus(t, ts.tusPatch(ts.admin, up, 0, elf[:2000]), 204)
	last := ts.tusPatch(ts.admin, up, 2000, elf[2000:])
	expectHaloError(t, last, 415)
	if last.Header.Get("Media-File-Id") != "" {
		t.Fatalf("a refused file named: %v", last.Header)
	}
	expectStatus(t, ts.tusHead(ts.admin, up), 404)
	if n := ts.libraryCount(app.ID); n != 0 {
		t.Fatalf("%d files in the library", n)
	}
	if n := ts.mediaFiles("objects/blobs"); n != 0 {
		t.Fatalf("%d blobs stored", n)
	}
	// What is left is the one with the too-long chunk (the sweep's).
	if left := ts.uploadFiles(); len(left) != 2 {
		t.Fatalf("files left: %v", left)
	}
}
