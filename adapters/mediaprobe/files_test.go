package mediaprobe

import (
	"bytes"
	"encoding/binary"
	"hash/crc32"
	"image"
	"image/gif"
	"image/jpeg"
	"image/png"
	"testing"
)

// Test files, written here byte by byte: no binary fixtures.

func u16(v uint16) []byte  { return binary.BigEndian.AppendUint16(nil, v) }
func u32(v uint32) []byte  { return binary.BigEndian.AppendUint32(nil, v) }
func u64(v uint64) []byte  { return binary.BigEndian.AppendUint64(nil, v) }
func le16(v uint16) []byte { return binary.LittleEndian.AppendUint16(nil, v) }
func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

func cat(parts ...[]byte) []byte { return bytes.Join(parts, nil) }

// mp4Box is an ISO box of the given type and payload.
func mp4Box(typ string, payload ...[]byte) []byte {
	p := cat(payload...)
	return cat(u32(uint32(8+len(p))), []byte(typ), p)
}

// mvhd is a movie header box of the given version.
func mvhd(version byte, scale uint32, duration uint64) []byte {
	if version == 1 {
		return mp4Box("mvhd", []byte{1, 0, 0, 0}, u64(0), u64(0), u32(scale), u64(duration), make([]byte, 80))
	}
	return mp4Box("mvhd", []byte{0, 0, 0, 0}, u32(0), u32(0), u32(scale), u32(uint32(duration)), make([]byte, 80))
}

// tkhd is a version 0 track header of the given size.
func tkhd(w, h uint32) []byte {
	return mp4Box("tkhd", []byte{0, 0, 0, 7}, make([]byte, 72), u32(w<<16), u32(h<<16))
}

// mp4File is an MP4 (or QuickTime, M4A by brand) with an mdat before the
// moov, as a camera writes it.
func mp4File(brand string, moov ...[]byte) []byte {
	return cat(mp4Box("ftyp", []byte(brand), u32(0), []byte(brand), []byte("mp41")),
		mp4Box("mdat", make([]byte, 100)),
		mp4Box("moov", moov...))
}

// avifFile is an AVIF whose primary image is w×h.
func avifFile(w, h uint32) []byte {
	ispe := mp4Box("ispe", u32(0), u32(w), u32(h))
	return cat(mp4Box("ftyp", []byte("avif"), u32(0), []byte("avifmif1miaf")),
		mp4Box("meta", u32(0), mp4Box("hdlr", make([]byte, 24)),
			mp4Box("iprp", mp4Box("ipco", mp4Box("colr", make([]byte, 8)), ispe))),
		mp4Box("mdat", make([]byte, 32)))
}

// wavFile is a 16-bit stereo 44.1 kHz WAV holding seconds of silence.
func wavFile(seconds int) []byte {
	const byteRate = 44100 * 4
	data := make([]byte, seconds*byteRate)
	fmtChunk := cat([]byte("fmt "), le32(16), le16(1), le16(2), le32(44100), le32(byteRate), le16(4), le16(16))
	body := cat([]byte("WAVE"), fmtChunk, []byte("LIST"), le32(3), []byte("abc\x00"), []byte("data"), le32(uint32(len(data))), data)
	return cat([]byte("RIFF"), le32(uint32(len(body))), body)
}

// flacFile is a FLAC header with STREAMINFO for samples at rate.
func flacFile(rate uint32, samples uint64) []byte {
	packed := uint64(rate)<<44 | uint64(1)<<41 | uint64(15)<<36 | samples
	info := cat(u16(4096), u16(4096), make([]byte, 6), u64(packed), make([]byte, 16))
	return cat([]byte("fLaC"), []byte{0, 0, 0, 34}, info, []byte{0x81, 0, 0, 16}, make([]byte, 16)) // STREAMINFO, then the last block (padding)
}

// mp3Frames is an ID3v2 tag and n MPEG-1 layer III frames of 128 kbit/s
// at 44.1 kHz stereo (417 bytes each), the first a Xing header when
// xingFrames > 0.
func mp3Frames(n int, xingFrames uint32) []byte {
	hdr := []byte{0xff, 0xfb, 0x90, 0x00}
	frame := func() []byte { return cat(hdr, make([]byte, 413)) }
	out := cat([]byte("ID3\x03\x00\x00"), []byte{0, 0, 0, 10}, make([]byte, 10))
	if xingFrames > 0 {
		f := frame()
		copy(f[36:], cat([]byte("Xing"), u32(1), u32(xingFrames)))
		out = append(out, f...)
	}
	for range n {
		out = append(out, frame()...)
	}
	return out
}

// pngBomb is a PNG that declares w×h pixels but holds a few bytes.
func pngBomb(w, h uint32) []byte {
	chunk := func(typ string, data []byte) []byte {
		c := cat([]byte(typ), data)
		return cat(u32(uint32(len(data))), c, u32(crc32.ChecksumIEEE(c)))
	}
	ihdr := cat(u32(w), u32(h), []byte{8, 2, 0, 0, 0})
	return cat([]byte("\x89PNG\r\n\x1a\n"), chunk("IHDR", ihdr),
		chunk("IDAT", []byte{0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01}), chunk("IEND", nil))
}

// webpFile is a lossless WebP header (VP8L) declaring w×h.
func webpFile(w, h uint32) []byte {
	bits := (w - 1) | (h-1)<<14
	vp8l := cat([]byte{0x2f}, le32(bits), make([]byte, 16))
	body := cat([]byte("WEBP"), []byte("VP8L"), le32(uint32(len(vp8l))), vp8l)
	return cat([]byte("RIFF"), le32(uint32(len(body))), body)
}

func encoded(t testing.TB, format string, w, h int) []byte {
	t.Helper()
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	var b bytes.Buffer
	var err error
	switch format {
	case "jpeg":
		err = jpeg.Encode(&b, img, nil)
	case "png":
		err = png.Encode(&b, img)
	case "gif":
		err = gif.Encode(&b, img, nil)
	}
	if err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}
