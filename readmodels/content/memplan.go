package content

import (
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/halocms/halocms/domain/content"
)

// memCond is a search's condition as the index judges it.
type memCond struct {
	kind byte // '&' and, '|' or, 'e' text equality, 'l' like, 'n' number comparison
	kids []memCond
	col  int    // index into memModule.t or memModule.n
	text string // 'e': the text; 'l': the lower-cased ASCII text to contain
	// 'l': the rows it is judged on hold its rarest trigram already (see
	// startLists); each one's text is checked.
	listed bool
	op     byte    // 'n': '=', '>', 'G' (>=), '<' or 'L' (<=)
	value  float64 // 'n'
}

// memSort is a sort key on a number column.
type memSort struct {
	col  int
	desc bool
}

// plan turns q's searchValues and sort into what the index judges, when
// it can judge them exactly as the compiled statement does (see
// valueLeaf, fieldsFilter and pageWithTotal): every operation on a field
// with a typed column in the module, each of a kind the index judges.
// The caller has checked that q compiles (oneTripStatement or
// fieldsFilter), so every operation here is one PostgreSQL runs.
func (m *memModule) plan(q *Query) (memCond, []memSort, bool) {
	cond, ok := m.node(q, q.SearchValues)
	if !ok {
		return memCond{}, nil, false
	}
	sorts := make([]memSort, 0, len(q.Sort))
	for _, k := range q.Sort {
		name := strings.TrimPrefix(k.Field, "values.")
		slot, ok := q.Slots[name]
		f, known := q.Fields[name]
		if k.Field == "" || !ok || !known || !f.Kind().Scalar() || slot[0] != 'n' {
			return memCond{}, nil, false
		}
		col := int(slot[1] - '1')
		if !m.exact[col] {
			return memCond{}, nil, false
		}
		sorts = append(sorts, memSort{col: col, desc: k.Desc})
	}
	return cond, sorts, true
}

func (m *memModule) node(q *Query, e *Expr) (memCond, bool) {
	if e.Cond == "" {
		return m.leaf(q, e)
	}
	c := memCond{kind: '&'}
	if strings.ToLower(e.Cond) == "or" {
		c.kind = '|'
	}
	for _, o := range e.Operands {
		k, ok := m.node(q, o)
		if !ok {
			return memCond{}, false
		}
		c.kids = append(c.kids, k)
	}
	// The cheap first: a row is judged as soon as one operand decides.
	slices.SortStableFunc(c.kids, func(a, b memCond) int { return memCost(a.kind) - memCost(b.kind) })
	return c, true
}

func memCost(kind byte) int { return strings.IndexByte("ne&|l", kind) }

func (m *memModule) leaf(q *Query, e *Expr) (memCond, bool) {
	op, err := operator(e)
	if err != nil || isNull(e) {
		return memCond{}, false
	}
	name := strings.TrimPrefix(e.Property, "values.")
	slot, slotted := q.Slots[name]
	if f, known := q.Fields[name]; !slotted || known && (f.Kind() == content.KindObject || !f.Indexed()) {
		return memCond{}, false
	}
	col := int(slot[1] - '1')
	if slot[0] == 'n' {
		if op == "like" || op == "in" || op == "!in" || op == "!=" {
			return memCond{}, false
		}
		if _, isList := list(e.Value); isList {
			return memCond{}, false
		}
		d, ok := number(e.Value)
		if !ok {
			return memCond{}, false
		}
		v, exact := exactFloat(d)
		if !exact || !m.exact[col] {
			return memCond{}, false
		}
		return memCond{kind: 'n', col: col, op: memNumberOps[op], value: v}, true
	}
	switch op {
	case "=":
		if _, isList := list(e.Value); isList {
			return memCond{}, false
		}
		s, ok := text(e.Value)
		if !ok {
			return memCond{}, false
		}
		return memCond{kind: 'e', col: col, text: s}, true
	case "like":
		s, ok := e.Value.(string)
		if !ok || utf8.RuneCountInString(s) < minLike || !isASCII(s) {
			return memCond{}, false
		}
		return memCond{kind: 'l', col: col, text: strings.ToLower(s)}, true
	}
	return memCond{}, false // text ranges follow the collation; !=, in and !in are not judged here
}

// memNumberOps names memCond's number comparisons by their operators.
var memNumberOps = map[string]byte{"=": '=', ">": '>', ">=": 'G', "<": '<', "<=": 'L'}
