package content

import "slices"

// match returns the rows published at now that meet c, in row order;
// false when a row cannot be judged, or when c gives no list to start
// from and the module has more than memScanMax rows. The lists are those
// of the conditions at c's top: the rows of each text equality, which
// judge it, and for each like whose column holds only ASCII texts the
// rows holding its rarest trigram (see startLists). It starts from the
// rows in every list, and judges them by the rest of c.
func (m *memModule) match(c *memCond, now int64) ([]int32, bool) {
	top := []memCond{*c}
	if c.kind == '&' {
		top = c.kids
	}
	lists, rest := m.startLists(top)
	if lists == nil && m.ids.len() > memScanMax {
		return nil, false
	}
	pub := m.pub
	var rows []int32 // live, published at now, in every list
	if lists != nil {
		rows = intersect(lists, len(pub))
		keep := rows[:0]
		for _, i := range rows {
			if p := pub[i]; p.from <= now && p.until > now && !m.isDead(i) {
				keep = append(keep, i)
			}
		}
		rows = keep
	} else {
		rows = make([]int32, 0, len(pub))
		for i, p := range pub {
			if p.from <= now && p.until > now && !m.isDead(int32(i)) {
				rows = append(rows, int32(i))
			}
		}
	}
	return m.filter(rest, rows)
}

// memScanMax: a search with no list at its top to start from (see
// memModule.match) reads every row of the module; above this many rows it
// goes to PostgreSQL instead.
const memScanMax = 20_000

// startLists returns the row lists that the conditions of an and (top)
// give (nil if none) and the conditions left to judge on the rows in all
// of them, in top's order: a text equality's rows are exactly those it
// holds for; a like's rarest trigram's rows are a superset of those it
// holds for when its column has no text beyond ASCII, and the like is
// left to check them (listed). A like's list longer than memScanMax is
// not taken: a search reads at most that many texts.
func (m *memModule) startLists(top []memCond) (lists [][]int32, rest []memCond) {
	for _, k := range top {
		switch k.kind {
		case 'e':
			lists = append(lists, m.eqRows(k.col, k.text))
			continue
		case 'l':
			if trg := m.likeTrigrams(&k); trg != nil && !trg.wide {
				if l := m.appended(trg.rarest(k.text)); len(l) <= memScanMax {
					lists, k.listed = append(lists, l), true
				}
			}
		}
		rest = append(rest, k)
	}
	return lists, rest
}

// eqRows returns the rows whose whole text in column col is s, dead ones
// included.
func (m *memModule) eqRows(col int, s string) []int32 {
	m.eqOnce[col].Do(func() {
		idx := map[string][]int32{}
		for i := range m.base {
			if m.tNull[i]&(1<<col) == 0 {
				v := m.t[col].at(i)
				idx[v] = append(idx[v], i)
			}
		}
		m.eq[col] = idx
	})
	l, own := m.eq[col][s], false
	for i := m.base; i < int32(m.ids.len()); i++ {
		if m.tNull[i]&(1<<col) == 0 && m.t[col].at(i) == s {
			if !own { // a new slice, once: the index's stays as it is
				l, own = slices.Clip(l), true
			}
			l = append(l, i)
		}
	}
	return l
}

// appended returns list (loaded rows) with every row appended after the
// load (see memModule): a superset of the rows a like holds for, when list
// is the loaded rows' superset.
func (m *memModule) appended(list []int32) []int32 {
	n := int32(m.ids.len())
	if n == m.base {
		return list
	}
	out := make([]int32, len(list), len(list)+int(n-m.base))
	copy(out, list)
	for i := m.base; i < n; i++ {
		out = append(out, i)
	}
	return out
}

// filter keeps the rows that meet every one of leaves (the operands of an
// and, cheap first, see node; an or or an and among them is judged whole),
// a leaf at a time over all of them, in place; false when a row meets
// every leaf it could be judged by and one it could not.
func (m *memModule) filter(leaves []memCond, rows []int32) ([]int32, bool) {
	var unsure []int32 // rows a like could not judge: out unless a leaf is false for them
	for k := range leaves {
		l := &leaves[k]
		if l.kind == 'n' {
			rows = m.filterNumbers(l, rows)
		} else if trg := m.likeTrigrams(l); trg != nil && !l.listed {
			rows = m.filterLike(l, rows, trg, &unsure)
		} else {
			keep := rows[:0]
			for _, i := range rows {
				switch l.judge(m, i) {
				case judgedTrue:
					keep = append(keep, i)
				case unknown:
					unsure = append(unsure, i)
				}
			}
			rows = keep
		}
		still := unsure[:0]
		for _, i := range unsure {
			if l.judge(m, i) != judgedFalse {
				still = append(still, i)
			}
		}
		unsure = still
	}
	return rows, len(unsure) == 0
}

