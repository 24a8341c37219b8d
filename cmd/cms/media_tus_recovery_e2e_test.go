package main

import (
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// TestTusSweep: uploads untouched for a day are removed, with their
// stray files; recent ones stay and resume.
func TestTusSweep(t *testing.T) {
	ts := startServer(t)
	app := ts.createApp("Tus app")
	jpg := testJPEG(t, 64, 64)
	meta := tusMeta("app", app.ID, "filename", "a.jpg")
	old := ts.tusPath(ts.tusCreate(ts.admin, uploadsPath, int64(len(jpg)), meta))
	expectStatus(t, ts.tusPatch(ts.admin, old, 0, jpg[:10]), 204)
	fresh := ts.tusPath(ts.tusCreate(ts.admin, uploadsPath, int64(len(jpg)), meta))
	expectStatus(t, ts.tusPatch(ts.admin, fresh, 0, jpg[:10]), 204)

	dir := filepath.Join(ts.app.cfg.DataDir, "media-uploads")
	oldID := strings.TrimPrefix(old, uploadsPath+"/")
	stray := filepath.Join(dir, strings.Repeat("ab", 16)) // bytes whose .info was never written
	if err := os.WriteFile(stray, []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	then := time.Now().Add(-25 * time.Hour)
	for _, p := range []string{filepath.Join(dir, oldID), filepath.Join(dir, oldID+".info"), stray} {
		if err := os.Chtimes(p, then, then); err != nil {
			t.Fatal(err)
		}
	}
	n, err := ts.app.media.uploads.Sweep(context.Background(), uploadMaxAge)
	if err != nil || n != 1 {
		t.Fatalf("sweep: %d, %v; want 1", n, err)
	}
	expectStatus(t, ts.tusHead(ts.admin, old), 404)
	if _, err := os.Stat(stray); !os.IsNotExist(err) {
		t.Fatalf("stray file kept: %v", err)
	}
	if r := ts.tusPatch(ts.admin, fresh, 10, jpg[10:]); r.Status != 204 || r.Header.Get("Media-File-Id") == "" {
		t.Fatalf("the recent upload after the sweep: %s", r)
	}
	if left := ts.uploadFiles(); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
}

// TestTusRetryAfterServerFault: when the last chunk came but the server
// could not keep the file (its storage failed), the upload stays, and a
// PATCH at the end offset finishes it once the storage is back.
func TestTusRetryAfterServerFault(t *testing.T) {
	ts := startServer(t)
	app := ts.createApp("Tus app")
	jpg := testJPEG(t, 64, 64)
	up := ts.tusPath(ts.tusCreate(ts.admin, uploadsPath, int64(len(jpg)), tusMeta("app", app.ID, "filename", "a.jpg")))

	// The storage's staging directory is replaced by a file.
	staging := filepath.Join(ts.app.cfg.DataDir, "media", "tmp")
	if err := os.Rename(staging, staging+".off"); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(staging, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	expectHaloError(t, ts.tusPatch(ts.admin, up, 0, jpg), 500)
	if h := ts.tusHead(ts.admin, up); h.Status != 200 || h.Header.Get("Upload-Offset") != strconv.Itoa(len(jpg)) {
		t.Fatalf("HEAD after the failure: %s %v", h, h.Header)
	}
	if err := os.Remove(staging); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(staging+".off", staging); err != nil {
		t.Fatal(err)
	}
	if r := ts.tusPatch(ts.admin, up, 0, nil); r.Status != 409 {
		t.Fatalf("retry at a wrong offset: %s, want 409", r)
	}
	r := ts.tusPatch(ts.admin, up, len(jpg), nil)
	id := r.Header.Get("Media-File-Id")
	if r.Status != 204 || id == "" || r.Header.Get("Upload-Offset") != strconv.Itoa(len(jpg)) {
		t.Fatalf("retry: %s %v", r, r.Header)
	}
	var f mediaView
	ts.mustJSON(ts.get(mediaPath+"/"+id, ts.admin), 200, &f)
	if f.Size != int64(len(jpg)) || ts.libraryCount(app.ID) != 1 {
		t.Fatalf("library: %+v, %d files", f, ts.libraryCount(app.ID))
	}
	if left := ts.uploadFiles(); len(left) != 0 {
		t.Fatalf("files left: %v", left)
	}
}

// TestTusResumesAfterAStall: a chunk whose sender goes silent (a phone
// losing its network) ends after CMS_MEDIA_UPLOAD_STALL, keeping the bytes
// that came; the client resumes from there.
func TestTusResumesAfterAStall(t *testing.T) {
	ts := startServer(t, withConfig(func(c *Config) { c.Media.UploadStall = 300 * time.Millisecond }))
	app := ts.createApp("Tus app")
	jpg := testJPEG(t, 320, 240)
	up := ts.tusPath(ts.tusCreate(ts.admin, uploadsPath, int64(len(jpg)), tusMeta("app", app.ID, "filename", "a.jpg")))

	pr, pw := io.Pipe()
	req, err := http.NewRequest(http.MethodPatch, ts.base+up, pr)
	if err != nil {
		t.Fatal(err)
	}
	req.ContentLength = int64(len(jpg)) // announced whole, sent in part
	req.Header = http.Header{"Authorization": {"Bearer " + ts.admin}, "Tus-Resumable": {"1.0.0"}, "Upload-Offset": {"0"},
		"Content-Type": {"application/offset+octet-stream"}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		if resp, err := ts.client.Do(req); err == nil {
			io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
	}()
	if _, err := pw.Write(jpg[:1000]); err != nil {
		t.Fatal(err)
	}
	select { // the sender is silent: the server ends the request
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("the stalled PATCH did not end")
	}
	pw.CloseWithError(io.ErrUnexpectedEOF)
	if h := ts.tusHead(ts.admin, up); h.Status != 200 || h.Header.Get("Upload-Offset") != "1000" {
		t.Fatalf("HEAD after the stall: %s %v", h, h.Header)
	}
	if r := ts.tusPatch(ts.admin, up, 1000, jpg[1000:]); r.Status != 204 || r.Header.Get("Media-File-Id") == "" {
		t.Fatalf("resumed: %s %v", r, r.Header)
	}
}
