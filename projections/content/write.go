package content

// Writing a batch: loading the rows it changes and the modules' fields,
// then writing items, their typed columns and their keys set-wise, and
// recomputing the keys of a module whose fields changed.

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/projections"
)

// load reads the current rows of the touched items that exist already.
func (p *batch) load(ctx context.Context, ids []string) error {
	if err := p.flush(ctx); err != nil {
		return err
	}
	return projections.LoadJSON(ctx, p.db, `SELECT row_to_json(x) FROM (SELECT `+itemNames+` FROM `+p.t("content_items")+
		` WHERE id = ANY($1)) x`, []any{ids}, func(r *itemRow) { p.rows[r.ID], p.stored[r.ID] = r, true })
}

// moduleDef is what the projector needs of a module: its fields, the
// columns of content_fields they are kept in, and when and by whom it was
// deleted (nil: live).
type moduleDef struct {
	app       string
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
	if err := p.flush(ctx); err != nil {
		return moduleDef{}, err
	}
	var b []byte
	var m moduleDef
	err := p.db.QueryRow(ctx, `SELECT app, fields, deleted_at, deleted_by FROM `+p.t("content_modules")+` WHERE id = $1`, module).
		Scan(&m.app, &b, &m.deletedAt, &m.deletedBy)
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
		f := fieldsRow(r.ID, r.Module, m.fields, m.slots, r.Vals, r.PubFrom, r.PubUntil)
		f.Version = p.versions[r.App]
		frows = append(frows, f)
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
		p.exec("delete the keys of stored items", `DELETE FROM `+p.t("content_keys")+` WHERE item_id = ANY($1)`, storedIDs)
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
	p.exec("write items", sql,
		ids, apps, modules, names, vals, tags, tagKeys, externalIDs, publishedAt, removedAt, archivedAt, deletedAt,
		createdAt, updatedAt, createdBy, updatedBy, deletedBy, revision, stateChangedAt, pubFrom, pubUntil, liveEndedAt)
	return nil
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
		ids, modules, eqs, versions := make([]string, n), make([]string, n), make([]string, n), make([]int64, n)
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
			tx[j], eqs[j], versions[j] = r.tx(), textArray(r.eqs()), r.Version
		}
		args := []any{ids, modules, from, until}
		for _, c := range slots {
			args = append(args, c)
		}
		args = append(args, tx, eqs, versions)
		sql := `INSERT INTO ` + p.t("content_fields") + ` (` + fieldsNames + `)
			SELECT ` + fieldsSelect + ` FROM unnest(` + fieldsParams + `) AS x (` + fieldsNames + `)`
		if upsert {
			sql += ` ON CONFLICT (item_id) DO UPDATE SET ` + fieldsSet
		}
		p.exec("write fields", sql, args...)
		rows = rows[n:]
	}
	return nil
}

// The column list, unnest parameters, select list and upsert assignments
// of content_fields.
var fieldsNames, fieldsParams, fieldsSelect, fieldsSet = func() (string, string, string, string) {
	names := slices.Concat([]string{"item_id", "module", "pub_from", "pub_until"}, SlotColumns, WholeColumns)
	names = append(names, "tx", "eqs", "version")
	var params, set []string
	for i, c := range names {
		typ := "text[]"
		switch {
		case c == "eqs":
			// An array per row: unnest would take a text[][] apart element
			// by element, so each row's array goes as the text of an array.
			typ = "text[]"
		case c == "pub_from" || c == "pub_until" || c == "version":
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
	sel := strings.Join(names[:len(names)-3], ", ") + ", lower(tx), eqs::text[], version"
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
		p.exec("write keys", `INSERT INTO `+p.t("content_keys")+` (item_id, module, field, loc, s, n, pub_from, pub_until, x)
			SELECT item_id, module, field, loc, s, n, pub_from, pub_until, x FROM jsonb_to_recordset($1::jsonb)
			AS r(item_id text, module text, field text, loc text, s text, n numeric, pub_from bigint, pub_until bigint, x text)`, data)
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
	p.exec("delete a module's keys", `DELETE FROM `+p.t("content_keys")+` WHERE module = $1`, module)
	if err := p.flush(ctx); err != nil {
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
		f := fieldsRow(id, module, m.fields, m.slots, v, from, until)
		f.Version = p.versions[m.app]
		frows = append(frows, f)
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
