package main

import (
	"bytes"
	"crypto/sha256"
	"image"
	"image/jpeg"
	"io"
	"mime"
	"mime/multipart"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/mediaprobe"
)

// The upload is a WAV the server's probe accepts, of the size asked, and
// no two of its MiB, nor two seeds' files, are the same bytes.
func TestWAVStreamIsAValidDistinctWAV(t *testing.T) {
	const size = 3<<20 + 12345
	read := func(seed uint64) []byte {
		b, err := io.ReadAll(newWAVStream(size, seed))
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	a, b := read(1), read(2)
	if len(a) != size {
		t.Fatalf("%d bytes, want %d", len(a), size)
	}
	p, err := mediaprobe.Probe(bytes.NewReader(a), int64(len(a)), nil)
	if err != nil {
		t.Fatalf("probe: %v", err)
	}
	samples := int64(size - wavHeaderLen)
	want := time.Duration(samples) * time.Second / (44100 * 4)
	if p.MIME != "audio/wav" || p.Duration.Round(time.Millisecond) != want.Round(time.Millisecond) {
		t.Errorf("probed %s of %s, want audio/wav of %s", p.MIME, p.Duration, want)
	}
	if sha256.Sum256(a) == sha256.Sum256(b) {
		t.Error("two seeds gave the same bytes")
	}
	chunk := func(i int) []byte { return a[wavHeaderLen+i*sampleChunk : wavHeaderLen+(i+1)*sampleChunk] }
	if bytes.Equal(chunk(0), chunk(1)) || bytes.Equal(chunk(1), chunk(2)) {
		t.Error("two MiB of one file are equal")
	}
	// Reading in small pieces gives the same bytes.
	var small bytes.Buffer
	if _, err := io.CopyBuffer(&small, struct{ io.Reader }{newWAVStream(size, 1)}, make([]byte, 777)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(small.Bytes(), a) {
		t.Error("reads of 777 bytes give other bytes than whole reads")
	}
}

// A JPEG with a comment is the same picture, other bytes, and still a
// JPEG to the probe.
func TestWithCommentKeepsTheJPEG(t *testing.T) {
	var src bytes.Buffer
	if err := jpeg.Encode(&src, image.NewGray(image.Rect(0, 0, 64, 48)), nil); err != nil {
		t.Fatal(err)
	}
	a, b := withComment(src.Bytes(), "image 1"), withComment(src.Bytes(), "image 2")
	if bytes.Equal(a, b) {
		t.Fatal("two comments gave the same bytes")
	}
	for _, f := range [][]byte{a, b} {
		if _, err := jpeg.Decode(bytes.NewReader(f)); err != nil {
			t.Fatalf("decode: %v", err)
		}
		p, err := mediaprobe.Probe(bytes.NewReader(f), int64(len(f)), nil)
		if err != nil || p.MIME != "image/jpeg" || p.Width != 64 || p.Height != 48 {
			t.Errorf("probed %+v, %v; want a 64×48 JPEG", p, err)
		}
	}
}

// The multipart body's length is exact, and it holds app, name and the
// file, in that order.
func TestMultipartBodyIsExact(t *testing.T) {
	file := strings.Repeat("x", 100_000)
	body, length, ctype := multipartBody("app1", "a.wav", "audio/wav", strings.NewReader(file), int64(len(file)))
	raw, err := io.ReadAll(body)
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(raw)) != length {
		t.Fatalf("%d bytes, Content-Length %d", len(raw), length)
	}
	_, params, err := mime.ParseMediaType(ctype)
	if err != nil {
		t.Fatal(err)
	}
	mr := multipart.NewReader(bytes.NewReader(raw), params["boundary"])
	var got []string
	for {
		p, err := mr.NextPart()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		v, _ := io.ReadAll(p)
		got = append(got, p.FormName()+"="+string(v[:min(len(v), 8)]))
		if p.FormName() == "file" && (string(v) != file || p.FileName() != "a.wav") {
			t.Errorf("file part: %d bytes named %q", len(v), p.FileName())
		}
	}
	if strings.Join(got, " ") != "app=app1 name=a.wav file=xxxxxxxx" {
		t.Errorf("parts %v", got)
	}
}
