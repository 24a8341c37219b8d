package media

import (
	"context"
	"slices"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/push"
	"github.com/halocms/halocms/projections"
)

// FilesIn returns the media file ids that the strings inside v (values of
// any shape: strings, arrays, objects) name, each once, in order.
func FilesIn(v any) []string {
	var out []string
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case string:
			// Any host: the public address may change.
			for _, id := range media.IDsNamedIn(x) {
				if !slices.Contains(out, id) {
					out = append(out, id)
				}
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for _, e := range x {
				walk(e)
			}
		}
	}
	walk(v)
	slices.Sort(out) // map order is random: keep rows and rebuilds equal
	return out
}

// use is one reference's new state: its files (nil: unchanged), or a
// flag change.
type use struct {
	refType, refID, app, name, module string
	files                             []string // set: the reference now names exactly these
	set                               bool
	drop                              bool   // the reference is gone for good (a deleted push)
	live                              *bool  // item deleted or restored
	publishedAt, removedAt            *int64 // item published, unpublished, expiry
	archivedAt                        *int64 // item archived (or not: 0)
}

func ptr[T any](v T) *T { return &v }

func ms(t interface {
	UnixMilli() int64
	IsZero() bool
}) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

// useOf is what an event changes of a reference, if anything.
func useOf(data any) (use, bool) {
	switch e := data.(type) {
	case content.ItemCreated:
		return use{refType: "item", refID: e.ItemID, app: e.App, name: e.Name, module: e.Module, files: FilesIn(e.Values), set: true,
			publishedAt: ptr(ms(e.PublishedAt)), removedAt: ptr(ms(e.RemovedAt)), archivedAt: ptr(ms(e.ArchivedAt))}, true
	case content.ItemEdited:
		return use{refType: "item", refID: e.ItemID, app: e.App, name: e.Name, module: e.Module, files: FilesIn(e.Values), set: true}, true
	case content.ItemReverted:
		return use{refType: "item", refID: e.ItemID, app: e.App, name: e.Name, module: e.Module, files: FilesIn(e.Values), set: true}, true
	case content.ItemPublished:
		return use{refType: "item", refID: e.ItemID, publishedAt: ptr(ms(e.PublishedAt))}, true
	case content.ItemUnpublished:
		return use{refType: "item", refID: e.ItemID, publishedAt: ptr(int64(0))}, true
	case content.ItemExpirySet:
		return use{refType: "item", refID: e.ItemID, removedAt: ptr(ms(e.RemovedAt))}, true
	case content.ItemArchived:
		return use{refType: "item", refID: e.ItemID, archivedAt: ptr(ms(e.ArchivedAt))}, true
	case content.ItemUnarchived:
		return use{refType: "item", refID: e.ItemID, archivedAt: ptr(int64(0))}, true
	case content.ItemDeleted:
		return use{refType: "item", refID: e.ItemID, live: ptr(false)}, true
	case content.ItemRestored:
		return use{refType: "item", refID: e.ItemID, live: ptr(true)}, true
	case push.Scheduled:
		return use{refType: "push", refID: e.ScheduleID, app: e.App, name: e.Name, files: pushFiles(e.Notification), set: true}, true
	case push.Edited:
		return use{refType: "push", refID: e.ScheduleID, app: e.App, name: e.Name, files: pushFiles(e.Notification), set: true}, true
	case push.Deleted:
		return use{refType: "push", refID: e.ScheduleID, drop: true}, true
	}
	return use{}, false
}

func pushFiles(n push.Notification) []string {
	if n.Image == nil {
		return nil
	}
	return FilesIn(n.Image.URL)
}

// applyUsage writes each reference change in log order, one statement
// each: content items and pushes change far less often than they are read.
func applyUsage(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	table := schema + ".media_usage"
	var q projections.Queue // one round trip for the batch's usage rows
	for _, r := range events {
		u, ok := useOf(r.Data)
		if !ok {
			continue
		}
		switch {
		case u.drop:
			q.Exec("drop a usage", `DELETE FROM `+table+` WHERE ref_type = $1 AND ref_id = $2`, u.refType, u.refID)
		case u.set:
			q.Exec("set a usage", `INSERT INTO `+table+` AS u (ref_type, ref_id, app, name, module, files, published_at, removed_at, archived_at)
				VALUES ($1, $2, $3, $4, $5, $6, coalesce($7::bigint, 0), coalesce($8::bigint, 0), coalesce($9::bigint, 0))
				ON CONFLICT (ref_type, ref_id) DO UPDATE SET app = EXCLUDED.app, name = EXCLUDED.name,
				  module = EXCLUDED.module, files = EXCLUDED.files,
				  published_at = coalesce($7::bigint, u.published_at), removed_at = coalesce($8::bigint, u.removed_at),
				  archived_at = coalesce($9::bigint, u.archived_at)`,
				u.refType, u.refID, u.app, u.name, u.module, nonNil(u.files), u.publishedAt, u.removedAt, u.archivedAt)
		default:
			q.Exec("date a usage", `UPDATE `+table+` SET live = coalesce($3, live), published_at = coalesce($4::bigint, published_at),
				removed_at = coalesce($5::bigint, removed_at), archived_at = coalesce($6::bigint, archived_at)
				WHERE ref_type = $1 AND ref_id = $2`, u.refType, u.refID, u.live, u.publishedAt, u.removedAt, u.archivedAt)
		}
	}
	return q.Flush(ctx, db)
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}
