package content

import (
	"slices"
	"strconv"
	"strings"

	"github.com/halocms/halocms/domain/fault"
)

// compiler turns a Query into SQL text over content_items i, collecting
// the bind arguments as it goes.
type compiler struct {
	q              *Query
	args           []any
	nodes          int                          // nodes of the expression tree being compiled
	mentionsDelete bool                         // metaSearch names deletedAt
	now            string                       // the placeholder of q.Now, once bound
	extra          []string                     // conditions the sort adds to the page's WHERE
	mods           string                       // the placeholder of q.ModuleIDs, once bound
	noWalk         bool                         // never walk a sort index
	fields         map[string]string            // field name → its placeholder, bound once
	single         map[string]bool              // placeholders of single-valued fields (one key row per item)
	slots          map[string]string            // the module's typed columns (see moduleSlots); nil: several modules
	useFields      bool                         // the statement joins content_fields f
	itemRefs       bool                         // searchValues needs more than content_fields
	mod            string                       // the placeholder of the one module, when content_fields is joined
	eqBtree        bool                         // text equality on a column through its btree (see fieldsCount)
	multi          map[string]map[string]string // several modules: each module's slot map (see moduleSlots)
	joined         bool                         // content_fields f is joined
}

// statement is a compiled search: the page's SQL and the count's, with
// their arguments.
type statement struct {
	page, count         string
	pageArgs, countArgs []any
	walk                bool // the page walks a sort index (see order)
}

// compile turns q into its statements (with the slot map of its module,
// see moduleSlots; nil when it searches several modules or all).
func compile(q *Query, slots map[string]string) (statement, error) {
	return compileWith(q, true, slots)
}

// compileWith compiles q; walk allows a page that walks a sort index.
func compileWith(q *Query, walk bool, slots map[string]string) (statement, error) {
	return compileFull(q, walk, slots, nil)
}

// compileFull compiles q with the slot map of its one module (slots) or,
// when it searches several or all modules, those of the modules that have
// typed columns (multi: module → slot map).
func compileFull(q *Query, walk bool, slots map[string]string, multi map[string]map[string]string) (statement, error) {
	if q.Offset < 0 || q.Limit < 0 {
		return statement{}, fault.Invalidf("offset and limit must not be negative")
	}
	c := &compiler{q: q, noWalk: !walk, slots: slots, multi: multi}
	if len(q.ModuleIDs) != 1 {
		c.slots = nil
	} else {
		c.multi = nil
	}
	where, err := c.where()
	if err != nil {
		return statement{}, err
	}
	// joinFields adds the item's typed columns: its content_fields row,
	// found by the module (the leading column of their indexes) and, for
	// published items, the interval, checked before the item is fetched.
	from := "content_items i"
	joinFields := func() {
		from += " JOIN content_fields f ON f.item_id = i.id"
		c.joined = true
		if c.slots != nil {
			c.mod = c.bind(q.ModuleIDs[0])
			where += " AND f.module = " + c.mod
		}
		if c.now != "" {
			where += " AND f.pub_from <= " + c.now + " AND f.pub_until > " + c.now
		}
	}
	if c.useFields { // the filters read typed columns
		joinFields()
	}
	// The count is complete before the sort binds its own arguments.
	st := statement{count: `SELECT count(*) FROM ` + from + ` WHERE ` + where, countArgs: slices.Clip(c.args)}
	if sql, args, ok := keyCount(q, slots); ok {
		st.count, st.countArgs = sql, args
	} else if sql, args, ok := fieldsCount(q, c.slots); ok {
		st.count, st.countArgs = sql, args
	}
	o, err := c.order()
	if err != nil {
		return statement{}, err
	}
	if c.useFields && !c.joined { // only the sort reads typed columns
		joinFields()
	}
	if o.walk {
		where = strings.ReplaceAll(where, itemCorrelation, walkCorrelation)
		st.walk = true
	}
	where = strings.Join(append([]string{where}, c.extra...), " AND ")
	if c.useFields {
		o.from = strings.Replace(o.from, "content_items i", from, 1)
	}
	st.page = `SELECT ` + itemColumns + ` FROM ` + o.from + ` WHERE ` + where + ` ORDER BY ` + o.list()
	if q.Offset > 0 {
		st.page += ` OFFSET ` + c.bind(int64(q.Offset))
	}
	if q.Limit > 0 {
		st.page += ` LIMIT ` + c.bind(int64(q.Limit))
	}
	st.pageArgs = c.args
	return st, nil
}

