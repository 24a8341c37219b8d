package content

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
)

// valuesByModule compiles searchValues tree e. When the modules searched
// define the fields e names differently (Query.ModuleFields, see
// fieldGroups), e is compiled once per group of modules that define them
// alike, with that group's definitions and typed columns, into "(module
// in group AND e) OR ...": each item is judged by its own module's
// fields. A group for whose definitions e is invalid (a text compared with
// a number field) finds nothing; e is invalid only when it is so for
// every group. Modules the caller gave no definitions for (created since
// it read the modules) keep Fields' definitions.
func (c *compiler) valuesByModule(e *Expr) (string, error) {
	groups := fieldGroups(c.q.ModuleFields, e)
	if len(groups) < 2 {
		return c.tree(e, c.valueLeaf)
	}
	fields, multi, params, single := c.q.Fields, c.multi, c.fields, c.single
	defer func() { c.q.Fields, c.multi, c.fields, c.single = fields, multi, params, single }()
	var parts []string
	var invalid error
	// group compiles e for modules (in: "= ANY", or "<> ALL" for the
	// modules of no group) with their definitions and slot maps. Each
	// group binds its own field names (fieldParam: whether a field is
	// single-valued depends on its definition); an invalid group leaves
	// no bound value behind.
	group := func(in string, modules []string, fields map[string]content.Field, multi map[string]map[string]string) error {
		args := len(c.args)
		c.q.Fields, c.multi, c.fields, c.single = fields, multi, nil, nil
		sv, err := c.tree(e, c.valueLeaf)
		if fault.Is(err, fault.Invalid) {
			c.args = c.args[:args]
			invalid = cmp.Or(invalid, err)
			return nil
		}
		if err == nil {
			parts = append(parts, "(i.module "+in+"("+c.bind(modules)+") AND "+sv+")")
		}
		return err
	}
	var known []string
	for _, g := range groups {
		known = append(known, g.modules...)
		if err := group("= ANY", g.modules, g.fields, onlyModules(multi, g.modules)); err != nil {
			return "", err
		}
	}
	if c.q.ModuleIDs == nil {
		rest := maps.Clone(multi)
		for _, m := range known {
			delete(rest, m)
		}
		if err := group("<> ALL", known, fields, rest); err != nil {
			return "", err
		}
	}
	if len(parts) == 0 {
		return "", invalid
	}
	return "(" + strings.Join(parts, " OR ") + ")", nil
}

// fieldGroup is a group of modules that define alike the fields an
// expression names: fields holds their definitions.
type fieldGroup struct {
	modules []string
	fields  map[string]content.Field
}

// fieldGroups groups the modules of defs (module id → its fields by name)
// by how they define the fields e names: the same kind, indexed or not,
// or not at all (what the compiler reads of a definition). It returns no
// groups when no two modules define one of the names differently (a
// module without the field finds the same with any definition: the
// search is compiled once, as before).
func fieldGroups(defs map[string]map[string]content.Field, e *Expr) []fieldGroup {
	if len(defs) < 2 {
		return nil
	}
	var names []string
	var walk func(*Expr)
	walk = func(e *Expr) {
		if e == nil {
			return
		}
		if e.Cond == "" {
			names = append(names, strings.TrimPrefix(e.Property, "values."))
		}
		for _, o := range e.Operands {
			walk(o)
		}
	}
	walk(e)
	slices.Sort(names)
	names = slices.Compact(names)
	differ := false
	for _, n := range names {
		for _, fs := range defs {
			if f, ok := fs[n]; ok { // any one definition: do the others match it?
				differ = differ || !definedAs(defs, n, f)
				break
			}
		}
	}
	if !differ {
		return nil
	}
	mods := slices.Sorted(maps.Keys(defs))
	var groups []fieldGroup
	bySig := map[string]int{}
	for _, m := range mods {
		var sig strings.Builder
		fields := map[string]content.Field{}
		for _, n := range names {
			if f, ok := defs[m][n]; ok {
				fields[n] = f
				fmt.Fprintf(&sig, "%d/%t;", f.Kind(), f.Indexed())
			} else {
				sig.WriteString("-;")
			}
		}
		i, ok := bySig[sig.String()]
		if !ok {
			i = len(groups)
			bySig[sig.String()] = i
			groups = append(groups, fieldGroup{fields: fields})
		}
		groups[i].modules = append(groups[i].modules, m)
	}
	return groups
}

// onlyModules is the part of multi (module → slot map) of modules mods.
func onlyModules(multi map[string]map[string]string, mods []string) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, m := range mods {
		if slots, ok := multi[m]; ok {
			out[m] = slots
		}
	}
	return out
}

// definedAs reports whether every module of defs that has field name
// defines it as f does, as far as the compiler reads a definition (its
// kind, indexed or not): where not, a searchValues tree is compiled per
// group of modules (fieldGroups), and a sort by the field (a number in one
// module, a text in another) has no order.
func definedAs(defs map[string]map[string]content.Field, name string, f content.Field) bool {
	for _, fs := range defs {
		if g, ok := fs[name]; ok && (g.Kind() != f.Kind() || g.Indexed() != f.Indexed()) {
			return false
		}
	}
	return true
}

// colModules is, for a search of several modules, one typed column that
// holds a field in some of them: the column and the placeholder of those
// modules' ids.
type colModules struct{ col, mods string }

// multiColumns lists, in column order, the typed columns that hold field
// name (of kind kind) in the searched modules, when the search spans
// several (see compileFull's multi).
func (c *compiler) multiColumns(name string, kind content.Kind) []colModules {
	if c.slots != nil || len(c.multi) == 0 || !kind.Scalar() {
		return nil
	}
	byCol := map[string][]string{}
	for m, slots := range c.multi {
		if col, ok := slots[name]; ok {
			byCol[col] = append(byCol[col], m)
		}
	}
	var out []colModules
	for _, col := range []string{"t1", "t2", "t3", "t4", "t5", "t6", "n1", "n2", "n3", "n4"} {
		if mods := byCol[col]; len(mods) > 0 {
			slices.Sort(mods)
			out = append(out, colModules{col: col, mods: c.bind(mods)})
		}
	}
	if len(out) > 0 {
		c.useFields = true
	}
	return out
}
