package content

import (
	"strings"

	"github.com/halocms/halocms/domain/fault"
)

// metaAttr is an item attribute metaSearch can filter on.
type metaAttr struct {
	col  string
	date bool // a bigint of epoch ms; otherwise text
}

// metaAttrs are keyed by lower-cased property name.
var metaAttrs = map[string]metaAttr{
	"name":        {col: "i.name"},
	"createdat":   {col: "i.created_at", date: true},
	"updatedat":   {col: "i.updated_at", date: true},
	"publishedat": {col: "i.published_at", date: true},
	"removedat":   {col: "i.removed_at", date: true},
	"archivedat":  {col: "i.archived_at", date: true},
	"deletedat":   {col: "i.deleted_at", date: true},
	"createdby":   {col: "i.created_by"},
	"updatedby":   {col: "i.updated_by"},
	"deletedby":   {col: "i.deleted_by"},
	"externalid":  {col: "nullif(i.external_id, '')"},
	"id":          {col: "i.id"},
	"module":      {col: "i.module"},
}

// metaLeaf compiles an operation on an item attribute. Text comparisons
// are case-sensitive except like; dates compare numerically. != and !in
// match items where the attribute is null, as they did in HALO.
func (c *compiler) metaLeaf(e *Expr) (string, error) {
	op, err := operator(e)
	if err != nil {
		return "", err
	}
	prop := strings.ToLower(e.Property)
	a, ok := metaAttrs[prop]
	if !ok {
		field := e.Property
		if field == "" {
			field = "metaSearch"
		}
		return "", fault.Invalidf("metaSearch: unknown property %q", e.Property).With("field", field)
	}
	if prop == "deletedat" {
		c.mentionsDelete = true
	}
	switch op {
	case "=", "!=", ">", ">=", "<", "<=":
		return c.metaCompare(e, op, a)
	case "in", "!in":
		return c.metaIn(e, op, a)
	default: // like
		if a.date {
			return "", metaBad(e, "like applies to text attributes only")
		}
		pat, err := likePattern(e)
		if err != nil {
			return "", err
		}
		return a.col + " ILIKE " + c.bind(pat), nil
	}
}

// metaBad is the error of a metaSearch operation e that cannot be
// compiled.
func metaBad(e *Expr, format string, args ...any) error {
	return fault.Invalidf("metaSearch %q: "+format, append([]any{e.Property}, args...)...).With("field", e.Property)
}

// metaCompare compiles =, !=, >, >=, < and <= on attribute a; = and !=
// with null are "is null" and "is not null".
func (c *compiler) metaCompare(e *Expr, op string, a metaAttr) (string, error) {
	if isNull(e) {
		switch op {
		case "=":
			return a.col + " IS NULL", nil
		case "!=":
			return a.col + " IS NOT NULL", nil
		}
		return "", metaBad(e, "%s needs a value", op)
	}
	if _, ok := list(e.Value); ok {
		return "", metaBad(e, "%s needs a single value (use in for a list)", op)
	}
	l, r, err := c.metaOperand(e, a, e.Value)
	if err != nil {
		return "", err
	}
	if op == "!=" {
		return l + " IS DISTINCT FROM " + r, nil
	}
	return l + " " + op + " " + r, nil
}

// metaOperand binds v and returns the two sides of a comparison of
// attribute a with it: a date compares as a bigint when v is an integer
// within int64, else as a numeric.
func (c *compiler) metaOperand(e *Expr, a metaAttr, v any) (string, string, error) {
	if !a.date {
		t, ok := text(v)
		if !ok {
			return "", "", metaBad(e, "cannot compare with %v", v)
		}
		return a.col, c.bind(t), nil
	}
	d, ok := number(v)
	if !ok {
		return "", "", metaBad(e, "%v is not a date in epoch milliseconds", v)
	}
	if n, ok := asInt64(d); ok {
		return a.col, c.bind(n), nil
	}
	return a.col + "::numeric", c.bind(d) + "::numeric", nil
}

// metaIn compiles in and !in on attribute a; a null in the list also
// matches an item without the attribute.
func (c *compiler) metaIn(e *Expr, op string, a metaAttr) (string, error) {
	l, ok := list(e.Value)
	if !ok {
		return "", metaBad(e, "%s needs an array", op)
	}
	var texts []string
	var ints []int64
	withNull, allInts := false, true
	for _, v := range l {
		if v == nil {
			withNull = true
			continue
		}
		if a.date {
			d, ok := number(v)
			if !ok {
				return "", metaBad(e, "%v is not a date in epoch milliseconds", v)
			}
			n, isInt := asInt64(d)
			allInts = allInts && isInt
			texts, ints = append(texts, d), append(ints, n)
		} else {
			t, ok := text(v)
			if !ok {
				return "", metaBad(e, "cannot compare with %v", v)
			}
			texts = append(texts, t)
		}
	}
	var cond string
	switch {
	case !a.date:
		cond = a.col + " = ANY(" + c.bind(texts) + "::text[])"
	case allInts:
		cond = a.col + " = ANY(" + c.bind(ints) + "::bigint[])"
	default:
		cond = a.col + "::numeric = ANY(" + c.bind(texts) + "::text[]::numeric[])"
	}
	if withNull {
		cond = "(" + cond + " OR " + a.col + " IS NULL)"
	}
	if op == "!in" {
		return "NOT coalesce(" + cond + ", false)", nil
	}
	return cond, nil
}
