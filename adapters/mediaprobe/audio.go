package mediaprobe

import (
	"encoding/binary"
	"io"
	"time"
)

// wavDuration reads a RIFF WAVE file's chunks: the fmt chunk's byte rate
// and the data chunk's size (cut to what the file holds: a stream written
// without knowing its length declares more).
func wavDuration(r *io.SectionReader) (time.Duration, error) {
	bad := truncated("WAV file")
	var hdr [12]byte
	if readFull(r, hdr[:], 0) != nil || string(hdr[8:12]) != "WAVE" {
		return 0, bad
	}
	var byteRate, dataSize uint64
	haveFmt, haveData := false, false
	off := int64(12)
	for n := 0; off+8 <= r.Size() && n < maxBoxes && !haveData; n++ {
		var ch [8]byte
		if readFull(r, ch[:], off) != nil {
			return 0, bad
		}
		size := int64(binary.LittleEndian.Uint32(ch[4:]))
		body := off + 8
		switch string(ch[:4]) {
		case "fmt ":
			var f [12]byte
			if size < 16 || readFull(r, f[:], body) != nil {
				return 0, bad
			}
			byteRate, haveFmt = uint64(binary.LittleEndian.Uint32(f[8:12])), true
		case "data":
			dataSize, haveData = uint64(min(size, r.Size()-body)), true
		}
		off = body + size + size&1 // chunks are padded to an even size
	}
	if !haveFmt || !haveData {
		return 0, bad
	}
	return ticks(dataSize, byteRate), nil
}

// flacDuration reads FLAC's STREAMINFO block (always first): the sample
// rate (20 bits) and the total samples (36 bits; 0: unknown).
func flacDuration(r *io.SectionReader) (time.Duration, error) {
	var b [26]byte
	if readFull(r, b[:], 0) != nil || string(b[:4]) != "fLaC" || b[4]&0x7f != 0 {
		return 0, truncated("FLAC file")
	}
	v := binary.BigEndian.Uint64(b[18:26])
	return ticks(v&(1<<36-1), v>>44), nil
}

// mp3Duration estimates an MP3's duration from its first frame: the
// frame count of a Xing, Info or VBRI header, else the bitrate (constant
// bitrate) and the size. 0 when unsure.
func mp3Duration(r *io.SectionReader) time.Duration {
	start := int64(0)
	var id3 [10]byte
	if readFull(r, id3[:], 0) == nil && string(id3[:3]) == "ID3" {
		s := id3[6:10]
		start = 10 + int64(s[0]&0x7f)<<21 | int64(s[1]&0x7f)<<14 | int64(s[2]&0x7f)<<7 | int64(s[3]&0x7f)
		if id3[5]&0x10 != 0 {
			start += 10 // a footer
		}
	}
	// The first frame: a sync word within the first 64 KB after the tag.
	buf := make([]byte, min(64<<10, max(0, r.Size()-start)))
	n, _ := r.ReadAt(buf, start)
	buf = buf[:n]
	for i := 0; i+4 <= len(buf); i++ {
		if f, ok := parseFrame(buf[i:]); ok {
			return f.duration(buf[i:], r.Size()-start-int64(i)-id3v1(r))
		}
	}
	return 0
}

// id3v1 is the size of an ID3v1 tag at the end of the file (0 or 128).
func id3v1(r *io.SectionReader) int64 {
	var t [3]byte
	if r.Size() >= 128 && readFull(r, t[:], r.Size()-128) == nil && string(t[:]) == "TAG" {
		return 128
	}
	return 0
}

type mp3Frame struct {
	mpeg1   bool
	mono    bool
	bitrate int // bits per second
	rate    int // samples per second
}

var (
	mp3Bitrates1 = [16]int{0, 32, 40, 48, 56, 64, 80, 96, 112, 128, 160, 192, 224, 256, 320, 0}
	mp3Bitrates2 = [16]int{0, 8, 16, 24, 32, 40, 48, 56, 64, 80, 96, 112, 128, 144, 160, 0}
	mp3Rates     = [4]int{44100, 48000, 32000, 0}
)

// parseFrame reads an MPEG audio layer III frame header.
func parseFrame(h []byte) (mp3Frame, bool) {
	if len(h) < 4 || h[0] != 0xff || h[1]&0xe0 != 0xe0 {
		return mp3Frame{}, false
	}
	version, layer := (h[1]>>3)&3, (h[1]>>1)&3
	bi, ri := h[2]>>4, (h[2]>>2)&3
	if version == 1 || layer != 1 || bi == 0 || bi == 15 || ri == 3 {
		return mp3Frame{}, false // reserved, not layer III, free or bad bitrate
	}
	f := mp3Frame{mpeg1: version == 3, mono: h[3]>>6 == 3, rate: mp3Rates[ri]}
	if f.mpeg1 {
		f.bitrate = mp3Bitrates1[bi] * 1000
	} else {
		f.bitrate = mp3Bitrates2[bi] * 1000
		f.rate /= 2
		if version == 0 { // MPEG 2.5
			f.rate /= 2
		}
	}
	return f, true
}

// duration is the stream's duration from its first frame h (and what
// follows) and the audio's size in bytes.
func (f mp3Frame) duration(h []byte, audioBytes int64) time.Duration {
	samples := uint64(1152)
	side := 32
	switch {
	case f.mpeg1 && f.mono:
		side = 17
	case !f.mpeg1:
		samples, side = 576, 17
		if f.mono {
			side = 9
		}
	}
	if x := 4 + side; len(h) >= x+12 {
		tag := string(h[x : x+4])
		if (tag == "Xing" || tag == "Info") && h[x+7]&1 != 0 {
			frames := uint64(binary.BigEndian.Uint32(h[x+8 : x+12]))
			return ticks(frames*samples, uint64(f.rate))
		}
	}
	if len(h) >= 36+18 && string(h[36:40]) == "VBRI" {
		frames := uint64(binary.BigEndian.Uint32(h[50:54]))
		return ticks(frames*samples, uint64(f.rate))
	}
	if audioBytes <= 0 {
		return 0
	}
	return ticks(uint64(audioBytes)*8, uint64(f.bitrate))
}
