package content_test

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"math/big"
	"math/rand/v2"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	projcontent "github.com/halocms/halocms/projections/content"
)

// ---- event log helpers ----

// recorder builds a log of recorded events with increasing positions.
type recorder struct {
	tx  uint64
	pos int64
	at  time.Time
	evs []event.Recorded
	ver map[string]int64 // each stream's version
}

func newRecorder(start time.Time) *recorder { return &recorder{at: start, ver: map[string]int64{}} }

// add records data as one transaction on stream, each event step later
// than the previous one.
func (r *recorder) add(stream string, step time.Duration, data ...any) []event.Recorded {
	r.tx++
	first := len(r.evs)
	for _, d := range data {
		r.pos++
		r.ver[stream]++
		r.at = r.at.Add(step)
		r.evs = append(r.evs, event.Recorded{
			Position:      event.Position{TxID: r.tx, Pos: r.pos},
			StreamID:      stream,
			StreamVersion: r.ver[stream],
			Type:          d.(interface{ EventType() string }).EventType(),
			SchemaVersion: 1,
			Data:          d,
			RecordedAt:    r.at,
		})
	}
	return r.evs[first:]
}

// at records one event at an exact instant.
func (r *recorder) addAt(at time.Time, stream string, data any) event.Recorded {
	r.at = at.Add(-time.Millisecond)
	return r.add(stream, time.Millisecond, data)[0]
}

func setup(t *testing.T) (context.Context, *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	pool := pgtest.Pool(t)
	if err := (projcontent.Projector{}).Create(ctx, pool, "public"); err != nil {
		t.Fatalf("create tables: %v", err)
	}
	return ctx, pool
}

