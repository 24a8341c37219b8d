package content

import (
	"context"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
)

// SyncQuery asks what changed in a module between two syncs (§5.6).
type SyncQuery struct {
	AllApps bool
	Apps    []string
	Module  string
	From    *int64 // the previous sync's Timestamp; nil on a first sync
	To      int64  // ms; the instant the answer describes
	Locale  string
	Fields  map[string]content.Field
}

// SyncResult lists what the client must add, replace and drop.
type SyncResult struct {
	Created, Updated []Item
	Deleted          []string
	Timestamp        int64
}

// Sync answers a sync of one module at q.To. An item is live at t when it
// is published at t: pub_from <= t < pub_until (deleted items never are).
//
// A first sync (From nil) lists every item live at To as created.
//
// An incremental sync, with F = *From - content.SyncMargin (see there
// what it covers and what it leaves to the caller), lists
//   - created: live at To and became live after F: its publication date
//     passed after F, or one of its state events (publish, expiry, archive,
//     delete and their undoing, creation) came after F. Time can make an
//     item live only by reaching published_at, so nothing else can turn a
//     not-live item live. An item that was live all along but whose state
//     changed is listed too: the client upserts it.
//   - updated: live at To, not created, and edited (any event) after F.
//   - deleted: not live at To, and a sync may have seen it live after F:
//     under dates it had before a state event (unpublished, deleted,
//     archived or expired by hand...: live_ended_at, see the projector's
//     itemRow.noteEnd), or under the dates it has now, whose end of
//     publication, least(removedAt, archivedAt), fell in (F, To]. Those are
//     the only ways an item the client may hold (live at some instant up to
//     From) stops being live by To. An item never live (a concept, a
//     schedule withdrawn more than SyncMargin before its date) is not
//     listed: an app's client does not learn the ids of drafts.
//
// Created and updated come in creation order, deleted by id.
func (s *Store) Sync(ctx context.Context, q SyncQuery) (SyncResult, error) {
	if q.Module == "" {
		return SyncResult{}, fault.Invalidf("sync needs a module").With("field", "moduleId")
	}
	res := SyncResult{Created: []Item{}, Updated: []Item{}, Deleted: []string{}, Timestamp: q.To}
	c := &compiler{}
	vis := "true"
	if !q.AllApps {
		vis = "i.app = ANY(" + c.bind(q.Apps) + "::text[])"
	}
	mod := c.bind(q.Module)
	to := c.bind(q.To)
	live := "(i.pub_from IS NOT NULL AND i.pub_from <= " + to + " AND i.pub_until > " + to + ")"

	var sql string
	if q.From == nil {
		sql = `SELECT 'c', ` + itemColumns + ` FROM content_items i WHERE i.module = ` + mod + ` AND ` + vis + ` AND ` + live +
			` ORDER BY i.created_at, i.id`
	} else {
		f := c.bind(*q.From - content.SyncMargin)
		created := "greatest(i.published_at, i.state_changed_at) > " + f
		sql = `SELECT CASE WHEN NOT ` + live + ` THEN 'd' WHEN ` + created + ` THEN 'c' ELSE 'u' END, ` + itemColumns + `
			FROM content_items i
			WHERE i.module = ` + mod + ` AND ` + vis + ` AND (
				` + live + ` AND (` + created + ` OR coalesce(i.updated_at, i.created_at) > ` + f + `)
				OR NOT ` + live + ` AND (i.live_ended_at > ` + f + ` OR i.pub_from IS NOT NULL
					AND i.pub_from < i.pub_until AND i.pub_until > ` + f + ` AND i.pub_until <= ` + to + `))
			ORDER BY i.created_at, i.id`
	}
	rows, err := s.pool.Query(ctx, sql, custom(c.args)...)
	if err != nil {
		return res, err
	}
	defer rows.Close()
	var deleted []Item
	for rows.Next() {
		var kind string
		it, err := scanItem(prefixRow{rows, []any{&kind}}, false)
		if err != nil {
			return res, err
		}
		switch kind {
		case "c":
			res.Created = append(res.Created, it)
		case "u":
			res.Updated = append(res.Updated, it)
		default:
			deleted = append(deleted, it)
		}
	}
	if err := rows.Err(); err != nil {
		return res, err
	}
	for _, it := range deleted {
		res.Deleted = append(res.Deleted, it.ID)
	}
	slices.Sort(res.Deleted)
	localize(res.Created, q.Fields, q.Locale)
	localize(res.Updated, q.Fields, q.Locale)
	return res, nil
}

// prefixRow scans its first columns into dest, the rest into what Scan is
// given: it lets scanItem read rows that carry more than an item.
type prefixRow struct {
	pgx.Row
	dest []any
}

func (r prefixRow) Scan(dest ...any) error {
	return r.Row.Scan(append(append([]any{}, r.dest...), dest...)...)
}
