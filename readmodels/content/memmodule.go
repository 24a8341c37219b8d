package content

import (
	"context"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"
	"unsafe"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// memModule is one module's rows as one snapshot held them, at the app's
// content version and the module's revision of that snapshot. The rows
// are held by column, row i of each the i-th item in PostgreSQL's order
// of their ids: a search reads a few columns of a few thousand rows, and
// a column of numbers of 100,000 items (800 KB) stays in the CPU's
// caches where whole rows would not.
//
// A copy is brought forward to a later version (see memIndex.catchUp and
// memModule.forward) by a new memModule that shares its columns and
// memShared: the rows written since are appended (the columns only ever
// grow past the ends older copies see, so those never see a change), and
// the rows they replace are marked dead. Rows from base on are past the
// loaded ones: the lists (eq, trigrams) do not hold them, a search reads
// them all, and they are ordered among the others by their ids' bytes
// (see compare), which is PostgreSQL's order when byteOrder holds.
type memModule struct {
	*memShared
	id, app  string
	revision int64
	version  int64
	epoch    int64 // the tables' epoch (see projections/content.Epoch)
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
	// dead has bit i set when row i was replaced by a later row (nil or
	// short: none past its end).
	dead []uint64
}

// memShared is what the copies of one load of a module share: the lists
// of its loaded rows and the items searches fetched.
type memShared struct {
	base int32 // rows loaded; rows from base on were appended by forward
	// byteOrder: PostgreSQL orders the item ids as their bytes, and the
	// loaded rows are in that order (see forward).
	byteOrder bool

	eqOnce [len(textColumns)]sync.Once
	eq     [len(textColumns)]map[string][]int32 // t<i+1>'s whole text → loaded rows holding it, built when first asked

	// trigrams[i], once built, holds t<i+1>'s trigram lists of the loaded
	// rows (see memTrigrams). They are built in the background when a
	// like on the column first comes (trigramsAsked), and by the next load
	// of the module right away.
	trigrams      [len(textColumns)]atomic.Pointer[memTrigrams]
	trigramsAsked [len(textColumns)]atomic.Bool

	// items keeps the items (as scanItem reads them, values as stored)
	// of the rows whose items searches fetched (see Store.memItems and
	// memItemsMax), keptBytes their keptSize; none once the copy is
	// dropped from the index. A row's item stays what it is while the row
	// is live: a write of the item writes a new row.
	itemsMu   sync.Mutex
	items     map[int32]Item
	keptBytes int64
	dropped   bool
}

// isDead reports whether row i was replaced by a later row.
func (m *memModule) isDead(i int32) bool {
	w := int(i >> 6)
	return w < len(m.dead) && m.dead[w]>>(uint32(i)&63)&1 != 0
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

// memRowColumns is what a copy keeps of a content_fields row f (see
// memModule.appendRow): its item, its published interval, its text
// columns (the lower-cased one where there is one) and its numbers as
// text.
const memRowColumns = `f.item_id, f.pub_from, f.pub_until,
	coalesce(f.x1, f.t1), coalesce(f.x2, f.t2), coalesce(f.x3, f.t3), coalesce(f.x4, f.t4), coalesce(f.x5, f.t5), coalesce(f.x6, f.t6),
	f.n1::text, f.n2::text, f.n3::text, f.n4::text`

// loadMemModule reads module's rows in one snapshot, with its app, its
// revision and the app's content version; nil when the module has more
// than limit rows (or is gone).
func loadMemModule(ctx context.Context, pool *pgxpool.Pool, module string, limit int) (*memModule, error) {
	tx, err := pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	m := &memModule{id: module, memShared: &memShared{}}
	var probe []string
	err = tx.QueryRow(ctx, `SELECT m.app, m.revision, coalesce((SELECT version FROM content_versions v WHERE v.app = m.app), 0),
			`+epochColumn+`,
			(SELECT array_agg(s ORDER BY s) FROM unnest($2::text[]) s)
		FROM content_modules m WHERE m.id = $1 AND m.deleted_at IS NULL`, module, idProbe).
		Scan(&m.app, &m.revision, &m.version, &m.epoch, &probe)
	if err == pgx.ErrNoRows {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rows, err := tx.Query(ctx, `SELECT `+memRowColumns+`
		FROM content_fields f WHERE f.module = $1 ORDER BY f.item_id LIMIT $2`, module, limit+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	m.exact = [len(numberColumns)]bool{true, true, true, true}
	byteOrder := slices.IsSorted(probe) && len(probe) == len(idProbe)
	var (
		id       string
		pubFrom  *int64
		pubUntil int64
		t        [len(textColumns)]*string
		n        [len(numberColumns)]*string
	)
	dest := []any{&id, &pubFrom, &pubUntil}
	for i := range t {
		dest = append(dest, &t[i])
	}
	for i := range n {
		dest = append(dest, &n[i])
	}
	for rows.Next() {
		if m.ids.len() == limit {
			return nil, nil
		}
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if k := m.ids.len(); k > 0 && m.ids.at(int32(k-1)) >= id {
			byteOrder = false
		}
		if !m.appendRow(id, pubFrom, pubUntil, &t, &n) {
			return nil, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	m.base, m.byteOrder = int32(m.ids.len()), byteOrder
	return m, tx.Commit(ctx)
}

// epochColumn reads the tables' epoch: the version of app ” (see
// projections/content.Epoch); 0 in tables made before it.
const epochColumn = `coalesce((SELECT version FROM content_versions WHERE app = ''), 0)`

// idProbe are texts that PostgreSQL sorts as their bytes only under a
// collation that compares bytes (C, C.UTF-8, POSIX, ucs_basic): any
// other orders case, punctuation or accents otherwise. content_fields'
// item_id has the database's default collation, which orders the probe
// as it orders ids.
var idProbe = []string{"-", "0", "A", "AB", "Ab", "B", "_", "a", "a b", "a-b", "a_c", "aB", "ab", "b", "z", "~", "É", "é"}

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
