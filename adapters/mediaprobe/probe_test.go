package mediaprobe

import (
	"bytes"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

func probe(b []byte) (media.Probed, error) {
	return Probe(bytes.NewReader(b), int64(len(b)), DefaultAllowed())
}

func TestProbe(t *testing.T) {
	svg := []byte(`<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" width="120px" height="80"><rect/></svg>`)
	svgViewBox := []byte(`<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 64 48"><rect/></svg>`)
	tests := []struct {
		name string
		file []byte
		want media.Probed
	}{
		{"jpeg", encoded(t, "jpeg", 64, 48), media.Probed{MIME: "image/jpeg", Ext: ".jpg", Kind: media.Image, Width: 64, Height: 48}},
		{"png", encoded(t, "png", 30, 20), media.Probed{MIME: "image/png", Ext: ".png", Kind: media.Image, Width: 30, Height: 20}},
		{"gif", encoded(t, "gif", 7, 9), media.Probed{MIME: "image/gif", Ext: ".gif", Kind: media.Image, Width: 7, Height: 9}},
		{"webp", webpFile(300, 200), media.Probed{MIME: "image/webp", Ext: ".webp", Kind: media.Image, Width: 300, Height: 200}},
		{"avif", avifFile(1920, 1080), media.Probed{MIME: "image/avif", Ext: ".avif", Kind: media.Image, Width: 1920, Height: 1080}},
		{"svg", svg, media.Probed{MIME: "image/svg+xml", Ext: ".svg", Kind: media.Image, Width: 120, Height: 80}},
		{"svg viewBox", svgViewBox, media.Probed{MIME: "image/svg+xml", Ext: ".svg", Kind: media.Image, Width: 64, Height: 48}},
		{"mp4", mp4File("isom", mvhd(0, 1000, 12_345), mp4Box("trak", tkhd(0, 0)), mp4Box("trak", tkhd(640, 360))),
			media.Probed{MIME: "video/mp4", Ext: ".mp4", Kind: media.Video, Width: 640, Height: 360, Duration: 12345 * time.Millisecond}},
		{"mp4 version 1 header", mp4File("isom", mvhd(1, 90_000, 90_000*3600)),
			media.Probed{MIME: "video/mp4", Ext: ".mp4", Kind: media.Video, Duration: time.Hour}},
		{"quicktime", mp4File("qt  ", mvhd(0, 600, 1500), mp4Box("trak", tkhd(1280, 720))),
			media.Probed{MIME: "video/quicktime", Ext: ".mov", Kind: media.Video, Width: 1280, Height: 720, Duration: 2500 * time.Millisecond}},
		{"m4a", mp4File("M4A ", mvhd(0, 44_100, 44_100*30)),
			media.Probed{MIME: "audio/mp4", Ext: ".m4a", Kind: media.Audio, Duration: 30 * time.Second}},
		{"wav", wavFile(2), media.Probed{MIME: "audio/wav", Ext: ".wav", Kind: media.Audio, Duration: 2 * time.Second}},
		{"flac", flacFile(48_000, 48_000*75), media.Probed{MIME: "audio/flac", Ext: ".flac", Kind: media.Audio, Duration: 75 * time.Second}},
		{"mp3 xing", mp3Frames(3, 1000), media.Probed{MIME: "audio/mpeg", Ext: ".mp3", Kind: media.Audio, Duration: 26_122_448_979}},
		{"pdf", []byte("%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n"), media.Probed{MIME: "application/pdf", Ext: ".pdf", Kind: media.Document}},
		{"text", []byte("Hello, this is a plain note.\nSecond line.\n"), media.Probed{MIME: "text/plain", Ext: ".txt", Kind: media.Document}},
		{"html", []byte("<!DOCTYPE html><html><body><p>hi</p></body></html>"), media.Probed{MIME: "text/html", Ext: ".html", Kind: media.Document}},
		{"csv", []byte("a,b,c\n1,2,3\n4,5,6\n"), media.Probed{MIME: "text/csv", Ext: ".csv", Kind: media.Document}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := probe(tt.file)
			if err != nil {
				t.Fatal(err)
			}
			if got != tt.want {
				t.Errorf("got  %+v\nwant %+v", got, tt.want)
			}
		})
	}
}

func TestProbeMP3ConstantBitrate(t *testing.T) {
	got, err := probe(mp3Frames(400, 0)) // 400 frames of 1152 samples: 10.45 s
	if err != nil {
		t.Fatal(err)
	}
	if got.MIME != "audio/mpeg" || got.Duration < 10*time.Second || got.Duration > 11*time.Second {
		t.Errorf("got %+v, want audio/mpeg of about 10.4s", got)
	}
}

