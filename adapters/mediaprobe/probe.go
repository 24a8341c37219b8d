// Package mediaprobe tells what an uploaded file is from its bytes only
// (never its name or the type the client declares): its MIME type, kind,
// and, read from headers without decoding, an image's or a video's size
// and an audio's or a video's duration. It refuses types that are not
// allowed (executables, scripts, archives, which covers zip bombs) and
// images whose declared size is a decompression bomb.
//
// Why github.com/gabriel-vasile/mimetype: it sniffs some 170 formats
// from the first 3 KB, in pure Go with no dependencies, tells MP4 from
// QuickTime, M4A and AVIF, and scripts from plain text (net/http's
// DetectContentType knows about 40 and calls all of those
// application/octet-stream or text/plain). golang.org/x/image/webp gives
// WebP's header to image.DecodeConfig; MP4, AVIF, WAV, FLAC and MP3
// headers are read here, bounded by the file's size.
package mediaprobe

import (
	"errors"
	"fmt"
	"image"
	_ "image/gif"  // registers GIF for image.DecodeConfig
	_ "image/jpeg" // registers JPEG
	_ "image/png"  // registers PNG
	"io"
	"strings"

	"github.com/gabriel-vasile/mimetype"
	_ "golang.org/x/image/webp" // registers WebP

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

// Allowed is a set of MIME types (as mimetype names them, or an alias).
type Allowed map[string]bool

// DefaultAllowed are the types a media library accepts: web images,
// video, audio, and the documents HALO accepted (text, PDF, HTML, CSV).
func DefaultAllowed() Allowed {
	return Allowed{
		"image/jpeg": true, "image/png": true, "image/gif": true, "image/webp": true,
		"image/avif": true, "image/svg+xml": true,
		"video/mp4": true, "video/quicktime": true, "video/webm": true,
		"audio/mpeg": true, "audio/mp4": true, "audio/x-m4a": true, "audio/ogg": true,
		"audio/wav": true, "audio/x-wav": true, "audio/flac": true,
		"application/pdf": true, "text/plain": true, "text/html": true, "text/csv": true,
	}
}

// DefaultMaxPixels is the largest image (width×height) accepted.
const DefaultMaxPixels = 50_000_000

// MaxSide is the largest width or height of an image accepted.
const MaxSide = 30_000

// Options configure a probe.
type Options struct {
	Allowed   Allowed // nil: DefaultAllowed()
	MaxPixels int64   // 0: DefaultMaxPixels
}

// Probe reads what the size bytes of r are, with the default limits and
// the allowed types; see Options.Probe.
func Probe(r io.ReadSeeker, size int64, allowed Allowed) (media.Probed, error) {
	return Options{Allowed: allowed}.Probe(r, size)
}

// canonical names some sniffed types by their registered name.
var canonical = map[string]string{"audio/x-m4a": "audio/mp4", "audio/x-wav": "audio/wav"}

// Probe reads what the size bytes of r are. A type not allowed is a
// fault.Unsupported naming it; an image larger than MaxSide a side or
// MaxPixels in all is a fault.TooLarge; a file whose header is cut short
// or broken is a fault.Invalid. Nothing is decoded beyond headers, and
// nothing is read past size.
func (o Options) Probe(r io.ReadSeeker, size int64) (media.Probed, error) {
	if o.Allowed == nil {
		o.Allowed = DefaultAllowed()
	}
	if o.MaxPixels <= 0 {
		o.MaxPixels = DefaultMaxPixels
	}
	if size <= 0 {
		return media.Probed{}, fault.Invalidf("the file is empty")
	}
	head := make([]byte, min(size, 3072))
	if _, err := r.Seek(0, io.SeekStart); err != nil {
		return media.Probed{}, fmt.Errorf("mediaprobe: %w", err)
	}
	if _, err := io.ReadFull(r, head); err != nil {
		return media.Probed{}, fmt.Errorf("mediaprobe: read the head: %w", err)
	}
	m := mimetype.Detect(head)
	name, _, _ := strings.Cut(m.String(), ";")
	if !o.allowed(m) {
		return media.Probed{}, fault.New(fault.Unsupported, "files of type %s are not accepted", name).With("type", name)
	}
	if c, ok := canonical[name]; ok {
		name = c
	}
	p := media.Probed{MIME: name, Ext: m.Extension(), Kind: kindOf(name)}
	sr := io.NewSectionReader(readerAt{r}, 0, size)
	if err := o.details(&p, sr, head); err != nil {
		return media.Probed{}, err
	}
	return p, nil
}

func (o Options) allowed(m *mimetype.MIME) bool {
	for t := range o.Allowed {
		if m.Is(t) {
			return true
		}
	}
	return false
}

func kindOf(mime string) media.Kind {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return media.Image
	case strings.HasPrefix(mime, "video/"):
		return media.Video
	case strings.HasPrefix(mime, "audio/"):
		return media.Audio
	}
	return media.Document
}

// truncated is the fault for a header cut short or broken.
func truncated(what string) error {
	return fault.Invalidf("the file is truncated or not a valid %s", what)
}

// details fills in size and duration from the headers.
func (o Options) details(p *media.Probed, r *io.SectionReader, head []byte) error {
	var err error
	switch p.MIME {
	case "image/jpeg", "image/png", "image/gif", "image/webp":
		var cfg image.Config
		cfg, _, err = image.DecodeConfig(io.NewSectionReader(r, 0, r.Size()))
		if err != nil {
			return truncated(strings.ToUpper(strings.TrimPrefix(p.MIME, "image/")) + " image")
		}
		p.Width, p.Height = cfg.Width, cfg.Height
	case "image/avif":
		p.Width, p.Height, err = avifSize(r)
	case "image/svg+xml":
		p.Width, p.Height = svgSize(head)
	case "video/mp4", "video/quicktime", "audio/mp4":
		var info mp4Info
		info, err = readMP4(r)
		p.Duration = info.duration
		if p.Kind == media.Video {
			p.Width, p.Height = info.width, info.height
		}
	case "audio/wav":
		p.Duration, err = wavDuration(r)
	case "audio/flac":
		p.Duration, err = flacDuration(r)
	case "audio/mpeg":
		p.Duration = mp3Duration(r)
	}
	if err != nil {
		return err
	}
	if p.Kind == media.Image {
		return o.checkPixels(p.Width, p.Height)
	}
	return nil
}

func (o Options) checkPixels(w, h int) error {
	if w > MaxSide || h > MaxSide || int64(w)*int64(h) > o.MaxPixels {
		return fault.New(fault.TooLarge, "image of %d×%d pixels is larger than %d pixels a side or %d pixels in all",
			w, h, MaxSide, o.MaxPixels)
	}
	return nil
}

// readerAt reads at an offset of an io.ReadSeeker (not concurrently).
type readerAt struct{ r io.ReadSeeker }

func (a readerAt) ReadAt(p []byte, off int64) (int, error) {
	if _, err := a.r.Seek(off, io.SeekStart); err != nil {
		return 0, err
	}
	return io.ReadFull(a.r, p)
}

// readFull reads len(p) bytes at off; a short read is io.ErrUnexpectedEOF.
func readFull(r *io.SectionReader, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		err = io.ErrUnexpectedEOF
	}
	return err
}
