package content

import (
	"slices"
	"strings"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
)

// relation compiles one relatedTo entry.
func (c *compiler) relation(r Relation) (string, error) {
	if r.Field == "" {
		return "", fault.Invalidf("relatedTo needs a fieldName").With("field", "relatedTo")
	}
	name := strings.TrimPrefix(r.Field, "values.")
	r.IDs = slices.Compact(slices.Sorted(slices.Values(r.IDs))) // each id compared once
	// Only a relation field relates items: in a module whose field of that
	// name is of another type (a text, a number), no item matches; only
	// names the modules that do, when some do not.
	var only []string
	if c.q.ModuleFields == nil {
		if f, ok := c.q.Fields[name]; ok && !f.Kind().Relation() {
			return "false", nil
		}
	} else {
		others := false
		for mod, fs := range c.q.ModuleFields {
			if f, ok := fs[name]; ok && f.Kind().Relation() {
				only = append(only, mod)
			} else if ok {
				others = true
			}
		}
		if len(only) == 0 && others {
			return "false", nil
		}
		if !others {
			only = nil
		}
		slices.Sort(only)
	}
	if slot, ok := c.slots[name]; ok {
		if slot[0] == 'n' {
			return "false", nil // a number field relates to nothing
		}
		c.useFields = true
		if !slices.Contains(r.IDs, "*") {
			return c.slotEq(slot, r.IDs, true), nil
		}
		return "f." + slot + " IS NOT NULL", nil
	}
	var cond colCond = func(s, _ string) string { return s + " IS NOT NULL" }
	if !slices.Contains(r.IDs, "*") {
		ids := r.IDs
		if ids == nil {
			ids = []string{}
		}
		l := c.textList(ids)
		cond = func(s, _ string) string { return l.in(s) }
	}
	inModules := ""
	if only != nil {
		inModules = " = ANY(" + c.bind(only) + "::text[])"
	}
	field := c.bind(name)
	keys := c.keyRows(field) + " AND " + cond("k.s", "")
	if inModules != "" {
		keys += " AND k.module" + inModules
	}
	keys += ")"
	if c.slots != nil {
		return keys, nil
	}
	parts := []string{keys}
	for _, cm := range c.multiColumns(name, content.KindText) {
		if cm.col[0] == 't' {
			in := "f.module = ANY(" + cm.mods + ")"
			if inModules != "" {
				in += " AND f.module" + inModules
			}
			parts = append(parts, "coalesce("+in+" AND "+cond("f."+cm.col, "")+", false)")
		}
	}
	return "(" + strings.Join(parts, " OR ") + ")", nil
}
