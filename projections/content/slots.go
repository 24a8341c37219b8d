package content

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/halocms/halocms/domain/content"
)

// Typed columns. The first TextSlots single-valued text-like fields of a
// module (text, URL, color, boolean as 'true'/'false', relation, choice),
// in field order, are kept in content_fields.t1..t6, and its first
// NumberSlots numeric fields (number, date) in n1..n4, instead of in
// content_keys: one row per item, so that conditions on several of those
// fields combine on one row (a BitmapAnd of their indexes, or a walk of one
// field's index that checks the others on the row) instead of
// intersecting sets of key rows. The module's slot map (field name →
// column) is kept in content_modules.slots; searches read it in the same
// snapshot as the rows. Other indexed fields (beyond the slots, multi-valued,
// localized, lists) keep their content_keys rows.
const (
	TextSlots   = 6
	NumberSlots = 4
)

// SlotColumns are the typed columns of content_fields, in order: the only
// column names a slot map may hold.
var SlotColumns = func() []string {
	var out []string
	for i := 1; i <= TextSlots; i++ {
		out = append(out, "t"+strconv.Itoa(i))
	}
	for i := 1; i <= NumberSlots; i++ {
		out = append(out, "n"+strconv.Itoa(i))
	}
	return out
}()

// WholeColumns are the columns of content_fields that hold the whole text
// of t1..t6, in order, when it is longer than the column keeps (see
// MaxKeyText); NULL otherwise.
var WholeColumns = func() []string {
	var out []string
	for i := 1; i <= TextSlots; i++ {
		out = append(out, "x"+strconv.Itoa(i))
	}
	return out
}()

// Slots assigns the module's fields their columns: field name → "t<i>" or
// "n<i>". A function of the field list alone, so that a rebuild assigns
// the same columns.
func Slots(fields []content.Field) map[string]string {
	out := map[string]string{}
	t, n := 0, 0
	for _, f := range fields {
		k := f.Kind()
		if !f.Indexed() || !k.Scalar() {
			continue
		}
		if _, dup := out[f.Name]; dup {
			continue
		}
		switch {
		case k.Numeric() && n < NumberSlots:
			n++
			out[f.Name] = "n" + strconv.Itoa(n)
		case !k.Numeric() && t < TextSlots:
			t++
			out[f.Name] = "t" + strconv.Itoa(t)
		}
	}
	return out
}

// fieldRow is one content_fields row.
type fieldRow struct {
	ItemID   string
	Module   string
	PubFrom  *int64
	PubUntil int64
	T        [TextSlots]*string // cut by KeyCut
	X        [TextSlots]*string // T whole, when it was cut
	N        [NumberSlots]*json.Number
	// Version is the content version of the batch that writes the row
	// (see batch.bumpVersions): its app's version once the batch commits.
	Version int64
}

// tx is the trigram-indexed text: the whole texts of the text columns
// joined (stored lower-cased, see Layout). A like on one column finds its
// candidates through it (every text of the column is in it, whole) and
// checks the column itself (or its whole text).
func (r *fieldRow) tx() *string {
	var parts []string
	for i, s := range r.T {
		if r.X[i] != nil {
			s = r.X[i]
		}
		if s != nil {
			parts = append(parts, *s)
		}
	}
	s := strings.Join(parts, "\n")
	if s == "" {
		return nil
	}
	return &s
}

// EqToken is how content_fields.eqs names "column col of an item of
// module holds exactly the text v": equality on text columns is answered
// by the GIN index on (tx, eqs), together with a like in the same index
// scan. Only values of at most EqTokenMax characters have one (see
// HasEqToken), far shorter than a column keeps (MaxKeyText).
func EqToken(module, col, v string) string { return module + "\x1f" + col + "=" + v }

// EqTokenMax is the length, in characters, of the longest text value that
// has an equality token. Tokens serve labels (categories, states, brands,
// tags), which are short and shared by many items. A long text (a title,
// a URL, a sentence) is mostly unique, and a unique token is what costs a
// GIN index most to insert: a new entry of its own, for an equality that
// the column's btree answers as well.
const EqTokenMax = 16

// HasEqToken reports whether the text value v has an equality token.
func HasEqToken(v string) bool {
	return len(v) <= EqTokenMax || utf8.RuneCountInString(v) <= EqTokenMax
}

// eqs is the row's equality tokens, one per text column with a short
// enough value.
func (r *fieldRow) eqs() []string {
	out := []string{}
	for i, s := range r.T {
		if s != nil && HasEqToken(*s) {
			out = append(out, EqToken(r.Module, "t"+strconv.Itoa(i+1), *s))
		}
	}
	return out
}

// fieldsRow computes an item's content_fields row. A value that does not
// fit its column (a string in a number field, a number in a text field:
// the domain's checks refuse both) is left out, as if missing.
func fieldsRow(id, module string, fields []content.Field, slots map[string]string, vals map[string]any, from *int64, until int64) fieldRow {
	r := fieldRow{ItemID: id, Module: module, PubFrom: from, PubUntil: until}
	for _, f := range fields {
		col, ok := slots[f.Name]
		if !ok {
			continue
		}
		i, _ := strconv.Atoi(col[1:])
		s, n, _ := scalar(vals[f.Name])
		if col[0] == 't' {
			r.T[i-1], r.X[i-1] = keyText(s)
		} else {
			r.N[i-1] = n
		}
	}
	return r
}
