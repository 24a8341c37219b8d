package content

import (
	"context"
	"errors"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/fault"
)

// Limits on expression trees, whatever the HTTP layer already checked.
const (
	maxExprDepth = 32
	maxExprNodes = 500
)

// Search runs q as one SQL statement over content_items, joined with
// content_fields when it filters or sorts by typed columns (plus a
// count(*) with the same WHERE when q.Count is set, unless one statement
// gives both, see pageWithTotal), in one read-only snapshot that also
// reads the searched modules' slot maps (and q.FreshnessOf's Freshness).
// A search given its module's slot map (q.Slots) that pageWithTotal
// compiles is first tried as that one statement alone (pageInOneTrip).
//
// Every user-supplied string (field names included) is a bind parameter;
// the SQL text is assembled only from constants of this file (the typed
// column names come from slotColumns).
func (s *Store) Search(ctx context.Context, q Query) (Result, error) {
	q.RawValues = q.RawValues && q.Locale == ""
	if sql, args, ok := oneTripStatement(&q); ok {
		res, done, err := s.pageInOneTrip(ctx, &q, sql, args)
		if err != nil || done {
			localize(res.Items, q.Fields, q.Locale) // one module: see localizeItems
			return res, err
		}
	}
	if q.Known {
		return Result{}, ErrModuleUnverified
	}
	var res Result
	var slots map[string]string
	var multi map[string]map[string]string
	// The page, the total and the modules' columns come from one snapshot.
	tx, err := s.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return Result{}, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	var fresh Freshness
	if q.FreshnessOf != "" {
		if err := tx.QueryRow(ctx, `SELECT `+freshnessColumns("$1", "$2", "$3"), q.FreshnessOf, q.Now, int64(math.MaxInt64)).
			Scan(&fresh.Version, &fresh.Until); err != nil {
			return Result{}, err
		}
	}
	if len(q.ModuleIDs) == 1 {
		if slots, err = moduleSlots(ctx, tx, q.ModuleIDs[0]); err != nil {
			return Result{}, err
		}
	} else if multi, err = modulesSlots(ctx, tx, q.ModuleIDs); err != nil {
		return Result{}, err
	}
	if q.Count {
		if sql, args, ok := pageWithTotal(&q, slots, careful); ok {
			res, err := pageAndTotal(ctx, tx, &q, sql, custom(args))
			if err == nil {
				err = s.localizeItems(ctx, tx, &q, res.Items)
			}
			if err != nil || len(res.Items) > 0 || q.Offset == 0 {
				res.Freshness = fresh
				return res, err
			}
			// An empty page past the first: the total comes from the count.
		}
	}
	st, err := compileFull(&q, true, slots, multi)
	if err != nil {
		return Result{}, err
	}
	if q.Count {
		if err := tx.QueryRow(ctx, st.count, custom(st.countArgs)...).Scan(&res.Total); err != nil {
			return Result{}, err
		}
		if st.walk && res.Total < walkFactor*(q.Offset+q.Limit) {
			// Few matches: a walk of the sort index would pass over most
			// of the module to find them; filtering first and sorting the
			// few is cheaper.
			if st, err = compileFull(&q, false, slots, multi); err != nil {
				return Result{}, err
			}
		}
	}
	rows, err := tx.Query(ctx, st.page, custom(st.pageArgs)...)
	if err != nil {
		return Result{}, err
	}
	defer rows.Close()
	res.Items = []Item{}
	for rows.Next() {
		it, err := scanItem(rows, q.RawValues)
		if err != nil {
			return Result{}, err
		}
		res.Items = append(res.Items, it)
	}
	if err := rows.Err(); err != nil {
		return Result{}, err
	}
	rows.Close() // before the modules are read in the same transaction
	if err := s.localizeItems(ctx, tx, &q, res.Items); err != nil {
		return Result{}, err
	}
	res.Freshness = fresh
	return res, nil
}

// OneStatement reports whether Search answers q with the one statement of
// pageInOneTrip, unless the module changed since the caller read it or
// the page is empty. It keeps the compiled statement in q, for Search.
func OneStatement(q *Query) bool {
	_, _, ok := oneTripStatement(q)
	return ok
}

// tripPlan is what oneTripStatement compiled, and for which module state
// and page: a caller whose Known module turned out stale
// (ErrModuleUnverified) reads the module afresh into the same Query
// before it searches again. The filters are not expected to change
// between OneStatement and Search.
type tripPlan struct {
	key  tripKey
	sql  string
	args []any
	ok   bool
}

type tripKey struct {
	known                bool
	module, freshnessOf  string
	revision, now        int64
	offset, limit, sorts int
}

