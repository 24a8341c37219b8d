// Package content answers the content queries: modules, module types,
// items, search and sync, from the content projection's tables.
package content

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	lru "github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
)

// Store reads the content tables.
type Store struct {
	pool *pgxpool.Pool
	// generic is a pool on the same database whose sessions run prepared
	// statements from generic plans (see pageInOneTrip).
	generic *pgxpool.Pool
	// modules keeps recently read modules (see scanModule and
	// KnownModule): decoding their field lists cost more than reading them.
	modules *lru.Cache[string, decodedModule]
	// mem answers searches from copies of modules' rows (see memIndex);
	// nil: every search runs in PostgreSQL.
	mem *memIndex
}

// decodedModule is a module's lists as read (tags, fields and slots
// JSON) and as decoded, and the whole module as last read.
type decodedModule struct {
	raw   []byte
	tags  []Tag
	flds  []content.Field
	slots map[string]string
	last  Module
}

// decodedModules bounds the modules a Store keeps decoded.
const decodedModules = 1024

// NewStore returns a store over pool. generic is a pool on the same
// database whose sessions have plan_cache_mode = force_generic_plan (see
// postgres.GenericPlans); only pageInOneTrip uses it.
func NewStore(pool, generic *pgxpool.Pool) *Store {
	if pool == nil || generic == nil {
		panic("content.NewStore: nil pool")
	}
	modules, err := lru.New[string, decodedModule](decodedModules)
	if err != nil {
		panic(err) // only for a size < 1
	}
	return &Store{pool: pool, generic: generic, modules: modules}
}

// KeepInMemory lets the store answer searches from in-memory copies of
// the searched modules' typed columns, holding at most maxItems items in
// all (see memIndex); 0 or less: never. Call it before the first search.
func (s *Store) KeepInMemory(maxItems int) {
	if maxItems > 0 {
		s.mem = newMemIndex(s.pool, maxItems)
	}
}

// Tag is a segmentation tag as stored (and sent).
type Tag struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Value   string `json:"value"`
	TagType string `json:"tagType"`
}

// Module is a module as read.
type Module struct {
	ID         string
	App        string
	Name       string
	Single     bool
	Tags       []Tag
	Fields     []content.Field
	ModuleType string
	CreatedAt  int64
	UpdatedAt  *int64
	DeletedAt  *int64
	CreatedBy  string
	UpdatedBy  *string
	DeletedBy  *string
	// Slots maps the fields kept in typed columns of content_fields to
	// their columns (see projections/content.Slots).
	Slots map[string]string
	// Revision counts the module's changes: a module kept since it was
	// read is the same while its revision is.
	Revision int64
}

// Item is a content item as read; dates are epoch milliseconds.
type Item struct {
	ID     string
	App    string
	Module string
	Name   string
	Values map[string]any
	// RawValues is the values as stored (a JSON object) when the search
	// asked for them so (Query.RawValues); Values is then nil.
	RawValues   []byte
	Tags        []Tag
	ExternalID  string
	PublishedAt *int64
	RemovedAt   *int64
	ArchivedAt  *int64
	DeletedAt   *int64
	CreatedAt   int64
	UpdatedAt   *int64
	CreatedBy   string
	UpdatedBy   *string
	DeletedBy   *string
	Revision    int64
}

// itemColumns is the select list scanItem reads, for content_items aliased i
// (then the columns of extra, if any).
const itemColumns = `i.id, i.app, i.module, i.name, i.vals, i.tags, i.external_id, i.published_at, i.removed_at,
	i.archived_at, i.deleted_at, i.created_at, i.updated_at, i.created_by, i.updated_by, i.deleted_by, i.revision`

// scanItem reads an item; raw leaves its values as stored (see
// Item.RawValues).
func scanItem(row pgx.Row, raw bool, extra ...any) (Item, error) {
	var it Item
	var vals, tags []byte
	err := row.Scan(append([]any{&it.ID, &it.App, &it.Module, &it.Name, &vals, &tags, &it.ExternalID, &it.PublishedAt, &it.RemovedAt,
		&it.ArchivedAt, &it.DeletedAt, &it.CreatedAt, &it.UpdatedAt, &it.CreatedBy, &it.UpdatedBy, &it.DeletedBy, &it.Revision}, extra...)...)
	if err != nil {
		return it, err
	}
	if raw {
		it.RawValues = vals
	} else if it.Values, err = decodeValues(vals); err != nil {
		return it, err
	}
	if err := json.Unmarshal(tags, &it.Tags); err != nil {
		return it, fmt.Errorf("item %s tags: %w", it.ID, err)
	}
	return it, nil
}

// decodeValues keeps numbers as json.Number, so long values keep their
// precision on the way out.
func decodeValues(b []byte) (map[string]any, error) {
	m := map[string]any{}
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, fmt.Errorf("item values: %w", err)
	}
	return m, nil
}

// moduleColumns is the select list scanModule reads.
const moduleColumns = `m.id, m.app, m.name, m.single, m.module_type, m.created_at, m.updated_at,
	m.deleted_at, m.created_by, m.updated_by, m.deleted_by, m.revision, jsonb_build_array(m.tags, m.fields, m.slots)`

