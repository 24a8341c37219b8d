package content

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
)

// ParseSort parses HALO's sort string: comma-separated keys, each a name
// and an optional direction ("asc" or "desc", any case; asc by default),
// e.g. "createdAt asc,values.price desc". A name is an attribute (name,
// createdAt, updatedAt, publishedAt, removedAt, archivedAt, deletedAt,
// createdBy, updatedBy, deletedBy; any case) or "values.<field>"; a field
// name may hold spaces. Empty keys are skipped; "" gives nil (the default
// sort).
func ParseSort(s string) ([]SortKey, error) {
	var out []SortKey
	for _, part := range strings.Split(s, ",") {
		words := strings.Fields(part)
		if len(words) == 0 {
			continue
		}
		var k SortKey
		if len(words) > 1 {
			switch strings.ToLower(words[len(words)-1]) {
			case "asc":
				words = words[:len(words)-1]
			case "desc":
				k.Desc = true
				words = words[:len(words)-1]
			default:
				if !strings.HasPrefix(words[0], "values.") {
					return nil, fault.Invalidf("unknown sort direction %q (want asc or desc)", words[len(words)-1]).With("field", "sort")
				}
			}
		}
		name := strings.Join(words, " ")
		if f, ok := strings.CutPrefix(name, "values."); ok {
			if f == "" {
				return nil, fault.Invalidf("sort: %q names no field", name).With("field", "sort")
			}
			k.Field = f
		} else if len(words) > 1 {
			return nil, fault.Invalidf("sort: %q is not a key and a direction", strings.TrimSpace(part)).With("field", "sort")
		} else if k.Attr = sortNames[strings.ToLower(name)]; k.Attr == "" {
			return nil, fault.Invalidf("cannot sort by %q", name).With("field", "sort")
		}
		out = append(out, k)
	}
	return out, nil
}

// sortNames are the canonical spellings, by lower-cased name.
var sortNames = map[string]string{
	"name": "name", "createdat": "createdAt", "updatedat": "updatedAt", "publishedat": "publishedAt",
	"removedat": "removedAt", "archivedat": "archivedAt", "deletedat": "deletedAt",
	"createdby": "createdBy", "updatedby": "updatedBy", "deletedby": "deletedBy",
}

// sortAttr is an attribute a search can sort by.
type sortAttr struct {
	expr     string
	nullable bool
}

// sortAttrs are keyed by lower-cased name; texts sort case-insensitively.
var sortAttrs = map[string]sortAttr{
	"name":        {expr: "lower(i.name)"},
	"createdat":   {expr: "i.created_at"},
	"updatedat":   {expr: "i.updated_at", nullable: true},
	"publishedat": {expr: "i.published_at", nullable: true},
	"removedat":   {expr: "i.removed_at", nullable: true},
	"archivedat":  {expr: "i.archived_at", nullable: true},
	"deletedat":   {expr: "i.deleted_at", nullable: true},
	"createdby":   {expr: "lower(i.created_by)"},
	"updatedby":   {expr: "lower(i.updated_by)", nullable: true},
	"deletedby":   {expr: "lower(i.deleted_by)", nullable: true},
}

// ordering is a compiled sort.
type ordering struct {
	from string     // content_items i, with the joins field sorts need
	keys []orderKey // the sort keys, then the tie-breaker
	// walk is set when the statement starts from the first key's
	// content_keys rows, so that their index gives the order (see order).
	walk bool
}

// orderKey is one ORDER BY item: an expression and its direction.
type orderKey struct{ expr, dir string }

// list renders the ORDER BY list.
func (o ordering) list() string {
	out := make([]string, len(o.keys))
	for i, k := range o.keys {
		out[i] = k.expr + k.dir
	}
	return strings.Join(out, ", ")
}

// order compiles the sort.
//
// Missing values (null dates, items without a value) are the smallest:
// first in ascending order, last in descending order (see nullsOrder).
// Ties are broken by item id, ascending, or descending when the last sort
// key is descending, so that a single descending key can walk an index
// backwards.
//
// When the first key is a single-valued scalar field, the search is paged
// (Limit > 0) and covers exactly one module, the statement starts from that
// field's content_keys rows (exactly one per item, NULLs included) so that
// PostgreSQL can walk the index (module, field, n|lower(s), item_id) in
// order, forwards or backwards, and stop after Offset+Limit rows instead
// of sorting every item.
func (c *compiler) order() (ordering, error) {
	keys := c.q.Sort
	if len(keys) == 0 {
		keys = []SortKey{{Attr: "createdAt"}}
	}
	o := ordering{from: "content_items i"}
	tie := "i.id"
	for n, k := range keys {
		dir := " ASC"
		if k.Desc {
			dir = " DESC"
		}
		if (k.Attr == "") == (k.Field == "") {
			return o, fault.Invalidf("a sort key needs an attribute or a field").With("field", "sort")
		}
		if k.Attr != "" {
			a, ok := sortAttrs[strings.ToLower(k.Attr)]
			if !ok {
				return o, fault.Invalidf("cannot sort by %q", k.Attr).With("field", "sort")
			}
			if a.nullable {
				dir += nullsOrder(k.Desc)
			}
			o.keys = append(o.keys, orderKey{a.expr, dir})
			continue
		}
		name, kind, localized, err := c.sortField(k)
		if err != nil {
			return o, err
		}
		if t := c.fieldOrder(&o, n, name, kind, localized, dir+nullsOrder(k.Desc)); t != "" {
			tie = t
		}
	}
	tieDir := " ASC"
	if keys[len(keys)-1].Desc {
		tieDir = " DESC"
	}
	o.keys = append(o.keys, orderKey{tie, tieDir})
	return o, nil
}

