package imaging

import (
	"bytes"
	"context"
	"image"
	_ "image/jpeg"
	"image/png"
	"testing"
	"time"

	"golang.org/x/image/webp"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

func newEngine(t testing.TB, opt Options) *Engine {
	t.Helper()
	e, err := New(opt)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// size decodes the header of a JPEG, PNG or WebP result.
func size(t *testing.T, out []byte, mime string) (int, int) {
	t.Helper()
	var cfg image.Config
	var err error
	if mime == "image/webp" {
		cfg, err = webp.DecodeConfig(bytes.NewReader(out))
	} else {
		cfg, _, err = image.DecodeConfig(bytes.NewReader(out))
	}
	if err != nil {
		t.Fatalf("decode the %s result: %v", mime, err)
	}
	return cfg.Width, cfg.Height
}

func TestEngineSizes(t *testing.T) {
	e := newEngine(t, Options{})
	jpg := encodeJPEG(t, photo(1200, 800), 90)
	tests := []struct {
		name   string
		t      media.Transform
		mime   string
		w, h   int
		source []byte
	}{
		{"width only to webp", media.Transform{Width: 400, Format: media.WebP}, "image/webp", 400, 267, jpg},
		{"height only keeps jpeg", media.Transform{Height: 200}, "image/jpeg", 300, 200, jpg},
		{"cover crops", media.Transform{Width: 200, Height: 200, Format: media.PNG}, "image/png", 200, 200, jpg},
		{"cover smart", media.Transform{Width: 300, Height: 100, Gravity: media.Smart, Format: media.PNG}, "image/png", 300, 100, jpg},
		{"cover north", media.Transform{Width: 100, Height: 300, Gravity: media.North, Format: media.PNG}, "image/png", 100, 300, jpg},
		{"contain fits inside", media.Transform{Width: 400, Height: 400, Fit: media.Contain, Format: media.PNG}, "image/png", 400, 267, jpg},
		{"contain enlarges", media.Transform{Width: 2400, Height: 2400, Fit: media.Contain}, "image/jpeg", 2400, 1600, jpg},
		{"inside never enlarges", media.Transform{Width: 2400, Height: 2400, Fit: media.Inside}, "image/jpeg", 1200, 800, jpg},
		{"fill stretches", media.Transform{Width: 300, Height: 100, Fit: media.Fill, Format: media.PNG}, "image/png", 300, 100, jpg},
		{"format only", media.Transform{Format: media.PNG}, "image/png", 1200, 800, jpg},
		{"png source stays png", media.Transform{Width: 60}, "image/png", 60, 40, encodePNG(t, photo(120, 80))},
		{"gif source gives png", media.Transform{Width: 20}, "image/png", 20, 10, twoFrameGIF(t, 40, 20)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			out, mime, err := e.Transform(context.Background(), bytes.NewReader(tt.source), tt.t)
			if err != nil {
				t.Fatal(err)
			}
			if mime != tt.mime {
				t.Fatalf("mime %q, want %q", mime, tt.mime)
			}
			if w, h := size(t, out, mime); w != tt.w || h != tt.h {
				t.Errorf("result %d×%d, want %d×%d", w, h, tt.w, tt.h)
			}
		})
	}
}

// pixel decodes a PNG result and returns the colour at (x, y).
func pixel(t *testing.T, out []byte, x, y int) (r, g, b uint32) {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		t.Fatal(err)
	}
	r, g, b, _ = img.At(x, y).RGBA()
	return r >> 8, g >> 8, b >> 8
}

func TestEngineGravity(t *testing.T) {
	e := newEngine(t, Options{})
	tall := encodePNG(t, halves(100, 400, false)) // red over blue
	wide := encodePNG(t, halves(400, 100, true))  // red beside blue
	tests := []struct {
		src     []byte
		g       media.Gravity
		redWant bool
	}{
		{tall, media.North, true}, {tall, media.South, false},
		{tall, media.NorthWest, true}, {tall, media.SouthEast, false},
		{wide, media.West, true}, {wide, media.East, false},
	}
	for _, tt := range tests {
		out, _, err := e.Transform(context.Background(), bytes.NewReader(tt.src),
			media.Transform{Width: 50, Height: 50, Gravity: tt.g, Format: media.PNG})
		if err != nil {
			t.Fatal(err)
		}
		r, _, b := pixel(t, out, 25, 25)
		if red := r > 200 && b < 50; red != tt.redWant {
			t.Errorf("gravity %s: centre pixel r=%d b=%d, want red=%v", tt.g, r, b, tt.redWant)
		}
	}
}

