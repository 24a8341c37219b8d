package content

import (
	"context"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"
	"unsafe"

	"github.com/jackc/pgx/v5"
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
// search runs in PostgreSQL as before and the module is loaded again in
// the background (see memIndex.want).
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
	stale     bool       // the app's content changed since mod was loaded
	loading   bool
	notBefore time.Time // no load before then (see load)
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

// memModule is one module's rows as one snapshot held them, at the app's
// content version and the module's revision of that snapshot. The rows
// are held by column, row i of each the i-th item in PostgreSQL's order
// of their ids: a search reads a few columns of a few thousand rows, and
// a column of numbers of 100,000 items (800 KB) stays in the CPU's
// caches where whole rows would not.
type memModule struct {
	id, app  string
	revision int64
	version  int64
	ids      texts
	pub      []memPub // side by side: a search reads both of a row
	// t[i] is t<i+1>'s whole texts (x<i+1> when t<i+1> holds only the
	// start of it); tNull and tWide have bit i set for a NULL text and
	// for one with a character beyond ASCII.
	t            [len(textColumns)]texts
	tNull, tWide []uint8
	n            [len(numberColumns)][]float64 // NaN where NULL
	nNull        []uint8                       // bit i: n<i+1> is NULL
	// exact[i]: every value of n<i+1> has at most 15 significant digits.
	exact [len(numberColumns)]bool

	eqOnce [len(textColumns)]sync.Once
	eq     [len(textColumns)]map[string][]int32 // t<i+1>'s whole text → rows holding it, built when first asked

	// trigrams[i], once built, holds t<i+1>'s trigram lists (see
	// memTrigrams). They are built in the background when a like on the
	// column first comes (trigramsAsked), and by the next load of the
	// module right away.
	trigrams      [len(textColumns)]atomic.Pointer[memTrigrams]
	trigramsAsked [len(textColumns)]atomic.Bool

	// items keeps the items (as scanItem reads them, values as stored)
	// of the rows whose items searches fetched (see Store.memItems and
	// memItemsMax), keptBytes their keptSize; none once the copy is
	// dropped from the index.
	itemsMu   sync.Mutex
	items     map[int32]Item
	keptBytes int64
	dropped   bool
}

// texts is a column of texts in one block of bytes, text i being
// data[end[i-1]:end[i]]: a copy of 100,000 items holds no pointer per
// text for the garbage collector to follow at every cycle.
type texts struct {
	data []byte
	end  []uint32
}

func (c *texts) add(s string) {
	c.data = append(c.data, s...)
	c.end = append(c.end, uint32(len(c.data)))
}

func (c *texts) len() int { return len(c.end) }

// at returns text i, sharing the column's bytes (which never change).
func (c *texts) at(i int32) string {
	from := uint32(0)
	if i > 0 {
		from = c.end[i-1]
	}
	b := c.data[from:c.end[i]]
	return unsafe.String(unsafe.SliceData(b), len(b))
}

// memPub is an item's published interval: from pub_from (memNever when it
// is NULL: not published) until pub_until.
type memPub struct{ from, until int64 }

// memNever is the pub_from of an item that is not published: later than
// any instant a search is made at.
const memNever int64 = math.MaxInt64

var (
	textColumns   = [...]string{"t1", "t2", "t3", "t4", "t5", "t6"}
	numberColumns = [...]string{"n1", "n2", "n3", "n4"}
)

// loadMemModule reads module's rows in one snapshot, with its app, its
// revision and the app's content version; nil when the module has more
// than limit rows (or is gone).
func loadMemModule(ctx context.Context, pool *pgxpool.Pool, module string, limit int) (*memModule, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	m := &memModule{id: module}
	err = tx.QueryRow(ctx, `SELECT m.app, m.revision, coalesce((SELECT version FROM content_versions v WHERE v.app = m.app), 0)
		FROM content_modules m WHERE m.id = $1 AND m.deleted_at IS NULL`, module).Scan(&m.app, &m.revision, &m.version)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT item_id, pub_from, pub_until,
		coalesce(x1, t1), coalesce(x2, t2), coalesce(x3, t3), coalesce(x4, t4), coalesce(x5, t5), coalesce(x6, t6),
		n1::text, n2::text, n3::text, n4::text
		FROM content_fields WHERE module = $1 ORDER BY item_id LIMIT $2`, module, limit+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m.exact = [len(numberColumns)]bool{true, true, true, true}
	var (
		pubFrom *int64
		t       [len(textColumns)]*string
		n       [len(numberColumns)]*string
	)
	dest := []any{nil, &pubFrom, nil}
	for i := range t {
		dest = append(dest, &t[i])
	}
	for i := range n {
		dest = append(dest, &n[i])
	}
	var (
		id       string
		pubUntil int64
	)
	dest[0], dest[2] = &id, &pubUntil
	for rows.Next() {
		if m.ids.len() == limit {
			return nil, nil
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if uint64(len(m.ids.data))+uint64(len(id)) > math.MaxUint32 {
			return nil, nil
		}
		m.ids.add(id)
		p := memPub{from: memNever, until: pubUntil}
		if pubFrom != nil {
			p.from = *pubFrom
		}
		m.pub = append(m.pub, p)
		var null, wide uint8
		for i, s := range t {
			v := ""
			switch {
			case s == nil:
				null |= 1 << i
			default:
				v = *s
				if !isASCII(v) {
					wide |= 1 << i
				}
			}
			if uint64(len(m.t[i].data))+uint64(len(v)) > math.MaxUint32 {
				return nil, nil
			}
			m.t[i].add(v)
		}
		m.tNull, m.tWide = append(m.tNull, null), append(m.tWide, wide)
		null = 0
		for i, s := range n {
			f := math.NaN() // no value: every comparison false, as with NULL
			if s == nil {
				null |= 1 << i
			} else {
				var ok bool
				f, ok = exactFloat(*s)
				m.exact[i] = m.exact[i] && ok
			}
			m.n[i] = append(m.n[i], f)
		}
		m.nNull = append(m.nNull, null)
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return m, tx.Commit(ctx)
}

// exactFloat parses a decimal number, and reports whether float64 keeps
// its order and equality with every other such number: it has at most 15
// significant digits (any decimal of 15 digits survives the round trip
// through float64, so two of them stay distinct and in order) and lies
// in float64's normal range.
func exactFloat(d string) (float64, bool) {
	f, err := strconv.ParseFloat(d, 64)
	if err != nil || math.IsInf(f, 0) || math.IsNaN(f) || f != 0 && math.Abs(f) < 1e-300 {
		return f, false
	}
	mant := d
	if i := strings.IndexAny(mant, "eE"); i >= 0 {
		mant = mant[:i]
	}
	digits := strings.Trim(strings.NewReplacer("+", "", "-", "", ".", "").Replace(mant), "0")
	return f, len(digits) <= 15
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
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
