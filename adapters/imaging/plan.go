package imaging

import (
	"math"

	"github.com/davidbyttow/govips/v2/vips"

	"github.com/halocms/halocms/domain/media"
)

// maxCoord stands for "no limit" on one side of libvips's thumbnail box
// (VIPS_MAX_COORD).
const maxCoord = 10_000_000

// plan is how a transform of a sw×sh source is made: one libvips
// thumbnail (which shrinks while decoding) into a box, then for Cover
// with a compass gravity a crop.
type plan struct {
	w, h         int // the thumbnail's box
	crop         vips.Interesting
	size         vips.Size
	cropW, cropH int // crop the thumbnail to this by gravity (0: no crop)
	gravity      media.Gravity
	ow, oh       int // the expected result
}

// planFor plans the normalized transform t of a sw×sh source (both > 0,
// after EXIF orientation).
func planFor(sw, sh int, t media.Transform) plan {
	p := plan{crop: vips.InterestingNone, size: vips.SizeBoth, gravity: t.Gravity}
	if t.Fit == media.Inside {
		p.size = vips.SizeDown
	}
	switch {
	case t.Width == 0 && t.Height == 0:
		p.w, p.h = sw, sh
	case t.Height == 0:
		p.w, p.h = t.Width, maxCoord
	case t.Width == 0:
		p.w, p.h = maxCoord, t.Height
	default:
		p.w, p.h = t.Width, t.Height
	}
	p.ow, p.oh = fitInside(sw, sh, p.w, p.h, p.size == vips.SizeDown)
	if t.Width == 0 || t.Height == 0 {
		return p
	}
	switch t.Fit {
	case media.Fill:
		p.size = vips.SizeForce
		p.ow, p.oh = t.Width, t.Height
	case media.Cover:
		p.ow, p.oh = t.Width, t.Height
		switch t.Gravity {
		case media.Center:
			p.crop = vips.InterestingCentre
		case media.Smart:
			p.crop = vips.InterestingAttention
		default:
			// Scale to cover the box, then crop where the gravity says.
			if int64(sw)*int64(t.Height) > int64(sh)*int64(t.Width) {
				p.w, p.h = maxCoord, t.Height
			} else {
				p.w, p.h = t.Width, maxCoord
			}
			p.cropW, p.cropH = t.Width, t.Height
		}
	}
	return p
}

// fitInside is the size of a sw×sh image scaled to fit a bw×bh box,
// never enlarged when down is set.
func fitInside(sw, sh, bw, bh int, down bool) (int, int) {
	s := math.Min(float64(bw)/float64(sw), float64(bh)/float64(sh))
	if down && s > 1 {
		s = 1
	}
	return max(1, int(math.Round(float64(sw)*s))), max(1, int(math.Round(float64(sh)*s)))
}

// output is the expected size of the result.
func (p plan) output() (int, int) { return p.ow, p.oh }

// offset is where the crop starts in an iw×ih thumbnail.
func (p plan) offset(iw, ih int) (left, top int) {
	dx, dy := max(0, iw-p.cropW), max(0, ih-p.cropH)
	left, top = dx/2, dy/2
	switch p.gravity {
	case media.North, media.NorthEast, media.NorthWest:
		top = 0
	case media.South, media.SouthEast, media.SouthWest:
		top = dy
	}
	switch p.gravity {
	case media.West, media.NorthWest, media.SouthWest:
		left = 0
	case media.East, media.NorthEast, media.SouthEast:
		left = dx
	}
	return left, top
}
