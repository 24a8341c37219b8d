package content_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	projcontent "github.com/halocms/halocms/projections/content"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// TestSyncModel checks the sync contract against a model, over random
// histories: a client that applies every sync answer to its local copy
// (upserts created and updated by id, drops deleted ids) holds, after each
// sync at To, exactly the items live at To, with their latest content.
//
// Each seed plays one module's timeline (ms): the domain's own commands
// (create as concept, published or scheduled, edit, PUT with any dates,
// publish now, later or at a past date, unpublish, expiry set or cleared,
// archive now, later or at a past date, unarchive, delete, restore, revert)
// decide the events, stamped with increasing RecordedAt and projected by
// the real projector, in batches. Some events are projected late: stamped
// before a sync's To but projected after that sync read the tables, never
// later than syncLateness (2 s) after their stamp: the case SyncMargin
// exists for. Batches then follow the log (each item's events in order),
// not the stamps. Some syncs read events
// stamped after their To (a sync's clock is taken before its query runs,
// and HTTP caps To at the client's toSync). Scheduled dates pass between
// syncs, syncs land on those dates, several syncs in a row find nothing
// new, and clients sync at different paces: one almost at every sync
// point, one skipping a while, one starting late.
//
// The reference is the model's, not the tables': an item is live at To
// when the domain's state of its projected events (all a sync can see) is
// Published at To, in a module not deleted. A first sync is followed
// straight away by a second one, as the SDKs do (wire reference §5.6);
// applying the two answers one after the other is what their merge does.
//
// Not modeled here, because the HTTP handler handles them before and
// after Store.Sync (TestContentSyncWhileTheReadModelIsBehind, cmd/cms): a
// To below the client's fromSync (Android sends toSync from the device's
// clock; the handler never answers before fromSync), and projection lag
// beyond SyncMargin (the handler then answers a syncTimestamp no later
// than the first change the read model does not show yet).
//
// The seeds share one database (creating one costs more than a seed's
// run): each plays its own app and module.
func TestSyncModel(t *testing.T) {
	t.Parallel()
	f := newFixture(t)
	for _, seed := range []uint64{1, 2, 3, 4, 5, 6, 7, 8} {
		t.Run(fmt.Sprintf("seed%d", seed), func(t *testing.T) {
			t.Parallel()
			newSyncSim(t, f, seed).run()
		})
	}
}

// syncLateness is how long after its stamp an event may still be
// unprojected: the 2 s SyncMargin is documented to cover (kept apart from
// content.SyncMargin, so that a smaller margin fails the test).
const syncLateness = 2000

// syncUnit is the events of one command: one stamp, one transaction.
type syncUnit struct {
	at   int64
	item string // "" for the module's deletion
	evs  []any
}

type syncSimItem struct {
	id      string
	events  []any        // decided, in stream order (for revert)
	dec     content.Item // state after every decided event
	vis     content.Item // state after the projected events
	states  []stamped    // vis after each projected event, with its stamp
	pending int          // units decided but not projected yet
	trace   []string
}

type stamped struct {
	at   int64
	item content.Item
}

// seenLive reports whether a sync at or before to could have seen the
// item live: live under one of its projected states at an instant before
// that state's end (the next state's stamp, or to) and syncLateness. Any
// instant before counts: a sync describes the instant its client asks
// for, which may be in the past. An item that no sync could have seen
// live (a concept, a schedule withdrawn well before its date) must never
// be listed as deleted: its id is not the client's to know.
func (it *syncSimItem) seenLive(to int64) bool {
	for k, st := range it.states {
		end := to + syncLateness
		if k+1 < len(it.states) {
			end = min(end, it.states[k+1].at+syncLateness)
		}
		d := st.item.Dates
		if st.item.Deleted || d.PublishedAt.IsZero() {
			continue
		}
		until := int64(math.MaxInt64)
		for _, x := range []time.Time{d.RemovedAt, d.ArchivedAt} {
			if !x.IsZero() {
				until = min(until, x.UnixMilli())
			}
		}
		if d.PublishedAt.UnixMilli() < min(until, end) {
			return true
		}
	}
	return false
}

// syncSnap is what a client holds of an item.
type syncSnap struct {
	Rev                      int64
	Name, Values, Tags, ExID string
	Pub, Rem, Arch           int64 // 0: unset
}

