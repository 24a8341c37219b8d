package imaging

import (
	"errors"
	"regexp"
	"testing"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

func TestSigner(t *testing.T) {
	s := Signer{Key: []byte("a server secret")}
	tr := media.Transform{Width: 333, Height: 111, Format: media.WebP}
	sig := s.Sign("/media/abc/photo.jpg", tr)
	if !regexp.MustCompile(`^[A-Za-z0-9_-]{22}$`).MatchString(sig) {
		t.Fatalf("signature %q is not 22 base64url characters", sig)
	}
	if !s.Verify("/media/abc/photo.jpg", tr, sig) {
		t.Error("a signature does not verify")
	}
	// The same image in another spelling has the same signature.
	if !s.Verify("/media/abc/photo.jpg", media.Transform{Width: 333, Height: 111, Fit: media.Cover, Quality: 80, Format: media.WebP}, sig) {
		t.Error("the signature depends on the spelling of the transform")
	}
	for name, ok := range map[string]bool{
		"other path":      s.Verify("/media/abd/photo.jpg", tr, sig),
		"other transform": s.Verify("/media/abc/photo.jpg", media.Transform{Width: 334, Height: 111, Format: media.WebP}, sig),
		"other key":       Signer{Key: []byte("another")}.Verify("/media/abc/photo.jpg", tr, sig),
		"no key":          Signer{}.Verify("/media/abc/photo.jpg", tr, Signer{}.Sign("/media/abc/photo.jpg", tr)),
		"truncated":       s.Verify("/media/abc/photo.jpg", tr, sig[:21]),
		"empty":           s.Verify("/media/abc/photo.jpg", tr, ""),
	} {
		if ok {
			t.Errorf("%s: verified", name)
		}
	}
}

func TestPolicy(t *testing.T) {
	signer := Signer{Key: []byte("k")}
	open := Policy{Presets: DefaultPresets(), Signer: signer}
	closed := Policy{Presets: DefaultPresets(), Signer: signer, SignedOnly: true}
	const path = "/media/f1/a.png"
	odd := media.Transform{Width: 333}
	tests := []struct {
		name   string
		p      Policy
		t      media.Transform
		sig    string
		allow  bool
		reason string // a word of the refusal
	}{
		{"original", closed, media.Transform{}, "", true, ""},
		{"preset", closed, media.Transform{Width: 800, Format: media.WebP}, "", true, ""},
		{"signed odd size", closed, odd, signer.Sign(path, odd), true, ""},
		{"bad signature", open, media.Transform{Width: 400}, "AAAAAAAAAAAAAAAAAAAAAA", false, "signature"},
		{"unsigned when signed only", closed, media.Transform{Width: 400}, "", false, "signed"},
		{"allowed width", open, media.Transform{Width: 640, Format: media.WebP}, "", true, ""},
		{"allowed height", open, media.Transform{Height: 480, Format: media.AVIF}, "", true, ""},
		{"both sides", open, media.Transform{Width: 640, Height: 480}, "", false, "not both"},
		{"signed crop", open, media.Transform{Width: 640, Height: 480, Fit: media.Cover}, signer.Sign(path, media.Transform{Width: 640, Height: 480, Fit: media.Cover}), true, ""},
		{"odd width", open, odd, "", false, "width"},
		{"odd height", open, media.Transform{Height: 301}, "", false, "height"},
		{"other quality", open, media.Transform{Width: 400, Quality: 75}, "", false, "quality"},
		{"custom sizes", Policy{Sizes: []int{333}, Qualities: []int{0}}, odd, "", true, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.p.Allow(path, tt.t, tt.sig)
			if tt.allow {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Kind != fault.Forbidden {
				t.Fatalf("err %v, want fault.Forbidden", err)
			}
			if !regexp.MustCompile(tt.reason).MatchString(fe.Message) {
				t.Errorf("message %q does not say %q", fe.Message, tt.reason)
			}
		})
	}
}