// scanModule reads a module row. Its lists are decoded only when they
// differ from those last read for the module; the Module returned then
// shares its slices and maps with other readers: callers must not modify
// them.
func (s *Store) scanModule(row pgx.Row) (Module, error) {
	var m Module
	var raw []byte
	err := row.Scan(&m.ID, &m.App, &m.Name, &m.Single, &m.ModuleType, &m.CreatedAt, &m.UpdatedAt,
		&m.DeletedAt, &m.CreatedBy, &m.UpdatedBy, &m.DeletedBy, &m.Revision, &raw)
	if err != nil {
		return m, err
	}
	d, ok := s.modules.Get(m.ID)
	if ok && d.last.Revision == m.Revision && bytes.Equal(d.raw, raw) {
		return d.last, nil
	}
	if !ok || !bytes.Equal(d.raw, raw) {
		var lists [3]json.RawMessage
		if err := json.Unmarshal(raw, &lists); err != nil {
			return m, fmt.Errorf("module %s: %w", m.ID, err)
		}
		d = decodedModule{raw: raw}
		if err := json.Unmarshal(lists[0], &d.tags); err != nil {
			return m, err
		}
		dec := json.NewDecoder(bytes.NewReader(lists[1]))
		dec.UseNumber()
		if err := dec.Decode(&d.flds); err != nil {
			return m, err
		}
		if d.slots, err = decodeSlots(lists[2]); err != nil {
			return m, err
		}
	}
	m.Tags, m.Fields, m.Slots = d.tags, d.flds, d.slots
	d.last = m
	s.modules.Add(m.ID, d)
	return m, nil
}

// KnownModule returns module id as this store last read it, if it was
// live then and is still kept. It may have changed since: a search with
// it must say so (Query.Known), and is then checked against the module's
// revision.
func (s *Store) KnownModule(id string) (Module, bool) {
	d, ok := s.modules.Get(id)
	if !ok || d.last.DeletedAt != nil {
		return Module{}, false
	}
	return d.last, true
}

// Item returns one item (deleted ones too), or a NotFound fault.
func (s *Store) Item(ctx context.Context, id string) (Item, error) {
	it, err := scanItem(s.pool.QueryRow(ctx, `SELECT `+itemColumns+` FROM content_items i WHERE i.id = $1`, id), false)
	if errors.Is(err, pgx.ErrNoRows) {
		return it, fault.NotFoundf("Instance not found").With("id", id)
	}
	return it, err
}

// Items returns the items with the given ids that exist, in no order,
// with their values as stored (RawValues): a batch's answer passes them on
// as they are, without decoding and encoding them again.
func (s *Store) Items(ctx context.Context, ids []string) ([]Item, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+itemColumns+` FROM content_items i WHERE i.id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Item
	for rows.Next() {
		it, err := scanItem(rows, true)
		if err != nil {
			return nil, err
		}
		out = append(out, it)
	}
	return out, rows.Err()
}

// ItemPlace is where an item lives: its app and module.
type ItemPlace struct{ ID, App, Module string }

// ItemPlaces returns the app and module of each of the items ids that
// exist (deleted ones too), in no particular order: what a right on an
// item needs, without the item's values.
func (s *Store) ItemPlaces(ctx context.Context, ids []string) ([]ItemPlace, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, app, module FROM content_items WHERE id = ANY($1)`, ids)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[ItemPlace])
}