type syncClient struct {
	name   string
	locale string
	p      float64 // chance to sync at a sync point
	start  int     // first round it syncs at
	from   *int64  // nil until its first sync
	held   map[string]syncSnap
	log    []string
}

type syncSim struct {
	t       *testing.T
	seed    uint64
	f       *fixture // its pool, store and context only: other seeds share it
	app     string
	module  string
	fields  map[string]content.Field
	pos     int64
	r       *rand.Rand
	now     int64
	lastTo  int64
	mod     content.Module
	modGone bool // the module's deletion is projected
	items   map[string]*syncSimItem
	order   []string
	ready   []syncUnit // decided, to be projected in the next batch
	pending []syncUnit // decided, projected late
	clients []*syncClient
	n       int // content counter
}

func newSyncSim(t *testing.T, f *fixture, seed uint64) *syncSim {
	s := &syncSim{t: t, seed: seed, f: f, app: fmt.Sprintf("a%d", seed), module: fmt.Sprintf("m%d", seed),
		fields: map[string]content.Field{}, r: rand.New(rand.NewPCG(seed, 0x5eed)), now: t0, lastTo: t0, items: map[string]*syncSimItem{}}
	s.clients = []*syncClient{
		{name: "eager", locale: "es-ES", p: 0.85},
		{name: "lazy", p: 0.3, start: s.r.IntN(10)},
		{name: "late", locale: "en-US", p: 0.6, start: 15 + s.r.IntN(20)},
	}
	for _, c := range s.clients {
		c.held = map[string]syncSnap{}
	}
	return s
}

func (s *syncSim) rel(ms int64) string { return fmt.Sprintf("+%d", ms-t0) }

func (s *syncSim) run() {
	evs, err := content.CreateModule(content.Module{}, s.module, s.app, content.ModuleSpec{Name: s.module,
		Fields: []content.Field{field("title", "01"), field("price", "02"), field("label", "15")}}, "Ann")
	if err != nil {
		s.t.Fatal(err)
	}
	s.mod = s.mod.Apply(evs[0])
	for _, fd := range s.mod.Fields {
		s.fields[fd.Name] = fd
	}
	s.project([]syncUnit{{at: s.now, evs: evs}})
	for range 10 {
		s.tick()
		s.command(false)
	}
	const rounds = 50
	for round := range rounds {
		if s.r.IntN(5) > 0 {
			for range 1 + s.r.IntN(10) {
				s.tick()
				s.command(false)
			}
		}
		if s.r.IntN(3) == 0 {
			// Commands stamped less than syncLateness before the sync,
			// projected after it perhaps; the first one, often, at the
			// edge of that window.
			first := s.now
			for range 1 + s.r.IntN(3) {
				s.command(true)
				s.now += int64(s.r.IntN(300))
			}
			to := first + syncLateness - 1 - int64(s.r.IntN(3))
			if s.r.IntN(2) == 0 {
				to = first + int64(s.r.IntN(syncLateness))
			}
			s.now = max(s.now, to)
			s.syncPoint(round, s.now)
		} else {
			s.syncPoint(round, s.pickTo())
		}
		for s.r.IntN(6) == 0 { // nothing written: only time passes
			s.now += int64(s.r.IntN(4000))
			s.syncPoint(round, s.now)
		}
		if s.r.IntN(8) == 0 { // a long pause: schedules fall due
			s.now += int64(10_000 + s.r.IntN(120_000))
		}
	}
	if s.seed%2 == 0 {
		// The module goes, perhaps with item events still to project.
		s.tick()
		evs, err := s.mod.Delete("Ann")
		if err != nil {
			s.t.Fatal(err)
		}
		s.mod = s.mod.Apply(evs[0])
		s.decide(syncUnit{at: s.now, evs: evs}, s.r.IntN(2) == 0)
		s.syncPoint(rounds, s.pickTo())
	}
	s.flush(func(syncUnit) bool { return true })
	s.now += 200_000
	s.syncPoint(rounds, s.now)
}

// tick lets time pass before a command.
func (s *syncSim) tick() {
	switch n := s.r.IntN(10); {
	case n < 7:
		s.now += int64(s.r.IntN(800))
	case n < 9:
		s.now += int64(s.r.IntN(5000))
	default:
		s.now += int64(s.r.IntN(60_000))
	}
}

