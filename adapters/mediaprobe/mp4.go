package mediaprobe

import (
	"encoding/binary"
	"io"
	"time"
)

// ISO base media (MP4, QuickTime, M4A, AVIF) boxes: a 32-bit size
// (including the 8-byte header; 1: a 64-bit size follows; 0: to the end of
// the parent), a 4-character type, then the payload. The walk is bounded:
// no box may end past its parent, nesting is at most maxDepth, and at most
// maxBoxes headers are read in all.
const (
	maxDepth = 8
	maxBoxes = 10_000
)

type box struct {
	typ        string
	start, end int64 // the whole box
	payload    int64 // where its payload starts
}

// walker reads boxes from r, counting them against maxBoxes.
type walker struct {
	r     *io.SectionReader
	count int
}

// each calls fn for each box in [start, end), depth levels down. fn's
// error stops the walk.
func (w *walker) each(start, end int64, depth int, fn func(b box) error) error {
	if depth > maxDepth {
		return errMP4
	}
	var hdr [16]byte
	for off := start; off < end; {
		if w.count++; w.count > maxBoxes {
			return errMP4
		}
		if end-off < 8 {
			return errMP4
		}
		if err := readFull(w.r, hdr[:8], off); err != nil {
			return errMP4
		}
		size := int64(binary.BigEndian.Uint32(hdr[:4]))
		b := box{typ: string(hdr[4:8]), start: off, payload: off + 8}
		switch size {
		case 0:
			size = end - off
		case 1:
			if err := readFull(w.r, hdr[8:16], off+8); err != nil {
				return errMP4
			}
			big := binary.BigEndian.Uint64(hdr[8:16])
			if big > uint64(end-off) {
				return errMP4
			}
			size, b.payload = int64(big), off+16
		}
		if size < b.payload-off || size > end-off {
			return errMP4
		}
		b.end = off + size
		if err := fn(b); err != nil {
			return err
		}
		off = b.end
	}
	return nil
}

// errMP4 is a box structure cut short or broken.
var errMP4 = truncated("MP4 file")

type mp4Info struct {
	duration      time.Duration
	width, height int // of the first track that has a size
}

// readMP4 reads the duration (moov/mvhd) and the size of the first visual
// track (moov/trak/tkhd) of an MP4 or QuickTime file. A file without a
// moov box is truncated (or not an MP4).
func readMP4(r *io.SectionReader) (mp4Info, error) {
	w := &walker{r: r}
	var info mp4Info
	found := false
	err := w.each(0, r.Size(), 0, func(b box) error {
		if b.typ != "moov" {
			return nil
		}
		found = true
		return w.each(b.payload, b.end, 1, func(c box) error {
			switch c.typ {
			case "mvhd":
				info.duration = mvhdDuration(r, c)
			case "trak":
				if info.width == 0 {
					return w.each(c.payload, c.end, 2, func(d box) error {
						if d.typ == "tkhd" {
							info.width, info.height = tkhdSize(r, d)
						}
						return nil
					})
				}
			}
			return nil
		})
	})
	if err != nil {
		return mp4Info{}, err
	}
	if !found {
		return mp4Info{}, errMP4
	}
	return info, nil
}

// maxDuration is the longest duration believed (longer is taken as 0).
const maxDuration = 1000 * time.Hour

// mvhdDuration reads a movie header: version 0 has 32-bit times, version
// 1 64-bit. 0 when unknown or unreadable.
func mvhdDuration(r *io.SectionReader, b box) time.Duration {
	var buf [32]byte
	if b.end-b.payload < 20 || readFull(r, buf[:min(32, b.end-b.payload)], b.payload) != nil {
		return 0
	}
	var scale, d uint64
	switch buf[0] {
	case 0:
		scale = uint64(binary.BigEndian.Uint32(buf[12:16]))
		d = uint64(binary.BigEndian.Uint32(buf[16:20]))
		if d == 0xffffffff {
			return 0
		}
	case 1:
		if b.end-b.payload < 32 {
			return 0
		}
		scale = uint64(binary.BigEndian.Uint32(buf[20:24]))
		d = binary.BigEndian.Uint64(buf[24:32])
	default:
		return 0
	}
	return ticks(d, scale)
}

// ticks is d units of 1/scale second, 0 when unknown or implausible.
func ticks(d, scale uint64) time.Duration {
	if scale == 0 || d/scale > uint64(maxDuration/time.Second) {
		return 0
	}
	return time.Duration(d/scale)*time.Second + time.Duration((d%scale)*uint64(time.Second)/scale)
}

// tkhdSize reads a track header's width and height (16.16 fixed point,
// after a version-dependent prefix).
func tkhdSize(r *io.SectionReader, b box) (int, int) {
	var v [1]byte
	if readFull(r, v[:], b.payload) != nil {
		return 0, 0
	}
	off := int64(76) // version 0: 4 + 20 + 52 bytes before width
	if v[0] == 1 {
		off = 88
	}
	var wh [8]byte
	if b.payload+off+8 > b.end || readFull(r, wh[:], b.payload+off) != nil {
		return 0, 0
	}
	return int(binary.BigEndian.Uint32(wh[:4]) >> 16), int(binary.BigEndian.Uint32(wh[4:]) >> 16)
}

// avifSize reads the largest image spatial extent (meta/iprp/ipco/ispe)
// of an AVIF: the primary image's size.
func avifSize(r *io.SectionReader) (int, int, error) {
	w := &walker{r: r}
	var width, height int
	path := []string{"meta", "iprp", "ipco", "ispe"}
	var descend func(start, end int64, depth int) error
	descend = func(start, end int64, depth int) error {
		return w.each(start, end, depth, func(b box) error {
			if b.typ != path[depth] {
				return nil
			}
			if b.typ == "meta" { // a full box: version and flags first
				b.payload += 4
			}
			if b.typ != "ispe" {
				return descend(b.payload, b.end, depth+1)
			}
			var buf [12]byte
			if b.end-b.payload < 12 || readFull(r, buf[:], b.payload) != nil {
				return errMP4
			}
			iw, ih := int(binary.BigEndian.Uint32(buf[4:8])), int(binary.BigEndian.Uint32(buf[8:12]))
			if int64(iw)*int64(ih) > int64(width)*int64(height) {
				width, height = iw, ih
			}
			return nil
		})
	}
	if err := descend(0, r.Size(), 0); err != nil {
		return 0, 0, truncated("AVIF image")
	}
	return width, height, nil
}
