// Package imaging turns the wire forms of an image transform (a query
// string like Directus's, a path segment like Cloudinary's, a named
// preset) into a media.Transform, decides whether a request may make it
// (presets, signatures like imgproxy's, a set of allowed sizes), and makes
// it with libvips through govips.
//
// Why libvips (github.com/davidbyttow/govips/v2): it shrinks JPEGs while
// decoding them, streams the image through the pipeline instead of
// holding whole bitmaps, encodes WebP and AVIF (pure Go has neither
// encoder), and was measured several times faster and lighter than pure
// Go on the same resize (bench_test.go; figures in
// docs/media-transforms.md). golang.org/x/image and
// github.com/disintegration/imaging are used by the benchmark only, as the
// pure-Go baseline.
package imaging

import (
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

// Presets are named transforms: `t_<name>` in a path segment, `?preset=<name>`
// in a query.
type Presets map[string]media.Transform

// DefaultPresets returns thumb (200×200 cover), small (400 wide), medium
// (800 wide) and large (1600 wide), all WebP.
func DefaultPresets() Presets {
	return Presets{
		"thumb":  {Width: 200, Height: 200, Fit: media.Cover, Format: media.WebP},
		"small":  {Width: 400, Format: media.WebP},
		"medium": {Width: 800, Format: media.WebP},
		"large":  {Width: 1600, Format: media.WebP},
	}
}

// Has reports whether t makes the same image as one of the presets.
func (p Presets) Has(t media.Transform) bool {
	c := t.Canonical()
	for _, pt := range p {
		if pt.Canonical() == c {
			return true
		}
	}
	return false
}

func (p Presets) get(name string) (media.Transform, error) {
	t, ok := p[name]
	if !ok {
		names := make([]string, 0, len(p))
		for n := range p {
			names = append(names, n)
		}
		sort.Strings(names)
		return media.Transform{}, fault.Invalidf("unknown preset %q (one of %s)", name, strings.Join(names, ", ")).With("field", "preset")
	}
	return t, nil
}

// ParseQuery reads a transform from a query string with the default
// presets; see Presets.ParseQuery.
func ParseQuery(q url.Values) (media.Transform, error) { return DefaultPresets().ParseQuery(q) }

// ParseSegment reads a transform from a path segment with the default
// presets; see Presets.ParseSegment.
func ParseSegment(seg string) (media.Transform, bool, error) {
	return DefaultPresets().ParseSegment(seg)
}

// queryKeys maps the query's keys, long and short, to a field.
var queryKeys = map[string]string{
	"width": "w", "w": "w",
	"height": "h", "h": "h",
	"fit":     "fit",
	"gravity": "gravity", "g": "gravity",
	"quality": "q", "q": "q",
	"format": "format", "fm": "format",
	"preset": "preset",
}

// queryIgnored are keys that travel with a transform but are not part of
// it: its signature, the file server's signed-URL parameters (expires,
// signature) and cache busters.
var queryIgnored = map[string]bool{"sig": true, "exp": true, "expires": true, "signature": true, "download": true, "v": true}

// ParseQuery reads a transform from a query string in the form of
// Directus: `?width=400&height=300&fit=cover&gravity=north&quality=80&format=webp`,
// or the short keys w, h, fit, g, q, fm. `preset=<name>` starts from a
// preset, which the other keys then change. Any other key (except sig,
// exp, download and v) is a fault.Invalid naming it. The result is not
// validated against bounds (Transform.Validate).
func (p Presets) ParseQuery(q url.Values) (media.Transform, error) {
	var t media.Transform
	if names, ok := q["preset"]; ok {
		pt, err := p.get(last(names))
		if err != nil {
			return t, err
		}
		t = pt
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		field, ok := queryKeys[k]
		if !ok {
			if queryIgnored[k] {
				continue
			}
			return t, fault.Invalidf("unknown transform parameter %q", k).With("field", k)
		}
		if field == "preset" {
			continue
		}
		if err := set(&t, field, last(q[k]), queryFit, queryGravity, queryFormat); err != nil {
			return t, err
		}
	}
	return t, nil
}

func last(v []string) string {
	if len(v) == 0 {
		return ""
	}
	return v[len(v)-1]
}

// The values each wire form gives a field, to the spec's values.
var (
	queryFit = map[string]media.Fit{"cover": media.Cover, "contain": media.Contain,
		"fill": media.Fill, "inside": media.Inside}
	queryGravity = map[string]media.Gravity{"center": media.Center, "centre": media.Center,
		"north": media.North, "south": media.South, "east": media.East, "west": media.West,
		"northeast": media.NorthEast, "northwest": media.NorthWest,
		"southeast": media.SouthEast, "southwest": media.SouthWest,
		"smart": media.Smart, "attention": media.Smart, "auto": media.Smart}
	queryFormat = map[string]media.Format{"jpeg": media.JPEG, "jpg": media.JPEG, "png": media.PNG,
		"webp": media.WebP, "avif": media.AVIF, "auto": media.SameFormat}

	segmentFit = map[string]media.Fit{"fill": media.Cover, "fit": media.Contain,
		"scale": media.Fill, "limit": media.Inside, "thumb": media.Cover, "lfill": media.Cover}
	segmentGravity = map[string]media.Gravity{"center": media.Center, "auto": media.Smart,
		"north": media.North, "south": media.South, "east": media.East, "west": media.West,
		"north_east": media.NorthEast, "north_west": media.NorthWest,
		"south_east": media.SouthEast, "south_west": media.SouthWest,
		"northeast": media.NorthEast, "northwest": media.NorthWest,
		"southeast": media.SouthEast, "southwest": media.SouthWest}
)

// set parses one field's value into t.
func set(t *media.Transform, field, v string,
	fits map[string]media.Fit, gravities map[string]media.Gravity, formats map[string]media.Format) error {
	bad := func(what string) error {
		return fault.Invalidf("%s %q is not valid", what, v).With("field", field)
	}
	switch field {
	case "w", "h", "q":
		if field == "q" && v == "auto" {
			t.Quality = 0
			return nil
		}
		n, err := strconv.Atoi(v)
		if err != nil || n < 0 || n > 1_000_000 {
			return bad(map[string]string{"w": "the width", "h": "the height", "q": "the quality"}[field])
		}
		switch field {
		case "w":
			t.Width = n
		case "h":
			t.Height = n
		default:
			t.Quality = n
		}
	case "fit":
		f, ok := fits[strings.ToLower(v)]
		if !ok {
			return bad("the fit")
		}
		t.Fit = f
	case "gravity":
		g, ok := gravities[strings.ToLower(v)]
		if !ok {
			return bad("the gravity")
		}
		t.Gravity = g
	case "format":
		f, ok := formats[strings.ToLower(v)]
		if !ok {
			return bad("the format")
		}
		t.Format = f
	}
	return nil
}