// pickTo is the next sync point: now, just before now (events stamped
// after To are then visible), or on (or next to) a date at which an item
// becomes live or stops being live by time alone.
func (s *syncSim) pickTo() int64 {
	switch s.r.IntN(6) {
	case 0, 1, 2:
		var dates []int64
		for _, id := range s.order {
			i := s.items[id].vis
			if !i.Exists() || i.Deleted {
				continue
			}
			until := time.Time{}
			for _, x := range []time.Time{i.Dates.RemovedAt, i.Dates.ArchivedAt} {
				if !x.IsZero() && (until.IsZero() || x.Before(until)) {
					until = x
				}
			}
			for _, x := range []time.Time{i.Dates.PublishedAt, until} {
				if ms := x.UnixMilli(); !x.IsZero() && ms > s.lastTo && ms <= s.now+120_000 {
					dates = append(dates, ms)
				}
			}
		}
		if len(dates) == 0 {
			break
		}
		to := dates[s.r.IntN(len(dates))]
		if n := s.r.IntN(4); n < 2 {
			to += int64(2*n - 1) // a ms before or after
		}
		if to >= s.now {
			s.now = to
			return to
		}
		if to >= s.lastTo && s.now-to <= 500 {
			return to
		}
	case 3:
		return max(s.lastTo, s.now-int64(s.r.IntN(300)))
	}
	return s.now
}

func (s *syncSim) content(i content.Item) content.Content {
	c := content.Content{Name: i.Content.Name, Values: map[string]any{}, Tags: []content.Tag{}}
	if c.Name == "" || s.r.IntN(2) == 0 {
		c.Name = "name " + strconv.Itoa(s.r.IntN(4))
	}
	s.n++
	if s.r.IntN(3) > 0 {
		c.Values["title"] = "title " + strconv.Itoa(s.n)
	}
	if s.r.IntN(2) == 0 {
		c.Values["price"] = json.Number(strconv.Itoa(s.r.IntN(5)))
	}
	if s.r.IntN(3) == 0 {
		label := map[string]any{"en-US": "label " + strconv.Itoa(s.n)}
		if s.r.IntN(2) == 0 {
			label["es-ES"] = "etiqueta " + strconv.Itoa(s.n)
		}
		c.Values["label"] = label
	}
	if s.r.IntN(3) == 0 {
		c.Tags = []content.Tag{{Name: "Platform", Value: []string{"android", "ios"}[s.r.IntN(2)]}}
	}
	if s.r.IntN(4) == 0 {
		c.ExternalID = "ext " + strconv.Itoa(s.r.IntN(3))
	}
	return c
}

// date is a random date for a command: unset, now, past or future.
func (s *syncSim) date(unset bool) time.Time {
	n := s.r.IntN(10)
	switch {
	case unset && n < 3:
		return time.Time{}
	case n < 5:
		return time.UnixMilli(s.now)
	case n < 7:
		return time.UnixMilli(s.now - int64(s.r.IntN(40_000)))
	case n < 9:
		return time.UnixMilli(s.now + 1 + int64(s.r.IntN(40_000)))
	}
	return time.UnixMilli(s.now + int64(s.r.IntN(int(day))))
}