// bind adds an argument and returns its placeholder.
func (c *compiler) bind(v any) string {
	c.args = append(c.args, v)
	return "$" + strconv.Itoa(len(c.args))
}

// fieldParam binds a field name once per statement; single marks a field
// with exactly one key row per item, whose conditions intersect may merge.
func (c *compiler) fieldParam(name string, single bool) string {
	if p, ok := c.fields[name]; ok {
		return p
	}
	if c.fields == nil {
		c.fields, c.single = map[string]string{}, map[string]bool{}
	}
	p := c.bind(name)
	c.fields[name], c.single[p] = p, single
	return p
}

// itemCorrelation ties a key subquery to the item; walkCorrelation ties
// it to the sort key's row instead (the same item), so that, when a sort
// walks the key index, the filters are checked on the key rows before the
// item itself is fetched.
const (
	itemCorrelation = "k.item_id = i.id AND k.module = i.module"
	walkCorrelation = "k.item_id = sk.item_id AND k.module = sk.module"
)

// keyRows starts an EXISTS over the item's key rows of a field (given as
// a placeholder). Naming the modules lets the subquery use the index
// (module, field, s|n, item_id) on its own.
func (c *compiler) keyRows(field string) string {
	s := "EXISTS (SELECT 1 FROM content_keys k WHERE " + itemCorrelation
	if c.mods != "" {
		s += " AND k.module = ANY(" + c.mods + ")"
	}
	return s + " AND k.field = " + field
}

// where compiles every filter of the query, AND-ed.
func (c *compiler) where() (string, error) {
	q := c.q
	var w []string
	if !q.AllApps {
		var vis []string
		if len(q.Apps) > 0 {
			vis = append(vis, "i.app = ANY("+c.bind(q.Apps)+")")
		}
		if len(q.VisibleModules) > 0 {
			vis = append(vis, "i.module = ANY("+c.bind(q.VisibleModules)+")")
		}
		if len(q.VisibleItems) > 0 {
			vis = append(vis, "i.id = ANY("+c.bind(q.VisibleItems)+")")
		}
		if len(vis) == 0 {
			w = append(w, "false")
		} else {
			w = append(w, "("+strings.Join(vis, " OR ")+")")
		}
	}
	if q.ModuleIDs != nil {
		if len(q.ModuleIDs) == 0 {
			w = append(w, "false")
		} else {
			c.mods = c.bind(q.ModuleIDs)
			w = append(w, "i.module = ANY("+c.mods+")")
		}
	}
	if q.InstanceIDs != nil {
		if len(q.InstanceIDs) == 0 {
			w = append(w, "false")
		} else {
			w = append(w, "i.id = ANY("+c.bind(q.InstanceIDs)+")")
		}
	}
	if q.PublishedOnly {
		c.now = c.bind(q.Now)
		w = append(w, "i.pub_from <= "+c.now+" AND i.pub_until > "+c.now)
	}
	if q.SearchValues != nil {
		sv, err := c.valuesByModule(q.SearchValues)
		if err != nil {
			return "", err
		}
		w = append(w, sv)
	}
	if q.MetaSearch != nil {
		ms, err := c.tree(q.MetaSearch, c.metaLeaf)
		if err != nil {
			return "", err
		}
		w = append(w, ms)
	}
	if !q.IncludeDeleted && !c.mentionsDelete {
		w = append(w, "i.deleted_at IS NULL")
	}
	for _, r := range q.RelatedTo {
		rel, err := c.relation(r)
		if err != nil {
			return "", err
		}
		w = append(w, rel)
	}
	if seg, err := c.segment(); err != nil {
		return "", err
	} else if seg != "" {
		w = append(w, seg)
	}
	if len(w) == 0 {
		return "true", nil
	}
	return strings.Join(w, " AND "), nil
}

// Limits on expression trees: ParseExpr refuses deeper or larger trees,
// and the compiler checks again, for a Query built otherwise.
const (
	maxExprDepth = 32
	maxExprNodes = 500
)

// tree compiles an expression tree, leaves through leaf.
func (c *compiler) tree(e *Expr, leaf func(*Expr) (string, error)) (string, error) {
	c.nodes = 0
	return c.node(e, 1, leaf)
}

