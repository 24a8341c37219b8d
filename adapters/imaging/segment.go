package imaging

import (
	"strings"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

// segmentKeys maps a Cloudinary-style component's key to a field.
var segmentKeys = map[string]string{
	"w": "w", "h": "h", "c": "fit", "g": "gravity", "q": "q", "f": "format", "t": "preset",
}

// ParseSegment reads a transform from a path segment in the form of
// Cloudinary: comma-separated `key_value` components,
// `w_400,h_300,c_fill,g_north,q_80,f_webp`, or a preset `t_thumb` (which
// the other components then change).
//
// Crop modes: c_fill and c_lfill → cover, c_fit → contain, c_scale →
// fill, c_limit → inside, c_thumb → cover with smart gravity unless a
// g_ is given. g_auto → smart; f_auto → the source's format; q_auto →
// the default quality.
//
// ok is false when seg is not a transform segment (a file name): its
// first component has no known key, or it has a dot. A segment that
// starts like a transform but has an unknown component or a bad value is
// a fault.Invalid naming it.
func (p Presets) ParseSegment(seg string) (t media.Transform, ok bool, err error) {
	if seg == "" || strings.Contains(seg, ".") {
		return t, false, nil
	}
	parts := strings.Split(seg, ",")
	if k, _, found := strings.Cut(parts[0], "_"); !found || segmentKeys[k] == "" {
		return t, false, nil
	}
	// The preset first, wherever it is, so the other components change it.
	thumb, gravity := false, false
	for _, part := range parts {
		if k, v, _ := strings.Cut(part, "_"); k == "t" {
			if t, err = p.get(v); err != nil {
				return t, true, err
			}
		}
	}
	for _, part := range parts {
		k, v, found := strings.Cut(part, "_")
		field := segmentKeys[k]
		if !found || field == "" || v == "" {
			return t, true, fault.Invalidf("unknown transform component %q", part).With("field", part)
		}
		switch field {
		case "preset":
			continue
		case "fit":
			thumb = thumb || v == "thumb"
		case "gravity":
			gravity = true
		}
		if err := set(&t, field, v, segmentFit, segmentGravity, queryFormat); err != nil {
			return t, true, err
		}
	}
	if thumb && !gravity {
		t.Gravity = media.Smart
	}
	return t, true, nil
}