// Module returns one module (deleted ones too), or a NotFound fault.
func (s *Store) Module(ctx context.Context, id string) (Module, error) {
	m, err := s.scanModule(s.pool.QueryRow(ctx, `SELECT `+moduleColumns+` FROM content_modules m WHERE m.id = $1`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return m, fault.NotFoundf("module %s not found", id).With("id", id)
	}
	return m, err
}

// ModuleQuery filters the module list.
type ModuleQuery struct {
	Apps    []string // the apps the caller may see
	AllApps bool     // admins: every app
	App     string   // optional filter
	Names   []string // optional: modules with these names (case-insensitive)
	IDs     []string // optional: modules with these ids
	Deleted bool     // deleted modules instead of live ones
}

// Modules lists the live modules the query selects, most recently updated
// first (HALO's default sort "updatedAt desc"); with Deleted, the deleted
// ones, most recently deleted first.
func (s *Store) Modules(ctx context.Context, q ModuleQuery) ([]Module, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+moduleColumns+` FROM content_modules m
		WHERE (m.deleted_at IS NOT NULL) = $6 AND ($1 OR m.app = ANY($2)) AND ($3 = '' OR m.app = $3)
		  AND ($4::text[] IS NULL OR lower(m.name) = ANY($4)) AND ($5::text[] IS NULL OR m.id = ANY($5))
		ORDER BY coalesce(m.deleted_at, m.updated_at, m.created_at) DESC, m.id`,
		q.AllApps, q.Apps, q.App, lowerAll(q.Names), q.IDs, q.Deleted)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Module{}
	for rows.Next() {
		m, err := s.scanModule(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	// A module asked for by id and not found (deleted) is known no more.
	for _, id := range q.IDs {
		if !q.Deleted && !slices.ContainsFunc(out, func(m Module) bool { return m.ID == id }) {
			s.modules.Remove(id)
		}
	}
	return out, nil
}

// ModuleType is a module type as read.
type ModuleType struct {
	ID        string
	Name      string
	Single    bool
	Fields    []content.Field
	UpdatedAt int64
}

// ModuleTypes lists every module type by name.
func (s *Store) ModuleTypes(ctx context.Context) ([]ModuleType, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, name, single, fields, updated_at FROM content_module_types ORDER BY lower(name), id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []ModuleType{}
	for rows.Next() {
		var t ModuleType
		var fields []byte
		if err := rows.Scan(&t.ID, &t.Name, &t.Single, &fields, &t.UpdatedAt); err != nil {
			return nil, err
		}
		d := json.NewDecoder(bytes.NewReader(fields))
		d.UseNumber()
		if err := d.Decode(&t.Fields); err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

func lowerAll(ss []string) []string {
	if ss == nil {
		return nil
	}
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strings.ToLower(s)
	}
	return out
}

// LiveItemModules maps each of ids that is a live (not deleted) item of
// app to its module.
func (s *Store) LiveItemModules(ctx context.Context, app string, ids []string) (map[string]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id, module FROM content_items WHERE id = ANY($1) AND app = $2 AND deleted_at IS NULL`, ids, app)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var id, m string
		if err := rows.Scan(&id, &m); err != nil {
			return nil, err
		}
		out[id] = m
	}
	return out, rows.Err()
}

// ModuleValues calls fn with the values of every live item of a module.
func (s *Store) ModuleValues(ctx context.Context, module string, fn func(id string, values map[string]any) error) error {
	return s.eachItem(ctx, `SELECT id, vals FROM content_items WHERE module = $1 AND deleted_at IS NULL ORDER BY id`, module,
		func(id string, b []byte) error {
			v, err := decodeValues(b)
			if err != nil {
				return err
			}
			return fn(id, v)
		})
}

// ModuleTags calls fn with the tags of every live item of a module that
// holds at least one tag.
func (s *Store) ModuleTags(ctx context.Context, module string, fn func(id string, tags []content.Tag) error) error {
	return s.eachItem(ctx, `SELECT id, tags FROM content_items
		WHERE module = $1 AND deleted_at IS NULL AND tags <> '[]'::jsonb ORDER BY id`, module,
		func(id string, b []byte) error {
			var stored []Tag
			if err := json.Unmarshal(b, &stored); err != nil {
				return fmt.Errorf("item %s tags: %w", id, err)
			}
			tags := make([]content.Tag, len(stored))
			for i, t := range stored {
				tags[i] = content.Tag{ID: t.ID, Name: t.Name, Value: t.Value, TagType: t.TagType}
			}
			return fn(id, tags)
		})
}

// eachItem runs query (an item's id and one jsonb column, for a module)
// and calls fn with each row, stopping at its first error.
func (s *Store) eachItem(ctx context.Context, query, module string, fn func(id string, b []byte) error) error {
	rows, err := s.pool.Query(ctx, query, module)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var id string
		var b []byte
		if err := rows.Scan(&id, &b); err != nil {
			return err
		}
		if err := fn(id, b); err != nil {
			return err
		}
	}
	return rows.Err()
}

// ModuleItemIDs lists the ids of a module's live items.
func (s *Store) ModuleItemIDs(ctx context.Context, module string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM content_items WHERE module = $1 AND deleted_at IS NULL ORDER BY id`, module)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}

// Version is an app's content version: it changes whenever the projection
// applies a change to one of the app's modules or items (0 before any).
func (s *Store) Version(ctx context.Context, app string) (int64, error) {
	var v int64
	err := s.pool.QueryRow(ctx, `SELECT coalesce((SELECT version FROM content_versions WHERE app = $1), 0)`, app).Scan(&v)
	return v, err
}

// Freshness is what a search answer about an app's published content
// depends on besides its query: the app's content version, and the first
// instant after now at which a scheduled publication or expiry of one of
// its items takes effect (math.MaxInt64 when none is pending). The answer stays
// right while the version is unchanged and that instant has not come.
type Freshness struct {
	Version int64
	Until   int64 // epoch ms
}

// freshnessColumns selects an app's Freshness as two columns (version,
// until), given the placeholders of the app, of now and of math.MaxInt64.
func freshnessColumns(app, now, never string) string {
	return `coalesce((SELECT version FROM content_versions WHERE app = ` + app + `), 0),
		least(coalesce((SELECT min(pub_from) FROM content_items WHERE app = ` + app + ` AND pub_from > ` + now + `), ` + never + `),
		      coalesce((SELECT min(pub_until) FROM content_items WHERE app = ` + app + ` AND pub_until > ` + now + `), ` + never + `))`
}
