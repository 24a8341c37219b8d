package media

import (
	"strconv"
	"strings"

	"github.com/halocms/halocms/domain/fault"
)

// Fit is how an image is sized into a box of Width×Height.
type Fit string

const (
	// Cover scales the image to fill the box and crops what overflows
	// (by Gravity). The default when both sides are given.
	Cover Fit = "cover"
	// Contain scales the image to fit inside the box, keeping its aspect
	// ratio (no letterbox: the result may be smaller on one side).
	Contain Fit = "contain"
	// Fill stretches the image to the box, ignoring its aspect ratio.
	Fill Fit = "fill"
	// Inside is Contain that never enlarges.
	Inside Fit = "inside"
)

// Gravity is the part of an image kept when Cover crops it.
type Gravity string

const (
	Center    Gravity = "center"
	North     Gravity = "north"
	South     Gravity = "south"
	East      Gravity = "east"
	West      Gravity = "west"
	NorthEast Gravity = "northeast"
	NorthWest Gravity = "northwest"
	SouthEast Gravity = "southeast"
	SouthWest Gravity = "southwest"
	// Smart keeps the part most likely to draw attention.
	Smart Gravity = "smart"
)

// Format is the encoding of a transformed image.
type Format string

const (
	// SameFormat keeps the source's format (a GIF or SVG source gives PNG);
	// see Transform.Resolve.
	SameFormat Format = ""
	JPEG       Format = "jpeg"
	PNG        Format = "png"
	WebP       Format = "webp"
	AVIF       Format = "avif"
)

// DefaultQuality is the encoder quality used when a transform names none.
const DefaultQuality = 80

// Transform is a derived image of a file: its size, how it is fitted and
// cropped, and its encoding. The zero Transform is the original file.
type Transform struct {
	Width, Height int     // pixels; 0: from the other side and the aspect ratio
	Fit           Fit     // "" is Cover when both sides are given, else Contain
	Gravity       Gravity // "" is Center
	Quality       int     // 1..100; 0 is DefaultQuality
	Format        Format
}

// Bounds limit the transforms a server agrees to make. A zero field is
// the field of DefaultBounds.
type Bounds struct {
	MaxWidth, MaxHeight int
	MaxPixels           int64 // Width×Height when both are given
}

// DefaultBounds allow up to 4096 pixels a side and 16.8 megapixels.
var DefaultBounds = Bounds{MaxWidth: 4096, MaxHeight: 4096, MaxPixels: 4096 * 4096}

var (
	fits      = map[Fit]bool{Cover: true, Contain: true, Fill: true, Inside: true}
	gravities = map[Gravity]bool{Center: true, North: true, South: true, East: true, West: true,
		NorthEast: true, NorthWest: true, SouthEast: true, SouthWest: true, Smart: true}
	formats = map[Format]bool{SameFormat: true, JPEG: true, PNG: true, WebP: true, AVIF: true}
)

// IsZero reports whether t asks for nothing: the original file.
func (t Transform) IsZero() bool { return t == Transform{} }

// Validate checks t against b: a fault.Invalid naming the field
// ("w", "h", "fit", "gravity", "q", "format") when a value is unknown or
// out of range.
func (t Transform) Validate(b Bounds) error {
	b = b.withDefaults()
	bad := func(field, format string, args ...any) error {
		return fault.Invalidf(format, args...).With("field", field)
	}
	switch {
	case t.Width < 0 || t.Width > b.MaxWidth:
		return bad("w", "the width must be between 1 and %d pixels (got %d)", b.MaxWidth, t.Width)
	case t.Height < 0 || t.Height > b.MaxHeight:
		return bad("h", "the height must be between 1 and %d pixels (got %d)", b.MaxHeight, t.Height)
	case int64(t.Width)*int64(t.Height) > b.MaxPixels:
		return bad("w", "%d×%d pixels is more than the %d allowed", t.Width, t.Height, b.MaxPixels)
	case t.Fit != "" && !fits[t.Fit]:
		return bad("fit", "unknown fit %q (cover, contain, fill or inside)", t.Fit)
	case t.Gravity != "" && !gravities[t.Gravity]:
		return bad("gravity", "unknown gravity %q (center, north, south, east, west, northeast, northwest, southeast, southwest or smart)", t.Gravity)
	case t.Quality < 0 || t.Quality > 100:
		return bad("q", "the quality must be between 1 and 100 (got %d)", t.Quality)
	case !formats[t.Format]:
		return bad("format", "unknown format %q (jpeg, png, webp or avif)", t.Format)
	}
	return nil
}

func (b Bounds) withDefaults() Bounds {
	if b.MaxWidth <= 0 {
		b.MaxWidth = DefaultBounds.MaxWidth
	}
	if b.MaxHeight <= 0 {
		b.MaxHeight = DefaultBounds.MaxHeight
	}
	if b.MaxPixels <= 0 {
		b.MaxPixels = DefaultBounds.MaxPixels
	}
	return b
}

// Normalized returns t with its defaults made explicit and the fields
// that do not change the result set to their defaults, so that two
// transforms giving the same image are equal: with one side only, Cover,
// Contain and Fill all scale to that side (Contain); Gravity matters only
// to Cover with both sides; PNG has no quality. The zero Transform stays
// zero.
func (t Transform) Normalized() Transform {
	if t.IsZero() {
		return t
	}
	if t.Fit == "" {
		t.Fit = Contain
		if t.Width > 0 && t.Height > 0 {
			t.Fit = Cover
		}
	}
	if (t.Width == 0 || t.Height == 0) && t.Fit != Inside {
		t.Fit = Contain
	}
	if t.Width == 0 && t.Height == 0 {
		t.Fit = Contain // no box: only the encoding changes
	}
	if t.Fit != Cover || t.Gravity == "" {
		t.Gravity = Center
	}
	if t.Quality == 0 {
		t.Quality = DefaultQuality
	}
	if t.Format == PNG {
		t.Quality = DefaultQuality
	}
	return t
}

// Resolve returns t with SameFormat replaced by the format served for a
// source of the given MIME type: JPEG, PNG, WebP and AVIF keep theirs,
// anything else (GIF, SVG) gives PNG.
func (t Transform) Resolve(sourceMIME string) Transform {
	if t.Format != SameFormat {
		return t
	}
	switch sourceMIME {
	case "image/jpeg":
		t.Format = JPEG
	case "image/webp":
		t.Format = WebP
	case "image/avif":
		t.Format = AVIF
	default:
		t.Format = PNG
	}
	return t
}

// Canonical is a stable name of t, used as the key of the derived image:
// "w400_h300_ccover_gcenter_q80.webp". Equal transforms (after
// Normalized) give equal names; only [a-z0-9_.] are used. SameFormat
// gives no extension (Resolve first to name a stored image). The zero
// Transform is "original".
func (t Transform) Canonical() string {
	if t.IsZero() {
		return "original"
	}
	n := t.Normalized()
	var s strings.Builder
	s.WriteString("w" + strconv.Itoa(n.Width))
	s.WriteString("_h" + strconv.Itoa(n.Height))
	s.WriteString("_c" + string(n.Fit))
	s.WriteString("_g" + string(n.Gravity))
	s.WriteString("_q" + strconv.Itoa(n.Quality))
	if n.Format != SameFormat {
		s.WriteString("." + string(n.Format))
	}
	return s.String()
}