// apply applies events as one batch in one transaction.
func apply(t *testing.T, ctx context.Context, pool *pgxpool.Pool, evs ...event.Recorded) {
	t.Helper()
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	if err := (projcontent.Projector{}).Apply(ctx, tx, "public", evs); err != nil {
		t.Fatalf("apply %d events (first %s at %v): %v", len(evs), evs[0].Type, evs[0].Position, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}

// allKeys is every key row, as content_keys holds them before fields got
// typed columns: content_keys plus one row per content_fields column a
// module's slot map names. The tests check the rows of both tables
// against one set of rules through it.
const allKeys = `(SELECT item_id, module, field, loc, s, n, pub_from, pub_until, x FROM content_keys
	UNION ALL
	SELECT f.item_id, f.module, e.key, '',
		CASE e.value WHEN 't1' THEN f.t1 WHEN 't2' THEN f.t2 WHEN 't3' THEN f.t3 WHEN 't4' THEN f.t4 WHEN 't5' THEN f.t5 WHEN 't6' THEN f.t6 END,
		CASE e.value WHEN 'n1' THEN f.n1 WHEN 'n2' THEN f.n2 WHEN 'n3' THEN f.n3 WHEN 'n4' THEN f.n4 END,
		f.pub_from, f.pub_until,
		CASE e.value WHEN 't1' THEN f.x1 WHEN 't2' THEN f.x2 WHEN 't3' THEN f.x3 WHEN 't4' THEN f.x4 WHEN 't5' THEN f.x5 WHEN 't6' THEN f.x6 END
	FROM content_fields f JOIN content_modules m ON m.id = f.module, jsonb_each_text(m.slots) e)`

type dump struct{ modules, types, items, keys, fields []string }

func dumpTables(t *testing.T, ctx context.Context, db *pgxpool.Pool) dump {
	t.Helper()
	return dump{
		modules: pgtest.Strings(t, db, `SELECT row_to_json(m)::text FROM content_modules m ORDER BY id`),
		types:   pgtest.Strings(t, db, `SELECT row_to_json(m)::text FROM content_module_types m ORDER BY id`),
		items:   pgtest.Strings(t, db, `SELECT row_to_json(i)::text FROM content_items i ORDER BY id`),
		keys: pgtest.Strings(t, db, `SELECT row_to_json(k)::text FROM content_keys k
			ORDER BY item_id, module, field, loc, s, n, pub_from, pub_until`),
		// version: the batch that wrote the row (see TestFieldsVersions).
		fields: pgtest.Strings(t, db, `SELECT (to_jsonb(f) - 'version')::text FROM content_fields f ORDER BY item_id`),
	}
}

func sameRows(t *testing.T, what string, got, want []string) {
	t.Helper()
	if slices.Equal(got, want) {
		return
	}
	for i := 0; i < max(len(got), len(want)); i++ {
		var g, w string
		if i < len(got) {
			g = got[i]
		}
		if i < len(want) {
			w = want[i]
		}
		if g != w {
			t.Fatalf("%s differ (%d vs %d rows); first difference at row %d:\n got %s\nwant %s", what, len(got), len(want), i, g, w)
		}
	}
}

func ms(t time.Time) int64 { return t.UnixMilli() }

// msTime is an instant with millisecond precision, as the projection stores it.
func msTime(v int64) time.Time { return time.UnixMilli(v).UTC() }

func fid(name string) string {
	for _, ft := range content.FieldTypes {
		if ft.Name == name {
			return ft.ID
		}
	}
	panic("no field type " + name)
}

// ---- (a) random history: one batch equals many small batches ----

type itemHist struct {
	item  content.Item
	snaps []content.Item
}

type world struct {
	t       *testing.T
	rng     *rand.Rand
	rec     *recorder
	modules map[string]content.Module
	modIDs  []string
	items   map[string]*itemHist
	itemIDs []string
	nField  int
	counts  map[string]int
}

var choiceValues = []string{"a", "b", "c", "d"}

var randomTypes = []string{"Text", "Number", "Website", "Youtube", "Image", "Date", "Time", "Boolean", "Color",
	"Multiple relation", "Single relation", "Long text", "Object", "List", "Localized text", "Video",
	"Multiple choice", "Single choice", "Multiple select dropdown", "Single select dropdown", "Audio"}

func (w *world) newField(typ string) content.Field {
	w.nField++
	f := content.Field{ID: fmt.Sprintf("fld%03d", w.nField), Name: fmt.Sprintf("f%d_%s", w.nField, strings.ReplaceAll(strings.ToLower(typ), " ", "_")), Type: fid(typ)}
	if strings.Contains(typ, "choice") || strings.Contains(typ, "select") {
		f.Rules.Values = choiceValues
	}
	if typ == "Text" && w.rng.IntN(4) == 0 {
		f.Localized = true
	}
	return f
}

func (w *world) now() time.Time { return w.rec.at }

// emit records the events and folds them into the world's state.
func (w *world) emit(stream string, evs []any) {
	if len(evs) == 0 {
		return
	}
	w.rec.add(stream, time.Duration(1+w.rng.IntN(4000))*time.Millisecond, evs...)
	for _, e := range evs {
		w.counts[e.(interface{ EventType() string }).EventType()]++
		switch e := e.(type) {
		case content.ModuleCreated:
			w.modules[e.ModuleID] = content.Module{}.Apply(e)
			w.modIDs = append(w.modIDs, e.ModuleID)
		case content.ModuleRenamed, content.ModuleConfigured, content.ModuleFieldsChanged, content.ModuleDeleted:
			id := ""
			switch e := e.(type) {
			case content.ModuleRenamed:
				id = e.ModuleID
			case content.ModuleConfigured:
				id = e.ModuleID
			case content.ModuleFieldsChanged:
				id = e.ModuleID
			case content.ModuleDeleted:
				id = e.ModuleID
			}
			w.modules[id] = w.modules[id].Apply(e)
		case content.ItemCreated:
			h := &itemHist{item: content.Item{}.Apply(e)}
			h.snaps = []content.Item{h.item}
			w.items[e.ItemID] = h
			w.itemIDs = append(w.itemIDs, e.ItemID)
		case content.ItemEvent:
			h := w.items[e.Item()]
			h.item = h.item.Apply(e)
			h.snaps = append(h.snaps, h.item)
		}
	}
}

func (w *world) text(long bool) string {
	if long {
		return strings.Repeat("é", 480+w.rng.IntN(100)) + strconv.Itoa(w.rng.IntN(100))
	}
	return fmt.Sprintf("w%d", w.rng.IntN(50))
}

func (w *world) itemRef() string {
	if len(w.itemIDs) > 0 && w.rng.IntN(3) > 0 {
		return w.itemIDs[w.rng.IntN(len(w.itemIDs))]
	}
	return fmt.Sprintf("ext_%d", w.rng.IntN(20))
}

func (w *world) number() any {
	switch w.rng.IntN(6) {
	case 0:
		return json.Number("9007199254740993")
	case 1:
		return float64(w.rng.IntN(4000)) / 4
	case 2:
		return w.rng.IntN(200) - 100
	case 3:
		return json.Number(fmt.Sprintf("%d.5", w.rng.IntN(1000000)))
	case 4:
		return json.Number("-0.001")
	}
	return json.Number(strconv.Itoa(w.rng.IntN(10)))
}

func (w *world) value(f content.Field) any {
	r := w.rng
	switch f.Kind() {
	case content.KindText:
		if r.IntN(10) == 0 {
			return ""
		}
		return w.text(r.IntN(6) == 0)
	case content.KindNumber:
		return w.number()
	case content.KindTimestamp:
		return ms(w.now()) + int64(r.IntN(1000000))
	case content.KindURL:
		return fmt.Sprintf("https://example.com/f%d.png", r.IntN(100))
	case content.KindYoutube:
		return fmt.Sprintf("https://youtu.be/v%d", r.IntN(100))
	case content.KindBoolean:
		return r.IntN(2) == 0
	case content.KindColor:
		return fmt.Sprintf("#%06x", r.IntN(1<<24))
	case content.KindRelations:
		var out []any
		for range r.IntN(4) {
			out = append(out, w.itemRef())
		}
		if out == nil {
			out = []any{}
		}
		return out
	case content.KindRelation:
		return w.itemRef()
	case content.KindObject:
		return map[string]any{"a": json.Number(strconv.Itoa(r.IntN(9))), "b": []any{"x", true}, "c": map[string]any{"d": "e"}}
	case content.KindList:
		switch r.IntN(4) {
		case 0:
			return []any{}
		case 1:
			return []any{map[string]any{"only": "objects"}, []any{"nested"}}
		}
		return []any{w.text(r.IntN(5) == 0), w.number(), r.IntN(2) == 0, map[string]any{"skip": 1.0}}
	case content.KindLocalized:
		m := map[string]any{}
		for _, loc := range []string{"en-US", "nl", "de-DE", "fr"} {
			if r.IntN(2) == 0 {
				m[loc] = w.text(r.IntN(6) == 0)
			}
		}
		return m
	case content.KindChoices:
		perm := r.Perm(len(choiceValues))[:r.IntN(len(choiceValues)+1)]
		out := []any{}
		for _, i := range perm {
			out = append(out, choiceValues[i])
		}
		return out
	case content.KindChoice:
		return choiceValues[r.IntN(len(choiceValues))]
	}
	panic(fmt.Sprintf("kind %v", f.Kind()))
}

func (w *world) values(m content.Module) map[string]any {
	vals := map[string]any{}
	for _, f := range m.Fields {
		switch {
		case f.Required || w.rng.IntN(4) > 0:
			vals[f.Name] = w.value(f)
		case w.rng.IntN(5) == 0:
			vals[f.Name] = nil
		}
	}
	return vals
}

var tagPool = []content.Tag{
	{ID: "t-red", Name: "color", Value: "red", TagType: "segment"},
	{Name: "color", Value: "blue"},
	{ID: "t-big"},
	{Name: "size", Value: "L"},
}

func (w *world) tags(m content.Module) []content.Tag {
	var out []content.Tag
	for _, tg := range tagPool {
		if w.rng.IntN(3) == 0 && (len(m.Tags) == 0 || slices.ContainsFunc(m.Tags, tg.Matches)) {
			out = append(out, tg)
		}
	}
	return out
}

// date is now plus or minus up to two days, at millisecond precision (or
// zero when zeroOK and the dice say so).
func (w *world) date(zeroOK bool) time.Time {
	if zeroOK && w.rng.IntN(4) == 0 {
		return time.Time{}
	}
	return msTime(ms(w.now()) + int64(w.rng.IntN(4*86400000)) - 2*86400000)
}

func (w *world) content(m content.Module, name string) content.Content {
	if w.rng.IntN(3) == 0 {
		name = fmt.Sprintf("Item %d", w.rng.IntN(1000))
	}
	return content.Content{Name: name, Values: w.values(m), Tags: w.tags(m), ExternalID: fmt.Sprintf("x%d", w.rng.IntN(3))}
}

func (w *world) createModule(id string, tags []content.Tag) {
	fields := []content.Field{{ID: "title-" + id, Name: "title", Type: fid("Text"), Required: true}}
	for _, typ := range randomTypes {
		if w.rng.IntN(3) == 0 || id == "m0" { // m0 has every type
			fields = append(fields, w.newField(typ))
		}
	}
	evs, err := content.CreateModule(content.Module{}, id, "app1", content.ModuleSpec{Name: "Module " + id, Tags: tags, Fields: fields}, "Ann")
	if err != nil {
		w.t.Fatalf("create module: %v", err)
	}
	w.emit(content.ModuleNameStream("app1", "Module "+id), []any{content.ModuleNameClaimed{App: "app1", Name: "Module " + id, ModuleID: id}})
	w.emit(content.ModuleStream(id), evs)
}

func (w *world) step() {
	r := w.rng
	var h *itemHist
	var m content.Module
	if len(w.itemIDs) > 0 {
		h = w.items[w.itemIDs[r.IntN(len(w.itemIDs))]]
		m = w.modules[h.item.Module]
	}
	now := w.now()
	var evs []any
	var err error
	op := r.IntN(100)
	switch {
	case h == nil || op < 12 && len(w.itemIDs) < 45:
		var live []string
		for _, id := range w.modIDs {
			if !w.modules[id].Deleted {
				live = append(live, id)
			}
		}
		m = w.modules[live[r.IntN(len(live))]]
		id := fmt.Sprintf("i%03d", len(w.itemIDs))
		d := content.Dates{}
		switch r.IntN(3) {
		case 0:
			d.PublishedAt = w.date(false)
			if r.IntN(3) == 0 {
				d.RemovedAt = d.PublishedAt.Add(time.Duration(1+r.IntN(100)) * time.Hour)
			}
		case 1:
			d.ArchivedAt = w.date(true)
		}
		evs, err = content.CreateItem(content.Item{}, id, m, w.content(m, "Item "+id), d, "Ann")
		if err == nil {
			w.emit(content.ItemStream(id), evs)
		}
		return
	case op < 30:
		var rev *int64
		if r.IntN(2) == 0 {
			rev = &h.item.Revision
		}
		evs, err = h.item.Edit(m, w.content(m, h.item.Content.Name), h.item.Dates, rev, "Bob")
	case op < 38:
		d := h.item.Dates
		d.RemovedAt = w.date(true)
		if r.IntN(3) == 0 {
			d.ArchivedAt = w.date(true)
		}
		evs, err = h.item.Edit(m, h.item.Content, d, nil, "Bob")
	case op < 48:
		evs, err = h.item.Publish(w.date(false), now, "Bob")
	case op < 53:
		evs, err = h.item.Unpublish("Bob")
	case op < 60:
		evs, err = h.item.Archive(w.date(false), "Bob")
	case op < 64:
		evs, err = h.item.Unarchive("Bob")
	case op < 71:
		evs, err = h.item.Delete(nil, "Bob")
	case op < 77:
		evs, err = h.item.Restore(m, "Bob")
	case op < 87:
		if h.item.Revision == 0 {
			return
		}
		to := r.Int64N(h.item.Revision)
		evs, err = h.item.Revert(m, to, h.snaps[to], "Cy")
	case op < 94:
		id := w.modIDs[r.IntN(len(w.modIDs))]
		m = w.modules[id]
		if m.Deleted {
			return
		}
		fields := slices.Clone(m.Fields)
		switch c := r.IntN(3); {
		case c == 0 && len(fields) > 2:
			i := 1 + r.IntN(len(fields)-1) // never the title
			fields = slices.Delete(fields, i, i+1)
		case c == 1:
			for i := range fields {
				if fields[i].Type == fid("Text") && i > 0 {
					fields[i].Localized = !fields[i].Localized
					break
				}
			}
			fields = append(fields, w.newField(randomTypes[r.IntN(len(randomTypes))]))
		default:
			fields = append(fields, w.newField(randomTypes[r.IntN(len(randomTypes))]))
		}
		evs, err = m.Change(content.ModuleSpec{Name: m.Name, Single: m.Single, Tags: m.Tags, Fields: fields}, "Ann")
		if err != nil {
			w.t.Fatalf("module change: %v", err)
		}
		w.emit(content.ModuleStream(id), evs)
		return
	case op < 97:
		id := w.modIDs[r.IntN(len(w.modIDs))]
		m = w.modules[id]
		if m.Deleted {
			return
		}
		evs, err = m.Change(content.ModuleSpec{Name: fmt.Sprintf("Renamed %d", r.IntN(100)), Single: r.IntN(2) == 0, Tags: m.Tags, Fields: m.Fields}, "Ann")
		if err != nil {
			w.t.Fatalf("module rename: %v", err)
		}
		w.emit(content.ModuleStream(id), evs)
		return
	case op < 98:
		evs, err = (content.ModuleType{}).Save(fmt.Sprintf("mt%d", r.IntN(3)), "Type", r.IntN(2) == 0, m.Fields[:1])
		if err == nil {
			w.emit("moduletype", evs)
		}
		return
	case op < 99:
		w.emit("moduletype", []any{content.ModuleTypeDeleted{TypeID: fmt.Sprintf("mt%d", r.IntN(3))}})
		return
	default:
		if id := w.modIDs[len(w.modIDs)-1]; !w.modules[id].Deleted && id != "m0" {
			evs, err = w.modules[id].Delete("Ann")
			if err == nil {
				w.emit(content.ModuleStream(id), evs)
			}
		}
		return
	}
	if err == nil {
		w.emit(content.ItemStream(h.item.ID), evs)
	}
}

func randomHistory(t *testing.T, seed uint64, steps int) *world {
	w := &world{t: t, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		rec:     newRecorder(time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)),
		modules: map[string]content.Module{}, items: map[string]*itemHist{}, counts: map[string]int{}}
	w.createModule("m0", nil)
	w.createModule("m1", []content.Tag{{ID: "t-red"}, {Name: "size", Value: "L"}})
	w.createModule("m2", nil)
	for range steps {
		w.step()
	}
	return w
}

func TestOneBatchEqualsManySmallBatches(t *testing.T) {
	t.Parallel()
	w := randomHistory(t, 20240301, 700)
	evs := w.rec.evs
	t.Logf("%d events, %d items: %v", len(evs), len(w.itemIDs), w.counts)
	for _, e := range content.Events() {
		typ := e.EventType()
		if typ == "content.single_item_claimed" || typ == "content.single_item_released" || typ == "content.module_name_released" {
			continue
		}
		if w.counts[typ] == 0 {
			t.Fatalf("the random history has no %s event; change the seed or the weights", typ)
		}
	}

	ctx, one := setup(t)
	apply(t, ctx, one, evs...)
	want := dumpTables(t, ctx, one)
	if len(want.items) != len(w.itemIDs) || len(want.keys) < len(w.itemIDs) || len(want.fields) != len(w.itemIDs) ||
		len(want.modules) != len(w.modIDs) {
		t.Fatalf("one batch: %d items, %d keys, %d fields rows, %d modules", len(want.items), len(want.keys), len(want.fields), len(want.modules))
	}

	_, single := setup(t)
	for _, e := range evs {
		apply(t, ctx, single, e)
	}
	got := dumpTables(t, ctx, single)
	sameRows(t, "event by event: modules", got.modules, want.modules)
	sameRows(t, "event by event: module types", got.types, want.types)
	sameRows(t, "event by event: items", got.items, want.items)
	sameRows(t, "event by event: keys", got.keys, want.keys)
	sameRows(t, "event by event: fields", got.fields, want.fields)

	_, small := setup(t)
	rng := rand.New(rand.NewPCG(3, 4))
	for i := 0; i < len(evs); {
		n := min(1+rng.IntN(9), len(evs)-i)
		apply(t, ctx, small, evs[i:i+n]...)
		i += n
	}
	got = dumpTables(t, ctx, small)
	sameRows(t, "small batches: modules", got.modules, want.modules)
	sameRows(t, "small batches: module types", got.types, want.types)
	sameRows(t, "small batches: items", got.items, want.items)
	sameRows(t, "small batches: keys", got.keys, want.keys)
	sameRows(t, "small batches: fields", got.fields, want.fields)

	// And the result is the domain's own fold of the history.
	checkAgainstFold(t, ctx, one, w)
}

// checkAgainstFold compares content_items and content_keys with the
// domain's state of every item, and with keys derived from it by the rules
// the projector documents.
func checkAgainstFold(t *testing.T, ctx context.Context, db *pgxpool.Pool, w *world) {
	t.Helper()
	var wantKeys []string
	truncated, long := 0, 0
	for _, id := range w.itemIDs {
		it := w.items[id].item
		vals, err := json.Marshal(it.Content.Values)
		if err != nil {
			t.Fatal(err)
		}
		var (
			module, name             string
			revision                 int64
			pub, rem, arc, del, from *int64
			until                    int64
			sameVals                 bool
		)
		err = db.QueryRow(ctx, `SELECT module, name, revision, published_at, removed_at, archived_at, deleted_at, pub_from, pub_until,
			vals = $2::jsonb FROM content_items WHERE id = $1`, id, string(vals)).
			Scan(&module, &name, &revision, &pub, &rem, &arc, &del, &from, &until, &sameVals)
		if err != nil {
			t.Fatalf("item %s: %v", id, err)
		}
		d := it.Dates
		// An item is deleted with its module.
		deleted := it.Deleted || w.modules[it.Module].Deleted
		if module != it.Module || name != it.Content.Name || revision != it.Revision || !sameVals ||
			!eqMs(pub, d.PublishedAt) || !eqMs(rem, d.RemovedAt) || !eqMs(arc, d.ArchivedAt) || (del != nil) != deleted {
			t.Fatalf("item %s: row {module %s name %q revision %d pub %v rem %v arc %v del %v vals equal %v}, fold %+v",
				id, module, name, revision, deref(pub), deref(rem), deref(arc), deref(del), sameVals, it)
		}
		wantFrom, wantUntil := pubInterval(d, deleted)
		if !eqPtr(from, wantFrom) || until != wantUntil {
			t.Fatalf("item %s: pub_from %v pub_until %d, want %v %d", id, deref(from), until, deref(wantFrom), wantUntil)
		}
		for _, k := range expectedKeys(w.modules[it.Module].Fields, it.Content.Values) {
			if k.x != nil {
				truncated++
			}
			if k.n == "9007199254740993" {
				long++
			}
			wantKeys = append(wantKeys, keyString(id, it.Module, k.field, k.loc, k.s, k.x, k.n, wantFrom, wantUntil))
		}
	}
	if truncated == 0 || long == 0 {
		t.Fatalf("the history holds %d truncated texts and %d long integers; want some of each", truncated, long)
	}
	rows, err := db.Query(ctx, `SELECT item_id, module, field, loc, s, x, n::text, pub_from, pub_until FROM `+allKeys+` k`)
	if err != nil {
		t.Fatal(err)
	}
	var gotKeys []string
	for rows.Next() {
		var item, module, field, loc string
		var s, x, n *string
		var from *int64
		var until int64
		if err := rows.Scan(&item, &module, &field, &loc, &s, &x, &n, &from, &until); err != nil {
			t.Fatal(err)
		}
		ns := ""
		if n != nil {
			ns = *n
		}
		gotKeys = append(gotKeys, keyString(item, module, field, loc, s, x, ns, from, until))
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	sort.Strings(wantKeys)
	sort.Strings(gotKeys)
	sameRows(t, "keys against the domain fold", gotKeys, wantKeys)
}

func eqMs(p *int64, t time.Time) bool {
	if t.IsZero() {
		return p == nil
	}
	return p != nil && *p == ms(t)
}

func eqPtr(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

func deref(p *int64) any {
	if p == nil {
		return "NULL"
	}
	return *p
}

func pubInterval(d content.Dates, deleted bool) (*int64, int64) {
	var from *int64
	if !deleted && !d.PublishedAt.IsZero() {
		v := ms(d.PublishedAt)
		from = &v
	}
	until := projcontent.Never
	if !d.RemovedAt.IsZero() {
		until = min(until, ms(d.RemovedAt))
	}
	if !d.ArchivedAt.IsZero() {
		until = min(until, ms(d.ArchivedAt))
	}
	return from, until
}

type wantKey struct {
	field, loc string
	s, x       *string // x: the whole text, when s is cut
	n          string  // "" for NULL
}

// expectedKeys derives an item's key rows from its values, by the rules
// the projector documents (independently of its code).
func expectedKeys(fields []content.Field, vals map[string]any) []wantKey {
	var out []wantKey
	trunc := func(s string) (*string, *string) {
		n, b := 0, 0 // characters and bytes kept
		for _, r := range s {
			if n == projcontent.MaxKeyText || b+utf8.RuneLen(r) > projcontent.MaxKeyBytes {
				c := s[:b]
				return &c, &s
			}
			n, b = n+1, b+utf8.RuneLen(r)
		}
		return &s, nil
	}
	scalar := func(v any) (*string, *string, string, bool) {
		switch x := v.(type) {
		case string:
			s, whole := trunc(x)
			return s, whole, "", true
		case bool:
			s := strconv.FormatBool(x)
			return &s, nil, "", true
		case json.Number:
			return nil, nil, string(x), true
		case float64:
			return nil, nil, strconv.FormatFloat(x, 'f', -1, 64), true
		case int:
			return nil, nil, strconv.Itoa(x), true
		case int64:
			return nil, nil, strconv.FormatInt(x, 10), true
		}
		return nil, nil, "", false
	}
	for _, f := range fields {
		v := vals[f.Name]
		n0 := len(out)
		switch k := f.Kind(); {
		case !f.Indexed(): // Object fields and long text
			continue
		case k == content.KindLocalized:
			m, _ := v.(map[string]any)
			for loc, e := range m {
				if s, ok := e.(string); ok {
					s, x := trunc(s)
					out = append(out, wantKey{f.Name, loc, s, x, ""})
				}
			}
		case k.Multi() || k == content.KindList:
			arr, _ := v.([]any)
			for _, e := range arr {
				if s, x, n, ok := scalar(e); ok {
					out = append(out, wantKey{f.Name, "", s, x, n})
				}
			}
		default:
			s, x, n, _ := scalar(v)
			out = append(out, wantKey{f.Name, "", s, x, n})
		}
		if len(out) == n0 {
			out = append(out, wantKey{field: f.Name}) // one row of NULLs: the item still sorts by the field
		}
	}
	return out
}

// keyString renders a key row with its number normalized, so that 2.50
// and 2.5 compare equal.
func keyString(item, module, field, loc string, s, x *string, n string, from *int64, until int64) string {
	ss := "NULL"
	if s != nil {
		ss = strconv.Quote(*s)
	}
	if x != nil {
		ss += " whole " + strconv.Quote(*x)
	}
	if n != "" {
		r, ok := new(big.Rat).SetString(n)
		if !ok {
			n = "bad number " + n
		} else {
			n = r.RatString()
		}
	} else {
		n = "NULL"
	}
	return fmt.Sprintf("%s|%s|%s|%s|%s|%s|%v|%d", item, module, field, loc, ss, n, deref(from), until)
}

// ---- (b) content_keys invariants on a hand-made history ----

func TestContentKeys(t *testing.T) {
	t.Parallel()
	ctx, pool := setup(t)
	T := time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)
	at := func(h int) time.Time { return T.Add(time.Duration(h) * time.Hour) }
	rec := newRecorder(T)

	fields := []content.Field{
		{ID: "1", Name: "title", Type: fid("Text")},
		{ID: "2", Name: "num", Type: fid("Number")},
		{ID: "3", Name: "flag", Type: fid("Boolean")},
		{ID: "4", Name: "when", Type: fid("Date")},
		{ID: "5", Name: "color", Type: fid("Color")},
		{ID: "6", Name: "site", Type: fid("Website")},
		{ID: "7", Name: "rel", Type: fid("Single relation")},
		{ID: "8", Name: "rels", Type: fid("Multiple relation")},
		{ID: "9", Name: "picks", Type: fid("Multiple choice"), Rules: content.FieldRules{Values: []string{"a", "b", "c"}}},
		{ID: "10", Name: "pick", Type: fid("Single choice"), Rules: content.FieldRules{Values: []string{"a", "b", "c"}}},
		{ID: "11", Name: "intro", Type: fid("Localized text")},
		{ID: "12", Name: "ltitle", Type: fid("Text"), Localized: true},
		{ID: "13", Name: "obj", Type: fid("Object")},
		{ID: "14", Name: "list", Type: fid("List")},
		{ID: "15", Name: "long", Type: fid("Text")}, // a 700-character text: its key is cut
	}
	if err := content.ValidateFields(fields); err != nil {
		t.Fatal(err)
	}
	full := map[string]any{
		"title": "Hello", "num": json.Number("9007199254740993"), "flag": true, "when": json.Number("1700000000000"),
		"color": "#abcdef", "site": "https://example.com/", "rel": "r0", "rels": []any{"r1", "r2"},
		"picks": []any{"a", "c"}, "pick": "b", "intro": map[string]any{"en-US": "Hi", "nl": "Hoi"},
		"ltitle": map[string]any{"de": "Hallo"}, "obj": map[string]any{"x": json.Number("1")},
		"list": []any{"x", json.Number("2"), map[string]any{"o": json.Number("1")}}, "long": strings.Repeat("é", 700),
	}
	if vs := content.ValidateValues(fields, full); len(vs) > 0 {
		t.Fatalf("test values invalid: %+v", vs)
	}
	mod := content.ModuleCreated{ModuleID: "m1", App: "a", Name: "M", Fields: fields, By: "Ann"}
	other := content.ModuleCreated{ModuleID: "m2", App: "a", Name: "Other", Fields: fields[:2], By: "Ann"}
	created := func(id, module string, vals map[string]any, d content.Dates) content.ItemCreated {
		return content.ItemCreated{ItemID: id, App: "a", Module: module, Name: id, Values: vals, Tags: []content.Tag{},
			PublishedAt: d.PublishedAt, RemovedAt: d.RemovedAt, ArchivedAt: d.ArchivedAt, By: "Ann"}
	}
	// Batch 1: modules and items together; keys computed from the events.
	apply(t, ctx, pool,
		rec.addAt(at(0), "module-m1", mod),
		rec.addAt(at(0), "module-m2", other),
		rec.addAt(at(1), "instance-i1", created("i1", "m1", full, content.Dates{PublishedAt: at(2)})),
		rec.addAt(at(1), "instance-i2", created("i2", "m1", map[string]any{}, content.Dates{})),
		rec.addAt(at(1), "instance-i3", created("i3", "m1", map[string]any{"title": "Third", "num": 2.5}, content.Dates{PublishedAt: at(1), RemovedAt: at(30)})),
		rec.addAt(at(1), "instance-o1", created("o1", "m2", map[string]any{"num": json.Number("1")}, content.Dates{PublishedAt: at(1)})),
		rec.addAt(at(3), "instance-i1", content.ItemExpirySet{ItemID: "i1", App: "a", Module: "m1", RemovedAt: at(20), By: "Bob"}),
		rec.addAt(at(3), "instance-i1", content.ItemArchived{ItemID: "i1", App: "a", Module: "m1", ArchivedAt: at(10), By: "Bob"}),
	)

	perField := func(item string) map[string]int {
		out := map[string]int{}
		for _, f := range pgtest.Strings(t, pool, `SELECT field FROM `+allKeys+` k WHERE item_id = $1`, item) {
			out[f]++
		}
		return out
	}
	one := func(sql string, args ...any) string {
		t.Helper()
		got := pgtest.Strings(t, pool, sql, args...)
		if len(got) != 1 {
			t.Fatalf("%s %v: %d rows %v, want 1", sql, args, len(got), got)
		}
		return got[0]
	}
	consistent := func(stage string) {
		t.Helper()
		// Every key row carries its item's module and published interval.
		if bad := pgtest.Strings(t, pool, `SELECT k.item_id || ' ' || k.field FROM `+allKeys+` k LEFT JOIN content_items i ON i.id = k.item_id
			WHERE i.id IS NULL OR k.module <> i.module OR k.pub_from IS DISTINCT FROM i.pub_from OR k.pub_until <> i.pub_until`); len(bad) > 0 {
			t.Fatalf("%s: key rows out of step with their items: %v", stage, bad)
		}
		// Every item has its content_fields row, in step with it; tx is
		// its whole texts joined and lower-cased, eqs the tokens of its short texts; no field has
		// both a column and key rows.
		var tokens, whole []string
		for i := 1; i <= projcontent.TextSlots; i++ {
			tokens = append(tokens, fmt.Sprintf(`f.module || E'\x1ft%[1]d=' || CASE WHEN char_length(f.t%[1]d) <= %[2]d THEN f.t%[1]d END`, i, projcontent.EqTokenMax))
			whole = append(whole, fmt.Sprintf(`coalesce(f.x%[1]d, f.t%[1]d)`, i))
		}
		if bad := pgtest.Strings(t, pool, `SELECT i.id FROM content_items i LEFT JOIN content_fields f ON f.item_id = i.id
			WHERE f.item_id IS NULL OR f.module <> i.module OR f.pub_from IS DISTINCT FROM i.pub_from OR f.pub_until <> i.pub_until
			OR f.tx IS DISTINCT FROM lower(nullif(concat_ws(E'\n', `+strings.Join(whole, ", ")+`), ''))
			OR f.eqs <> array_remove(ARRAY[`+strings.Join(tokens, ", ")+`], NULL)`); len(bad) > 0 {
			t.Fatalf("%s: content_fields rows out of step with their items: %v", stage, bad)
		}
		if bad := pgtest.Strings(t, pool, `SELECT k.item_id || ' ' || k.field FROM content_keys k JOIN content_modules m ON m.id = k.module
			WHERE m.slots ? k.field`); len(bad) > 0 {
			t.Fatalf("%s: key rows of fields that have a column: %v", stage, bad)
		}
		// pub_from and pub_until follow the dates.
		if bad := pgtest.Strings(t, pool, `SELECT id FROM content_items WHERE
			pub_from IS DISTINCT FROM (CASE WHEN deleted_at IS NULL THEN published_at END)
			OR pub_until <> coalesce(least(removed_at, archived_at), $1)`, projcontent.Never); len(bad) > 0 {
			t.Fatalf("%s: items with a wrong published interval: %v", stage, bad)
		}
		// The long integer is exact, whichever path computed the keys.
		if got := one(`SELECT n::text FROM ` + allKeys + ` k WHERE item_id = 'i1' AND field = 'num'`); got != "9007199254740993" {
			t.Fatalf("%s: long integer stored as %s", stage, got)
		}
		if got := one(`SELECT (vals->'num')::text FROM content_items WHERE id = 'i1'`); got != "9007199254740993" {
			t.Fatalf("%s: long integer value stored as %s", stage, got)
		}
	}
	i1From := at(2)
	checkFull := func(stage string, extra map[string]int) {
		t.Helper()
		consistent(stage)
		want := map[string]int{"title": 1, "num": 1, "flag": 1, "when": 1, "color": 1, "site": 1, "rel": 1, "rels": 2,
			"picks": 2, "pick": 1, "intro": 2, "ltitle": 1, "list": 2, "long": 1}
		for k, v := range extra {
			if v == 0 {
				delete(want, k)
			} else {
				want[k] = v
			}
		}
		if got := perField("i1"); !mapsEqual(got, want) {
			t.Fatalf("%s: i1 key rows per field %v, want %v", stage, got, want)
		}
		if got := pgtest.Strings(t, pool, `SELECT loc || '=' || s FROM `+allKeys+` k WHERE item_id = 'i1' AND field = 'intro' ORDER BY loc`); !slices.Equal(got, []string{"en-US=Hi", "nl=Hoi"}) {
			t.Fatalf("%s: intro keys %v", stage, got)
		}
		wantList := []string{"x/", "/2"}
		if _, removed := want["list"]; !removed {
			wantList = nil
		}
		if got := pgtest.Strings(t, pool, `SELECT coalesce(s, '') || '/' || coalesce(n::text, '') FROM `+allKeys+` k WHERE item_id = 'i1' AND field = 'list' ORDER BY s, n`); !slices.Equal(got, wantList) {
			t.Fatalf("%s: list keys %v", stage, got)
		}
		if got := one(`SELECT s FROM ` + allKeys + ` k WHERE item_id = 'i1' AND field = 'flag'`); got != "true" {
			t.Fatalf("%s: boolean key %q", stage, got)
		}
		if got := one(`SELECT n::text FROM ` + allKeys + ` k WHERE item_id = 'i1' AND field = 'when'`); got != "1700000000000" {
			t.Fatalf("%s: date key %q", stage, got)
		}
		// é is two bytes: the cut stops at MaxKeyBytes, before MaxKeyText characters.
		keep := min(projcontent.MaxKeyText, projcontent.MaxKeyBytes/2)
		if got := one(`SELECT char_length(s) || ' ' || (s = repeat('é', $1)) || ' ' || (x = repeat('é', 700)) FROM `+allKeys+` k WHERE item_id = 'i1' AND field = 'long'`, keep); got != fmt.Sprintf("%d true true", keep) {
			t.Fatalf("%s: long text key %q", stage, got)
		}
		if got := one(`SELECT char_length(vals->>'long')::text FROM content_items WHERE id = 'i1'`); got != "700" {
			t.Fatalf("%s: the item's own value was truncated too: %s characters", stage, got)
		}
		if got := one(`SELECT count(*)::text FROM ` + allKeys + ` k WHERE item_id = 'i1' AND field = 'obj'`); got != "0" {
			t.Fatalf("%s: object keys %s", stage, got)
		}
		if got := one(`SELECT pub_from || ' ' || pub_until FROM content_items WHERE id = 'i1'`); got != fmt.Sprintf("%d %d", ms(i1From), ms(at(10))) {
			t.Fatalf("%s: i1 interval %s", stage, got)
		}
	}
	checkEmpty := func(stage string, fieldsOfM1 int) {
		t.Helper()
		// An item without values: one row of NULLs per non-object field.
		got := pgtest.Strings(t, pool, `SELECT field || '|' || loc || '|' || (s IS NULL) || '|' || (n IS NULL) FROM `+allKeys+` k WHERE item_id = 'i2' ORDER BY field`)
		if len(got) != fieldsOfM1 {
			t.Fatalf("%s: empty item has %d key rows %v, want %d", stage, len(got), got, fieldsOfM1)
		}
		for _, g := range got {
			if !strings.HasSuffix(g, "||true|true") {
				t.Fatalf("%s: empty item key %s, want NULLs", stage, g)
			}
		}
		if got := one(`SELECT coalesce(pub_from::text, 'NULL') || ' ' || pub_until FROM content_items WHERE id = 'i2'`); got != fmt.Sprintf("NULL %d", projcontent.Never) {
			t.Fatalf("%s: never published item interval %s", stage, got)
		}
	}
	// The first six single-valued text-like fields and the first four
	// numeric ones, in field order, have columns; long (the seventh text)
	// keeps its key rows.
	slotsOf := func(module string) map[string]string {
		t.Helper()
		var m map[string]string
		if err := json.Unmarshal([]byte(one(`SELECT slots::text FROM content_modules WHERE id = $1`, module)), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if got, want := slotsOf("m1"), map[string]string{"title": "t1", "num": "n1", "flag": "t2", "when": "n2", "color": "t3", "site": "t4",
		"rel": "t5", "pick": "t6"}; !maps.Equal(got, want) {
		t.Fatalf("m1 slots %v, want %v", got, want)
	}
	if got := one(`SELECT count(*)::text FROM content_keys WHERE item_id = 'i1' AND field IN ('long', 'title')`); got != "1" {
		t.Fatalf("i1 has %s content_keys rows for long and title, want 1 (long's)", got)
	}
	if got := one(`SELECT concat_ws('|', t1, n1, t2, n2, t5, t6, tx) FROM content_fields WHERE item_id = 'i1'`); got != "Hello|9007199254740993|true|1700000000000|r0|b|hello\ntrue\n#abcdef\nhttps://example.com/\nr0\nb" {
		t.Fatalf("i1 content_fields row %q", got)
	}
	checkFull("after the first batch", nil)
	checkEmpty("after the first batch", 14)
	if got := one(`SELECT n::text FROM ` + allKeys + ` k WHERE item_id = 'i3' AND field = 'num'`); got != "2.5" {
		t.Fatalf("float key %s", got)
	}

	// Batch 2: date events only; keys recomputed from the stored values.
	apply(t, ctx, pool,
		rec.addAt(at(4), "instance-i1", content.ItemPublished{ItemID: "i1", App: "a", Module: "m1", PublishedAt: at(3), By: "Bob"}),
		rec.addAt(at(4), "instance-i3", content.ItemDeleted{ItemID: "i3", App: "a", Module: "m1", By: "Bob"}),
	)
	i1From = at(3)
	checkFull("after a date change", nil)
	if got := one(`SELECT pub_from::text FROM ` + allKeys + ` k WHERE item_id = 'i1' AND field = 'num'`); got != strconv.FormatInt(ms(at(3)), 10) {
		t.Fatalf("i1 keys pub_from %s", got)
	}
	if got := pgtest.Strings(t, pool, `SELECT DISTINCT coalesce(pub_from::text, 'NULL') || ' ' || pub_until FROM `+allKeys+` k WHERE item_id = 'i3'`); !slices.Equal(got, []string{fmt.Sprintf("NULL %d", ms(at(30)))}) {
		t.Fatalf("deleted item's keys: %v", got)
	}
	if got := one(`SELECT count(*)::text FROM ` + allKeys + ` k WHERE item_id = 'i3'`); got != "14" {
		t.Fatalf("deleted item keeps its keys: %s rows", got)
	}

	// Batch 3: restore i3; unarchive i1 (pub_until back to the expiry).
	apply(t, ctx, pool,
		rec.addAt(at(5), "instance-i3", content.ItemRestored{ItemID: "i3", App: "a", Module: "m1", By: "Bob"}),
		rec.addAt(at(5), "instance-i1", content.ItemUnarchived{ItemID: "i1", App: "a", Module: "m1", By: "Bob"}),
	)
	consistent("after restore")
	if got := one(`SELECT DISTINCT pub_from || ' ' || pub_until FROM ` + allKeys + ` k WHERE item_id = 'i3'`); got != fmt.Sprintf("%d %d", ms(at(1)), ms(at(30))) {
		t.Fatalf("restored item's keys: %s", got)
	}
	if got := one(`SELECT DISTINCT pub_until::text FROM ` + allKeys + ` k WHERE item_id = 'i1'`); got != strconv.FormatInt(ms(at(20)), 10) {
		t.Fatalf("unarchived item's keys pub_until %s", got)
	}
	// Unpublish: pub_from NULL, expiry kept.
	apply(t, ctx, pool, rec.addAt(at(6), "instance-i3", content.ItemUnpublished{ItemID: "i3", App: "a", Module: "m1", By: "Bob"}))
	consistent("after unpublish")
	if got := one(`SELECT DISTINCT coalesce(pub_from::text, 'NULL') || ' ' || pub_until FROM ` + allKeys + ` k WHERE item_id = 'i3'`); got != fmt.Sprintf("NULL %d", ms(at(30))) {
		t.Fatalf("unpublished item's keys: %s", got)
	}
	// Expiry removed: back to Never.
	apply(t, ctx, pool, rec.addAt(at(6), "instance-i3", content.ItemExpirySet{ItemID: "i3", App: "a", Module: "m1", By: "Bob"}))
	if got := one(`SELECT DISTINCT pub_until::text FROM ` + allKeys + ` k WHERE item_id = 'i3'`); got != strconv.FormatInt(projcontent.Never, 10) {
		t.Fatalf("no expiry: pub_until %s", got)
	}
	apply(t, ctx, pool, rec.addAt(at(6), "instance-i1", content.ItemArchived{ItemID: "i1", App: "a", Module: "m1", ArchivedAt: at(10), By: "Bob"}))

	// Batch 4: the module's fields change: list removed, extra added, title
	// made localized; every item of m1 gets its keys recomputed, m2's stay.
	otherKeys := pgtest.Strings(t, pool, `SELECT row_to_json(k)::text FROM `+allKeys+` k WHERE module = 'm2' ORDER BY field`)
	newFields := append(slices.Clone(fields[:13]), fields[14], content.Field{ID: "16", Name: "extra", Type: fid("Text")})
	newFields[0].Localized = true
	apply(t, ctx, pool, rec.addAt(at(7), "module-m1", content.ModuleFieldsChanged{ModuleID: "m1", App: "a", Fields: newFields, By: "Ann"}))
	// title is localized now: every text column moves up one, long gets
	// the sixth, extra has none.
	if got, want := slotsOf("m1"), map[string]string{"num": "n1", "flag": "t1", "when": "n2", "color": "t2", "site": "t3",
		"rel": "t4", "pick": "t5", "long": "t6"}; !maps.Equal(got, want) {
		t.Fatalf("m1 slots after the change %v, want %v", got, want)
	}
	checkFull("after the fields changed", map[string]int{"list": 0, "extra": 1})
	checkEmpty("after the fields changed", 14)
	if got := one(`SELECT loc || '|' || (s IS NULL) FROM ` + allKeys + ` k WHERE item_id = 'i1' AND field = 'title'`); got != "|true" {
		t.Fatalf("a plain string in a now localized field: key %s", got)
	}
	if got := one(`SELECT count(*)::text FROM ` + allKeys + ` k WHERE field = 'extra' AND s IS NULL AND n IS NULL`); got != "3" {
		t.Fatalf("the new field's NULL rows: %s, want one per item of m1", got)
	}
	if got := pgtest.Strings(t, pool, `SELECT row_to_json(k)::text FROM `+allKeys+` k WHERE module = 'm2' ORDER BY field`); !slices.Equal(got, otherKeys) {
		t.Fatalf("m2's keys changed:\n%v\n%v", got, otherKeys)
	}

	// Batch 5: a fields change and item events in one batch: the keys
	// follow the new fields and the new values.
	fields3 := append(slices.Clone(newFields), content.Field{ID: "17", Name: "later", Type: fid("Multiple choice"), Rules: content.FieldRules{Values: []string{"p", "q"}}})
	vals := map[string]any{"extra": "E", "later": []any{"p", "q"}, "num": json.Number("9007199254740993")}
	apply(t, ctx, pool,
		rec.addAt(at(8), "instance-i2", content.ItemEdited{ItemID: "i2", App: "a", Module: "m1", Name: "i2", Values: vals, Tags: []content.Tag{}, By: "Bob"}),
		rec.addAt(at(8), "module-m1", content.ModuleFieldsChanged{ModuleID: "m1", App: "a", Fields: fields3, By: "Ann"}),
		rec.addAt(at(8), "instance-i4", created("i4", "m1", map[string]any{"later": []any{"q"}}, content.Dates{PublishedAt: at(8)})),
	)
	checkFull("after fields and items changed together", map[string]int{"list": 0, "extra": 1, "later": 1})
	if got := pgtest.Strings(t, pool, `SELECT item_id || ':' || coalesce(s, 'NULL') FROM `+allKeys+` k WHERE field = 'later' ORDER BY item_id, s`); !slices.Equal(got, []string{"i1:NULL", "i2:p", "i2:q", "i3:NULL", "i4:q"}) {
		t.Fatalf("later keys %v", got)
	}
	if got := one(`SELECT s FROM ` + allKeys + ` k WHERE item_id = 'i2' AND field = 'extra'`); got != "E" {
		t.Fatalf("extra key %q", got)
	}
	if got := one(`SELECT n::text FROM ` + allKeys + ` k WHERE item_id = 'i2' AND field = 'num'`); got != "9007199254740993" {
		t.Fatalf("i2 long integer %s", got)
	}
	// The same item keys once per (item, field) for single-valued fields, across every item.
	if dup := pgtest.Strings(t, pool, `SELECT item_id || ' ' || field FROM `+allKeys+` k WHERE field IN ('title', 'num', 'flag', 'when', 'color', 'site', 'rel', 'pick', 'long', 'extra')
		GROUP BY item_id, field HAVING count(*) <> 1`); len(dup) > 0 {
		t.Fatalf("single-valued fields with other than one key row: %v", dup)
	}
	if got := one(`SELECT count(DISTINCT item_id)::text FROM ` + allKeys + ` k WHERE module = 'm1' AND field = 'title'`); got != "4" {
		t.Fatalf("title keys for %s items, want 4", got)
	}
}

func mapsEqual(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// ---- (c) item bookkeeping: updated_at, revision, state_changed_at ----

type rowState struct {
	createdAt, stateChangedAt, revision int64
	updatedAt, deletedAt                *int64
	createdBy                           string
	updatedBy, deletedBy                *string
	tagKeys                             []string
}

func readRow(t *testing.T, ctx context.Context, db *pgxpool.Pool, id string) rowState {
	t.Helper()
	var r rowState
	err := db.QueryRow(ctx, `SELECT created_at, state_changed_at, revision, updated_at, deleted_at, created_by, updated_by, deleted_by, tag_keys
		FROM content_items WHERE id = $1`, id).Scan(&r.createdAt, &r.stateChangedAt, &r.revision, &r.updatedAt, &r.deletedAt,
		&r.createdBy, &r.updatedBy, &r.deletedBy, &r.tagKeys)
	if err != nil {
		t.Fatalf("item %s: %v", id, err)
	}
	return r
}

func TestItemBookkeeping(t *testing.T) {
	t.Parallel()
	ctx, pool := setup(t)
	T := time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	at := func(n int) time.Time { return T.Add(time.Duration(n) * time.Minute) }
	fields := []content.Field{{ID: "1", Name: "title", Type: fid("Text")}}
	mod := content.ModuleCreated{ModuleID: "m1", App: "a", Name: "M", Fields: fields, By: "Ann"}
	tags := []content.Tag{{ID: "t1", Name: "color", Value: "red"}, {Name: "size", Value: "L"}, {ID: "t3"}}

	type step struct {
		data         func(id string) any
		stateChanges bool
		by           string
	}
	vals := func(s string) map[string]any { return map[string]any{"title": s} }
	steps := []step{
		{func(id string) any {
			return content.ItemEdited{ItemID: id, App: "a", Module: "m1", Name: "n2", Values: vals("b"), Tags: tags, Changed: []string{"name"}, By: "Bob"}
		}, false, "Bob"},
		{func(id string) any {
			return content.ItemReverted{ItemID: id, App: "a", Module: "m1", ToRevision: 0, Name: "n1", Values: vals("a"), Tags: []content.Tag{}, By: "Cy"}
		}, false, "Cy"},
		{func(id string) any {
			return content.ItemPublished{ItemID: id, App: "a", Module: "m1", PublishedAt: at(100), By: "Dan"}
		}, true, "Dan"},
		{func(id string) any {
			return content.ItemExpirySet{ItemID: id, App: "a", Module: "m1", RemovedAt: at(200), By: "Eve"}
		}, true, "Eve"},
		{func(id string) any {
			return content.ItemArchived{ItemID: id, App: "a", Module: "m1", ArchivedAt: at(150), By: "Fay"}
		}, true, "Fay"},
		{func(id string) any { return content.ItemUnarchived{ItemID: id, App: "a", Module: "m1", By: "Gus"} }, true, "Gus"},
		{func(id string) any {
			return content.ItemEdited{ItemID: id, App: "a", Module: "m1", Name: "n3", Values: vals("c"), Tags: tags[:1], By: "Hal"}
		}, false, "Hal"},
		{func(id string) any { return content.ItemUnpublished{ItemID: id, App: "a", Module: "m1", By: "Ida"} }, true, "Ida"},
		{func(id string) any { return content.ItemDeleted{ItemID: id, App: "a", Module: "m1", By: "Jo"} }, true, "Jo"},
		{func(id string) any { return content.ItemRestored{ItemID: id, App: "a", Module: "m1", By: "Kim"} }, true, "Kim"},
		{func(id string) any {
			return content.ItemEdited{ItemID: id, App: "a", Module: "m1", Name: "n4", Values: vals("d"), Tags: nil, By: "Lee"}
		}, false, "Lee"},
	}

	rec := newRecorder(T)
	apply(t, ctx, pool, rec.addAt(at(0), "module-m1", mod))

	// i1 event by event, checked after each; i2 the same events in one batch.
	create := func(id string) content.ItemCreated {
		return content.ItemCreated{ItemID: id, App: "a", Module: "m1", Name: "n1", Values: vals("a"), Tags: []content.Tag{}, By: "Ann"}
	}
	apply(t, ctx, pool, rec.addAt(at(1), "instance-i1", create("i1")))
	r := readRow(t, ctx, pool, "i1")
	if r.updatedAt != nil || r.updatedBy != nil || r.deletedAt != nil || r.revision != 0 || r.createdAt != ms(at(1)) ||
		r.stateChangedAt != ms(at(1)) || r.createdBy != "Ann" || len(r.tagKeys) != 0 {
		t.Fatalf("after create: %+v", r)
	}
	batch := []event.Recorded{rec.addAt(at(1), "instance-i2", create("i2"))}
	wantSCA := ms(at(1))
	for n, s := range steps {
		when := at(10 * (n + 1))
		apply(t, ctx, pool, rec.addAt(when, "instance-i1", s.data("i1")))
		batch = append(batch, rec.addAt(when, "instance-i2", s.data("i2")))
		if s.stateChanges {
			wantSCA = ms(when)
		}
		r := readRow(t, ctx, pool, "i1")
		if r.revision != int64(n+1) {
			t.Fatalf("step %d (%T): revision %d, want %d", n, s.data("i1"), r.revision, n+1)
		}
		if r.updatedAt == nil || *r.updatedAt != ms(when) || r.updatedBy == nil || *r.updatedBy != s.by {
			t.Fatalf("step %d (%T): updated %v by %v, want %d by %s", n, s.data("i1"), deref(r.updatedAt), r.updatedBy, ms(when), s.by)
		}
		if r.stateChangedAt != wantSCA {
			t.Fatalf("step %d (%T): state_changed_at %d, want %d", n, s.data("i1"), r.stateChangedAt, wantSCA)
		}
		if r.createdAt != ms(at(1)) || r.createdBy != "Ann" {
			t.Fatalf("step %d: created changed: %+v", n, r)
		}
		if n == 0 && !slices.Equal(r.tagKeys, []string{"id:t1", "nv:color\x1fred", "nv:size\x1fL", "id:t3"}) {
			t.Fatalf("tag keys %q", r.tagKeys)
		}
		if _, deleted := s.data("i1").(content.ItemDeleted); deleted {
			if r.deletedAt == nil || *r.deletedAt != ms(when) || r.deletedBy == nil || *r.deletedBy != "Jo" {
				t.Fatalf("after delete: %+v", r)
			}
		} else if r.deletedAt != nil || r.deletedBy != nil {
			t.Fatalf("step %d: deleted %v by %v", n, deref(r.deletedAt), r.deletedBy)
		}
	}
	apply(t, ctx, pool, batch...)
	a, b := readRow(t, ctx, pool, "i1"), readRow(t, ctx, pool, "i2")
	if a.revision != int64(len(steps)) || b.revision != a.revision || *b.updatedAt != *a.updatedAt || b.stateChangedAt != a.stateChangedAt ||
		b.createdAt != a.createdAt || *b.updatedBy != *a.updatedBy || !slices.Equal(a.tagKeys, b.tagKeys) || len(a.tagKeys) != 0 {
		t.Fatalf("one batch and event by event differ:\n%+v\n%+v", a, b)
	}
	if a.stateChangedAt != ms(at(100)) { // the restore, step 10
		t.Fatalf("final state_changed_at %d", a.stateChangedAt)
	}
	rows := pgtest.Strings(t, pool, `SELECT row_to_json(x)::text FROM (SELECT name, vals, tags, tag_keys, external_id, published_at, removed_at,
		archived_at, deleted_at, created_at, updated_at, created_by, updated_by, deleted_by, revision, state_changed_at, pub_from, pub_until
		FROM content_items ORDER BY id) x`)
	if len(rows) != 2 || rows[0] != rows[1] {
		t.Fatalf("rows differ:\n%s", strings.Join(rows, "\n"))
	}
}

func TestIgnoredEvents(t *testing.T) {
	t.Parallel()
	ctx, pool := setup(t)
	rec := newRecorder(time.Date(2024, 8, 1, 0, 0, 0, 0, time.UTC))
	fields := []content.Field{{ID: "1", Name: "title", Type: fid("Text")}}
	apply(t, ctx, pool,
		rec.add("modulename-a-m", time.Second, content.ModuleNameClaimed{App: "a", Name: "M", ModuleID: "m1"})[0],
		rec.add("module-m1", time.Second, content.ModuleCreated{ModuleID: "m1", App: "a", Name: "M", Fields: fields, By: "Ann"})[0],
		rec.add("moduleitem-m1", time.Second, content.SingleItemClaimed{ModuleID: "m1", ItemID: "i1"})[0],
		rec.add("moduleitem-m1", time.Second, content.SingleItemReleased{ModuleID: "m1", ItemID: "i1"})[0],
		// Events of an item whose creation the projection never saw.
		rec.add("instance-ghost", time.Second, content.ItemPublished{ItemID: "ghost", App: "a", Module: "m1", PublishedAt: time.Now(), By: "x"})[0],
		rec.add("instance-ghost", time.Second, content.ItemDeleted{ItemID: "ghost", App: "a", Module: "m1", By: "x"})[0],
	)
	d := dumpTables(t, ctx, pool)
	if len(d.modules) != 1 || len(d.items) != 0 || len(d.keys) != 0 {
		t.Fatalf("tables %+v", d)
	}
	// Module bookkeeping.
	apply(t, ctx, pool,
		rec.add("module-m1", time.Second, content.ModuleRenamed{ModuleID: "m1", App: "a", Name: "N", By: "Bob"})[0],
		rec.add("module-m1", time.Second, content.ModuleConfigured{ModuleID: "m1", App: "a", Single: true, Tags: []content.Tag{{ID: "t"}}, By: "Bob"})[0],
	)
	var name, tags string
	var single bool
	var updatedAt *int64
	var revision int64
	if err := pool.QueryRow(ctx, `SELECT name, single, tags::text, updated_at, revision FROM content_modules WHERE id = 'm1'`).
		Scan(&name, &single, &tags, &updatedAt, &revision); err != nil {
		t.Fatal(err)
	}
	if name != "N" || !single || !strings.Contains(tags, `"id": "t"`) || updatedAt == nil || *updatedAt != ms(rec.at) || revision != 3 {
		t.Fatalf("module row: %s %v %s %v revision %d (want 3: created, renamed, configured)", name, single, tags, deref(updatedAt), revision)
	}
	apply(t, ctx, pool, rec.add("module-m1", time.Second, content.ModuleFieldsChanged{ModuleID: "m1", App: "a", Fields: fields, By: "Cy"})[0],
		rec.add("module-m1", time.Second, content.ModuleDeleted{ModuleID: "m1", App: "a", By: "Cy"})[0])
	var deletedAt *int64
	if err := pool.QueryRow(ctx, `SELECT deleted_at, revision FROM content_modules WHERE id = 'm1'`).Scan(&deletedAt, &revision); err != nil ||
		deletedAt == nil || *deletedAt != ms(rec.at) || revision != 5 {
		t.Fatalf("deleted_at %v, revision %d (want 5), %v", deref(deletedAt), revision, err)
	}
}

// Texts that mean something inside the text of an array (quotes,
// backslashes, commas, braces, NULL, blanks) reach tag_keys and eqs as
// they are: the projector sends those per-row arrays as array text.
func TestArrayTextsKeptExactly(t *testing.T) {
	t.Parallel()
	ctx, pool := setup(t)
	T := time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	fields := []content.Field{{ID: "1", Name: "a", Type: fid("Text")}, {ID: "2", Name: "b", Type: fid("Text")}}
	rec := newRecorder(T)
	apply(t, ctx, pool, rec.addAt(T, "module-m1", content.ModuleCreated{ModuleID: "m1", App: "a", Name: "M", Fields: fields}))
	odd := []string{`say "hi"`, `back\slash`, `a,b`, `{x}`, `NULL`, ` `, ``, `é\"{,}`, "tab\tnew\nline"}
	var evs []event.Recorded
	want := map[string][2][]string{} // item → tag_keys, eqs
	for i, s := range odd {
		id := fmt.Sprintf("item%d", i)
		tags := []content.Tag{{ID: s + "id", Name: s, Value: s}}
		vals := map[string]any{"a": s, "b": "plain"}
		evs = append(evs, rec.addAt(T.Add(time.Duration(i+1)*time.Second), "item-"+id,
			content.ItemCreated{ItemID: id, App: "a", Module: "m1", Name: s, Values: vals, Tags: tags}))
		want[id] = [2][]string{projcontent.TagKeys(tags),
			{projcontent.EqToken("m1", "t1", s), projcontent.EqToken("m1", "t2", "plain")}}
	}
	apply(t, ctx, pool, evs...)
	for id, w := range want {
		var tagKeys, eqs []string
		var name, t1 string
		if err := pool.QueryRow(ctx, `SELECT i.tag_keys, f.eqs, i.name, f.t1 FROM content_items i JOIN content_fields f ON f.item_id = i.id
			WHERE i.id = $1`, id).Scan(&tagKeys, &eqs, &name, &t1); err != nil {
			t.Fatalf("item %s: %v", id, err)
		}
		if !slices.Equal(tagKeys, w[0]) || !slices.Equal(eqs, w[1]) || name != t1 {
			t.Errorf("item %s: tag_keys %q, eqs %q (name %q, t1 %q); want %q and %q", id, tagKeys, eqs, name, t1, w[0], w[1])
		}
	}
}

// Only values of at most EqTokenMax characters (not bytes) have an
// equality token.
func TestEqTokensOnlyForShortValues(t *testing.T) {
	t.Parallel()
	ctx, pool := setup(t)
	T := time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	fields := []content.Field{{ID: "1", Name: "a", Type: fid("Text")}, {ID: "2", Name: "b", Type: fid("Text")}, {ID: "3", Name: "c", Type: fid("Text")}}
	rec := newRecorder(T)
	apply(t, ctx, pool, rec.addAt(T, "module-m1", content.ModuleCreated{ModuleID: "m1", App: "a", Name: "M", Fields: fields}))
	short := strings.Repeat("é", projcontent.EqTokenMax) // twice as many bytes
	long := strings.Repeat("x", projcontent.EqTokenMax+1)
	apply(t, ctx, pool, rec.addAt(T.Add(time.Second), "item-i1", content.ItemCreated{ItemID: "i1", App: "a", Module: "m1", Name: "i1",
		Values: map[string]any{"a": short, "b": long, "c": "cat"}}))
	var eqs []string
	if err := pool.QueryRow(ctx, `SELECT eqs FROM content_fields WHERE item_id = 'i1'`).Scan(&eqs); err != nil {
		t.Fatal(err)
	}
	if want := []string{projcontent.EqToken("m1", "t1", short), projcontent.EqToken("m1", "t3", "cat")}; !slices.Equal(eqs, want) {
		t.Errorf("eqs %q, want %q", eqs, want)
	}
}

// TestItemsDeletedWithTheirModule: deleting a module deletes its items in
// the read model, whether the deletion comes alone, in the batch that
// creates an item, or before an event that would make an item live again;
// items of other modules stay.
func TestItemsDeletedWithTheirModule(t *testing.T) {
	t.Parallel()
	T := time.Date(2024, 7, 1, 0, 0, 0, 0, time.UTC)
	fields := []content.Field{{ID: "1", Name: "title", Type: fid("Text")}}
	created := func(id, module string) content.ItemCreated {
		return content.ItemCreated{ItemID: id, App: "a", Module: module, Name: id, Values: map[string]any{"title": id},
			PublishedAt: T, By: "Ann"}
	}
	rec := newRecorder(T)
	setupEvs := rec.add("modules", time.Minute,
		content.ModuleCreated{ModuleID: "m1", App: "a", Name: "M1", Fields: fields, By: "Ann"},
		content.ModuleCreated{ModuleID: "m2", App: "a", Name: "M2", Fields: fields, By: "Ann"},
		created("old", "m1"), created("other", "m2"))
	same := rec.add("m1", time.Minute, created("fresh", "m1"), content.ModuleDeleted{ModuleID: "m1", App: "a", By: "Bob"})
	deletedAt := ms(same[1].RecordedAt)
	late := rec.add("fresh", time.Minute, content.ItemRestored{ItemID: "fresh", App: "a", Module: "m1", By: "Cy"})

	for name, batches := range map[string][][]event.Recorded{
		"one batch":         {append(append(append([]event.Recorded{}, setupEvs...), same...), late...)},
		"deletion alone":    {setupEvs, same[:1], same[1:], late},
		"with the creation": {setupEvs, same, late},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, pool := setup(t)
			for _, b := range batches {
				apply(t, ctx, pool, b...)
			}
			for _, id := range []string{"old", "fresh"} {
				r := readRow(t, ctx, pool, id)
				if r.deletedAt == nil || *r.deletedAt != deletedAt || r.deletedBy == nil || *r.deletedBy != "Bob" || r.stateChangedAt != deletedAt {
					t.Errorf("%s: deleted_at %v by %v, state changed at %d; want deleted with the module at %d by Bob",
						id, deref(r.deletedAt), r.deletedBy, r.stateChangedAt, deletedAt)
				}
			}
			if r := readRow(t, ctx, pool, "other"); r.deletedAt != nil {
				t.Errorf("an item of another module was deleted")
			}
			live := pgtest.Strings(t, pool, `SELECT item_id FROM content_fields WHERE pub_from IS NOT NULL
				UNION SELECT id FROM content_items WHERE pub_from IS NOT NULL ORDER BY 1`)
			if !slices.Equal(live, []string{"other"}) {
				t.Errorf("published rows: %v, want [other]", live)
			}
		})
	}
}
