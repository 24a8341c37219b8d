package content

// Applying a batch of events: module and module-type events one statement
// each, item events folded into their rows in memory (see Apply).

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// apply folds one item event into the row (nil when the item is new and
// the event is its creation).
func apply(r *itemRow, data any, at int64) *itemRow {
	if c, ok := data.(content.ItemCreated); ok {
		return &itemRow{ID: c.ItemID, App: c.App, Module: c.Module, Name: c.Name, Vals: c.Values,
			Tags: tagsJSON(c.Tags), ExternalID: c.ExternalID, PublishedAt: msPtr(c.PublishedAt),
			RemovedAt: msPtr(c.RemovedAt), ArchivedAt: msPtr(c.ArchivedAt), CreatedAt: at, CreatedBy: c.By,
			StateChangedAt: at}
	}
	if r == nil {
		return nil
	}
	was := r.published()
	by := ""
	state := true
	switch e := data.(type) {
	case content.ItemEdited:
		r.Name, r.Vals, r.Tags, r.ExternalID, by, state = e.Name, e.Values, tagsJSON(e.Tags), e.ExternalID, e.By, false
	case content.ItemReverted:
		r.Name, r.Vals, r.Tags, r.ExternalID, by, state = e.Name, e.Values, tagsJSON(e.Tags), e.ExternalID, e.By, false
	case content.ItemPublished:
		r.PublishedAt, by = msPtr(e.PublishedAt), e.By
	case content.ItemUnpublished:
		r.PublishedAt, by = nil, e.By
	case content.ItemExpirySet:
		r.RemovedAt, by = msPtr(e.RemovedAt), e.By
	case content.ItemArchived:
		r.ArchivedAt, by = msPtr(e.ArchivedAt), e.By
	case content.ItemUnarchived:
		r.ArchivedAt, by = nil, e.By
	case content.ItemDeleted:
		r.DeletedAt, r.DeletedBy, by = &at, strPtr(e.By), e.By
	case content.ItemRestored:
		r.DeletedAt, r.DeletedBy, by = nil, nil, e.By
	default:
		return r
	}
	r.Revision++
	r.UpdatedAt, r.UpdatedBy = &at, strPtr(by)
	if state {
		r.noteEnd(was, at)
		r.StateChangedAt = at
	}
	return r
}

// interval is a stretch of publication, [from, until) in epoch ms; empty
// when from >= until.
type interval struct{ from, until int64 }

// published is the item's interval of publication by its dates (empty when
// it has none: a concept, or deleted).
func (r *itemRow) published() interval {
	if r.DeletedAt != nil || r.PublishedAt == nil {
		return interval{}
	}
	return interval{*r.PublishedAt, r.until()}
}

// noteEnd records in LiveEndedAt when the stretch of publication that the
// item's dates gave before a change of its state at at ended (by those
// dates, or at at), if a sync may have seen any of it: an instant of it
// before at, however long before (a sync describes the instant its client
// asks for, toSync, which may be in the past: Android sends the device's
// clock), or within content.SyncMargin after at (a sync may not see an event
// yet). Sync lists an item that is not live as deleted only when that end
// is after the client's last sync, less SyncMargin (see
// readmodels/content.Store.Sync), so a concept, or a schedule withdrawn
// more than SyncMargin before its date, is never listed: an app's client
// never learns of it.
func (r *itemRow) noteEnd(was interval, at int64) {
	if was.from >= min(was.until, at+content.SyncMargin) {
		return
	}
	if end := min(was.until, at); r.LiveEndedAt == nil || *r.LiveEndedAt < end {
		r.LiveEndedAt = &end
	}
}

// deleteWithModule marks a live item deleted, with its module's date and
// author, if its module is deleted at this point of the fold: before this
// batch, or by an event of it that gone says the fold has passed. Its
// revision stays: it counts the item's own events.
func (p *batch) deleteWithModule(ctx context.Context, r *itemRow, gone map[string]bool) error {
	if r == nil || r.DeletedAt != nil || p.deleting[r.Module] && !gone[r.Module] {
		return nil
	}
	m, err := p.fields(ctx, r.Module)
	if err != nil || m.deletedAt == nil {
		return err
	}
	was := r.published()
	r.DeletedAt, r.DeletedBy = m.deletedAt, m.deletedBy
	r.noteEnd(was, *m.deletedAt)
	r.StateChangedAt = *m.deletedAt
	return nil
}

func itemID(data any) string {
	if e, ok := data.(content.ItemEvent); ok {
		return e.Item()
	}
	return ""
}