func TestProbeRefusesTypes(t *testing.T) {
	tests := map[string][]byte{
		"elf":     append([]byte("\x7fELF\x02\x01\x01\x00"), make([]byte, 56)...),
		"pe":      append([]byte("MZ\x90\x00\x03\x00\x00\x00"), make([]byte, 120)...),
		"mach-o":  append([]byte{0xcf, 0xfa, 0xed, 0xfe, 7, 0, 0, 1}, make([]byte, 24)...),
		"shebang": []byte("#!/bin/sh\nrm -rf /\n"),
		"python":  []byte("#!/usr/bin/env python3\nprint('hi')\n"),
		"zip":     append([]byte("PK\x03\x04\x14\x00\x00\x00\x08\x00"), make([]byte, 40)...),
		"gzip":    append([]byte{0x1f, 0x8b, 8, 0}, make([]byte, 20)...),
		"7z":      append([]byte{'7', 'z', 0xbc, 0xaf, 0x27, 0x1c}, make([]byte, 26)...),
		"rar":     append([]byte("Rar!\x1a\x07\x01\x00"), make([]byte, 20)...),
		"binary":  {0, 1, 2, 3, 4, 5, 250, 251, 252},
	}
	for name, file := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := probe(file)
			if !fault.Is(err, fault.Unsupported) {
				t.Fatalf("err %v, want Unsupported", err)
			}
			if typ, _ := err.(*fault.Error).Extra["type"].(string); typ == "" {
				t.Error("the refusal does not name the sniffed type")
			}
		})
	}
	// A narrower allowed set refuses what the default accepts.
	if _, err := Probe(bytes.NewReader(wavFile(1)), int64(len(wavFile(1))), Allowed{"image/png": true}); !fault.Is(err, fault.Unsupported) {
		t.Errorf("wav with only png allowed: %v", err)
	}
	// An alias is allowed as its type.
	if _, err := Probe(bytes.NewReader(wavFile(1)), int64(len(wavFile(1))), Allowed{"audio/x-wav": true}); err != nil {
		t.Errorf("wav allowed as audio/x-wav: %v", err)
	}
}

func TestProbeRefusesBombs(t *testing.T) {
	tests := map[string][]byte{
		"png 100000×100000":   pngBomb(100_000, 100_000),
		"png 40000×10":        pngBomb(40_000, 10),
		"png 8000×8000":       pngBomb(8000, 8000),
		"webp 16384×16384":    webpFile(16_384, 16_384),
		"avif 20000×20000":    avifFile(20_000, 20_000),
		"svg 50000 wide":      []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="50000" height="10"></svg>`),
		"png 2147483647 high": pngBomb(1, 1<<31-1),
	}
	for name, file := range tests {
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			_, err := probe(file)
			if !fault.Is(err, fault.TooLarge) {
				t.Fatalf("err %v, want TooLarge", err)
			}
			if d := time.Since(start); d > 100*time.Millisecond {
				t.Errorf("took %v", d)
			}
		})
	}
	small := pngBomb(2000, 2000)
	if _, err := (Options{MaxPixels: 1_000_000}).Probe(bytes.NewReader(small), int64(len(small))); !fault.Is(err, fault.TooLarge) {
		t.Errorf("2000×2000 over a 1 MP limit: %v", err)
	}
	if _, err := probe(small); err != nil {
		t.Errorf("2000×2000 within the default limit: %v", err)
	}
}

func TestProbeRefusesBrokenFiles(t *testing.T) {
	jpg := encoded(t, "jpeg", 64, 48)
	mp4 := mp4File("isom", mvhd(0, 1000, 5000))
	tests := map[string][]byte{
		"empty":                {},
		"truncated jpeg":       jpg[:40],
		"truncated png":        pngBomb(10, 10)[:20],
		"mp4 without moov":     mp4Box("ftyp", []byte("isom"), u32(0), []byte("isommp41")),
		"truncated mp4":        mp4[:len(mp4)-30],
		"mp4 box size too big": cat(mp4Box("ftyp", []byte("isom"), u32(0), []byte("isom")), u32(1<<30), []byte("moov"), make([]byte, 16)),
		"wav without fmt":      cat([]byte("RIFF"), le32(12), []byte("WAVEdata"), le32(0)),
		"short flac":           []byte("fLaC\x00\x00\x00\x22\x10\x00"),
		"truncated avif":       avifFile(10, 10)[:60],
		"png over its limits":  pngBomb(1, 0xffffffff), // PNG sides are at most 2³¹-1
	}
	for name, file := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := probe(file)
			if !fault.Is(err, fault.Invalid) {
				t.Fatalf("err %v, want Invalid", err)
			}
		})
	}
}
