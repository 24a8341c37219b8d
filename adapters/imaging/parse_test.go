package imaging

import (
	"errors"
	"net/url"
	"testing"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
)

// invalidField checks that err is a fault.Invalid naming field.
func invalidField(t *testing.T, err error, field string) {
	t.Helper()
	var fe *fault.Error
	if !errors.As(err, &fe) || fe.Kind != fault.Invalid {
		t.Fatalf("err %v, want fault.Invalid", err)
	}
	if fe.Extra["field"] != field {
		t.Errorf("field %v, want %q", fe.Extra["field"], field)
	}
}

func TestParseQuery(t *testing.T) {
	tests := []struct {
		query string
		want  media.Transform
	}{
		{"", media.Transform{}},
		{"width=400&height=300&fit=cover&gravity=north&quality=80&format=webp",
			media.Transform{Width: 400, Height: 300, Fit: media.Cover, Gravity: media.North, Quality: 80, Format: media.WebP}},
		{"w=400&h=300&fit=inside&g=southeast&q=70&fm=jpg",
			media.Transform{Width: 400, Height: 300, Fit: media.Inside, Gravity: media.SouthEast, Quality: 70, Format: media.JPEG}},
		{"w=100&sig=abc&exp=123&download=1&v=2", media.Transform{Width: 100}},
		{"preset=thumb", media.Transform{Width: 200, Height: 200, Fit: media.Cover, Format: media.WebP}},
		{"preset=small&format=png", media.Transform{Width: 400, Format: media.PNG}},
		{"fm=auto&q=auto&gravity=attention", media.Transform{Gravity: media.Smart}},
	}
	for _, tt := range tests {
		q, _ := url.ParseQuery(tt.query)
		got, err := ParseQuery(q)
		if err != nil {
			t.Errorf("%q: %v", tt.query, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%q: %+v, want %+v", tt.query, got, tt.want)
		}
	}
}

func TestParseQueryRefuses(t *testing.T) {
	tests := map[string]string{
		"w=400&blur=5":  "blur",
		"width=abc":     "w",
		"h=-1":          "h",
		"q=high":        "q",
		"fit=crop":      "fit",
		"gravity=up":    "gravity",
		"format=bmp":    "format",
		"preset=banner": "preset",
	}
	for query, field := range tests {
		q, _ := url.ParseQuery(query)
		_, err := ParseQuery(q)
		t.Run(query, func(t *testing.T) { invalidField(t, err, field) })
	}
}

func TestParseSegment(t *testing.T) {
	tests := []struct {
		seg  string
		want media.Transform
	}{
		{"w_400,h_300,c_fill,g_north,q_80,f_webp",
			media.Transform{Width: 400, Height: 300, Fit: media.Cover, Gravity: media.North, Quality: 80, Format: media.WebP}},
		{"w_400,c_fit", media.Transform{Width: 400, Fit: media.Contain}},
		{"w_400,h_100,c_scale", media.Transform{Width: 400, Height: 100, Fit: media.Fill}},
		{"w_400,c_limit,f_avif", media.Transform{Width: 400, Fit: media.Inside, Format: media.AVIF}},
		{"w_100,h_100,c_thumb", media.Transform{Width: 100, Height: 100, Fit: media.Cover, Gravity: media.Smart}},
		{"w_100,h_100,c_thumb,g_south", media.Transform{Width: 100, Height: 100, Fit: media.Cover, Gravity: media.South}},
		{"h_50,g_auto,f_auto,q_auto", media.Transform{Height: 50, Gravity: media.Smart}},
		{"g_north_east,w_10,h_10", media.Transform{Width: 10, Height: 10, Gravity: media.NorthEast}},
		{"t_thumb", media.Transform{Width: 200, Height: 200, Fit: media.Cover, Format: media.WebP}},
		{"f_png,t_medium", media.Transform{Width: 800, Format: media.PNG}},
	}
	for _, tt := range tests {
		got, ok, err := ParseSegment(tt.seg)
		if err != nil || !ok {
			t.Errorf("%q: ok=%v err=%v", tt.seg, ok, err)
			continue
		}
		if got != tt.want {
			t.Errorf("%q: %+v, want %+v", tt.seg, got, tt.want)
		}
	}
}

func TestParseSegmentNotATransform(t *testing.T) {
	for _, seg := range []string{"", "photo.jpg", "w_400.jpg", "my_photo", "holiday", "x_1,w_400"} {
		if _, ok, err := ParseSegment(seg); ok || err != nil {
			t.Errorf("%q: ok=%v err=%v, want not a transform", seg, ok, err)
		}
	}
}

func TestParseSegmentRefuses(t *testing.T) {
	tests := map[string]string{
		"w_400,e_blur": "e_blur",
		"w_400,h":      "h",
		"w_abc":        "w",
		"c_pad":        "fit",
		"g_up":         "gravity",
		"f_bmp":        "format",
		"t_banner":     "preset",
	}
	for seg, field := range tests {
		_, ok, err := ParseSegment(seg)
		if !ok {
			t.Errorf("%q: not taken for a transform", seg)
		}
		t.Run(seg, func(t *testing.T) { invalidField(t, err, field) })
	}
}

func TestPresetsHas(t *testing.T) {
	p := DefaultPresets()
	if !p.Has(media.Transform{Width: 200, Height: 200, Format: media.WebP, Quality: media.DefaultQuality}) {
		t.Error("thumb spelt with its defaults is not a preset")
	}
	if p.Has(media.Transform{Width: 200, Height: 200, Format: media.PNG}) {
		t.Error("thumb in PNG is taken for a preset")
	}
}
