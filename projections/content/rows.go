package content

// The rows the projector writes: content_items as itemRow (with the
// columns that follow from the others) and content_keys as keyRow.

import (
	"encoding/json"
	"time"

	"github.com/halocms/halocms/domain/content"
)

// itemRow is one content_items row; load reads rows back as JSON
// (row_to_json) into it.
type itemRow struct {
	ID             string         `json:"id"`
	App            string         `json:"app"`
	Module         string         `json:"module"`
	Name           string         `json:"name"`
	Vals           map[string]any `json:"vals"`
	Tags           []tagJSON      `json:"tags"`
	TagKeys        []string       `json:"tag_keys"`
	ExternalID     string         `json:"external_id"`
	PublishedAt    *int64         `json:"published_at"`
	RemovedAt      *int64         `json:"removed_at"`
	ArchivedAt     *int64         `json:"archived_at"`
	DeletedAt      *int64         `json:"deleted_at"`
	CreatedAt      int64          `json:"created_at"`
	UpdatedAt      *int64         `json:"updated_at"`
	CreatedBy      string         `json:"created_by"`
	UpdatedBy      *string        `json:"updated_by"`
	DeletedBy      *string        `json:"deleted_by"`
	Revision       int64          `json:"revision"`
	StateChangedAt int64          `json:"state_changed_at"`
	PubFrom        *int64         `json:"pub_from"`
	PubUntil       int64          `json:"pub_until"`
	LiveEndedAt    *int64         `json:"live_ended_at"`
}

type tagJSON struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Value   string `json:"value"`
	TagType string `json:"tagType"`
}

// keyRow is one content_keys row.
type keyRow struct {
	ItemID   string       `json:"item_id"`
	Module   string       `json:"module"`
	Field    string       `json:"field"`
	Loc      string       `json:"loc"`
	S        *string      `json:"s"`
	X        *string      `json:"x,omitempty"` // S whole, when S was cut (see MaxKeyText)
	N        *json.Number `json:"n"`
	PubFrom  *int64       `json:"pub_from"`
	PubUntil int64        `json:"pub_until"`
}

const itemCols = `id text, app text, module text, name text, vals jsonb, tags jsonb, tag_keys text[], external_id text,
	published_at bigint, removed_at bigint, archived_at bigint, deleted_at bigint, created_at bigint, updated_at bigint,
	created_by text, updated_by text, deleted_by text, revision bigint, state_changed_at bigint, pub_from bigint, pub_until bigint,
	live_ended_at bigint`

const itemNames = `id, app, module, name, vals, tags, tag_keys, external_id, published_at, removed_at, archived_at, deleted_at,
	created_at, updated_at, created_by, updated_by, deleted_by, revision, state_changed_at, pub_from, pub_until, live_ended_at`

func msPtr(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := t.UnixMilli()
	return &v
}

func strPtr(s string) *string { return &s }

func tagsJSON(tags []content.Tag) []tagJSON {
	out := make([]tagJSON, len(tags))
	for i, t := range tags {
		out[i] = tagJSON{ID: t.ID, Name: t.Name, Value: t.Value, TagType: t.TagType}
	}
	return out
}

// TagKeys are the keys an item's tags are matched by: "id:<id>" and
// "nv:<name>\x1f<value>".
func TagKeys(tags []content.Tag) []string {
	keys := []string{}
	for _, t := range tags {
		if t.ID != "" {
			keys = append(keys, "id:"+t.ID)
		}
		if t.Name != "" {
			keys = append(keys, "nv:"+t.Name+"\x1f"+t.Value)
		}
	}
	return keys
}

// derive recomputes the columns that follow from the others.
func (r *itemRow) derive() {
	r.TagKeys = TagKeys(fromTagsJSON(r.Tags))
	r.PubFrom = nil
	if r.DeletedAt == nil && r.PublishedAt != nil {
		r.PubFrom = r.PublishedAt
	}
	r.PubUntil = r.until()
}

// until is the end of the item's publication by its dates: the earlier of
// removedAt and archivedAt, Never without either.
func (r *itemRow) until() int64 {
	until := Never
	for _, d := range []*int64{r.RemovedAt, r.ArchivedAt} {
		if d != nil && *d < until {
			until = *d
		}
	}
	return until
}

func fromTagsJSON(tags []tagJSON) []content.Tag {
	out := make([]content.Tag, len(tags))
	for i, t := range tags {
		out[i] = content.Tag{ID: t.ID, Name: t.Name, Value: t.Value, TagType: t.TagType}
	}
	return out
}
