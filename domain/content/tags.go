package content

import (
	"slices"

	"github.com/halocms/halocms/domain/fault"
)

// TagRestriction decides a change of a module's allowed tags against the
// module's live items: the caller feeds it every live item's tags (Item)
// and asks for the decision (Decide). A change that would leave an item
// holding a tag the new list does not allow is refused, so that no item is
// left that every later update would refuse (checkContent).
type TagRestriction struct {
	m       Module
	allowed []Tag
	listed  []map[string]any
	count   int
	tags    []Tag // the distinct tags refused, up to maxListed
}

// RestrictTags starts the decision of changing m's allowed tags to allowed.
func (m Module) RestrictTags(allowed []Tag) *TagRestriction {
	return &TagRestriction{m: m, allowed: allowed}
}

// Needed reports whether the change can affect any item: an empty list
// allows every tag, so the items need not be read.
func (r *TagRestriction) Needed() bool { return len(r.allowed) > 0 }

// Item takes one live item of the module, with its tags.
func (r *TagRestriction) Item(id string, tags []Tag) {
	if !r.Needed() {
		return
	}
	var refused []map[string]any
	for _, t := range tags {
		if slices.ContainsFunc(r.allowed, t.Matches) {
			continue
		}
		refused = append(refused, tagExtra(t))
		if len(r.tags) < maxListed && !slices.ContainsFunc(r.tags, t.Matches) {
			r.tags = append(r.tags, t)
		}
	}
	if refused == nil {
		return
	}
	r.count++
	if len(r.listed) < maxListed {
		r.listed = append(r.listed, map[string]any{"id": id, "tags": refused})
	}
}

// Decide refuses the change when an item holds a tag the new list does not
// allow: a 409 whose extra has field "tags", affectedItems (up to 100, each
// {id, tags} with the item's refused tags), affectedCount, and tags (the
// distinct refused tags, up to 100).
func (r *TagRestriction) Decide() error {
	if r.count == 0 {
		return nil
	}
	tags := make([]map[string]any, len(r.tags))
	for i, t := range r.tags {
		tags[i] = tagExtra(t)
	}
	return fault.Conflictf("%d item(s) of module %s hold tags the new list does not allow; remove those tags from them or delete them first",
		r.count, r.m.Name).With("field", "tags").With("affectedItems", r.listed).With("affectedCount", r.count).With("tags", tags)
}

func tagExtra(t Tag) map[string]any {
	return map[string]any{"id": t.ID, "name": t.Name, "value": t.Value, "tagType": t.TagType}
}