func (c *compiler) node(e *Expr, depth int, leaf func(*Expr) (string, error)) (string, error) {
	c.nodes++
	switch {
	case e == nil:
		return "", fault.Invalidf("an expression is empty")
	case depth > maxExprDepth:
		return "", fault.Invalidf("expressions may nest at most %d levels deep", maxExprDepth)
	case c.nodes > maxExprNodes:
		return "", fault.Invalidf("expressions may have at most %d nodes", maxExprNodes)
	case e.Cond == "" && e.Op == "":
		return "", fault.Invalidf("an expression needs a condition or an operation")
	case e.Cond == "":
		return leaf(e)
	}
	var join string
	switch strings.ToLower(e.Cond) {
	case "and":
		join = " AND "
	case "or":
		join = " OR "
	default:
		return "", fault.Invalidf("unknown condition %q (want and or or)", e.Cond).With("condition", e.Cond)
	}
	if len(e.Operands) == 0 {
		return "", fault.Invalidf("condition %q needs operands", e.Cond)
	}
	operands := e.Operands
	if join == " AND " {
		operands = likesLast(operands)
	}
	parts := make([]string, len(operands))
	for i, o := range operands {
		p, err := c.node(o, depth+1, leaf)
		if err != nil {
			return "", err
		}
		parts[i] = p
	}
	if join == " AND " {
		parts = c.intersect(parts)
	}
	return "(" + strings.Join(parts, join) + ")", nil
}

// likesLast puts the like operations of an AND after its other operands.
// PostgreSQL checks the conditions of equal cost in the order written,
// and a like is the dearest of them (ILIKE lower-cases the text first):
// written last, it is checked only on the candidates the others let
// through. The operands are otherwise kept in order.
func likesLast(ops []*Expr) []*Expr {
	isLike := func(o *Expr) bool {
		return o != nil && o.Cond == "" && strings.EqualFold(strings.TrimSpace(o.Op), "like")
	}
	if !slices.ContainsFunc(ops, isLike) {
		return ops
	}
	out := make([]*Expr, 0, len(ops))
	for _, o := range ops {
		if !isLike(o) {
			out = append(out, o)
		}
	}
	for _, o := range ops {
		if isLike(o) {
			out = append(out, o)
		}
	}
	return out
}

// intersect rewrites the positive key conditions of an AND ("the item has
// a value of field f that ...") into one set of item ids, the INTERSECT of
// each condition's ids read from the key indexes alone. PostgreSQL then
// computes each set once and intersects them, instead of probing every
// condition for every candidate item: with several filters of a few
// thousand matches each and few matches in common, that is several times
// faster, and the plan no longer depends on estimating each condition
// right.
func (c *compiler) intersect(parts []string) []string {
	if c.mods == "" {
		return parts
	}
	prefix := "EXISTS (SELECT 1 FROM content_keys k WHERE " + itemCorrelation + " AND k.module = ANY(" + c.mods + ")"
	var conds []string         // each set's condition on its key rows
	merged := map[string]int{} // single-valued field placeholder → index in conds
	var rest []string
	for _, p := range parts {
		if !strings.HasPrefix(p, prefix) || !strings.HasSuffix(p, ")") {
			rest = append(rest, p)
			continue
		}
		cond := p[len(prefix) : len(p)-1] // " AND k.field = $n AND ..."
		// Conditions on one single-valued field (a range: >= and <=) read
		// the same key row: one set with both conditions.
		if f, _, ok := strings.Cut(strings.TrimPrefix(cond, " AND k.field = "), " "); ok && c.single[f] {
			if i, seen := merged[f]; seen {
				conds[i] += strings.TrimPrefix(cond, " AND k.field = "+f)
				continue
			}
			merged[f] = len(conds)
		}
		conds = append(conds, cond)
	}
	if len(conds) < 2 && len(conds) == len(parts)-len(rest) {
		return parts
	}
	sets := make([]string, len(conds))
	for i, cond := range conds {
		sets[i] = "SELECT k.item_id FROM content_keys k WHERE k.module = ANY(" + c.mods + ")" + cond
	}
	return append(rest, "i.id IN ("+strings.Join(sets, " INTERSECT ")+")")
}

// operator checks an operation's operator.
func operator(e *Expr) (string, error) {
	op := strings.ToLower(strings.TrimSpace(e.Op))
	switch op {
	case "=", "!=", ">", ">=", "<", "<=", "in", "!in", "like":
		return op, nil
	}
	return "", fault.Invalidf("unknown operation %q", e.Op).With("operation", e.Op).With("field", e.Property)
}

// isNull reports whether an operation compares with null.
func isNull(e *Expr) bool { return e.Value == nil || strings.EqualFold(e.Type, "null") }