// command decides one random command at s.now and records its events;
// late ones are projected after the next sync (perhaps).
func (s *syncSim) command(late bool) {
	if s.mod.Deleted {
		return
	}
	m := s.mod
	if len(s.order) == 0 || s.r.IntN(4+len(s.order)/4) == 0 {
		id := fmt.Sprintf("s%d-x%02d", s.seed, len(s.order))
		d := content.Dates{}
		switch s.r.IntN(4) {
		case 0: // concept
		case 1:
			d.PublishedAt = time.UnixMilli(s.now)
		default:
			d.PublishedAt = s.date(false)
		}
		if s.r.IntN(4) == 0 {
			d.RemovedAt = s.date(true)
		}
		if s.r.IntN(5) == 0 {
			d.ArchivedAt = s.date(true)
		}
		evs, err := content.CreateItem(content.Item{}, id, m, s.content(content.Item{}), d, "Ann")
		if err != nil {
			return // dates refused
		}
		s.items[id] = &syncSimItem{id: id}
		s.order = append(s.order, id)
		s.decide(syncUnit{at: s.now, item: id, evs: evs}, late)
		return
	}
	it := s.items[s.order[s.r.IntN(len(s.order))]]
	i := it.dec
	var evs []any
	var err error
	switch n := s.r.IntN(13); {
	case i.Deleted && n < 8:
		evs, err = i.Restore(m, "Bob")
	case n < 2:
		evs, err = i.Edit(m, s.content(i), i.Dates, nil, "Bob")
	case n == 2: // a PUT with any dates
		c := i.Content
		if s.r.IntN(2) == 0 {
			c = s.content(i)
		}
		evs, err = i.Edit(m, c, content.Dates{PublishedAt: s.date(true), RemovedAt: s.date(true), ArchivedAt: s.date(true)}, nil, "Bob")
	case n == 3:
		evs, err = i.Publish(time.UnixMilli(s.now), time.UnixMilli(s.now), "Bob")
	case n == 4:
		evs, err = i.Publish(s.date(false), time.UnixMilli(s.now), "Bob")
	case n == 5:
		evs, err = i.Unpublish("Bob")
	case n == 6: // expiry set or cleared
		d := i.Dates
		d.RemovedAt = s.date(true)
		evs, err = i.Edit(m, i.Content, d, nil, "Bob")
	case n == 7:
		evs, err = i.Archive(s.date(false), "Bob")
	case n == 8:
		evs, err = i.Unarchive("Bob")
	case n == 9:
		evs, err = i.Delete(nil, "Bob")
	case n == 10:
		evs, err = i.Restore(m, "Bob")
	default:
		if i.Revision == 0 {
			return
		}
		to := s.r.Int64N(i.Revision)
		var old content.Item
		for _, e := range it.events[:to+1] {
			old = old.Apply(e)
		}
		evs, err = i.Revert(m, to, old, "Bob")
	}
	if err != nil || len(evs) == 0 {
		return // refused, or nothing to change: no event
	}
	s.decide(syncUnit{at: s.now, item: it.id, evs: evs}, late)
}

func (s *syncSim) describe(evs []any) string {
	var out []string
	d := func(t time.Time) string {
		if t.IsZero() {
			return "none"
		}
		return s.rel(t.UnixMilli())
	}
	for _, e := range evs {
		switch e := e.(type) {
		case content.ItemCreated:
			out = append(out, fmt.Sprintf("Created(%q pub=%s rem=%s arch=%s)", e.Name, d(e.PublishedAt), d(e.RemovedAt), d(e.ArchivedAt)))
		case content.ItemEdited:
			out = append(out, fmt.Sprintf("Edited(%q %v)", e.Name, e.Values))
		case content.ItemReverted:
			out = append(out, fmt.Sprintf("Reverted(to %d: %q %v)", e.ToRevision, e.Name, e.Values))
		case content.ItemPublished:
			out = append(out, "Published("+d(e.PublishedAt)+")")
		case content.ItemExpirySet:
			out = append(out, "ExpirySet("+d(e.RemovedAt)+")")
		case content.ItemArchived:
			out = append(out, "Archived("+d(e.ArchivedAt)+")")
		default:
			out = append(out, strings.TrimPrefix(fmt.Sprintf("%T", e), "content."))
		}
	}
	return strings.Join(out, " ")
}

// decide records a command's events; they are projected now unless late
// (or held behind a late event of the same item: projection follows the
// item's stream).
func (s *syncSim) decide(u syncUnit, late bool) {
	if it := s.items[u.item]; it != nil {
		for _, e := range u.evs {
			it.dec = it.dec.Apply(e)
			it.events = append(it.events, e)
		}
		late = late || it.pending > 0
		note := ""
		if late {
			note = " (projected later)"
			it.pending++
		}
		it.trace = append(it.trace, fmt.Sprintf("t=%s %s%s", s.rel(u.at), s.describe(u.evs), note))
	}
	if late {
		s.pending = append(s.pending, u)
		return
	}
	s.ready = append(s.ready, u)
	if s.r.IntN(3) == 0 {
		s.flush(func(syncUnit) bool { return false })
	}
}

