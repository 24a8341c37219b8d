package content

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
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
	for _, r := range events {
		if id := itemID(r.Data); id != "" {
			if _, seen := p.rows[id]; !seen {
				p.order = append(p.order, id)
				p.rows[id] = nil
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
		if err := p.load(ctx, p.order); err != nil {
			return err
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
		if err := p.write(ctx, p.order); err != nil {
			return err
		}
	}
	for m := range p.rekey {
		if err := p.rekeyModule(ctx, m); err != nil {
			return err
		}
	}
	return p.bumpVersions(ctx)
}

// bumpVersions gives every app the batch touched a new content version:
// greater than the last one and than the clock in microseconds, so that
// versions never repeat, not even across a rebuild.
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
	_, err := p.db.Exec(ctx, `INSERT INTO `+p.t("content_versions")+` AS v (app, version)
		SELECT app, (extract(epoch FROM clock_timestamp()) * 1000000)::bigint
		FROM (SELECT unnest($1::text[]) UNION SELECT app FROM `+p.t("content_modules")+` WHERE id = ANY($2)) a (app)
		ON CONFLICT (app) DO UPDATE SET version = greatest(v.version + 1, excluded.version)`, list, p.touched)
	return err
}

type batch struct {
	db       projections.DB
	schema   string
	rows     map[string]*itemRow
	stored   map[string]bool // items whose rows load found: the others are new
	rekey    map[string]bool
	modules  map[string]moduleDef
	touched  []string        // modules changed by module events
	order    []string        // the items the batch's events touch, in order of first event
	deleting map[string]bool // the modules the batch deletes
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
		if _, err := p.db.Exec(ctx, `UPDATE `+p.t("content_items")+` SET deleted_at = $2, deleted_by = $3, state_changed_at = $2, pub_from = NULL,
				live_ended_at = CASE WHEN published_at IS NOT NULL AND published_at < least(pub_until, $2::bigint + $5::bigint)
					THEN greatest(live_ended_at, least(pub_until, $2::bigint)) ELSE live_ended_at END
			WHERE module = $1 AND deleted_at IS NULL AND id <> ALL($4)`, e.ModuleID, at, e.By, p.order, content.SyncMargin); err != nil {
			return err
		}
		for _, t := range []string{"content_fields", "content_keys"} {
			if _, err := p.db.Exec(ctx, `UPDATE `+p.t(t)+` SET pub_from = NULL WHERE module = $1 AND pub_from IS NOT NULL AND item_id <> ALL($2)`,
				e.ModuleID, p.order); err != nil {
				return err
			}
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
	_, err := p.db.Exec(ctx, sql, args...)
	return err
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

// load reads the current rows of the touched items that exist already.
func (p *batch) load(ctx context.Context, ids []string) error {
	return projections.LoadJSON(ctx, p.db, `SELECT row_to_json(x) FROM (SELECT `+itemNames+` FROM `+p.t("content_items")+
		` WHERE id = ANY($1)) x`, []any{ids}, func(r *itemRow) { p.rows[r.ID], p.stored[r.ID] = r, true })
}

// moduleDef is what the projector needs of a module: its fields, the
// columns of content_fields they are kept in, and when and by whom it was
// deleted (nil: live).
type moduleDef struct {
	fields    []content.Field
	slots     map[string]string
	deletedAt *int64
	deletedBy *string
}

func (p *batch) fields(ctx context.Context, module string) (moduleDef, error) {
	if p.modules == nil {
		p.modules = map[string]moduleDef{}
	}
	if m, ok := p.modules[module]; ok {
		return m, nil
	}
	var b []byte
	var m moduleDef
	err := p.db.QueryRow(ctx, `SELECT fields, deleted_at, deleted_by FROM `+p.t("content_modules")+` WHERE id = $1`, module).
		Scan(&b, &m.deletedAt, &m.deletedBy)
	if err != nil {
		return moduleDef{}, fmt.Errorf("module %s of an item: %w", module, err)
	}
	d := json.NewDecoder(strings.NewReader(string(b)))
	d.UseNumber()
	if err := d.Decode(&m.fields); err != nil {
		return moduleDef{}, err
	}
	m.slots = Slots(m.fields)
	p.modules[module] = m
	return m, nil
}

func (p *batch) write(ctx context.Context, order []string) error {
	rows := make([]*itemRow, 0, len(order))
	var keys []keyRow
	var frows []fieldRow
	for _, id := range order {
		r := p.rows[id]
		if r == nil {
			continue // events of an item whose creation this projection never saw
		}
		r.derive()
		rows = append(rows, r)
		if p.rekey[r.Module] {
			continue
		}
		m, err := p.fields(ctx, r.Module)
		if err != nil {
			return err
		}
		keys = Keys(keys, r.ID, r.Module, m.fields, m.slots, r.Vals, r.PubFrom, r.PubUntil)
		frows = append(frows, fieldsRow(r.ID, r.Module, m.fields, m.slots, r.Vals, r.PubFrom, r.PubUntil))
	}
	if len(rows) == 0 {
		return nil
	}
	// New items are inserted, stored ones replaced: an upsert costs every
	// row a speculative insertion, and new items have no key rows to
	// delete.
	var fresh, stored []*itemRow
	var freshFields, storedFields []fieldRow
	var storedIDs []string
	for _, r := range rows {
		if p.stored[r.ID] {
			stored, storedIDs = append(stored, r), append(storedIDs, r.ID)
		} else {
			fresh = append(fresh, r)
		}
	}
	for _, f := range frows {
		if p.stored[f.ItemID] {
			storedFields = append(storedFields, f)
		} else {
			freshFields = append(freshFields, f)
		}
	}
	if err := p.writeItems(ctx, fresh, false); err != nil {
		return fmt.Errorf("content projection, write items: %w", err)
	}
	if err := p.writeItems(ctx, stored, true); err != nil {
		return fmt.Errorf("content projection, write items: %w", err)
	}
	if len(storedIDs) > 0 {
		if _, err := p.db.Exec(ctx, `DELETE FROM `+p.t("content_keys")+` WHERE item_id = ANY($1)`, storedIDs); err != nil {
			return err
		}
	}
	if err := p.insertKeys(ctx, keys); err != nil {
		return err
	}
	if err := p.writeFields(ctx, freshFields, false); err != nil {
		return err
	}
	if err := p.writeFields(ctx, storedFields, true); err != nil {
		return err
	}
	return nil
}

// writeItems inserts content_items rows (upsert: or replaces them), one
// array per column: the database reads typed values straight from the
// parameters instead of parsing one large JSON document and converting
// every field of it.
func (p *batch) writeItems(ctx context.Context, rows []*itemRow, upsert bool) error {
	n := len(rows)
	if n == 0 {
		return nil
	}
	// Typed slices: pgx encodes them without reflection (FlatArray for
	// the element types it has no fast path for).
	ids, apps, modules, names := make([]string, n), make([]string, n), make([]string, n), make([]string, n)
	externalIDs, createdBy, tagKeys := make([]string, n), make([]string, n), make([]string, n)
	vals, tags := make(pgtype.FlatArray[[]byte], n), make(pgtype.FlatArray[[]byte], n)
	publishedAt, removedAt := make(pgtype.FlatArray[*int64], n), make(pgtype.FlatArray[*int64], n)
	archivedAt, deletedAt := make(pgtype.FlatArray[*int64], n), make(pgtype.FlatArray[*int64], n)
	updatedAt, pubFrom, liveEndedAt := make(pgtype.FlatArray[*int64], n), make(pgtype.FlatArray[*int64], n), make(pgtype.FlatArray[*int64], n)
	createdAt, revision, stateChangedAt, pubUntil := make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
	updatedBy, deletedBy := make(pgtype.FlatArray[*string], n), make(pgtype.FlatArray[*string], n)
	for i, r := range rows {
		var err error
		if r.Vals != nil {
			if vals[i], err = json.Marshal(r.Vals); err != nil {
				return err
			}
		}
		if r.Tags != nil {
			if tags[i], err = json.Marshal(r.Tags); err != nil {
				return err
			}
		}
		ids[i], apps[i], modules[i], names[i], externalIDs[i], createdBy[i] = r.ID, r.App, r.Module, r.Name, r.ExternalID, r.CreatedBy
		tagKeys[i] = textArray(r.TagKeys)
		publishedAt[i], removedAt[i], archivedAt[i], deletedAt[i] = r.PublishedAt, r.RemovedAt, r.ArchivedAt, r.DeletedAt
		updatedAt[i], pubFrom[i], liveEndedAt[i] = r.UpdatedAt, r.PubFrom, r.LiveEndedAt
		createdAt[i], revision[i], stateChangedAt[i], pubUntil[i] = r.CreatedAt, r.Revision, r.StateChangedAt, r.PubUntil
		updatedBy[i], deletedBy[i] = r.UpdatedBy, r.DeletedBy
	}
	sql := `INSERT INTO ` + p.t("content_items") + ` (` + itemNames + `)
		SELECT ` + itemSelect + ` FROM unnest(` + itemParams + `) AS x (` + itemNames + `)`
	if upsert {
		sql += ` ON CONFLICT (id) DO UPDATE SET ` + itemSet
	}
	_, err := p.db.Exec(ctx, sql,
		ids, apps, modules, names, vals, tags, tagKeys, externalIDs, publishedAt, removedAt, archivedAt, deletedAt,
		createdAt, updatedAt, createdBy, updatedBy, deletedBy, revision, stateChangedAt, pubFrom, pubUntil, liveEndedAt)
	return err
}

// The unnest parameters, select list and upsert assignments of
// content_items, from itemCols. A row's tag_keys travels as the text of an
// array (unnest would take an array of arrays apart element by element).
var itemParams, itemSelect, itemSet = func() (string, string, string) {
	var params, sel, set []string
	for i, c := range strings.Split(itemCols, ",") {
		f := strings.Fields(c)
		name, typ := f[0], f[1]
		switch name {
		case "tag_keys":
			params = append(params, "$"+strconv.Itoa(i+1)+"::text[]")
			sel = append(sel, "tag_keys::text[]")
		default:
			params = append(params, "$"+strconv.Itoa(i+1)+"::"+typ+"[]")
			sel = append(sel, name)
		}
		if name != "id" {
			set = append(set, name+" = excluded."+name)
		}
	}
	return strings.Join(params, ", "), strings.Join(sel, ", "), strings.Join(set, ", ")
}()

// textArray is the PostgreSQL text of a text[] holding list.
func textArray(list []string) string {
	var b strings.Builder
	b.WriteByte('{')
	for i, s := range list {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteByte('"')
		for j := 0; j < len(s); j++ {
			if s[j] == '"' || s[j] == '\\' {
				b.WriteByte('\\')
			}
			b.WriteByte(s[j])
		}
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

// writeFields inserts content_fields rows (upsert: or replaces them), one
// array per column.
func (p *batch) writeFields(ctx context.Context, rows []fieldRow, upsert bool) error {
	const chunk = 5000
	for len(rows) > 0 {
		n := min(chunk, len(rows))
		ids, modules, eqs := make([]string, n), make([]string, n), make([]string, n)
		from, until, tx := make(pgtype.FlatArray[*int64], n), make([]int64, n), make(pgtype.FlatArray[*string], n)
		slots := make([]pgtype.FlatArray[*string], TextSlots+NumberSlots+TextSlots)
		for i := range slots {
			slots[i] = make(pgtype.FlatArray[*string], n)
		}
		for j, r := range rows[:n] {
			ids[j], modules[j], from[j], until[j] = r.ItemID, r.Module, r.PubFrom, r.PubUntil
			for i, s := range r.T {
				slots[i][j] = s
			}
			for i, v := range r.N {
				if v != nil {
					slots[TextSlots+i][j] = strPtr(v.String())
				}
			}
			for i, x := range r.X {
				slots[TextSlots+NumberSlots+i][j] = x
			}
			tx[j], eqs[j] = r.tx(), textArray(r.eqs())
		}
		args := []any{ids, modules, from, until}
		for _, c := range slots {
			args = append(args, c)
		}
		args = append(args, tx, eqs)
		sql := `INSERT INTO ` + p.t("content_fields") + ` (` + fieldsNames + `)
			SELECT ` + fieldsSelect + ` FROM unnest(` + fieldsParams + `) AS x (` + fieldsNames + `)`
		if upsert {
			sql += ` ON CONFLICT (item_id) DO UPDATE SET ` + fieldsSet
		}
		if _, err := p.db.Exec(ctx, sql, args...); err != nil {
			return fmt.Errorf("content projection, write fields: %w", err)
		}
		rows = rows[n:]
	}
	return nil
}

// The column list, unnest parameters, select list and upsert assignments
// of content_fields.
var fieldsNames, fieldsParams, fieldsSelect, fieldsSet = func() (string, string, string, string) {
	names := slices.Concat([]string{"item_id", "module", "pub_from", "pub_until"}, SlotColumns, WholeColumns)
	names = append(names, "tx", "eqs")
	var params, set []string
	for i, c := range names {
		typ := "text[]"
		switch {
		case c == "eqs":
			// An array per row: unnest would take a text[][] apart element
			// by element, so each row's array goes as the text of an array.
			typ = "text[]"
		case c == "pub_from" || c == "pub_until":
			typ = "bigint[]"
		case slices.Contains(SlotColumns, c) && c[0] == 'n':
			typ = "numeric[]"
		}
		params = append(params, "$"+strconv.Itoa(i+1)+"::"+typ)
		if c != "item_id" {
			set = append(set, c+" = excluded."+c)
		}
	}
	// tx is kept lower-cased (see Layout).
	sel := strings.Join(names[:len(names)-2], ", ") + ", lower(tx), eqs::text[]"
	return strings.Join(names, ", "), strings.Join(params, ", "), sel, strings.Join(set, ", ")
}()

func (p *batch) insertKeys(ctx context.Context, keys []keyRow) error {
	// Written field by field, a field's key rows of one batch share pages:
	// a search that reads many keys of one field (a like, a range) then
	// reads far fewer pages than with the rows in item order.
	slices.SortStableFunc(keys, func(a, b keyRow) int {
		return cmp.Or(strings.Compare(a.Module, b.Module), strings.Compare(a.Field, b.Field))
	})
	const chunk = 20000
	for len(keys) > 0 {
		n := min(chunk, len(keys))
		data, err := json.Marshal(keys[:n])
		if err != nil {
			return err
		}
		if _, err := p.db.Exec(ctx, `INSERT INTO `+p.t("content_keys")+` (item_id, module, field, loc, s, n, pub_from, pub_until, x)
			SELECT item_id, module, field, loc, s, n, pub_from, pub_until, x FROM jsonb_to_recordset($1::jsonb)
			AS r(item_id text, module text, field text, loc text, s text, n numeric, pub_from bigint, pub_until bigint, x text)`, data); err != nil {
			return fmt.Errorf("content projection, write keys: %w", err)
		}
		keys = keys[n:]
	}
	return nil
}

// rekeyModule recomputes the keys and the content_fields rows of every
// item of a module whose fields changed.
func (p *batch) rekeyModule(ctx context.Context, module string) error {
	m, err := p.fields(ctx, module)
	if err != nil {
		return err
	}
	if _, err := p.db.Exec(ctx, `DELETE FROM `+p.t("content_keys")+` WHERE module = $1`, module); err != nil {
		return err
	}
	rows, err := p.db.Query(ctx, `SELECT id, vals, pub_from, pub_until FROM `+p.t("content_items")+` WHERE module = $1`, module)
	if err != nil {
		return err
	}
	var keys []keyRow
	var frows []fieldRow
	for rows.Next() {
		var id string
		var vals []byte
		var from *int64
		var until int64
		if err := rows.Scan(&id, &vals, &from, &until); err != nil {
			rows.Close()
			return err
		}
		v := map[string]any{}
		d := json.NewDecoder(strings.NewReader(string(vals)))
		d.UseNumber()
		if err := d.Decode(&v); err != nil {
			rows.Close()
			return err
		}
		keys = Keys(keys, id, module, m.fields, m.slots, v, from, until)
		frows = append(frows, fieldsRow(id, module, m.fields, m.slots, v, from, until))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	if err := p.insertKeys(ctx, keys); err != nil {
		return err
	}
	return p.writeFields(ctx, frows, true)
}

// Keys appends an item's key rows (see Projector) to keys: those of its
// indexed fields that have no column in content_fields (slots).
func Keys(keys []keyRow, id, module string, fields []content.Field, slots map[string]string, vals map[string]any, from *int64, until int64) []keyRow {
	row := func(field, loc string, s *string, n *json.Number) keyRow {
		k := keyRow{ItemID: id, Module: module, Field: field, Loc: loc, N: n, PubFrom: from, PubUntil: until}
		k.S, k.X = keyText(s)
		return k
	}
	for _, f := range fields {
		v := vals[f.Name]
		kind := f.Kind()
		if _, ok := slots[f.Name]; ok {
			continue
		}
		switch {
		case !f.Indexed():
			continue
		case kind == content.KindLocalized:
			m, _ := v.(map[string]any)
			added := false
			for loc, e := range m {
				if s, ok := e.(string); ok {
					keys = append(keys, row(f.Name, loc, &s, nil))
					added = true
				}
			}
			if !added {
				keys = append(keys, row(f.Name, "", nil, nil))
			}
		case kind.Multi() || kind == content.KindList:
			arr, _ := v.([]any)
			added := false
			for _, e := range arr {
				if s, n, ok := scalar(e); ok {
					keys = append(keys, row(f.Name, "", s, n))
					added = true
				}
			}
			if !added {
				keys = append(keys, row(f.Name, "", nil, nil))
			}
		default:
			s, n, _ := scalar(v)
			keys = append(keys, row(f.Name, "", s, n))
		}
	}
	return keys
}

// scalar splits a scalar JSON value into the key's text (whole) or
// number.
func scalar(v any) (*string, *json.Number, bool) {
	switch x := v.(type) {
	case string:
		return &x, nil, true
	case bool:
		return strPtr(strconv.FormatBool(x)), nil, true
	case json.Number:
		return nil, &x, true
	case float64:
		n := json.Number(strconv.FormatFloat(x, 'f', -1, 64))
		return nil, &n, true
	case int:
		n := json.Number(strconv.Itoa(x))
		return nil, &n, true
	case int64:
		n := json.Number(strconv.FormatInt(x, 10))
		return nil, &n, true
	}
	return nil, nil, false
}

// keyText is how a text is indexed: its KeyCut and, when that is not the
// whole text, the whole text (nil otherwise).
func keyText(s *string) (key, whole *string) {
	if s == nil {
		return nil, nil
	}
	if k := KeyCut(*s); k != *s {
		return &k, s
	}
	return s, nil
}
