package content

import (
	"slices"
	"strings"
	"unicode/utf8"
)

// maxKeyText and maxKeyBytes mirror projections/content.MaxKeyText and
// MaxKeyBytes: a text column (content_keys.s, content_fields.t<i>) keeps
// the cut of a text (see cut), and its whole column (k.x, f.x<i>, see
// wholeOf) the whole text when it is longer. A condition on a text that
// may be cut checks the whole one (see textArg, textList, textRange,
// textLike).
const (
	maxKeyText  = 500
	maxKeyBytes = 800
)

// eqTokenMax mirrors projections/content.EqTokenMax: only texts of at
// most that many characters have an equality token.
const eqTokenMax = 16

// cut shortens a text the way a text column does (projections/content's
// KeyCut): to its first maxKeyText characters, fewer when they would pass
// maxKeyBytes bytes.
func cut(s string) string {
	if len(s) <= maxKeyText {
		return s
	}
	for i, n := 0, 0; i < len(s); n++ {
		_, w := utf8.DecodeRuneInString(s[i:])
		if n == maxKeyText || i+w > maxKeyBytes {
			return s[:i]
		}
		i += w
	}
	return s
}

// wholeOf names the column that holds the whole text of text column col
// (k.s, f.t<i>) when col keeps only its first maxKeyText characters, and
// is NULL otherwise: k.x, f.x<i> (projections/content.WholeColumns).
func wholeOf(col string) string {
	if col == "k.s" {
		return "k.x"
	}
	return "f.x" + strings.TrimPrefix(col, "f.t")
}

// mayBeCut reports whether a text column's value equal to the cut of s
// may be another text: s is as long as a cut gets (maxKeyText characters,
// or so many bytes that one more character might not have fitted), so
// that a column holding its cut may hold the cut of a longer text.
func mayBeCut(s string) bool {
	return len(s) > maxKeyBytes-utf8.UTFMax || len(s) >= maxKeyText && utf8.RuneCountInString(s) >= maxKeyText
}

// eqText compares a text column (k.s, f.t1...) with one value through its
// index on lower(col) (for k.s, the index also holds s, so the exact
// comparison needs no visit of the table).
func eqText(col, v string) string {
	return "lower(" + col + ") = lower(" + v + ") AND " + col + " = " + v
}

// anyText compares a text column with a list of values (a text[]
// placeholder) through its index on lower(col).
func anyText(col, arr string) string {
	return "lower(" + col + ") = ANY(ARRAY(SELECT lower(x) FROM unnest(" + arr + ") x)) AND " + col + " = ANY(" + arr + ")"
}

// textArg is a text bound to be compared for equality with a text
// column: whole, and cut as the column would keep it when it may be cut
// (else "").
type textArg struct{ whole, cut string }

func (c *compiler) textArg(s string) textArg {
	a := textArg{whole: c.bind(s)}
	if mayBeCut(s) {
		a.cut = a.whole
		if k := cut(s); k != s {
			a.cut = c.bind(k)
		}
	}
	return a
}

// eq is "text column col holds the text": through col's index on
// lower(col) (see eqText) and, for a text that may be cut, a check of the
// whole text. A shorter text equal to col is col's whole text.
func (a textArg) eq(col string) string {
	if a.cut == "" {
		return eqText(col, a.whole)
	}
	return eqText(col, a.cut) + " AND coalesce(" + wholeOf(col) + ", " + col + ") = " + a.whole
}

// textList is a list of texts bound as text[] to be compared with a text
// column (see textArg): whole, and cut when one of them may be cut (else
// "").
type textList struct{ whole, cut string }

func (c *compiler) textList(vals []string) textList {
	l := textList{whole: c.bind(vals) + "::text[]"}
	if slices.ContainsFunc(vals, mayBeCut) {
		cuts := make([]string, len(vals))
		for i, v := range vals {
			cuts[i] = cut(v)
		}
		l.cut = c.bind(cuts) + "::text[]"
	}
	return l
}

// in is "text column col holds one of the texts" (see textArg.eq).
func (l textList) in(col string) string {
	if l.cut == "" {
		return anyText(col, l.whole)
	}
	return anyText(col, l.cut) + " AND coalesce(" + wholeOf(col) + ", " + col + ") = ANY(" + l.whole + ")"
}

// textRange compares text column col with v (a placeholder of a whole
// text) by op (<, <=, >, >=): a cut text compares as its whole text,
// which its cut need not (in a collation's order, a text's first
// characters may sort on the other side of v).
func textRange(col, op, v string) string {
	x := wholeOf(col)
	return "(" + x + " IS NULL AND " + col + " " + op + " " + v + " OR " + x + " " + op + " " + v + ")"
}

// textLike matches text column col with a like-pattern (a placeholder),
// case-insensitively: a match in a cut text is a match in its whole one;
// a match past the cut is found in the whole text.
func textLike(col, pat string) string {
	return "(" + col + " ILIKE " + pat + " OR " + wholeOf(col) + " ILIKE " + pat + ")"
}

// slotEq is "text column slot of the item holds one of vals" (many: bind
// them as an array even if there is one): through the equality tokens of
// the GIN index on (tx, eqs) (see projections/content.EqToken). A token
// names the module, the column and the exact text, so no recheck on the
// column is needed (and none is made: the planner would count its
// selectivity twice). Values too long for a token are compared on the
// column, through its btree (and, when they may be cut, with the whole
// text: see textArg).
func (c *compiler) slotEq(slot string, vals []string, many bool) string {
	var toks, long []string
	for _, v := range vals {
		if hasEqToken(v) {
			toks = append(toks, eqToken(c.q.ModuleIDs[0], slot, v))
		} else {
			long = append(long, v)
		}
	}
	var conds []string
	switch {
	case len(toks) == 1 && !many:
		conds = append(conds, "f.eqs @> ARRAY["+c.bind(toks[0])+"::text]")
	case len(toks) > 0:
		conds = append(conds, "f.eqs && "+c.bind(toks)+"::text[]")
	}
	switch {
	case len(long) == 1 && !many:
		conds = append(conds, "("+c.textArg(long[0]).eq("f."+slot)+")")
	case len(long) > 0:
		conds = append(conds, "("+c.textList(long).in("f."+slot)+")")
	}
	if len(conds) == 0 {
		return "false"
	}
	if len(conds) == 1 {
		return conds[0]
	}
	return "(" + conds[0] + " OR " + conds[1] + ")"
}

// hasEqToken mirrors projections/content.HasEqToken.
func hasEqToken(v string) bool {
	return len(v) <= eqTokenMax || utf8.RuneCountInString(v) <= eqTokenMax
}

// eqToken mirrors projections/content.EqToken.
func eqToken(module, col, v string) string { return module + "\x1f" + col + "=" + v }
