package imaging

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"sync"
	"time"

	"github.com/davidbyttow/govips/v2/vips"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

// Options configure an Engine. A zero field takes its default.
type Options struct {
	// Concurrency is how many transforms run at once (default: the
	// number of CPUs). Each runs libvips on one thread.
	Concurrency int
	// QueueWait is how long a transform waits for a free slot before it
	// is refused with fault.Unavailable (default 2s).
	QueueWait time.Duration
	// MaxSourcePixels refuses larger sources before decoding them
	// (default 50 megapixels).
	MaxSourcePixels int64
	// MaxSourceBytes refuses larger sources before reading them all
	// (default 100 MiB).
	MaxSourceBytes int64
	// Bounds limit the requested size and the output (default
	// media.DefaultBounds).
	Bounds media.Bounds
	// CacheOps is how many operations libvips keeps in its cache
	// (default 0: off; the derived images are stored, not recomputed).
	CacheOps int
	// Logger receives the start-up notes (AVIF support); nil: slog.Default().
	Logger *slog.Logger
}

// Engine makes transforms with libvips. It is safe for concurrent use.
type Engine struct {
	opt   Options
	slots chan struct{}
	avif  bool
}

var startup sync.Once

// New starts libvips (once per process) and returns an engine.
func New(opt Options) (*Engine, error) {
	if opt.Concurrency <= 0 {
		opt.Concurrency = runtime.NumCPU()
	}
	if opt.QueueWait <= 0 {
		opt.QueueWait = 2 * time.Second
	}
	if opt.MaxSourcePixels <= 0 {
		opt.MaxSourcePixels = 50_000_000
	}
	if opt.MaxSourceBytes <= 0 {
		opt.MaxSourceBytes = 100 << 20
	}
	if opt.Bounds.MaxWidth <= 0 {
		opt.Bounds.MaxWidth = media.DefaultBounds.MaxWidth
	}
	if opt.Bounds.MaxHeight <= 0 {
		opt.Bounds.MaxHeight = media.DefaultBounds.MaxHeight
	}
	if opt.Bounds.MaxPixels <= 0 {
		opt.Bounds.MaxPixels = media.DefaultBounds.MaxPixels
	}
	if opt.Logger == nil {
		opt.Logger = slog.Default()
	}
	startup.Do(func() {
		vips.LoggingSettings(nil, vips.LogLevelWarning)
		vips.Startup(&vips.Config{ConcurrencyLevel: 1, MaxCacheSize: opt.CacheOps, MaxCacheMem: 0, MaxCacheFiles: 0})
	})
	e := &Engine{opt: opt, slots: make(chan struct{}, opt.Concurrency)}
	e.avif = canEncodeAVIF()
	if !e.avif {
		opt.Logger.Warn("imaging: this libvips cannot encode AVIF; AVIF requests get WebP", "libvips", vips.Version)
	}
	return e, nil
}

// AVIF reports whether the engine encodes AVIF (else it serves WebP).
func (e *Engine) AVIF() bool { return e.avif }

func canEncodeAVIF() bool {
	img, err := vips.Black(8, 8)
	if err != nil {
		return false
	}
	defer img.Close()
	out, _, err := img.ExportAvif(&vips.AvifExportParams{Quality: 50, Bitdepth: 8, Effort: avifEffort})
	return err == nil && len(out) > 0
}