// project applies units in one projector batch, in the given (log) order.
func (s *syncSim) project(units []syncUnit) {
	var recs []event.Recorded
	for _, u := range units {
		for _, e := range u.evs {
			s.pos++
			recs = append(recs, event.Recorded{Position: event.Position{TxID: uint64(s.pos), Pos: s.pos}, StreamID: "s",
				Type: e.(interface{ EventType() string }).EventType(), Data: e, RecordedAt: time.UnixMilli(u.at)})
			if it := s.items[u.item]; it != nil {
				it.vis = it.vis.Apply(e)
				it.states = append(it.states, stamped{u.at, it.vis})
			} else if _, ok := e.(content.ModuleDeleted); ok {
				s.modGone = true
			}
		}
	}
	// One transaction, as the projection runtime applies a batch.
	if err := pgx.BeginFunc(s.f.ctx, s.f.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(s.f.ctx, "SET LOCAL synchronous_commit = off"); err != nil {
			return err
		}
		return (projcontent.Projector{}).Apply(s.f.ctx, tx, "public", recs)
	}); err != nil {
		s.t.Fatal(err)
	}
}

// flush projects the ready units and the pending ones that want says (an
// item's only after its earlier ones) in one batch whose order interleaves
// the items at random, keeping each item's order.
func (s *syncSim) flush(want func(syncUnit) bool) {
	byItem := map[string][]syncUnit{}
	var keys []string
	add := func(u syncUnit) {
		if byItem[u.item] == nil {
			keys = append(keys, u.item)
		}
		byItem[u.item] = append(byItem[u.item], u)
	}
	for _, u := range s.ready {
		add(u)
	}
	s.ready = nil
	blocked := map[string]bool{}
	var keep []syncUnit
	for _, u := range s.pending {
		if blocked[u.item] || !want(u) {
			blocked[u.item] = true
			keep = append(keep, u)
			continue
		}
		add(u)
		if it := s.items[u.item]; it != nil {
			it.pending--
			it.trace = append(it.trace, fmt.Sprintf("  the events of t=%s projected now, after the sync at %s", s.rel(u.at), s.rel(s.lastTo)))
		}
	}
	s.pending = keep
	var batch []syncUnit
	for len(keys) > 0 {
		k := s.r.IntN(len(keys))
		batch = append(batch, byItem[keys[k]][0])
		if byItem[keys[k]] = byItem[keys[k]][1:]; len(byItem[keys[k]]) == 0 {
			keys = slices.Delete(keys, k, k+1)
		}
	}
	if len(batch) > 0 {
		s.project(batch)
	}
}

// syncPoint lets the clients whose turn it is sync at to. Before it, every
// event stamped syncLateness or more before to is projected; later ones may
// wait until after the syncs.
func (s *syncSim) syncPoint(round int, to int64) {
	s.flush(func(u syncUnit) bool { return u.at <= to-syncLateness || s.r.IntN(3) == 0 })
	for _, c := range s.clients {
		if round < c.start || s.r.Float64() >= c.p {
			continue
		}
		first := c.from == nil
		s.sync(c, to)
		if first { // the SDKs' second sync, straight away
			to2 := to + int64(s.r.IntN(40))
			s.now = max(s.now, to2)
			s.flush(func(u syncUnit) bool { return u.at <= to2-syncLateness || s.r.IntN(3) == 0 })
			s.sync(c, to2)
			to = to2
		}
	}
	s.flush(func(syncUnit) bool { return s.r.IntN(2) == 0 })
}

// live is the reference: the items live at to, by the model, as a client
// asking for locale holds them (a localized value is its text in locale,
// or null).
func (s *syncSim) live(to int64, locale string) map[string]syncSnap {
	out := map[string]syncSnap{}
	if s.modGone {
		return out
	}
	for _, id := range s.order {
		i := s.items[id].vis
		if !i.Exists() || i.StateAt(time.UnixMilli(to)) != content.Published {
			continue
		}
		vals := maps.Clone(i.Content.Values)
		if m, ok := vals["label"].(map[string]any); ok && locale != "" {
			vals["label"] = m[locale] // nil when missing
		}
		v, _ := json.Marshal(vals)
		var tags []string
		for _, t := range i.Content.Tags {
			tags = append(tags, t.ID+"/"+t.Name+"/"+t.Value+"/"+t.TagType)
		}
		ms := func(t time.Time) int64 {
			if t.IsZero() {
				return 0
			}
			return t.UnixMilli()
		}
		out[id] = syncSnap{Rev: i.Revision, Name: i.Content.Name, Values: string(v), Tags: strings.Join(tags, ","), ExID: i.Content.ExternalID,
			Pub: ms(i.Dates.PublishedAt), Rem: ms(i.Dates.RemovedAt), Arch: ms(i.Dates.ArchivedAt)}
	}
	return out
}

