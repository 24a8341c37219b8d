package content

import (
	"math"
	"slices"
	"strconv"
	"strings"
)

// fieldsFilter compiles, when it can, the filters of q as conditions on
// content_fields f alone: for a published-only search of one module whose
// every filter is on typed columns. Such rows carry the item's published
// interval, deleted items are never published, and items belong to their
// module's app, so the app check is made once, on the module.
func fieldsFilter(q *Query, slots map[string]string, eqBtree bool) (*compiler, string, bool) {
	if !q.PublishedOnly || slots == nil || len(q.ModuleIDs) != 1 || q.SearchValues == nil ||
		q.MetaSearch != nil || q.InstanceIDs != nil || len(q.RelatedTo) > 0 || len(q.SegmentTags) > 0 {
		return nil, "", false
	}
	checkApp := !q.AllApps && !slices.Contains(q.VisibleModules, q.ModuleIDs[0])
	if !q.AllApps && len(q.VisibleItems) > 0 || checkApp && len(q.Apps) == 0 {
		return nil, "", false
	}
	c := &compiler{q: q, slots: slots, eqBtree: eqBtree}
	c.mods, c.now = c.bind(q.ModuleIDs), c.bind(q.Now)
	sv, err := c.tree(q.SearchValues, c.valueLeaf)
	if err != nil || c.itemRefs || !c.useFields {
		return nil, "", false
	}
	where := `f.module = ANY(` + c.mods + `) AND f.pub_from <= ` + c.now + ` AND f.pub_until > ` + c.now + ` AND ` + sv
	if checkApp {
		where += ` AND EXISTS (SELECT 1 FROM content_modules m WHERE m.id = ANY(` + c.mods + `) AND m.app = ANY(` + c.bind(q.Apps) + `))`
	}
	return c, where, true
}

// fieldsCount compiles, when it can, a count that reads content_fields
// alone (see fieldsFilter). A text equality is compared through the
// column's btree index, which holds the text and the published interval:
// "category = X" is counted from the index alone.
func fieldsCount(q *Query, slots map[string]string) (string, []any, bool) {
	c, where, ok := fieldsFilter(q, slots, true)
	if !ok {
		return "", nil, false
	}
	return `SELECT count(*) FROM content_fields f WHERE ` + where, c.args, true
}

// keyCount compiles, when it can, a count that reads content_keys alone:
// a published-only search of one module whose only filter is
// "field = value" on a single-valued field. Such a field has exactly one
// key row per item, deleted items are never published, and the key rows
// carry pub_from and pub_until, so the index (module, field, s|n, item_id)
// INCLUDE (pub_from, pub_until) answers without visiting an item (an
// index-only scan; about 1 ms instead of 25 for 2,666 matches among
// 60,000 items). Items belong to their module's app, so the app check is
// made once, on the module.
func keyCount(q *Query, slots map[string]string) (string, []any, bool) {
	e := q.SearchValues
	if !q.PublishedOnly || len(q.ModuleIDs) != 1 || e == nil || e.Cond != "" || isNull(e) ||
		q.MetaSearch != nil || q.InstanceIDs != nil || len(q.RelatedTo) > 0 || len(q.SegmentTags) > 0 {
		return "", nil, false
	}
	// Visibility by module (or app) only: rights on single items need the
	// items.
	checkApp := !q.AllApps && !slices.Contains(q.VisibleModules, q.ModuleIDs[0])
	if !q.AllApps && len(q.VisibleItems) > 0 || checkApp && len(q.Apps) == 0 {
		return "", nil, false
	}
	if op, err := operator(e); err != nil || op != "=" {
		return "", nil, false
	}
	if _, isList := list(e.Value); isList {
		return "", nil, false
	}
	c := &compiler{q: q}
	t, err := c.target(e)
	if err != nil || !t.known || !t.kind.Scalar() || !t.indexed { // long text has no key rows
		return "", nil, false
	}
	if _, slotted := slots[t.name]; slotted || slots == nil {
		return "", nil, false // its values are in content_fields (see fieldsCount)
	}
	var cmp string
	if t.numeric {
		v, err := c.arg(t, e.Value)
		if err != nil {
			return "", nil, false
		}
		cmp = t.col() + ` = ` + v
	} else {
		s, ok := text(e.Value)
		if !ok {
			return "", nil, false
		}
		cmp = c.textArg(s).eq("k.s")
	}
	mod, now := c.bind(q.ModuleIDs[0]), c.bind(q.Now)
	sql := `SELECT count(*) FROM content_keys k WHERE k.module = ` + mod + ` AND k.field = ` + c.bind(t.name) +
		` AND ` + cmp + ` AND k.pub_from <= ` + now + ` AND k.pub_until > ` + now
	if checkApp {
		sql += ` AND EXISTS (SELECT 1 FROM content_modules m WHERE m.id = ` + mod + ` AND m.app = ANY(` + c.bind(q.Apps) + `))`
	}
	return sql, c.args, true
}

