package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"image/png"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/mediastore/s3/s3test"
)

func TestMediaUploadServeAndTransform(t *testing.T) {
	ts := startServer(t)
	app := ts.createApp("Media app")
	jpg := testJPEG(t, 800, 600)
	var f mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "cat.jpg", jpg, [2]string{"folder", "pets/cats"}, [2]string{"tags", "cats, pets"}), 201, &f)
	sum := sha256.Sum256(jpg)
	if f.Kind != "image" || f.MIME != "image/jpeg" || f.Width != 800 || f.Height != 600 || f.Size != int64(len(jpg)) ||
		f.SHA256 != hex.EncodeToString(sum[:]) || f.Folder != "pets/cats" || strings.Join(f.Tags, ",") != "cats,pets" || f.Version != 1 {
		t.Fatalf("uploaded: %+v", f)
	}
	if !strings.HasPrefix(f.URL, ts.base+"/media/"+f.ID+"/") {
		t.Fatalf("url %s", f.URL)
	}

	// The stable URL: the bytes, their type, an ETag, revalidation.
	r := ts.fetch(f.URL, "", nil)
	if r.Status != 200 || !bytes.Equal(r.Body, jpg) || r.Header.Get("Content-Type") != "image/jpeg" ||
		r.Header.Get("ETag") != `"`+f.SHA256+`"` || !strings.Contains(r.Header.Get("Cache-Control"), "must-revalidate") {
		t.Fatalf("stable url: %d %v", r.Status, r.Header)
	}
	if r := ts.fetch(f.URL, "", http.Header{"If-None-Match": {`"` + f.SHA256 + `"`}}); r.Status != 304 {
		t.Fatalf("If-None-Match: %d", r.Status)
	}
	// Ranges, as players seek.
	r = ts.fetch(f.URL, "", http.Header{"Range": {"bytes=10-19"}})
	if r.Status != 206 || !bytes.Equal(r.Body, jpg[10:20]) {
		t.Fatalf("range: %d %q", r.Status, r.Header.Get("Content-Range"))
	}
	// The content-addressed URL is cached forever.
	r = ts.fetch(f.ContentURL, "", nil)
	if r.Status != 200 || !strings.Contains(r.Header.Get("Cache-Control"), "immutable") || !bytes.Equal(r.Body, jpg) {
		t.Fatalf("content url: %d %v", r.Status, r.Header)
	}

	// A transform, as a query and as a Cloudinary-style segment: the same
	// derived image, computed once and kept.
	r = ts.fetch(f.URL+"?w=200&fm=png", "", nil)
	if r.Status != 200 || r.Header.Get("Content-Type") != "image/png" {
		t.Fatalf("transform: %s", r)
	}
	img, err := png.Decode(bytes.NewReader(r.Body))
	if err != nil || img.Bounds().Dx() != 200 || img.Bounds().Dy() != 150 {
		t.Fatalf("derived image: %v %v", err, img.Bounds())
	}
	seg := ts.fetch(ts.base+"/media/"+f.ID+"/"+f.SHA256+"/w_200,f_png/cat.png", "", nil)
	if seg.Status != 200 || !bytes.Equal(seg.Body, r.Body) || !strings.Contains(seg.Header.Get("Cache-Control"), "immutable") {
		t.Fatalf("segment transform: %s", seg)
	}
	if n := ts.mediaFiles("objects/derived"); n != 1 {
		t.Fatalf("%d derived images kept, want 1", n)
	}
	if r := ts.fetch(f.ThumbnailURL, "", nil); r.Status != 200 || r.Header.Get("Content-Type") != "image/webp" {
		t.Fatalf("thumbnail: %s", r)
	}
	// Bounds: a size off the list is refused, unless signed.
	if r := ts.fetch(f.URL+"?w=201", "", nil); r.Status != 403 {
		t.Fatalf("odd size: %s", r)
	}
	if r := ts.fetch(f.URL+"?w=99999", "", nil); r.Status != 400 {
		t.Fatalf("huge size: %s", r)
	}
	if r := ts.fetch(f.URL+"?bogus=1", "", nil); r.Status != 400 {
		t.Fatalf("unknown parameter: %s", r)
	}

	// Identical bytes are stored once.
	var g mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "same.jpg", jpg), 201, &g)
	if g.ID == f.ID || g.SHA256 != f.SHA256 || ts.mediaFiles("objects/blobs") != 1 {
		t.Fatalf("dedup: %s %s, %d blobs", g.ID, g.SHA256, ts.mediaFiles("objects/blobs"))
	}

	// Metadata changes, replace, and the list with its filters.
	var c mediaView
	ts.mustJSON(ts.do(request{method: http.MethodPatch, path: mediaPath + "/" + f.ID, token: ts.admin,
		body: map[string]any{"name": "tom.jpg", "alt": map[string]string{"en": "Tom"}}}), 200, &c)
	if c.Name != "tom.jpg" || c.Alt["en"] != "Tom" || c.Folder != "pets/cats" {
		t.Fatalf("patched: %+v", c)
	}
	jpg2 := testJPEG(t, 400, 300)
	ctype, body := multipartBody(t, nil, "new.jpg", jpg2)
	var rep mediaView
	ts.mustJSON(ts.sendMultipart(http.MethodPut, mediaPath+"/"+f.ID+"/content", ts.admin, ctype, body), 200, &rep)
	if rep.Version != 2 || rep.Width != 400 || rep.SHA256 == f.SHA256 {
		t.Fatalf("replaced: %+v", rep)
	}
	// The stable URL serves the new bytes (after the short ref cache);
	// the old version's URL still serves the old ones.
	deadline := time.Now().Add(5 * time.Second)
	for r = ts.fetch(f.URL, "", nil); !bytes.Equal(r.Body, jpg2) && time.Now().Before(deadline); r = ts.fetch(f.URL, "", nil) {
		time.Sleep(100 * time.Millisecond)
	}
	if !bytes.Equal(r.Body, jpg2) {
		t.Fatal("stable URL does not serve the replacement")
	}
	if r := ts.fetch(f.ContentURL, "", nil); !bytes.Equal(r.Body, jpg) {
		t.Fatalf("old version: %d", r.Status)
	}
	var list struct {
		Items      []mediaView `json:"items"`
		Pagination struct {
			TotalItems int `json:"totalItems"`
		} `json:"pagination"`
	}
	ts.mustJSON(ts.get(mediaPath+"?app="+app.ID+"&folder=pets&recursive=true&tag=cats&q=TOM", ts.admin), 200, &list)
	if list.Pagination.TotalItems != 1 || list.Items[0].ID != f.ID {
		t.Fatalf("list: %+v", list)
	}
	ts.mustJSON(ts.get(mediaPath+"?app="+app.ID+"&kind=image&sort=name_asc", ts.admin), 200, &list)
	if list.Pagination.TotalItems != 2 || list.Items[0].Name != "same.jpg" {
		t.Fatalf("list by name: %+v", list.Items)
	}
}

