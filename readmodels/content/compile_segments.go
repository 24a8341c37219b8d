package content

import (
	"strings"

	"github.com/halocms/halocms/domain/fault"
)

// segment compiles the segmentation tags against content_items.tag_keys
// (see projections/content.TagKeys): partial needs one tag in common,
// total every tag.
func (c *compiler) segment() (string, error) {
	if len(c.q.SegmentTags) == 0 {
		return "", nil
	}
	var all []string  // partial: every key of every tag
	var each []string // total: one overlap per tag
	for _, t := range c.q.SegmentTags {
		var keys []string
		if t.ID != "" {
			keys = append(keys, "id:"+t.ID)
		}
		if t.Name != "" {
			keys = append(keys, "nv:"+t.Name+"\x1f"+t.Value)
		}
		if len(keys) == 0 {
			return "", fault.Invalidf("a segment tag needs an id or a name").With("field", "segmentTags")
		}
		if c.q.SegmentTotal {
			each = append(each, "i.tag_keys && "+c.bind(keys)+"::text[]")
		}
		all = append(all, keys...)
	}
	if c.q.SegmentTotal {
		return strings.Join(each, " AND "), nil
	}
	return "i.tag_keys && " + c.bind(all) + "::text[]", nil
}
