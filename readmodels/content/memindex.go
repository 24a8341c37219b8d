package content

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// memIndex keeps, for the modules apps search, a copy of their
// content_fields rows in memory: each item's published interval and
// typed columns (see projections/content.Slots), in the order PostgreSQL
// gives their ids. A search of one module that the one-statement path
// would answer from those columns (see fieldsFilter and pageWithTotal)
// is filtered, counted, sorted and paged here; PostgreSQL then reads only
// the page's items, by id, and in the same statement the app's content
// version (only the version when the copy keeps the page's items from an
// earlier search, see Store.memItems). The projection changes that version with every batch that
// touches the app's modules or items, so a copy loaded at the version the
// statement reads is exactly what the tables hold in its snapshot: the
// answer is the one the tables would give. When the version moved on, the
// copy is brought forward to the tables' current version by the rows
// written since its own (see memIndex.catchUp and memModule.forward, one
// statement), and the search made again on it; a copy that cannot be (too
// many rows changed, the module changed) is loaded again in the background
// (see memIndex.want) and the search runs in PostgreSQL.
//
// The copy answers only what it can judge exactly as PostgreSQL does (see
// memModule.plan): equality on text columns, comparisons of numbers (and
// dates) with at most 15 significant digits, which float64 orders as
// numeric does, a like on texts of ASCII characters (whose lower-casing
// the server and PostgreSQL agree on), and/or trees of those; sorts by
// number columns, ties broken by the ids' rank in PostgreSQL's order.
// Anything else goes to PostgreSQL.
type memIndex struct {
	pool     *pgxpool.Pool
	maxItems int           // rows held in all, across modules
	loads    chan struct{} // one load at a time: a load holds a connection for a while

	mu   sync.Mutex
	mods map[string]*memEntry
	held int    // rows in loaded modules
	tick uint64 // last use, for eviction

	kept atomic.Int64 // keptSize of the items the loaded copies keep
}

// memEntry is a module's place in the index: its copy, once loaded, and
// when it may be loaded (again).
type memEntry struct {
	mod       *memModule // nil until loaded
	stale     bool       // mod could not be brought forward (or answered wrongly): to be loaded again
	loading   bool
	catching  chan struct{} // closed when the catchUp under way ends
	notBefore time.Time     // no load before then (see load)
	used      uint64
}

const (
	// A module's copy keeps the items of at most a tenth of its rows and
	// memItemsMax of them (see Store.memItems); the index keeps at most
	// memItemsBytes of items in all (by keptSize), none larger than
	// memItemBytes.
	memItemsMax   = 10_000
	memItemsBytes = 64 << 20
	memItemBytes  = 64 << 10
	// memLoadTimeout bounds one load of a module.
	memLoadTimeout = time.Minute
	// memReloadGap is the least time between two loads of a module; a
	// load also waits four times as long as the last one took, so that a
	// module whose content keeps changing costs at most a fifth of a
	// connection's time in loads.
	memReloadGap = time.Second
	// memTooBigWait: a module with more rows than the index may hold is
	// counted again only after this long.
	memTooBigWait = time.Minute
)

func newMemIndex(pool *pgxpool.Pool, maxItems int) *memIndex {
	return &memIndex{pool: pool, maxItems: maxItems, loads: make(chan struct{}, 1), mods: map[string]*memEntry{}}
}

// get returns module's copy, if one is loaded and not known to be stale;
// otherwise it starts a load (see want) and returns nil.
func (x *memIndex) get(module string) *memModule {
	x.mu.Lock()
	defer x.mu.Unlock()
	e := x.entry(module)
	x.tick++
	e.used = x.tick
	if e.mod != nil && !e.stale {
		return e.mod
	}
	x.want(module, e)
	return nil
}

// entry returns module's entry, made if new. x.mu must be held.
func (x *memIndex) entry(module string) *memEntry {
	e := x.mods[module]
	if e == nil {
		e = &memEntry{}
		x.mods[module] = e
	}
	return e
}

// outdated records that m no longer shows its module's content, and asks
// for a fresh copy.
func (x *memIndex) outdated(m *memModule) {
	x.mu.Lock()
	defer x.mu.Unlock()
	if e := x.mods[m.id]; e != nil && e.mod == m {
		e.stale = true
		x.want(m.id, e)
	}
}

// want starts a background load of module unless one runs or the last
// ended too recently. x.mu must be held.
func (x *memIndex) want(module string, e *memEntry) {
	if e.loading || time.Now().Before(e.notBefore) {
		return
	}
	e.loading = true
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), memLoadTimeout)
		defer cancel()
		x.load(ctx, module) //nolint:errcheck // a failed load leaves the module to PostgreSQL; the next search asks again
	}()
}

