package content

import (
	"context"
	"maps"
	"reflect"
	"regexp"
	"strings"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
)

// MediaFiles finds the files of an app's media library that item values
// name by id: an Image, Video or Audio field (or a Website field, which
// holds documents) takes a file's id, and the item keeps the file's URL,
// so apps keep reading plain URLs. A file's URL given as such is checked
// the same way: this app's, of the field's kind.
type MediaFiles interface {
	// FileURL returns the stable URL and the kind ("image", "video",
	// "audio", "document") of file id of app; a fault (NotFound) when app
	// has no such file.
	FileURL(ctx context.Context, app, id string) (url, kind string, err error)
	// OwnFile returns the file a URL of this server's media names.
	OwnFile(url string) (id string, ok bool)
}

// UseMedia lets item values name media files by id.
func (s *Service) UseMedia(m MediaFiles) { s.media = m }

// mediaRef is a value that names a media file: its id, or "media:<id>".
var mediaRef = regexp.MustCompile(`^(?:media:)?([0-9a-f]{24})$`)

// mediaKinds are the kinds of file each media field type takes (by the
// catalog's name); "" takes any.
var mediaKinds = map[string]string{"Image": "image", "Video": "video", "Audio": "audio", "Website": ""}

// resolveMedia returns values with each media file id in a media field
// replaced by the file's URL (values itself when there is none). A field
// whose value is the one the item held (kept: its values before an edit)
// is not checked again: a file force-deleted since must not stop the item
// from being saved with what it has.
func (s *Service) resolveMedia(ctx context.Context, m content.Module, values, kept map[string]any) (map[string]any, error) {
	if s.media == nil || len(values) == 0 {
		return values, nil
	}
	var out map[string]any
	for _, f := range m.Fields {
		t, _ := content.FieldTypeByID(f.Type)
		want, ok := mediaKinds[t.Name]
		if !ok {
			continue
		}
		v, present := values[f.Name]
		if old, held := kept[f.Name]; !present || (held && reflect.DeepEqual(old, v)) {
			continue
		}
		nv, changed, err := s.resolveValue(ctx, m.App, f.Name, want, v)
		if err != nil {
			return nil, err
		}
		if changed {
			if out == nil {
				out = maps.Clone(values)
			}
			out[f.Name] = nv
		}
	}
	if out == nil {
		return values, nil
	}
	return out, nil
}

// resolveValue resolves a string, or a localized field's strings.
func (s *Service) resolveValue(ctx context.Context, app, field, want string, v any) (any, bool, error) {
	switch x := v.(type) {
	case string:
		m := mediaRef.FindStringSubmatch(strings.TrimSpace(x))
		own := ""
		if m == nil {
			// A URL of this server's media must name a file of this
			// app's library, of the field's kind; it is kept as given
			// (with its transform, say).
			id, ok := s.media.OwnFile(x)
			if !ok {
				return v, false, nil
			}
			m, own = []string{x, id}, x
		}
		url, kind, err := s.media.FileURL(ctx, app, m[1])
		if fault.Is(err, fault.NotFound) {
			return nil, false, fault.Invalidf("%s: media file %s is not in this app's library", field, m[1]).With("field", field)
		}
		if err != nil {
			return nil, false, err
		}
		if want != "" && kind != want {
			return nil, false, fault.Invalidf("%s takes an %s file; media file %s is a %s", field, want, m[1], kind).With("field", field)
		}
		if own != "" {
			return v, false, nil
		}
		return url, true, nil
	case map[string]any:
		var out map[string]any
		for loc, e := range x {
			nv, changed, err := s.resolveValue(ctx, app, field, want, e)
			if err != nil {
				return nil, false, err
			}
			if changed {
				if out == nil {
					out = maps.Clone(x)
				}
				out[loc] = nv
			}
		}
		if out != nil {
			return out, true, nil
		}
	}
	return v, false, nil
}
