package mediaprobe

import (
	"bytes"
	"io"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

func mp4Seeds(f *testing.F) {
	f.Add(mp4File("isom", mvhd(0, 1000, 12_345), mp4Box("trak", tkhd(640, 360))))
	f.Add(mp4File("qt  ", mvhd(1, 90_000, 1<<40)))
	f.Add(avifFile(100, 50))
	f.Add(cat(u32(1), []byte("moov"), u64(24), mvhd(0, 1, 1)))
	f.Add(cat(u32(0), []byte("moov"), mp4Box("trak", mp4Box("tkhd", []byte{1}))))
}

// FuzzMP4Duration: the box reader never panics, hangs or reads past the
// file, and fails only with fault.Invalid.
func FuzzMP4Duration(f *testing.F) {
	mp4Seeds(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		r := io.NewSectionReader(bytes.NewReader(data), 0, int64(len(data)))
		info, err := readMP4(r)
		if err != nil && !fault.Is(err, fault.Invalid) {
			t.Fatalf("readMP4: %v is not Invalid", err)
		}
		if info.duration < 0 || info.duration > maxDuration || info.width < 0 || info.height < 0 {
			t.Fatalf("readMP4: %+v", info)
		}
		if _, _, err := avifSize(r); err != nil && !fault.Is(err, fault.Invalid) {
			t.Fatalf("avifSize: %v is not Invalid", err)
		}
	})
}

// FuzzProbe: Probe never panics or hangs; it answers an allowed type
// within the limits, or a refusal of a known kind.
func FuzzProbe(f *testing.F) {
	mp4Seeds(f)
	f.Add(wavFile(0))
	f.Add(flacFile(44_100, 1000))
	f.Add(mp3Frames(2, 10))
	f.Add(pngBomb(10, 10))
	f.Add(webpFile(10, 10))
	f.Add([]byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 10 10"/>`))
	f.Add([]byte("%PDF-1.7\n"))
	f.Add([]byte("#!/bin/sh\n"))
	allowed := DefaultAllowed()
	f.Fuzz(func(t *testing.T, data []byte) {
		start := time.Now()
		p, err := Probe(bytes.NewReader(data), int64(len(data)), allowed)
		if d := time.Since(start); d > 2*time.Second {
			t.Fatalf("took %v", d)
		}
		if err != nil {
			switch fault.KindOf(err) {
			case fault.Invalid, fault.Unsupported, fault.TooLarge:
				return
			}
			t.Fatalf("unexpected error %v", err)
		}
		if !allowed[p.MIME] || p.Ext == "" || p.Kind == "" {
			t.Fatalf("answer %+v", p)
		}
		if p.Width < 0 || p.Height < 0 || p.Duration < 0 ||
			(p.Kind == media.Image && int64(p.Width)*int64(p.Height) > DefaultMaxPixels) {
			t.Fatalf("answer %+v", p)
		}
	})
}