// sortField resolves the field a sort key names, with its kind and
// whether it sorts by its text in the search's locale; it refuses a
// field that does not sort, or that the modules searched define
// differently.
func (c *compiler) sortField(k SortKey) (name string, kind content.Kind, localized bool, err error) {
	q := c.q
	name = strings.TrimPrefix(k.Field, "values.")
	f, ok := q.Fields[name]
	if !ok {
		hint := ""
		if i := strings.LastIndexByte(name, ' '); i >= 0 {
			// Field names may hold spaces: the last word was no direction.
			hint = fmt.Sprintf(" (nor is %q a direction: asc or desc)", name[i+1:])
		}
		return "", 0, false, fault.Invalidf("cannot sort by values.%s: no such field%s", name, hint).With("field", "sort")
	}
	if !definedAs(q.ModuleFields, name, f) {
		return "", 0, false, fault.Invalidf("cannot sort by values.%s: the modules searched define it differently (sort one module at a time)", name).
			With("field", "sort")
	}
	kind = f.Kind()
	localized = kind == content.KindLocalized && q.Locale != ""
	if !kind.Scalar() && !localized || !f.Indexed() {
		return "", 0, false, fault.Invalidf("cannot sort by values.%s: only single-valued fields (and localized text with a locale) sort", name).
			With("field", "sort")
	}
	return name, kind, localized, nil
}

// fieldOrder adds to o the n-th sort key, by field name (of kind kind,
// sorted in the search's locale when localized), in direction dir (nulls
// included). It returns the tie-breaker's column when the key is the first
// and reads the item's content_fields row (f.item_id) or walks the
// field's key rows (sk.item_id, see order); else "".
func (c *compiler) fieldOrder(o *ordering, n int, name string, kind content.Kind, localized bool, dir string) (tie string) {
	q := c.q
	col := ".s"
	if kind.Numeric() {
		col = ".n"
	}
	if slot, ok := c.slots[name]; ok && kind.Scalar() {
		// A typed column: PostgreSQL walks its index (module, col,
		// item_id) when that is cheaper than sorting the matches.
		c.useFields = true
		expr := "f." + slot
		if slot[0] == 't' {
			expr = "lower(" + expr + ")"
		}
		o.keys = append(o.keys, orderKey{expr, dir})
		if n == 0 {
			return "f.item_id"
		}
		return ""
	}
	if n == 0 && kind.Scalar() && q.Limit > 0 && len(q.ModuleIDs) == 1 && !c.noWalk {
		o.from, o.walk = "content_keys sk JOIN content_items i ON i.id = sk.item_id", true
		c.extra = append(c.extra, "sk.module = "+c.bind(q.ModuleIDs[0]), "sk.field = "+c.bind(name))
		if c.now != "" {
			// Redundant with the item's own condition, but checked on
			// the index entry, before the item is fetched.
			c.extra = append(c.extra, "sk.pub_from <= "+c.now+" AND sk.pub_until > "+c.now)
		}
		o.keys = append(o.keys, orderKey{sortExpr("sk", col), dir})
		return "sk.item_id"
	}
	c.joinOrder(o, n, name, kind, localized, col, dir)
	return ""
}

// joinOrder adds to o the n-th sort key, by field name, read from the
// item's key row of the field (col: .s or .n) that a left join finds (or,
// searching several modules, from the typed column of those that keep the
// field in one).
func (c *compiler) joinOrder(o *ordering, n int, name string, kind content.Kind, localized bool, col, dir string) {
	alias := "s" + strconv.Itoa(n)
	join := " LEFT JOIN content_keys " + alias + " ON " + alias + ".item_id = i.id AND " + alias + ".module = i.module AND " +
		alias + ".field = " + c.bind(name)
	if localized {
		join += " AND " + alias + ".loc = " + c.bind(c.q.Locale)
	}
	o.from += join
	if cols := c.multiColumns(name, kind); len(cols) > 0 {
		// Several modules, some of which keep the field in a column.
		v := "CASE"
		for _, cm := range cols {
			v += " WHEN f.module = ANY(" + cm.mods + ") THEN f." + cm.col
		}
		v = "coalesce(" + alias + col + ", " + v + " END)"
		if col == ".s" {
			v = "lower(" + v + ")"
		}
		o.keys = append(o.keys, orderKey{v, dir})
		return
	}
	o.keys = append(o.keys, orderKey{sortExpr(alias, col), dir})
}

// nullsOrder puts missing values where HALO (MongoDB) did: they are the
// smallest, first in an ascending sort and last in a descending one. It is
// also the order of the key indexes (NULLS FIRST), walked forwards or
// backwards.
func nullsOrder(desc bool) string {
	if desc {
		return " NULLS LAST"
	}
	return " NULLS FIRST"
}

func sortExpr(alias, col string) string {
	if col == ".s" {
		return "lower(" + alias + col + ")"
	}
	return alias + col
}