// acquire waits for a free slot, at most QueueWait.
func (e *Engine) acquire(ctx context.Context) (release func(), err error) {
	t := time.NewTimer(e.opt.QueueWait)
	defer t.Stop()
	select {
	case e.slots <- struct{}{}:
		return func() { <-e.slots }, nil
	case <-t.C:
		return nil, fault.New(fault.Unavailable, "the image server is busy; try again shortly")
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// sourceTypes are the images the engine decodes; anything else (BMP,
// TIFF, PDF, HEIC...) is refused before libvips sees it.
var sourceTypes = map[vips.ImageType]string{
	vips.ImageTypeJPEG: "JPEG", vips.ImageTypePNG: "PNG", vips.ImageTypeGIF: "GIF",
	vips.ImageTypeWEBP: "WebP", vips.ImageTypeAVIF: "AVIF", vips.ImageTypeSVG: "SVG",
}

// Transform makes t from the image read from src and returns its bytes
// and MIME type. t is validated against the engine's bounds; a source
// that is not an image of a supported type is fault.Unsupported, a
// broken one fault.Invalid, one over MaxSourcePixels or MaxSourceBytes
// (or whose result would exceed the bounds) fault.TooLarge, a busy
// engine fault.Unavailable. Metadata is stripped and EXIF orientation
// applied; an animated image gives its first frame; SameFormat gives the
// source's format (PNG for GIF and SVG).
func (e *Engine) Transform(ctx context.Context, src io.Reader, t media.Transform) ([]byte, string, error) {
	if err := t.Validate(e.opt.Bounds); err != nil {
		return nil, "", err
	}
	// A slot first: requests waiting for one hold no source in memory.
	release, err := e.acquire(ctx)
	if err != nil {
		return nil, "", err
	}
	defer release()
	buf, err := readSource(src, e.opt.MaxSourceBytes)
	if err != nil {
		return nil, "", fmt.Errorf("imaging: read source: %w", err)
	}
	if int64(len(buf)) > e.opt.MaxSourceBytes {
		return nil, "", fault.New(fault.TooLarge, "the image is larger than %d bytes", e.opt.MaxSourceBytes)
	}
	typ := vips.DetermineImageType(buf)
	name, ok := sourceTypes[typ]
	if !ok {
		return nil, "", fault.New(fault.Unsupported, "the file is not an image that can be transformed (JPEG, PNG, GIF, WebP, AVIF or SVG)")
	}
	sw, sh, err := e.header(buf, name)
	if err != nil {
		return nil, "", err
	}
	t = t.Normalized()
	if t.Format == media.SameFormat {
		t = t.Resolve(map[vips.ImageType]string{vips.ImageTypeJPEG: "image/jpeg",
			vips.ImageTypeWEBP: "image/webp", vips.ImageTypeAVIF: "image/avif"}[typ])
	}
	p := planFor(sw, sh, t)
	if ow, oh := p.output(); int64(ow)*int64(oh) > e.opt.Bounds.MaxPixels {
		return nil, "", fault.New(fault.TooLarge, "the result would be %d×%d pixels, more than the %d allowed", ow, oh, e.opt.Bounds.MaxPixels)
	}
	return e.run(buf, name, p, t)
}

// header reads the source's size from its header only, honouring EXIF
// orientation, and refuses sources over MaxSourcePixels.
func (e *Engine) header(buf []byte, name string) (w, h int, err error) {
	ref, err := vips.LoadImageFromBuffer(buf, vips.NewImportParams())
	if err != nil {
		return 0, 0, fault.Invalidf("the file is truncated or not a valid %s image", name)
	}
	defer ref.Close()
	w, h = ref.Width(), ref.PageHeight()
	if o := ref.Orientation(); o >= 5 && o <= 8 {
		w, h = h, w
	}
	if w <= 0 || h <= 0 {
		return 0, 0, fault.Invalidf("the file is truncated or not a valid %s image", name)
	}
	if int64(w)*int64(h) > e.opt.MaxSourcePixels {
		return 0, 0, fault.New(fault.TooLarge, "image of %d×%d pixels is larger than the %d pixels allowed", w, h, e.opt.MaxSourcePixels)
	}
	return w, h, nil
}

// run decodes (shrinking on load), crops, converts to sRGB and encodes.
func (e *Engine) run(buf []byte, name string, p plan, t media.Transform) ([]byte, string, error) {
	img, err := vips.LoadThumbnailFromBuffer(buf, p.w, p.h, p.crop, p.size, nil)
	if err != nil {
		return nil, "", fault.Invalidf("the file is truncated or not a valid %s image", name)
	}
	defer img.Close()
	if p.cropW > 0 {
		l, tp := p.offset(img.Width(), img.Height())
		if err := img.ExtractArea(l, tp, min(p.cropW, img.Width()), min(p.cropH, img.Height())); err != nil {
			return nil, "", fmt.Errorf("imaging: crop: %w", err)
		}
	}
	if err := toSRGB(img); err != nil {
		return nil, "", err
	}
	return e.encode(img, t)
}

func toSRGB(img *vips.ImageRef) error {
	if img.HasICCProfile() {
		if err := img.TransformICCProfile(vips.SRGBIEC6196621ICCProfilePath); err != nil {
			return fmt.Errorf("imaging: colour profile: %w", err)
		}
	}
	switch img.Interpretation() {
	case vips.InterpretationSRGB, vips.InterpretationBW:
		return nil
	}
	if err := img.ToColorSpace(vips.InterpretationSRGB); err != nil {
		return fmt.Errorf("imaging: to sRGB: %w", err)
	}
	return nil
}

func (e *Engine) encode(img *vips.ImageRef, t media.Transform) ([]byte, string, error) {
	var (
		out  []byte
		err  error
		mime string
	)
	format := t.Format
	if format == media.AVIF && !e.avif {
		format = media.WebP
	}
	switch format {
	case media.JPEG:
		if img.HasAlpha() {
			if err := img.Flatten(&vips.Color{R: 255, G: 255, B: 255}); err != nil {
				return nil, "", fmt.Errorf("imaging: flatten: %w", err)
			}
		}
		out, _, err = img.ExportJpeg(&vips.JpegExportParams{StripMetadata: true, Quality: t.Quality,
			Interlace: true, OptimizeCoding: true})
		mime = "image/jpeg"
	case media.PNG:
		out, _, err = img.ExportPng(&vips.PngExportParams{StripMetadata: true, Compression: 6})
		mime = "image/png"
	case media.WebP:
		out, _, err = img.ExportWebp(&vips.WebpExportParams{StripMetadata: true, Quality: t.Quality, ReductionEffort: 4})
		mime = "image/webp"
	case media.AVIF:
		out, _, err = img.ExportAvif(&vips.AvifExportParams{StripMetadata: true, Quality: t.Quality, Bitdepth: 8, Effort: avifEffort})
		mime = "image/avif"
	default:
		return nil, "", errors.New("imaging: no format to encode")
	}
	if err != nil {
		return nil, "", fmt.Errorf("imaging: encode %s: %w", format, err)
	}
	return out, mime, nil
}

// avifEffort is libheif's CPU effort for AVIF, 1 (fast) of 0..9: the
// default (4) took over 0.7 s for a 400×300 image on the benchmark
// machine; 1 is several times faster for slightly larger files.
const avifEffort = 1

// readSource reads at most max+1 bytes of src, in one allocation when src
// says its length (a bytes.Reader, a strings.Reader, a regular file).
func readSource(src io.Reader, max int64) ([]byte, error) {
	if l, ok := src.(interface{ Len() int }); ok && int64(l.Len()) <= max {
		buf := make([]byte, l.Len())
		_, err := io.ReadFull(src, buf)
		return buf, err
	}
	if f, ok := src.(interface{ Stat() (os.FileInfo, error) }); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() && fi.Size() <= max {
			buf := make([]byte, fi.Size())
			_, err := io.ReadFull(src, buf)
			return buf, err
		}
	}
	return io.ReadAll(io.LimitReader(src, max+1))
}