// oneTripStatement compiles q for pageInOneTrip, when it can: a search of
// one module whose slot map and revision the caller read, with a total.
// It compiles once per module state (see tripPlan); the HTTP layer asks
// OneStatement before it searches.
func oneTripStatement(q *Query) (string, []any, bool) {
	key := tripKey{known: q.Known, freshnessOf: q.FreshnessOf, revision: q.Revision, now: q.Now,
		offset: q.Offset, limit: q.Limit, sorts: len(q.Sort)}
	if len(q.ModuleIDs) == 1 {
		key.module = q.ModuleIDs[0]
	}
	if t := q.trip; t != nil && t.key == key {
		return t.sql, t.args, t.ok
	}
	t := &tripPlan{key: key}
	if q.Count && q.Slots != nil && q.Revision != 0 && len(q.ModuleIDs) == 1 {
		t.sql, t.args, t.ok = pageWithTotal(q, q.Slots, oneTrip)
	}
	q.trip = t
	return t.sql, t.args, t.ok
}

// ErrModuleUnverified: a search with a module taken from KnownModule
// (Query.Known) could not be answered by the statement that checks the
// module's revision; the caller must read the module afresh.
var ErrModuleUnverified = errors.New("content search: the known module must be read afresh")

// pageInOneTrip runs a pageWithTotal statement compiled for it (oneTrip)
// with the slot map and revision the caller read with the module (q.Slots,
// q.Revision): one statement, so one snapshot, with no transaction around
// it; the rows carry q.FreshnessOf's Freshness, if asked. done is false
// when the page is empty: either the module is no longer at q.Revision
// (changed or deleted since the caller read it: the statement may name the
// wrong columns, and the caller's checks may no longer hold; the gate
// stops it before it reads a row) or nothing matches; the careful path
// tells which.
//
// Unlike the other search statements, this one runs from a generic plan
// (on the generic pool), made once per connection and statement shape: it
// always reads every match through the indexes of its conditions and
// sorts them (it never walks a sort index, where a generic plan goes
// wrong), and planning it for its values cost more than running it.
func (s *Store) pageInOneTrip(ctx context.Context, q *Query, sql string, args []any) (res Result, done bool, err error) {
	rows, err := s.generic.Query(ctx, sql, args...)
	if err != nil {
		return Result{}, false, err
	}
	var fresh *Freshness
	if q.FreshnessOf != "" {
		fresh = new(Freshness)
	}
	if res, err = readPage(rows, q.RawValues, fresh); err != nil || len(res.Items) == 0 {
		return Result{}, false, err
	}
	if fresh != nil {
		res.Freshness = *fresh
	}
	return res, true, nil
}

// pageAndTotal runs a pageWithTotal statement.
func pageAndTotal(ctx context.Context, db interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, q *Query, sql string, args []any) (Result, error) {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return Result{}, err
	}
	return readPage(rows, q.RawValues, nil)
}

// readPage reads the rows of a pageWithTotal statement: items, each
// carrying the total (an empty page carries none: its total is 0 unless
// the page is past the end) and, when fresh is not nil, the Freshness it
// is read into.
func readPage(rows pgx.Rows, raw bool, fresh *Freshness) (Result, error) {
	defer rows.Close()
	res := Result{Items: []Item{}}
	extra := []any{&res.Total}
	if fresh != nil {
		extra = append(extra, &fresh.Version, &fresh.Until)
	}
	for rows.Next() {
		it, err := scanItem(rows, raw, extra...)
		if err != nil {
			return Result{}, err
		}
		res.Items = append(res.Items, it)
	}
	return res, rows.Err()
}

// statement is a compiled search: the page's SQL and the count's, with
// their arguments.
type statement struct {
	page, count         string
	pageArgs, countArgs []any
	walk                bool // the page walks a sort index (see order)
}

// walkFactor: a search walks the sort index only when the matches are at
// least this many times the rows it must return; with fewer, the walk
// would read about (Offset+Limit) x items/matches index entries, most of
// them not matching.
const walkFactor = 10

// custom runs a search statement unnamed, so that PostgreSQL plans it for
// its actual values every time: a cached generic plan knows neither how
// common the searched value is nor how far a sort must walk, and picks
// plans that are orders of magnitude slower for common values.
func custom(args []any) []any {
	return append([]any{pgx.QueryExecModeCacheDescribe}, args...)
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

// bind adds an argument and returns its placeholder.
func (c *compiler) bind(v any) string {
	c.args = append(c.args, v)
	return "$" + strconv.Itoa(len(c.args))
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