// Apply applies module and module-type events one statement each (they
// are rare), then folds the batch's item events in memory per item and
// writes every touched item and its keys set-wise: a batch of thousands of
// item events costs a handful of statements. Modules whose fields changed
// get all their items' keys recomputed.
func (Projector) Apply(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	p := batch{db: db, schema: schema, rows: map[string]*itemRow{}, stored: map[string]bool{}, rekey: map[string]bool{},
		deleting: map[string]bool{}, order: []string{}} // order: not NULL in SQL
	// Items whose stream this batch starts (their creation at stream
	// version 1) have no row yet: only the others are loaded.
	var stored []string
	for _, r := range events {
		if id := itemID(r.Data); id != "" {
			if _, seen := p.rows[id]; !seen {
				p.order = append(p.order, id)
				p.rows[id] = nil
				if _, created := r.Data.(content.ItemCreated); !created || r.StreamVersion != 1 {
					stored = append(stored, id)
				}
			}
		} else if d, ok := r.Data.(content.ModuleDeleted); ok {
			p.deleting[d.ModuleID] = true
		}
	}
	for _, r := range events {
		if itemID(r.Data) != "" {
			continue
		}
		if err := p.module(ctx, r.Data, r.RecordedAt.UnixMilli()); err != nil {
			return fmt.Errorf("content projection, event %d (%s): %w", r.Pos, r.Type, err)
		}
	}
	if len(p.order) > 0 {
		if len(stored) > 0 {
			if err := p.load(ctx, stored); err != nil {
				return err
			}
		}
		// The items this batch writes are deleted with their module in log
		// order (the others by module's UPDATE), and an item event after
		// its module's deletion (a command that raced it) cannot make the
		// item live again.
		gone := map[string]bool{} // modules whose deletion the fold has passed
		for _, r := range events {
			if id := itemID(r.Data); id != "" {
				row := apply(p.rows[id], r.Data, r.RecordedAt.UnixMilli())
				p.rows[id] = row
				if err := p.deleteWithModule(ctx, row, gone); err != nil {
					return err
				}
			} else if d, ok := r.Data.(content.ModuleDeleted); ok {
				gone[d.ModuleID] = true
				for _, row := range p.rows {
					if row != nil && row.Module == d.ModuleID {
						if err := p.deleteWithModule(ctx, row, gone); err != nil {
							return err
						}
					}
				}
			}
		}
	}
	// The versions first: the content_fields rows the batch writes carry
	// them (see bumpVersions).
	if err := p.bumpVersions(ctx); err != nil {
		return err
	}
	if len(p.order) > 0 {
		if err := p.write(ctx, p.order); err != nil {
			return err
		}
	}
	for m := range p.rekey { // rekeyModule's reads send the queued writes first
		if err := p.rekeyModule(ctx, m); err != nil {
			return err
		}
	}
	return p.flush(ctx)
}

// bumpVersions gives every app the batch touched a new content version:
// greater than the last one and than the clock in microseconds, so that
// versions never repeat, not even across a rebuild; p.versions records
// them, and every content_fields row the batch writes carries its app's
// (content_fields.version).
//
// An app's versions increase strictly in the order their batches commit:
// the upsert takes the row's lock and, under READ COMMITTED, sets the
// version from the one the last committed batch wrote (a concurrent
// writer would wait for the lock, then read the committed row). So a
// reader whose snapshot holds the app at version V finds every row
// written by a batch committed after that snapshot at a version > V, and
// every row it holds at a version <= V: the in-memory copies of the read
// model follow the tables by reading the rows whose version is greater
// than theirs (see readmodels/content memIndex.catchUp). Every item a
// batch touches has its content_fields row written again (write, or
// rekeyModule for all of a module whose fields changed), and no
// content_fields row is ever deleted but with its module (whose revision
// changes then).
func (p *batch) bumpVersions(ctx context.Context) error {
	apps := map[string]bool{}
	for _, r := range p.rows {
		if r != nil {
			apps[r.App] = true
		}
	}
	if len(apps) == 0 && len(p.touched) == 0 {
		return nil
	}
	list := make([]string, 0, len(apps))
	for a := range apps {
		list = append(list, a)
	}
	if err := p.flush(ctx); err != nil { // the module events' writes first
		return err
	}
	rows, err := p.db.Query(ctx, `INSERT INTO `+p.t("content_versions")+` AS v (app, version)
		SELECT app, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint
		FROM (SELECT unnest($1::text[]) UNION SELECT app FROM `+p.t("content_modules")+` WHERE id = ANY($2)) a (app)
		ON CONFLICT (app) DO UPDATE SET version = greatest(v.version + 1, excluded.version)
		RETURNING app, version`, list, p.touched)
	if err != nil {
		return err
	}
	defer rows.Close()
	p.versions = map[string]int64{}
	for rows.Next() {
		var app string
		var v int64
		if err := rows.Scan(&app, &v); err != nil {
			return err
		}
		p.versions[app] = v
	}
	return rows.Err()
}

type batch struct {
	db       projections.DB
	schema   string
	rows     map[string]*itemRow
	stored   map[string]bool // items whose rows load found: the others are new
	rekey    map[string]bool
	modules  map[string]moduleDef
	touched  []string          // modules changed by module events
	order    []string          // the items the batch's events touch, in order of first event
	deleting map[string]bool   // the modules the batch deletes
	versions map[string]int64  // app → its new content version (see bumpVersions)
	queued   projections.Queue // writes not sent yet (see exec)
}

