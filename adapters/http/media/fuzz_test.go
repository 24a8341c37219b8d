package media

import (
	"bytes"

	"net/url"
	"regexp"
	"testing"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/adapters/http/internal/fuzztest"
	"github.com/halocms/halocms/adapters/imaging"
	"github.com/halocms/halocms/domain/media"
)

// keySafe is what a derived image's name may hold: it becomes part of a
// storage key, and so of a path on disk.
var keySafe = regexp.MustCompile(`^[a-z0-9_]+(\.[a-z0-9]+)?$`)

// FuzzTransformRequest feeds arbitrary path segments and queries to the
// wire forms: nothing panics, every refusal is a client error, and an
// accepted, valid transform is named with storage-safe characters only.
func FuzzTransformRequest(f *testing.F) {
	for _, s := range [][2]string{
		{"w_400,h_300,c_fill,g_north,q_80,f_webp", ""}, {"t_thumb", ""}, {"cat.jpg", "w=400&fm=avif"},
		{"w_-1", ""}, {"", "width=99999999999999999999"}, {"", "preset=../../etc"}, {"c_fill,c_fit", "fit=cover&fit=contain"},
		{"w_400,f_../x", ""}, {"", "w=400&q=101"}, {"g_auto,w_1,h_1", "format=jpeg&gravity=smart"},
	} {
		f.Add(s[0], s[1])
	}
	presets := imaging.DefaultPresets()
	f.Fuzz(func(t *testing.T, seg, query string) {
		var ts []media.Transform
		if tr, ok, err := presets.ParseSegment(seg); err != nil {
			fuzztest.ClientError(t, seg, err)
		} else if ok {
			ts = append(ts, tr)
		}
		if q, err := url.ParseQuery(query); err == nil {
			if tr, err := presets.ParseQuery(q); err != nil {
				fuzztest.ClientError(t, query, err)
			} else {
				ts = append(ts, tr)
			}
		}
		for _, tr := range ts {
			if err := tr.Validate(media.DefaultBounds); err != nil {
				fuzztest.ClientError(t, seg+"?"+query, err)
				continue
			}
			for _, mime := range []string{"image/jpeg", "image/png", "image/gif", "image/webp"} {
				if name := tr.Resolve(mime).Canonical(); !keySafe.MatchString(name) {
					t.Fatalf("%q ? %q: derived image name %q is not storage-safe", seg, query, name)
				}
			}
		}
	})
}

// FuzzMediaBodies feeds arbitrary bytes to a metadata change's body and
// an updateByUrl body, and what decides them: nothing panics, and every
// refusal is a client error.
func FuzzMediaBodies(f *testing.F) {
	for _, s := range []string{
		`{"name":"cat.jpg","folder":"pets/cats","tags":["a","b"],"alt":{"en":"A cat"},"caption":{"nl-NL":"Kat"}}`,
		`{"name":"../../etc/passwd"}`, `{"folder":"a//b"}`, `{"tags":[""]}`, `{"alt":{"not a locale":"x"}}`,
		`{"app":"x","url":"https://cdn.example/a.jpg","action":"save"}`, `{"url":"javascript:alert(1)","action":"save"}`,
		`{"name":null}`, `{"tags":"a"}`, `{}`, `null`, ``,
	} {
		f.Add([]byte(s))
	}
	file := media.File{}.Apply(media.Uploaded{FileID: "f", App: "a", Name: "x.jpg", Bytes: media.Bytes{SHA256: "ab", Kind: media.Image}})
	f.Fuzz(func(t *testing.T, body []byte) {
		var c changeJSON
		if err := httpapi.DecodeFrom(bytes.NewReader(body), &c); err != nil {
			fuzztest.ClientError(t, string(body), err)
		} else {
			if c.Name != nil {
				_, err := file.Rename(*c.Name)
				fuzztest.ClientError(t, string(body), err)
			}
			if c.Folder != nil {
				_, err := file.Move(*c.Folder)
				fuzztest.ClientError(t, string(body), err)
			}
			if c.Tags != nil {
				_, err := file.Tag(*c.Tags)
				fuzztest.ClientError(t, string(body), err)
			}
			if c.Alt != nil || c.Caption != nil {
				var alt, caption map[string]string
				if c.Alt != nil {
					alt = *c.Alt
				}
				if c.Caption != nil {
					caption = *c.Caption
				}
				_, err := file.Describe(alt, caption)
				fuzztest.ClientError(t, string(body), err)
			}
		}
		var b byURLJSON
		if err := httpapi.DecodeFrom(bytes.NewReader(body), &b); err != nil {
			fuzztest.ClientError(t, string(body), err)
			return
		}
		fuzztest.ClientError(t, string(body), media.CheckURL(b.URL))
		_, err := media.Upload(media.File{}, "g", "a", media.New{Name: b.Name, Folder: b.Folder, Tags: b.Tags, URL: "https://x.example/y"})
		fuzztest.ClientError(t, string(body), err)
	})
}