// singleEquality reports whether e is one "=" operation with a value. Its
// matches are counted from an index alone (see fieldsCount and keyCount),
// which costs less than reading them, and when they are many the page
// walks the sort index: pageWithTotal, which reads every match, is for the
// other filters.
func singleEquality(e *Expr) bool {
	return e != nil && e.Cond == "" && strings.TrimSpace(e.Op) == "=" && !isNull(e)
}

// pageMode is how a pageWithTotal statement is run.
type pageMode int

const (
	careful pageMode = iota // in a snapshot in which the caller read the slot map
	oneTrip                 // alone (see pageInOneTrip)
)

// pageWithTotal compiles, when it can, one statement for the page and the
// total: a search that fieldsFilter compiles, paged, sorted by typed
// columns only. It reads the matching content_fields rows once, counts
// them (count(*) OVER ()), keeps the page's rows in order and fetches
// their items: one pass over the matches instead of two (the count's and
// the page's). Each row carries the total; an empty page carries none.
//
// Compiled for pageInOneTrip (oneTrip), it runs outside a snapshot in which
// the caller read slots, so it checks that the module is live and still at
// q.Revision (PostgreSQL does so once, before reading any row), and its
// rows carry q.FreshnessOf's Freshness when asked.
func pageWithTotal(q *Query, slots map[string]string, mode pageMode) (string, []any, bool) {
	if q.Limit <= 0 || len(q.Sort) == 0 || singleEquality(q.SearchValues) {
		return "", nil, false
	}
	c, where, ok := fieldsFilter(q, slots, false)
	if !ok {
		return "", nil, false
	}
	if mode == oneTrip {
		where = `(SELECT m.revision FROM content_modules m WHERE m.id = ` + c.bind(q.ModuleIDs[0]) +
			` AND m.deleted_at IS NULL) = ` + c.bind(q.Revision) + ` AND ` + where
	}
	var inner, outer, cols []string
	for n, k := range q.Sort {
		name := strings.TrimPrefix(k.Field, "values.")
		slot, ok := slots[name]
		f, known := q.Fields[name]
		if k.Field == "" || !ok || !known || !f.Kind().Scalar() {
			return "", nil, false
		}
		expr := "f." + slot
		if slot[0] == 't' {
			expr = "lower(" + expr + ")"
		}
		dir := " ASC"
		if k.Desc {
			dir = " DESC"
		}
		dir += nullsOrder(k.Desc)
		alias := "k" + strconv.Itoa(n)
		cols = append(cols, expr+" AS "+alias)
		inner = append(inner, alias+dir)
		outer = append(outer, "p."+alias+dir)
	}
	tie := " ASC"
	if q.Sort[len(q.Sort)-1].Desc {
		tie = " DESC"
	}
	inner, outer = append(inner, "f.item_id"+tie), append(outer, "p.item_id"+tie)
	fresh := ""
	if mode == oneTrip && q.FreshnessOf != "" {
		fresh = ", " + freshnessColumns(c.bind(q.FreshnessOf), c.now, c.bind(int64(math.MaxInt64)))
	}
	sql := `SELECT ` + itemColumns + `, p.total` + fresh + ` FROM (SELECT f.item_id, ` + strings.Join(cols, ", ") +
		`, count(*) OVER () AS total FROM content_fields f WHERE ` + where + ` ORDER BY ` + strings.Join(inner, ", ")
	if q.Offset > 0 {
		sql += ` OFFSET ` + c.bind(int64(q.Offset))
	}
	sql += ` LIMIT ` + c.bind(int64(q.Limit)) + `) p JOIN content_items i ON i.id = p.item_id ORDER BY ` + strings.Join(outer, ", ")
	return sql, c.args, true
}