// load reads module's rows and keeps them, evicting the least recently
// used modules when the index would hold more than maxItems rows.
func (x *memIndex) load(ctx context.Context, module string) error {
	select {
	case x.loads <- struct{}{}:
		defer func() { <-x.loads }()
	case <-ctx.Done():
		x.mu.Lock()
		x.entry(module).loading = false
		x.mu.Unlock()
		return ctx.Err()
	}
	start := time.Now()
	var likes []int // columns whose likes the last copy indexed
	x.mu.Lock()
	if e := x.entry(module); e.mod != nil {
		for i := range e.mod.trigramsAsked {
			if e.mod.trigramsAsked[i].Load() {
				likes = append(likes, i)
			}
		}
	}
	x.mu.Unlock()
	m, err := loadMemModule(ctx, x.pool, module, x.maxItems)
	if m != nil {
		for _, i := range likes {
			m.trigramsAsked[i].Store(true)
			m.buildTrigrams(i)
		}
	}
	took := time.Since(start)
	x.mu.Lock()
	defer x.mu.Unlock()
	e := x.entry(module)
	e.loading = false
	e.notBefore = time.Now().Add(max(memReloadGap, 4*took))
	if err != nil || m == nil {
		if err == nil { // too many rows
			e.notBefore = time.Now().Add(memTooBigWait)
		}
		x.drop(e)
		return err
	}
	x.drop(e)
	for x.held+m.ids.len() > x.maxItems && x.evictOne(e) {
	}
	if x.held+m.ids.len() > x.maxItems {
		return nil
	}
	e.mod, e.stale = m, false
	x.held += m.ids.len()
	return nil
}

// drop forgets e's copy. x.mu must be held.
func (x *memIndex) drop(e *memEntry) {
	if m := e.mod; m != nil {
		x.held -= m.ids.len()
		m.itemsMu.Lock()
		m.dropped = true // a search still at it keeps no more items
		x.kept.Add(-m.keptBytes)
		m.itemsMu.Unlock()
		e.mod = nil
	}
}

// evictOne drops the least recently used copy other than keep's; false
// when there is none. x.mu must be held.
func (x *memIndex) evictOne(keep *memEntry) bool {
	var lru *memEntry
	for _, e := range x.mods {
		if e != keep && e.mod != nil && (lru == nil || e.used < lru.used) {
			lru = e
		}
	}
	if lru == nil {
		return false
	}
	x.drop(lru)
	return true
}

// keep adds the fetched items (items[k], of rows[k], for k in fetched) to
// those m keeps, within the bounds (see memItemsMax): when m keeps its
// most, or the index its most bytes, each item added first takes the place
// of an arbitrary one that m kept before, so that what is kept follows
// what searches fetch.
func (x *memIndex) keep(m *memModule, rows []int32, items []Item, fetched []int) {
	m.itemsMu.Lock()
	defer m.itemsMu.Unlock()
	limit := min(memItemsMax, m.ids.len()/10)
	if m.dropped || limit == 0 {
		return
	}
	if m.items == nil {
		m.items = map[int32]Item{}
	}
	adding := make(map[int32]bool, len(fetched)) // not to make room for each other
	for _, k := range fetched {
		adding[rows[k]] = true
	}
	for _, k := range fetched {
		size := keptSize(items[k])
		if size > memItemBytes {
			continue
		}
		if _, ok := m.items[rows[k]]; ok {
			continue
		}
		if len(m.items) >= limit || x.kept.Load()+size > memItemsBytes {
			for r, it := range m.items {
				if adding[r] {
					continue
				}
				delete(m.items, r)
				m.keptBytes -= keptSize(it)
				x.kept.Add(-keptSize(it))
				break
			}
		}
		if len(m.items) < limit && x.kept.Load()+size <= memItemsBytes {
			m.items[rows[k]] = items[k]
			m.keptBytes += size
			x.kept.Add(size)
		}
	}
}

// keptSize is about what keeping it takes: its values and texts, and the
// rest of an Item.
func keptSize(it Item) int64 {
	n := len(it.RawValues) + len(it.ID) + len(it.App) + len(it.Module) + len(it.Name) + len(it.ExternalID) + len(it.CreatedBy) + 256
	for _, t := range it.Tags {
		n += len(t.ID) + len(t.Name) + len(t.Value) + len(t.TagType) + 64
	}
	return int64(n)
}

// catchUp returns module m's copy at the tables' current version, or nil
// (the search goes to PostgreSQL): the index's copy if it is no longer m,
// else m brought forward (see memModule.forward), which then takes m's
// place. One catchUp of a module runs at a time, and the others wait for
// it: only the index's copy is brought forward, so that the rows a
// forward appends past a copy's end are seen by no other copy. A copy
// that cannot be brought forward is marked stale and loaded again.
func (x *memIndex) catchUp(ctx context.Context, m *memModule) *memModule {
	x.mu.Lock()
	e := x.mods[m.id]
	for e != nil && e.mod == m && e.catching != nil {
		ch := e.catching
		x.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return nil
		}
		x.mu.Lock()
	}
	if e == nil || e.mod == nil || e.stale {
		x.mu.Unlock()
		return nil
	}
	if e.mod != m {
		cur := e.mod
		x.mu.Unlock()
		return cur
	}
	ch := make(chan struct{})
	e.catching = ch
	x.mu.Unlock()
	next, err := m.forward(ctx, x.pool)
	x.mu.Lock()
	defer x.mu.Unlock()
	e.catching = nil
	close(ch)
	if e.mod != m {
		return nil // loaded again meanwhile
	}
	if next == nil {
		if err == nil || ctx.Err() == nil {
			e.stale = true
			x.want(m.id, e)
		}
		return nil
	}
	x.held += next.ids.len() - m.ids.len()
	e.mod = next
	if next.forwardLimit() < max(memForwardMin, int(next.base)/memForwardPart)/2 {
		x.want(m.id, e) // half the rows it may take: a new load, in the background, in time
	}
	return next
}
