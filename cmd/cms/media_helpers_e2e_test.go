package main

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"io/fs"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const mediaPath = "/api/media/file"

// mediaView is a media file as the API answers it.
type mediaView struct {
	ID           string            `json:"id"`
	App          string            `json:"app"`
	Name         string            `json:"name"`
	Folder       string            `json:"folder"`
	Tags         []string          `json:"tags"`
	Alt          map[string]string `json:"alt"`
	Kind         string            `json:"kind"`
	MIME         string            `json:"mime"`
	Size         int64             `json:"size"`
	SHA256       string            `json:"sha256"`
	Width        int               `json:"width"`
	Height       int               `json:"height"`
	Version      int               `json:"version"`
	External     bool              `json:"external"`
	URL          string            `json:"url"`
	ContentURL   string            `json:"contentUrl"`
	ThumbnailURL string            `json:"thumbnailUrl"`
	UploadedBy   string            `json:"uploadedBy"`
	Uses         int               `json:"uses"`
	UsedIn       []struct {
		Type, ID, Name string
	} `json:"usedIn"`
	Deleted bool `json:"deleted"`
}

// testJPEG is a w×h JPEG of a gradient.
func testJPEG(t testing.TB, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			img.Set(x, y, color.RGBA{uint8(x * 255 / w), uint8(y * 255 / h), 128, 255})
		}
	}
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: 85}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// multipartBody is a multipart/form-data body: fields (in order), then
// the part file with content.
func multipartBody(t testing.TB, fields [][2]string, filename string, content []byte) (string, []byte) {
	t.Helper()
	var b bytes.Buffer
	mw := multipart.NewWriter(&b)
	for _, f := range fields {
		if err := mw.WriteField(f[0], f[1]); err != nil {
			t.Fatal(err)
		}
	}
	if content != nil {
		fw, err := mw.CreateFormFile("file", filename)
		if err != nil {
			t.Fatal(err)
		}
		fw.Write(content)
	}
	mw.Close()
	return mw.FormDataContentType(), b.Bytes()
}

// sendMultipart sends a multipart body to path.
func (ts *testServer) sendMultipart(method, path, token, ctype string, body []byte) response {
	ts.t.Helper()
	return ts.do(request{method: method, path: path, token: token, body: body, header: http.Header{"Content-Type": {ctype}}})
}

// upload uploads content to app's library as name.
func (ts *testServer) upload(token, app, name string, content []byte, fields ...[2]string) response {
	ts.t.Helper()
	ctype, body := multipartBody(ts.t, append([][2]string{{"app", app}}, fields...), name, content)
	return ts.sendMultipart(http.MethodPost, mediaPath, token, ctype, body)
}

// fetch GETs an absolute URL of the server with headers.
func (ts *testServer) fetch(rawURL, token string, header http.Header) response {
	ts.t.Helper()
	return ts.do(request{method: http.MethodGet, path: strings.TrimPrefix(rawURL, ts.base), token: token, header: header})
}

// mediaFiles counts the regular files under the server's media storage
// directory ("objects/blobs", "tmp", "objects/derived").
func (ts *testServer) mediaFiles(sub string) int {
	ts.t.Helper()
	n := 0
	root := filepath.Join(ts.app.cfg.DataDir, "media", sub)
	err := filepath.WalkDir(root, func(_ string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			n++
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		ts.t.Fatal(err)
	}
	return n
}

// pngBomb is a PNG whose header claims w×h pixels, with a few bytes of
// data: decoding it would take w×h×3 bytes.
func pngBomb(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	chunk := func(typ string, data []byte) {
		binary.Write(&b, binary.BigEndian, uint32(len(data)))
		b.WriteString(typ)
		b.Write(data)
		binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(append([]byte(typ), data...)))
	}
	ihdr := binary.BigEndian.AppendUint32(nil, w)
	ihdr = binary.BigEndian.AppendUint32(ihdr, h)
	chunk("IHDR", append(ihdr, 8, 2, 0, 0, 0))
	chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01})
	chunk("IEND", nil)
	return b.Bytes()
}
