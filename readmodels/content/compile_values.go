package content

import (
	"strings"
	"unicode/utf8"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/readmodels/internal/like"
)

// valueLeaf compiles an operation on a values field. A field with a
// typed column in the searched module (see moduleSlots) compiles to a
// condition on the column, f.t<i> or f.n<i>; other fields to EXISTS /
// NOT EXISTS over the item's content_keys rows. When the search spans
// several modules, a field may have a column in some and key rows in
// others: the condition is on either (see valueColumns). An item matches
// a positive operation (=, >, in, like...) when one of its values does;
// != and !in are the negations, so items without a value match them too.
func (c *compiler) valueLeaf(e *Expr) (string, error) {
	op, err := operator(e)
	if err != nil {
		return "", err
	}
	t, err := c.target(e)
	if err != nil {
		return "", err
	}
	if t.kind == content.KindObject {
		c.itemRefs = true
		return c.objectLeaf(e, op, t)
	}
	if !t.indexed {
		c.itemRefs = true
		return c.longTextLeaf(e, op, t)
	}
	if t.known && t.kind == content.KindBoolean {
		if err := booleanOperation(e, op, t); err != nil {
			return "", err
		}
	}
	slot, slotted := c.slots[t.name]
	if slotted {
		t.numeric = slot[0] == 'n'
	}
	v := c.valueColumns(t, slot, slotted)
	switch op {
	case "=", "!=":
		return c.valueEq(e, op, t, v)
	case ">", ">=", "<", "<=":
		return c.valueRange(e, op, t, v)
	case "in", "!in":
		return c.valueIn(e, op, t, v)
	default: // like
		if t.known && t.kind.Numeric() || slotted && t.numeric {
			return "", t.bad("like applies to text values only")
		}
		pat, err := likePattern(e)
		if err != nil {
			return "", err
		}
		return v.like(c.bind(pat)), nil
	}
}

// valueTarget is what a values operation compares with: the key rows of
// one field, in one column.
type valueTarget struct {
	name    string       // the field name
	kind    content.Kind // 0 when the field is not in Query.Fields
	known   bool
	numeric bool // compare k.n, else k.s
	indexed bool // the field has key rows (see content.Field.Indexed)
	bad     func(format string, args ...any) error
}

// col is the content_keys column the target compares.
func (t valueTarget) col() string {
	if t.numeric {
		return "k.n"
	}
	return "k.s"
}

// target resolves the field an operation names and the column it compares:
// from the field's kind when known (numbers and dates in n, everything
// else, booleans as 'true'/'false', in s), otherwise (and for List fields,
// whose elements may be either) from the value and the type.
func (c *compiler) target(e *Expr) (valueTarget, error) {
	t := valueTarget{name: strings.TrimPrefix(e.Property, "values.")}
	t.bad = func(format string, args ...any) error {
		return fault.Invalidf("searchValues %q: "+format, append([]any{e.Property}, args...)...).With("field", e.Property)
	}
	if t.name == "" {
		return t, fault.Invalidf("searchValues: an operation needs a property").With("field", "searchValues")
	}
	var f content.Field
	t.indexed = true
	if f, t.known = c.q.Fields[t.name]; t.known {
		t.kind, t.indexed = f.Kind(), f.Indexed()
	}
	t.numeric = t.kind.Numeric()
	if !t.known || t.kind == content.KindList {
		v := e.Value
		if l, ok := list(v); ok && len(l) > 0 {
			v = l[0]
		}
		_, isStr := v.(string)
		_, isNum := number(v)
		t.numeric = (isNum && !isStr) || e.Type == "number" || e.Type == "date"
	}
	return t, nil
}

// arg binds one value to compare with the target's column (a text
// whole: see textArg and textRange for comparing it with a text column).
func (c *compiler) arg(t valueTarget, v any) (string, error) {
	if t.numeric {
		d, ok := number(v)
		if !ok {
			return "", t.bad("%v is not a number", v)
		}
		return c.bind(d) + "::numeric", nil
	}
	s, ok := text(v)
	if !ok {
		return "", t.bad("cannot compare with %v", v)
	}
	return c.bind(s), nil
}

// booleanOperation refuses what a boolean field cannot match: it compares
// by =, !=, in and !in with true, false ("true", "false") or null.
func booleanOperation(e *Expr, op string, t valueTarget) error {
	switch op {
	case "=", "!=", "in", "!in":
	default:
		return t.bad("a boolean field compares by =, !=, in and !in only")
	}
	if isNull(e) {
		return nil
	}
	vals := []any{e.Value}
	if l, ok := list(e.Value); ok {
		vals = l
	}
	for _, v := range vals {
		switch x := v.(type) {
		case nil, bool:
		case string:
			if x != "true" && x != "false" {
				return t.bad("%q is not true or false", x)
			}
		default:
			return t.bad("%v is not true or false", v)
		}
	}
	return nil
}