// filterNumbers keeps the rows whose number in l's column meets l, in
// place: judge's 'n' case, in one loop per operator (the loops spend
// their time waiting for the column's values, which a loop without a call
// per row fetches several at a time). A row without a value holds NaN,
// which no comparison meets.
func (m *memModule) filterNumbers(l *memCond, rows []int32) []int32 {
	vals, v := m.n[l.col], l.value
	keep := rows[:0]
	switch l.op {
	case '=':
		for _, i := range rows {
			if vals[i] == v {
				keep = append(keep, i)
			}
		}
	case '>':
		for _, i := range rows {
			if vals[i] > v {
				keep = append(keep, i)
			}
		}
	case 'G':
		for _, i := range rows {
			if vals[i] >= v {
				keep = append(keep, i)
			}
		}
	case '<':
		for _, i := range rows {
			if vals[i] < v {
				keep = append(keep, i)
			}
		}
	default: // 'L'
		for _, i := range rows {
			if vals[i] <= v {
				keep = append(keep, i)
			}
		}
	}
	return keep
}

// filterLike keeps the rows whose text contains l's (lower-cased ASCII)
// text, reading only the texts of rows that hold its rarest trigram;
// rows whose text is beyond ASCII go to unsure (see judge).
func (m *memModule) filterLike(l *memCond, rows []int32, trg *memTrigrams, unsure *[]int32) []int32 {
	list := trg.rarest(l.text)
	bit := uint8(1) << l.col
	col, nulls, wide := &m.t[l.col], m.tNull, m.tWide
	keep := rows[:0]
	j := 0
	for _, i := range rows {
		switch {
		case nulls[i]&bit != 0:
			continue
		case wide[i]&bit != 0:
			*unsure = append(*unsure, i)
			continue
		}
		if i >= m.base { // in no list (see memModule)
			if containsFold(col.at(i), l.text) {
				keep = append(keep, i)
			}
			continue
		}
		for j < len(list) && list[j] < i {
			j++
		}
		if j < len(list) && list[j] == i && containsFold(col.at(i), l.text) {
			keep = append(keep, i)
		}
	}
	return keep
}

// judgement is a condition's value for a row: false, true, or unknown
// (a like on a text beyond ASCII, which PostgreSQL lower-cases by its own
// rules).
type judgement byte

const (
	judgedFalse judgement = iota
	judgedTrue
	unknown
)

// judge judges row i.
func (c *memCond) judge(m *memModule, i int32) judgement {
	switch c.kind {
	case '&', '|':
		stop := judgedFalse // and: one false decides
		if c.kind == '|' {
			stop = judgedTrue
		}
		out := 1 - stop
		for k := range c.kids {
			switch j := c.kids[k].judge(m, i); j {
			case stop:
				return stop
			case unknown:
				out = unknown
			}
		}
		return out
	case 'e':
		return judged(m.tNull[i]&(1<<c.col) == 0 && m.t[c.col].at(i) == c.text)
	case 'l':
		switch {
		case m.tNull[i]&(1<<c.col) != 0:
			return judgedFalse
		case m.tWide[i]&(1<<c.col) != 0:
			return unknown
		}
		return judged(containsFold(m.t[c.col].at(i), c.text))
	default: // 'n'
		if m.nNull[i]&(1<<c.col) != 0 {
			return judgedFalse
		}
		v := m.n[c.col][i]
		switch c.op {
		case '=':
			return judged(v == c.value)
		case '>':
			return judged(v > c.value)
		case 'G':
			return judged(v >= c.value)
		case '<':
			return judged(v < c.value)
		}
		return judged(v <= c.value)
	}
}

func judged(b bool) judgement {
	if b {
		return judgedTrue
	}
	return judgedFalse
}

// containsFold reports whether s contains needle, ignoring ASCII case;
// needle is lower-case ASCII, s ASCII.
func containsFold(s, needle string) bool {
	n := len(needle)
	for i := 0; i+n <= len(s); i++ {
		j := 0
		for ; j < n; j++ {
			c := s[i+j]
			if 'A' <= c && c <= 'Z' {
				c += 'a' - 'A'
			}
			if c != needle[j] {
				break
			}
		}
		if j == n {
			return true
		}
	}
	return false
}