func TestMediaBadUploadsStoreNothing(t *testing.T) {
	ts := startServer(t, withConfig(func(c *Config) { c.Media.MaxBytes = 64 << 10 }))
	app := ts.createApp("Media app")
	elf := append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 200)...)
	zip := append([]byte("PK\x03\x04"), make([]byte, 200)...)
	bomb := pngBomb(100_000, 100_000)
	for _, c := range []struct {
		name    string
		file    string
		content []byte
		status  int
	}{
		{"too large", "big.jpg", bytes.Repeat([]byte{0xff}, 70<<10), 413},
		{"an executable named .jpg", "cat.jpg", elf, 415},
		{"a zip", "photos.zip", zip, 415},
		{"a decompression bomb", "bomb.png", bomb, 413},
		{"a path in the name", "", testJPEG(t, 8, 8), 400},
		{"an empty file", "empty.jpg", []byte{}, 400},
	} {
		var fields [][2]string
		if c.file == "" {
			fields = append(fields, [2]string{"name", "../../etc/passwd"})
		}
		r := ts.upload(ts.admin, app.ID, c.file, c.content, fields...)
		if r.Status != c.status {
			t.Errorf("%s: %s, want %d", c.name, r, c.status)
		}
		expectHaloError(t, r, c.status)
	}
	// No part named file, and a part named file before the app.
	ctype, body := multipartBody(t, [][2]string{{"app", app.ID}}, "", nil)
	if r := ts.sendMultipart(http.MethodPost, mediaPath, ts.admin, ctype, body); r.Status != 400 {
		t.Errorf("no file: %s", r)
	}
	if r := ts.post(mediaPath, ts.admin, map[string]any{"app": app.ID}); r.Status != 415 {
		t.Errorf("JSON body: %s", r)
	}
	// Cut off midway: the client sends half of what it announced and
	// hangs up.
	ctype, body = multipartBody(t, [][2]string{{"app", app.ID}}, "cut.jpg", testJPEG(t, 64, 64))
	conn, err := net.Dial("tcp", strings.TrimPrefix(ts.base, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(conn, "POST %s HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n",
		mediaPath, ts.admin, ctype, len(body))
	conn.Write(body[:len(body)/2])
	conn.Close()
	time.Sleep(300 * time.Millisecond)

	var list struct {
		Pagination struct {
			TotalItems int `json:"totalItems"`
		} `json:"pagination"`
	}
	ts.mustJSON(ts.get(mediaPath+"?app="+app.ID, ts.admin), 200, &list)
	if list.Pagination.TotalItems != 0 || ts.mediaFiles("objects/blobs") != 0 || ts.mediaFiles("tmp") != 0 {
		t.Fatalf("after bad uploads: %d files listed, %d blobs, %d staged", list.Pagination.TotalItems, ts.mediaFiles("objects/blobs"), ts.mediaFiles("tmp"))
	}
}

// TestMediaOnS3: the same library on the s3 driver, against a real
// S3-compatible server: upload, serve with ranges, transform, dedup.
func TestMediaOnS3(t *testing.T) {
	s3c := s3test.Start(t)
	ts := startServer(t, withConfig(func(c *Config) {
		c.Media.Storage = "s3"
		c.Media.S3 = S3Config{Endpoint: s3c.Endpoint, Bucket: s3c.Bucket, Region: s3c.Region, AccessKey: s3c.AccessKey,
			SecretKey: s3c.SecretKey, UseSSL: s3c.UseSSL, Prefix: "media"}
	}))
	app := ts.createApp("S3 app")
	jpg := testJPEG(t, 640, 480)
	var f, g mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "cat.jpg", jpg), 201, &f)
	ts.mustJSON(ts.upload(ts.admin, app.ID, "again.jpg", jpg), 201, &g)
	if g.SHA256 != f.SHA256 || f.Width != 640 {
		t.Fatalf("uploads: %+v %+v", f, g)
	}
	if r := ts.fetch(f.URL, "", http.Header{"Range": {"bytes=100-199"}}); r.Status != 206 || !bytes.Equal(r.Body, jpg[100:200]) {
		t.Fatalf("range from S3: %s", r)
	}
	r := ts.fetch(f.URL+"?w=320&fm=png", "", nil)
	if img, err := png.Decode(bytes.NewReader(r.Body)); r.Status != 200 || err != nil || img.Bounds().Dx() != 320 {
		t.Fatalf("transform from S3: %s (%v)", r, err)
	}
	if r := ts.upload(ts.admin, app.ID, "x.jpg", append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 100)...)); r.Status != 415 {
		t.Fatalf("refused upload: %s", r)
	}
}