func (p *batch) t(name string) string { return p.schema + "." + name }

func (p *batch) module(ctx context.Context, data any, at int64) error {
	var sql string
	var args []any
	mods := p.t("content_modules")
	switch e := data.(type) {
	case content.ModuleCreated:
		tags, _ := json.Marshal(tagsJSON(e.Tags))
		fields, err := json.Marshal(e.Fields)
		if err != nil {
			return err
		}
		slots, err := json.Marshal(Slots(e.Fields))
		if err != nil {
			return err
		}
		sql = `INSERT INTO ` + mods + ` (id, app, name, single, tags, fields, slots, module_type, created_at, created_by)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) ON CONFLICT (id) DO NOTHING`
		args = []any{e.ModuleID, e.App, e.Name, e.Single, tags, fields, slots, e.ModuleType, at, e.By}
	case content.ModuleRenamed:
		sql, args = `UPDATE `+mods+` SET name = $2, updated_at = $3, updated_by = $4, revision = revision + 1 WHERE id = $1`, []any{e.ModuleID, e.Name, at, e.By}
	case content.ModuleConfigured:
		tags, _ := json.Marshal(tagsJSON(e.Tags))
		sql, args = `UPDATE `+mods+` SET single = $2, tags = $3, updated_at = $4, updated_by = $5, revision = revision + 1 WHERE id = $1`,
			[]any{e.ModuleID, e.Single, tags, at, e.By}
	case content.ModuleFieldsChanged:
		fields, err := json.Marshal(e.Fields)
		if err != nil {
			return err
		}
		slots, err := json.Marshal(Slots(e.Fields))
		if err != nil {
			return err
		}
		sql, args = `UPDATE `+mods+` SET fields = $2, slots = $3, updated_at = $4, updated_by = $5, revision = revision + 1 WHERE id = $1`,
			[]any{e.ModuleID, fields, slots, at, e.By}
		p.rekey[e.ModuleID] = true
		delete(p.modules, e.ModuleID)
	case content.ModuleDeleted:
		// A module's items go with it: they are marked deleted too (with
		// the module's date and author), so that no read, search or sync
		// finds them live, and sync lists them as deleted. The items this
		// batch writes are left to its fold (see Apply).
		delete(p.modules, e.ModuleID)
		// live_ended_at as itemRow.noteEnd sets it.
		p.exec("delete a module's items", `UPDATE `+p.t("content_items")+` SET deleted_at = $2, deleted_by = $3, state_changed_at = $2, pub_from = NULL,
				live_ended_at = CASE WHEN published_at IS NOT NULL AND published_at < least(pub_until, $2::bigint + $5::bigint)
					THEN greatest(live_ended_at, least(pub_until, $2::bigint)) ELSE live_ended_at END
			WHERE module = $1 AND deleted_at IS NULL AND id <> ALL($4)`, e.ModuleID, at, e.By, p.order, content.SyncMargin)
		for _, t := range []string{"content_fields", "content_keys"} {
			p.exec("unpublish a deleted module's "+t, `UPDATE `+p.t(t)+` SET pub_from = NULL WHERE module = $1 AND pub_from IS NOT NULL AND item_id <> ALL($2)`,
				e.ModuleID, p.order)
		}
		sql, args = `UPDATE `+mods+` SET deleted_at = $2, deleted_by = $3, updated_at = $2, updated_by = $3, revision = revision + 1 WHERE id = $1`,
			[]any{e.ModuleID, at, e.By}
	case content.ModuleTypeSaved:
		fields, err := json.Marshal(e.Fields)
		if err != nil {
			return err
		}
		sql = `INSERT INTO ` + p.t("content_module_types") + ` (id, name, single, fields, updated_at) VALUES ($1, $2, $3, $4, $5)
			ON CONFLICT (id) DO UPDATE SET name = excluded.name, single = excluded.single, fields = excluded.fields, updated_at = excluded.updated_at`
		args = []any{e.TypeID, e.Name, e.Single, fields, at}
	case content.ModuleTypeDeleted:
		sql, args = `DELETE FROM `+p.t("content_module_types")+` WHERE id = $1`, []any{e.TypeID}
	default:
		return nil
	}
	if id := moduleID(data); id != "" {
		p.touched = append(p.touched, id)
	}
	p.exec("apply "+fmt.Sprintf("%T", data), sql, args...)
	return nil
}

// moduleID is the module a module event changes ("" for module types,
// which no search answer depends on).
func moduleID(data any) string {
	switch e := data.(type) {
	case content.ModuleCreated:
		return e.ModuleID
	case content.ModuleRenamed:
		return e.ModuleID
	case content.ModuleConfigured:
		return e.ModuleID
	case content.ModuleFieldsChanged:
		return e.ModuleID
	case content.ModuleDeleted:
		return e.ModuleID
	}
	return ""
}