// objectLeaf compiles an operation on an Object field, which has no key
// rows: only "is (not) null" and like on its JSON text.
func (c *compiler) objectLeaf(e *Expr, op string, t valueTarget) (string, error) {
	get := "(i.vals ->> " + c.bind(t.name) + "::text)"
	switch {
	case op == "=" && isNull(e):
		return get + " IS NULL", nil
	case op == "!=" && isNull(e):
		return get + " IS NOT NULL", nil
	case op == "like":
		pat, err := likePattern(e)
		if err != nil {
			return "", err
		}
		return get + " ILIKE " + c.bind(pat), nil
	}
	return "", t.bad("object fields support only = null, != null and like")
}

// longTextLeaf compiles an operation on a long text field, which is kept
// out of the key rows: it reads the item's value itself.
func (c *compiler) longTextLeaf(e *Expr, op string, t valueTarget) (string, error) {
	get := "(i.vals ->> " + c.bind(t.name) + "::text)"
	if isNull(e) {
		switch op {
		case "=":
			return "coalesce(" + get + ", '') = ''", nil
		case "!=":
			return "coalesce(" + get + ", '') <> ''", nil
		}
		return "", t.bad("%s needs a value", op)
	}
	switch op {
	case "like":
		pat, err := likePattern(e)
		if err != nil {
			return "", err
		}
		return get + " ILIKE " + c.bind(pat), nil
	case "in", "!in":
		l, ok := list(e.Value)
		if !ok {
			return "", t.bad("%s needs an array", op)
		}
		vals := []string{}
		withNull := false
		for _, v := range l {
			if v == nil {
				withNull = true
				continue
			}
			s, ok := text(v)
			if !ok {
				return "", t.bad("cannot compare with %v", v)
			}
			vals = append(vals, s)
		}
		cond := "coalesce(" + get + " = ANY(" + c.bind(vals) + "::text[]), false)"
		if withNull { // or no value, as "= null"
			cond = "(" + cond + " OR coalesce(" + get + ", '') = '')"
		}
		if op == "!in" {
			cond = "NOT " + cond
		}
		return cond, nil
	}
	s, ok := text(e.Value)
	if !ok {
		return "", t.bad("cannot compare with %v", e.Value)
	}
	if op == "!=" {
		return get + " IS DISTINCT FROM " + c.bind(s), nil
	}
	return get + " " + op + " " + c.bind(s), nil
}

// colCond builds a condition on a text column s and a number column n.
type colCond func(s, n string) string

// valueCols is where a values operation finds the field's values: in a
// typed column of the item's content_fields row, or in the item's key
// rows (and, when the search spans several modules, in the columns of
// those that keep the field in one). A condition is built on a text
// column s and a number column n (see colCond); wrap makes it the item's
// condition.
type valueCols struct {
	col, slot string       // the typed column (f.t<i>, f.n<i>) and its slot, if the module keeps the field in one
	keys      string       // else the start of an EXISTS over the item's key rows (see keyRows)
	multi     []colModules // and the columns of the modules that keep the field in one (see multiColumns)
	hasValue  string       // "the item has a value"
}

// valueColumns is where operations on target t find its values: its
// typed column slot when slotted, else its key rows.
func (c *compiler) valueColumns(t valueTarget, slot string, slotted bool) valueCols {
	var v valueCols
	if slotted {
		c.useFields = true
		v.col, v.slot = "f."+slot, slot
	} else {
		c.itemRefs = true
		field := c.fieldParam(t.name, t.known && t.kind.Scalar())
		v.keys = c.keyRows(field)
		if t.kind == content.KindLocalized && c.q.Locale != "" {
			v.keys += " AND k.loc = " + c.bind(c.q.Locale)
		}
		v.multi = c.multiColumns(t.name, t.kind)
	}
	v.hasValue = v.wrap(func(s, n string) string {
		if s == n {
			return s + " IS NOT NULL"
		}
		return "(" + s + " IS NOT NULL OR " + n + " IS NOT NULL)"
	})
	return v
}

// wrap makes cond the item's condition: "the item has a value for which
// cond holds".
func (v valueCols) wrap(cond colCond) string {
	if v.col != "" {
		return "(" + cond(v.col, v.col) + ")"
	}
	keys := v.keys + " AND " + cond("k.s", "k.n") + ")"
	if len(v.multi) == 0 {
		return keys
	}
	// Several modules, some of which keep the field in a column.
	parts := []string{keys}
	for _, cm := range v.multi {
		parts = append(parts, "coalesce(f.module = ANY("+cm.mods+") AND "+cond("f."+cm.col, "f."+cm.col)+", false)")
	}
	return "(" + strings.Join(parts, " OR ") + ")"
}

// not negates an item's condition.
func (v valueCols) not(cond string) string {
	if v.col != "" {
		return "NOT coalesce(" + cond + ", false)"
	}
	return "NOT (" + cond + ")"
}

