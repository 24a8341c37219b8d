package content

import (
	"context"
	"math"
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
