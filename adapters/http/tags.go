package httpapi

import (
	"encoding/json"
	"strconv"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
)

// TagJSON is a tag on the wire.
type TagJSON struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Value   string `json:"value"`
	TagType string `json:"tagType"`
}

// TagBody accepts a tag as clients send it: tagType an id or an expanded
// {id, name, description} object; value a string or a scalar.
type TagBody struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Value   any    `json:"value"`
	TagType any    `json:"tagType"`
}

// Tag checks the tag and returns it.
func (t TagBody) Tag() (content.Tag, error) {
	out := content.Tag{ID: t.ID, Name: t.Name}
	switch v := t.Value.(type) {
	case nil:
	case string:
		out.Value = v
	case json.Number:
		out.Value = v.String()
	case bool:
		out.Value = strconv.FormatBool(v)
	default:
		return out, fault.Invalidf("tag %q: value must be a string", t.Name).With("field", "tags")
	}
	switch tt := t.TagType.(type) {
	case nil:
	case string:
		out.TagType = tt
	case map[string]any:
		out.TagType, _ = tt["id"].(string)
	default:
		return out, fault.Invalidf("tag %q: tagType must be an id", t.Name).With("field", "tags")
	}
	return out, nil
}

// TagsFromBody checks tags sent by a client.
func TagsFromBody(in []TagBody) ([]content.Tag, error) {
	out := make([]content.Tag, 0, len(in))
	for _, t := range in {
		tag, err := t.Tag()
		if err != nil {
			return nil, err
		}
		out = append(out, tag)
	}
	return out, nil
}