// like is "a value contains like-pattern pat" (a placeholder).
func (v valueCols) like(pat string) string {
	if v.col != "" {
		// tx is stored lower-cased (projections/content's Layout), so
		// LIKE on it with the pattern lower-cased once, by the same
		// lower() as ILIKE uses, finds what ILIKE would, without
		// lower-casing each candidate's texts again. tx holds whole
		// texts, and the column's check reads a cut text's whole one.
		return "(f.tx LIKE (SELECT lower(" + pat + ")) AND " + textLike(v.col, pat) + ")"
	}
	return v.wrap(func(s, _ string) string { return textLike(s, pat) })
}

// columnEq is "the text in typed column v.col is one of vals" (many: vals
// bound as an array, else the one value), a faster way than eqText or
// anyText (see slotEq).
func (c *compiler) columnEq(v valueCols, vals []string, many bool) string {
	if c.eqBtree && !many && len(vals) == 1 {
		return "(" + c.textArg(vals[0]).eq(v.col) + ")"
	}
	return c.slotEq(v.slot, vals, many)
}

// valueEq compiles = and !=: with null, "has no value" and "has one".
func (c *compiler) valueEq(e *Expr, op string, t valueTarget, v valueCols) (string, error) {
	cond := "NOT " + v.hasValue
	if !isNull(e) {
		if _, ok := list(e.Value); ok {
			return "", t.bad("%s needs a single value (use in for a list)", op)
		}
		s, isText := text(e.Value)
		switch {
		case t.numeric:
			a, err := c.arg(t, e.Value)
			if err != nil {
				return "", err
			}
			cond = v.wrap(func(_, n string) string { return n + " = " + a })
		case !isText:
			return "", t.bad("cannot compare with %v", e.Value)
		case v.col != "":
			cond = c.columnEq(v, []string{s}, false)
		default:
			a := c.textArg(s)
			cond = v.wrap(func(s, _ string) string { return a.eq(s) })
		}
	}
	if op == "!=" {
		cond = v.not(cond)
	}
	return cond, nil
}

// valueRange compiles >, >=, < and <=.
func (c *compiler) valueRange(e *Expr, op string, t valueTarget, v valueCols) (string, error) {
	if isNull(e) {
		return "", t.bad("%s needs a value", op)
	}
	a, err := c.arg(t, e.Value)
	if err != nil {
		return "", err
	}
	if t.numeric {
		return v.wrap(func(_, n string) string { return n + " " + op + " " + a }), nil
	}
	return v.wrap(func(s, _ string) string { return textRange(s, op, a) }), nil
}

// valueIn compiles in and !in; a null in the list also matches an item
// without a value.
func (c *compiler) valueIn(e *Expr, op string, t valueTarget, v valueCols) (string, error) {
	l, ok := list(e.Value)
	if !ok {
		return "", t.bad("%s needs an array", op)
	}
	vals, withNull, err := listValues(l, t)
	if err != nil {
		return "", err
	}
	var cond string
	switch {
	case t.numeric:
		arr := c.bind(vals) + "::text[]"
		cond = v.wrap(func(_, n string) string { return n + " = ANY(" + arr + "::numeric[])" })
	case v.col != "":
		cond = c.columnEq(v, vals, true)
	default:
		l := c.textList(vals)
		cond = v.wrap(func(s, _ string) string { return l.in(s) })
	}
	if withNull {
		cond = "(" + cond + " OR NOT " + v.hasValue + ")"
	}
	if op == "!in" {
		cond = v.not(cond)
	}
	return cond, nil
}

// listValues are the values of list l that an in or !in on target t
// compares with (numbers as decimal literals when t compares numbers, else
// texts), never nil, and whether l holds a null.
func listValues(l []any, t valueTarget) (vals []string, withNull bool, err error) {
	for _, v := range l {
		if v == nil {
			withNull = true
			continue
		}
		if t.numeric {
			d, ok := number(v)
			if !ok {
				return nil, false, t.bad("%v is not a number", v)
			}
			vals = append(vals, d)
		} else {
			s, ok := text(v)
			if !ok {
				return nil, false, t.bad("cannot compare with %v", v)
			}
			vals = append(vals, s)
		}
	}
	if vals == nil {
		vals = []string{}
	}
	return vals, withNull, nil
}

// minLike is the shortest like-pattern HALO accepts.
const minLike = 3

// likePattern turns a like value into a case-insensitive substring
// pattern, its own %, _ and \ escaped.
func likePattern(e *Expr) (string, error) {
	s, ok := e.Value.(string)
	if !ok || utf8.RuneCountInString(s) < minLike {
		return "", fault.Invalidf("like needs a text of at least %d characters", minLike).With("field", e.Property)
	}
	return like.Containing(s), nil
}