func TestEngineOrientationAndMetadata(t *testing.T) {
	e := newEngine(t, Options{})
	src := withOrientation(encodeJPEG(t, photo(200, 100), 90), 6) // rotate 90° clockwise
	if !bytes.Contains(src, []byte("Exif")) {
		t.Fatal("the source has no EXIF")
	}
	out, mime, err := e.Transform(context.Background(), bytes.NewReader(src), media.Transform{Quality: 70})
	if err != nil {
		t.Fatal(err)
	}
	if w, h := size(t, out, mime); w != 100 || h != 200 {
		t.Errorf("result %d×%d, want 100×200 (EXIF orientation 6 applied)", w, h)
	}
	if bytes.Contains(out, []byte("Exif")) {
		t.Error("the result kept the EXIF metadata")
	}
}

func TestEngineFirstFrameOfAnimation(t *testing.T) {
	e := newEngine(t, Options{})
	out, _, err := e.Transform(context.Background(), bytes.NewReader(twoFrameGIF(t, 40, 20)), media.Transform{Width: 20})
	if err != nil {
		t.Fatal(err)
	}
	if w, h := size(t, out, "image/png"); w != 20 || h != 10 {
		t.Errorf("result %d×%d, want one frame of 20×10", w, h)
	}
	if r, _, b := pixel(t, out, 10, 5); r < 200 || b > 50 {
		t.Errorf("pixel r=%d b=%d, want the red first frame", r, b)
	}
}

func TestEngineAVIF(t *testing.T) {
	e := newEngine(t, Options{})
	out, mime, err := e.Transform(context.Background(), bytes.NewReader(encodeJPEG(t, photo(300, 200), 90)),
		media.Transform{Width: 64, Format: media.AVIF})
	if err != nil {
		t.Fatal(err)
	}
	if e.AVIF() {
		if mime != "image/avif" || !bytes.Contains(out[:32], []byte("ftypavif")) {
			t.Errorf("mime %q, header %q: want an AVIF", mime, out[:32])
		}
	} else if mime != "image/webp" {
		t.Errorf("mime %q: without AVIF support, want the WebP fallback", mime)
	}
}

func TestEngineRefuses(t *testing.T) {
	e := newEngine(t, Options{MaxSourceBytes: 1 << 20})
	jpg := encodeJPEG(t, photo(300, 200), 90)
	tests := []struct {
		name string
		src  []byte
		t    media.Transform
		kind fault.Kind
	}{
		{"not an image", []byte("#!/bin/sh\necho hello world, this is not an image\n"), media.Transform{Width: 16}, fault.Unsupported},
		{"bmp is not served", append([]byte("BM"), make([]byte, 64)...), media.Transform{Width: 16}, fault.Unsupported},
		{"truncated header", jpg[:20], media.Transform{Width: 16}, fault.Invalid},
		{"png bomb", pngBomb(100_000, 100_000), media.Transform{Width: 16}, fault.TooLarge},
		{"bigger than max bytes", append(jpg, make([]byte, 1<<20)...), media.Transform{Width: 16}, fault.TooLarge},
		{"width over bounds", jpg, media.Transform{Width: 5000}, fault.Invalid},
		{"result over bounds", encodePNG(t, photo(10, 2000)), media.Transform{Width: 2000}, fault.TooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			_, _, err := e.Transform(context.Background(), bytes.NewReader(tt.src), tt.t)
			if !fault.Is(err, tt.kind) {
				t.Fatalf("err %v (%v), want %v", err, fault.KindOf(err), tt.kind)
			}
			if d := time.Since(start); d > time.Second {
				t.Errorf("took %v to refuse", d)
			}
		})
	}
}

func TestEngineMaxSourcePixels(t *testing.T) {
	e := newEngine(t, Options{MaxSourcePixels: 100 * 100})
	_, _, err := e.Transform(context.Background(), bytes.NewReader(encodePNG(t, photo(101, 100))), media.Transform{Width: 16})
	if !fault.Is(err, fault.TooLarge) {
		t.Fatalf("err %v, want TooLarge", err)
	}
	if _, _, err := e.Transform(context.Background(), bytes.NewReader(encodePNG(t, photo(100, 100))), media.Transform{Width: 16}); err != nil {
		t.Fatalf("at the limit: %v", err)
	}
}

func TestEngineBusy(t *testing.T) {
	e := newEngine(t, Options{Concurrency: 1, QueueWait: 20 * time.Millisecond})
	e.slots <- struct{}{} // a transform in progress
	_, _, err := e.Transform(context.Background(), bytes.NewReader(encodePNG(t, photo(32, 32))), media.Transform{Width: 16})
	if !fault.Is(err, fault.Unavailable) {
		t.Fatalf("err %v, want Unavailable", err)
	}
	<-e.slots
	if _, _, err := e.Transform(context.Background(), bytes.NewReader(encodePNG(t, photo(32, 32))), media.Transform{Width: 16}); err != nil {
		t.Fatalf("with a free slot: %v", err)
	}
}
