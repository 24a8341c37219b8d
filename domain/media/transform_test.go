package media

import (
	"errors"
	"regexp"
	"testing"

	"github.com/halocms/halocms/domain/fault"
)

func TestTransformValidate(t *testing.T) {
	tests := []struct {
		name  string
		t     Transform
		b     Bounds
		field string // "" when valid
	}{
		{"zero", Transform{}, Bounds{}, ""},
		{"width only", Transform{Width: 400}, Bounds{}, ""},
		{"everything", Transform{Width: 400, Height: 300, Fit: Cover, Gravity: NorthEast, Quality: 90, Format: AVIF}, Bounds{}, ""},
		{"at the default bounds", Transform{Width: 4096, Height: 4096}, Bounds{}, ""},
		{"negative width", Transform{Width: -1}, Bounds{}, "w"},
		{"width over bounds", Transform{Width: 4097}, Bounds{}, "w"},
		{"width over custom bounds", Transform{Width: 1001}, Bounds{MaxWidth: 1000}, "w"},
		{"negative height", Transform{Height: -5}, Bounds{}, "h"},
		{"height over bounds", Transform{Height: 5000}, Bounds{}, "h"},
		{"too many pixels", Transform{Width: 2000, Height: 2000}, Bounds{MaxPixels: 1_000_000}, "w"},
		{"unknown fit", Transform{Width: 1, Fit: "crop"}, Bounds{}, "fit"},
		{"unknown gravity", Transform{Width: 1, Gravity: "up"}, Bounds{}, "gravity"},
		{"quality over 100", Transform{Quality: 101}, Bounds{}, "q"},
		{"negative quality", Transform{Quality: -1}, Bounds{}, "q"},
		{"unknown format", Transform{Format: "bmp"}, Bounds{}, "format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.t.Validate(tt.b)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Validate: %v, want nil", err)
				}
				return
			}
			var fe *fault.Error
			if !errors.As(err, &fe) || fe.Kind != fault.Invalid {
				t.Fatalf("Validate: %v, want fault.Invalid", err)
			}
			if fe.Extra["field"] != tt.field {
				t.Errorf("field = %v, want %q", fe.Extra["field"], tt.field)
			}
		})
	}
}

func TestTransformIsZero(t *testing.T) {
	if !(Transform{}).IsZero() {
		t.Error("zero Transform is not zero")
	}
	for _, tr := range []Transform{{Width: 1}, {Format: PNG}, {Quality: 10}, {Fit: Fill}} {
		if tr.IsZero() {
			t.Errorf("%+v is zero", tr)
		}
	}
}

func TestTransformCanonical(t *testing.T) {
	tests := []struct {
		t    Transform
		want string
	}{
		{Transform{}, "original"},
		{Transform{Width: 400, Height: 300, Format: WebP}, "w400_h300_ccover_gcenter_q80.webp"},
		{Transform{Width: 400, Height: 300, Fit: Fill, Quality: 70, Format: JPEG}, "w400_h300_cfill_gcenter_q70.jpeg"},
		{Transform{Width: 400, Height: 300, Gravity: SouthWest}, "w400_h300_ccover_gsouthwest_q80"},
		{Transform{Width: 400, Height: 300, Fit: Inside, Gravity: North, Format: AVIF}, "w400_h300_cinside_gcenter_q80.avif"},
		{Transform{Width: 400, Fit: Cover}, "w400_h0_ccontain_gcenter_q80"},
		{Transform{Height: 50, Fit: Inside}, "w0_h50_cinside_gcenter_q80"},
		{Transform{Format: PNG, Quality: 20}, "w0_h0_ccontain_gcenter_q80.png"},
		{Transform{Quality: 60}, "w0_h0_ccontain_gcenter_q60"},
	}
	valid := regexp.MustCompile(`^[a-z0-9_.]+$`)
	for _, tt := range tests {
		got := tt.t.Canonical()
		if got != tt.want {
			t.Errorf("%+v.Canonical() = %q, want %q", tt.t, got, tt.want)
		}
		if !valid.MatchString(got) {
			t.Errorf("%q has characters outside [a-z0-9_.]", got)
		}
	}
}

func TestCanonicalEqualForEqualTransforms(t *testing.T) {
	pairs := [][2]Transform{
		{{Width: 400, Height: 300}, {Width: 400, Height: 300, Fit: Cover, Gravity: Center, Quality: DefaultQuality}},
		{{Width: 400}, {Width: 400, Fit: Fill, Gravity: Smart}},
		{{Width: 400, Height: 300, Fit: Contain, Gravity: North}, {Width: 400, Height: 300, Fit: Contain}},
		{{Format: PNG, Quality: 10}, {Format: PNG, Quality: 95}},
	}
	for _, p := range pairs {
		if a, b := p[0].Canonical(), p[1].Canonical(); a != b {
			t.Errorf("%+v and %+v give %q and %q", p[0], p[1], a, b)
		}
	}
	if a, b := (Transform{Width: 400, Height: 300, Gravity: North}).Canonical(), (Transform{Width: 400, Height: 300}).Canonical(); a == b {
		t.Errorf("cover north and cover center both give %q", a)
	}
}

func TestTransformResolve(t *testing.T) {
	tests := map[string]Format{
		"image/jpeg":    JPEG,
		"image/png":     PNG,
		"image/webp":    WebP,
		"image/avif":    AVIF,
		"image/gif":     PNG,
		"image/svg+xml": PNG,
	}
	for mime, want := range tests {
		if got := (Transform{Width: 10}).Resolve(mime).Format; got != want {
			t.Errorf("Resolve(%q) = %q, want %q", mime, got, want)
		}
	}
	if got := (Transform{Format: WebP}).Resolve("image/jpeg").Format; got != WebP {
		t.Errorf("Resolve changed an explicit format to %q", got)
	}
}
