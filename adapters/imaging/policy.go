package imaging

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"slices"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

// SignatureLen is the length of a signature: 22 base64url characters, 132
// bits of the HMAC-SHA256.
const SignatureLen = 22

// Signer signs transforms as imgproxy does: HMAC-SHA256 with a server key
// over the file's path and the transform's canonical name, so a signature
// is good for that file and that image only, in any of its wire forms.
type Signer struct{ Key []byte }

// Sign returns the signature of t for path (base64url, no padding,
// SignatureLen characters).
func (s Signer) Sign(path string, t media.Transform) string {
	m := hmac.New(sha256.New, s.Key)
	m.Write([]byte(path))
	m.Write([]byte{0})
	m.Write([]byte(t.Canonical()))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))[:SignatureLen]
}

// Verify reports whether sig is the signature of t for path, in constant
// time. A Signer without a key verifies nothing.
func (s Signer) Verify(path string, t media.Transform, sig string) bool {
	if len(s.Key) == 0 || len(sig) != SignatureLen {
		return false
	}
	return hmac.Equal([]byte(sig), []byte(s.Sign(path, t)))
}

// DefaultSizes are the widths and heights anyone may ask for: the usual
// thumbnail, layout and screen sizes.
var DefaultSizes = []int{16, 32, 48, 64, 96, 128, 160, 200, 240, 256, 320, 400, 480, 512,
	640, 720, 768, 800, 960, 1024, 1080, 1200, 1280, 1440, 1600, 1920, 2048}

// DefaultQualities are the qualities anyone may ask for: the default only
// (0); others are signed.
var DefaultQualities = []int{0}

// Policy decides which transforms a request may have made. Making images
// costs CPU and storage, and every distinct transform is a stored file,
// so an open server would let anyone fill its disk with w=1,2,3...
// A transform is allowed when
//   - it makes the same image as a preset, or
//   - it carries a valid signature (Signer; any size within the bounds), or
//   - unless SignedOnly, it gives one side only (a width or a height) from
//     Sizes, in any format, at the default quality: with one side, fit and
//     gravity make no difference, so that is 27 sizes × 2 sides × 5
//     formats, 270 images per file at most. Crops, both sides and other
//     qualities are presets or signed (the CMS's API signs them for its
//     users: GET /api/media/file/{id}/transform).
type Policy struct {
	Presets    Presets
	Signer     Signer
	SignedOnly bool  // refuse unsigned transforms that are not presets
	Sizes      []int // nil: DefaultSizes
	Qualities  []int // nil: DefaultQualities
}

// Allow returns nil when the transform t of the file at path may be
// made, given the signature sig ("" when none), else a fault.Forbidden
// saying why.
func (p Policy) Allow(path string, t media.Transform, sig string) error {
	if t.IsZero() || p.Presets.Has(t) {
		return nil
	}
	if sig != "" {
		if p.Signer.Verify(path, t, sig) {
			return nil
		}
		return fault.Forbiddenf("the transform's signature is not valid for this file and transform")
	}
	if p.SignedOnly {
		return fault.Forbiddenf("only presets and signed transforms are served")
	}
	sizes, qualities := p.Sizes, p.Qualities
	if sizes == nil {
		sizes = DefaultSizes
	}
	if qualities == nil {
		qualities = DefaultQualities
	}
	if (t.Width == 0) == (t.Height == 0) {
		return fault.Forbiddenf("without a signature, give a width or a height, not both (crops: a preset or a signed URL)").With("field", "height")
	}
	for _, side := range []struct {
		name string
		n    int
	}{{"width", t.Width}, {"height", t.Height}} {
		if side.n != 0 && !slices.Contains(sizes, side.n) {
			return fault.Forbiddenf("a %s of %d is not an allowed size (use a preset, a signed URL or one of %v)",
				side.name, side.n, sizes).With("field", side.name)
		}
	}
	if !slices.Contains(qualities, t.Quality) {
		return fault.Forbiddenf("a quality of %d is not allowed (one of %v, 0 being the default, or a signed URL)",
			t.Quality, qualities).With("field", "quality")
	}
	return nil
}