func snapOf(it rmcontent.Item) syncSnap {
	v, _ := json.Marshal(it.Values)
	var tags []string
	for _, t := range it.Tags {
		tags = append(tags, t.ID+"/"+t.Name+"/"+t.Value+"/"+t.TagType)
	}
	ms := func(p *int64) int64 {
		if p == nil {
			return 0
		}
		return *p
	}
	return syncSnap{Rev: it.Revision, Name: it.Name, Values: string(v), Tags: strings.Join(tags, ","), ExID: it.ExternalID,
		Pub: ms(it.PublishedAt), Rem: ms(it.RemovedAt), Arch: ms(it.ArchivedAt)}
}

// sync makes c's next sync at to, applies the answer to c's copy and
// checks the copy and the answer against the model.
func (s *syncSim) sync(c *syncClient, to int64) {
	t := s.t
	t.Helper()
	res, err := s.f.store.Sync(s.f.ctx, rmcontent.SyncQuery{AllApps: true, Module: s.module, From: c.from, To: to, Locale: c.locale, Fields: s.fields})
	if err != nil {
		t.Fatal(err)
	}
	from := "none"
	if c.from != nil {
		from = s.rel(*c.from)
	}
	c.log = append(c.log, fmt.Sprintf("sync from %s to %s: created %v updated %v deleted %v", from, s.rel(to), ids(res.Created), ids(res.Updated), res.Deleted))
	want := s.live(to, c.locale)
	var bad []string
	var involved []string
	seen := map[string]bool{}
	for _, list := range [][]rmcontent.Item{res.Created, res.Updated} {
		for _, it := range list {
			if seen[it.ID] {
				bad = append(bad, it.ID+" is listed twice")
			}
			seen[it.ID] = true
			if _, ok := want[it.ID]; !ok {
				bad, involved = append(bad, it.ID+" is sent (created or updated) but not live"), append(involved, it.ID)
			}
			c.held[it.ID] = snapOf(it)
		}
	}
	for _, id := range res.Deleted {
		if _, ok := want[id]; ok {
			bad, involved = append(bad, id+" is deleted but live"), append(involved, id)
		}
		if !s.items[id].seenLive(to) {
			bad, involved = append(bad, id+" is deleted but no sync could have seen it live"), append(involved, id)
		}
		delete(c.held, id)
	}
	if res.Timestamp != to {
		bad = append(bad, fmt.Sprintf("syncTimestamp %d, want %d", res.Timestamp, to))
	}
	for id, w := range want {
		if got, ok := c.held[id]; !ok {
			bad, involved = append(bad, id+" is live but the client does not hold it"), append(involved, id)
		} else if got != w {
			bad, involved = append(bad, fmt.Sprintf("%s is stale: client holds %+v, want %+v", id, got, w)), append(involved, id)
		}
	}
	for id, got := range c.held {
		if _, ok := want[id]; !ok {
			bad, involved = append(bad, fmt.Sprintf("%s is not live but the client holds it (%+v)", id, got)), append(involved, id)
		}
	}
	c.from = &to
	s.lastTo = max(s.lastTo, to)
	if len(bad) == 0 {
		return
	}
	slices.Sort(bad)
	msg := fmt.Sprintf("seed %d, client %s, sync from %s to %s (t0 = %d; SyncMargin %d):\n  %s\nthe client's syncs:\n  %s",
		s.seed, c.name, from, s.rel(to), t0, content.SyncMargin, strings.Join(bad, "\n  "), strings.Join(c.log, "\n  "))
	slices.Sort(involved)
	for _, id := range slices.Compact(involved) {
		if it := s.items[id]; it != nil {
			msg += fmt.Sprintf("\nitem %s:\n  %s", id, strings.Join(it.trace, "\n  "))
		}
	}
	if s.modGone {
		msg += "\nthe module is deleted"
	}
	t.Fatal(msg)
}
