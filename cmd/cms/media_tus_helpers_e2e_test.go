package main

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/jpeg"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
)

const uploadsPath = "/api/media/uploads"

// tusMeta is an Upload-Metadata header: key and base64 value pairs.
func tusMeta(kv ...string) string {
	var parts []string
	for i := 0; i+1 < len(kv); i += 2 {
		parts = append(parts, kv[i]+" "+base64.StdEncoding.EncodeToString([]byte(kv[i+1])))
	}
	return strings.Join(parts, ",")
}

// tusCreate creates an upload of length bytes (POST to path, normally
// uploadsPath).
func (ts *testServer) tusCreate(token, path string, length int64, meta string) response {
	ts.t.Helper()
	return ts.do(request{method: http.MethodPost, path: path, token: token, header: http.Header{
		"Tus-Resumable": {"1.0.0"}, "Upload-Length": {strconv.FormatInt(length, 10)}, "Upload-Metadata": {meta}}})
}

// tusPath is the path of the upload a creation answered (its Location).
func (ts *testServer) tusPath(r response) string {
	ts.t.Helper()
	loc := r.Header.Get("Location")
	if r.Status != http.StatusCreated || !strings.HasPrefix(loc, ts.base+uploadsPath+"/") {
		ts.t.Fatalf("create upload: %s, Location %q", r, loc)
	}
	return strings.TrimPrefix(loc, ts.base)
}

// tusPatch sends chunk at offset.
func (ts *testServer) tusPatch(token, path string, offset int, chunk []byte) response {
	ts.t.Helper()
	return ts.do(request{method: http.MethodPatch, path: path, token: token, body: chunk, header: http.Header{
		"Tus-Resumable": {"1.0.0"}, "Upload-Offset": {strconv.Itoa(offset)}, "Content-Type": {"application/offset+octet-stream"}}})
}

// tusHead asks where an upload is.
func (ts *testServer) tusHead(token, path string) response {
	ts.t.Helper()
	return ts.do(request{method: http.MethodHead, path: path, token: token, header: http.Header{"Tus-Resumable": {"1.0.0"}}})
}

// noisyJPEG is a w×h JPEG of noise: large for its size, as photos are.
func noisyJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	rnd := rand.New(rand.NewPCG(1, 2))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for i := range img.Pix {
		img.Pix[i] = uint8(rnd.Uint32())
		if i%4 == 3 {
			img.Pix[i] = 255
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 95}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// uploadFiles lists the files the resumable uploads keep.
func (ts *testServer) uploadFiles() []string {
	ts.t.Helper()
	es, err := os.ReadDir(filepath.Join(ts.app.cfg.DataDir, "media-uploads"))
	if err != nil {
		ts.t.Fatal(err)
	}
	var out []string
	for _, e := range es {
		out = append(out, e.Name())
	}
	sort.Strings(out)
	return out
}

// libraryCount is how many files app's library lists.
func (ts *testServer) libraryCount(app string) int {
	ts.t.Helper()
	var page struct {
		Items []mediaView `json:"items"`
	}
	ts.mustJSON(ts.get(mediaPath+"?app="+app, ts.admin), 200, &page)
	return len(page.Items)
}
