package content

import (
	"context"
	"math"
	"slices"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Bringing a copy forward. The projection stamps every content_fields row
// it writes with the content version of its batch (content_fields.version,
// see projections/content bumpVersions): an app's versions grow strictly
// in the order their batches commit, so a snapshot that holds the app at
// version V holds every row of a batch committed before it at a version
// <= V, and the rows written after it at versions > V. Every item a batch
// touches has its row written again, and rows are deleted only with their
// module (whose revision changes then). A copy at V (see memModule) thus
// becomes the tables' copy at V' by the rows whose version is > V, read in
// one statement together with V' (one snapshot): each replaces the row of
// its item, if the copy has one, and new items come as new rows. The
// tables' epoch tells a copy made from the tables before a rebuild, whose
// versions say nothing of the new tables' rows.

// memForwardMax bounds the rows a copy takes by forward, appended ones in
// all, as a part of its loaded rows (at least memForwardMin): past it, the
// module is loaded again whole.
const (
	memForwardPart = 16
	memForwardMin  = 1024
)

// forwardLimit is how many more rows m may take by forward.
func (m *memModule) forwardLimit() int {
	return max(memForwardMin, int(m.base)/memForwardPart) - (m.ids.len() - int(m.base))
}

// memForward reads, in one statement, the module's revision and whether
// it is live, its app's content version and the tables' epoch, and the
// rows written after version $2 (at most $3): NULL item_id when none.
const memForward = `SELECT m.revision, m.deleted_at IS NULL, coalesce(v.version, 0), ` + epochColumn + `,
	` + memRowColumns + `
	FROM content_modules m
	LEFT JOIN content_versions v ON v.app = m.app
	LEFT JOIN LATERAL (SELECT * FROM content_fields f WHERE f.module = m.id AND f.version > $2 LIMIT $3) f ON true
	WHERE m.id = $1`

// forward returns m brought to its app's current content version (m
// itself when it is there), sharing m's columns; nil when it cannot be:
// the module changed or went, the tables are others, PostgreSQL does not
// order ids as bytes, or more rows changed than m may take (then it is to
// be loaded again).
func (m *memModule) forward(ctx context.Context, pool *pgxpool.Pool) (*memModule, error) {
	limit := m.forwardLimit()
	if !m.byteOrder || limit <= 0 {
		return nil, nil
	}
	rows, err := pool.Query(ctx, memForward, m.id, m.version, limit+1)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	next := *m // shares memShared and the columns' arrays
	var (
		revision, version, epoch int64
		live                     bool
		id                       *string
		pubFrom                  *int64
		pubUntil                 *int64
		t                        [len(textColumns)]*string
		n                        [len(numberColumns)]*string
		got                      int
		seen                     bool // the module's row
	)
	dest := []any{&revision, &live, &version, &epoch, &id, &pubFrom, &pubUntil}
	for i := range t {
		dest = append(dest, &t[i])
	}
	for i := range n {
		dest = append(dest, &n[i])
	}
	deadCloned := false
	for rows.Next() {
		if err := rows.Scan(dest...); err != nil {
			return nil, err
		}
		if revision != m.revision || !live || epoch != m.epoch || version < m.version {
			return nil, nil
		}
		next.version, seen = version, true
		if id == nil {
			continue // no row written since m's version
		}
		if got++; got > limit {
			return nil, nil
		}
		if old := next.find(*id); old >= 0 {
			if !deadCloned {
				next.dead, deadCloned = slices.Clone(next.dead), true
			}
			w := int(old >> 6)
			if w >= len(next.dead) {
				next.dead = append(next.dead, make([]uint64, w+1-len(next.dead))...)
			}
			next.dead[w] |= 1 << (uint32(old) & 63)
		}
		if !next.appendRow(*id, pubFrom, *pubUntil, &t, &n) {
			return nil, nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	switch {
	case !seen: // the module is gone
		return nil, nil
	case got == 0 && next.version == m.version:
		return m, nil
	}
	return &next, nil
}

// find returns the live row of item id, or -1: the latest appended row
// holding it, else its loaded row (the loaded ids are in byte order).
func (m *memModule) find(id string) int32 {
	for i := int32(m.ids.len()) - 1; i >= m.base; i-- {
		if !m.isDead(i) && m.ids.at(i) == id {
			return i
		}
	}
	lo, hi := int32(0), m.base
	for lo < hi {
		mid := int32(uint32(lo+hi) >> 1)
		if m.ids.at(mid) < id {
			lo = mid + 1
		} else {
			hi = mid
		}
	}
	if lo < m.base && m.ids.at(lo) == id && !m.isDead(lo) {
		return lo
	}
	return -1
}

// appendRow adds a row at the end of m's columns, which are m's own slice
// headers: the arrays they share with older copies grow only past what
// those see. False when a text column would pass its bound.
func (m *memModule) appendRow(id string, pubFrom *int64, pubUntil int64, t *[len(textColumns)]*string, n *[len(numberColumns)]*string) bool {
	if uint64(len(m.ids.data))+uint64(len(id)) > math.MaxUint32 {
		return false
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
		if s == nil {
			null |= 1 << i
		} else {
			v = *s
			if !isASCII(v) {
				wide |= 1 << i
			}
		}
		if uint64(len(m.t[i].data))+uint64(len(v)) > math.MaxUint32 {
			return false
		}
		m.t[i].add(v)
	}
	m.tNull, m.tWide = append(m.tNull, null), append(m.tWide, wide)
	null = 0
	for i, s := range n {
		f := math.NaN()
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
	return true
}