// TestMediaAnswersWhileItsProjectionIsBehind: an upload whose read model
// cannot follow (the media projection wedged, as a projector bug would)
// still answers the file it stored, never a 404.
func TestMediaAnswersWhileItsProjectionIsBehind(t *testing.T) {
	ts := startServer(t, withConfig(func(c *Config) { c.ReadYourWrites = 500 * time.Millisecond }))
	app := ts.createApp("Media app")
	if _, err := ts.app.pool.Exec(context.Background(), `
CREATE FUNCTION public.refuse_media() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'wedged'; END $$;
CREATE TRIGGER refuse_media BEFORE INSERT OR UPDATE ON proj_media_v1.media_files
  FOR EACH ROW EXECUTE FUNCTION public.refuse_media();`); err != nil {
		t.Fatal(err)
	}
	jpg := testJPEG(t, 32, 24)
	var f mediaView
	ts.mustJSON(ts.upload(ts.admin, app.ID, "late.jpg", jpg), 201, &f)
	sum := sha256.Sum256(jpg)
	if f.ID == "" || f.Name != "late.jpg" || f.SHA256 != hex.EncodeToString(sum[:]) || f.Width != 32 || f.Version != 1 {
		t.Fatalf("answer while the projection is wedged: %+v", f)
	}
	// What uses the file is unknown while the projection is behind: a
	// delete is refused (to try again), not let through.
	if r := ts.do(request{method: http.MethodDelete, path: mediaPath + "/" + f.ID, token: ts.admin}); r.Status != 409 ||
		!strings.Contains(string(r.Body), "catching up") {
		t.Fatalf("delete while the projection is wedged: %s", r)
	}
}
