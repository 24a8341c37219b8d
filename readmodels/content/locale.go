package content

import (
	"context"

	"github.com/halocms/halocms/domain/content"
	"github.com/jackc/pgx/v5"
)

// localizeItems resolves, when q asks for a locale, the localized values of
// items (see localize), each item's with the fields of its own module:
// q.Fields when q names one module, otherwise those of the items' modules,
// read in db (the search's snapshot) in one statement. Those of a search
// of several modules may differ from q.Fields, which has one definition
// per name, and those of the items a search finds by id are unknown to
// its caller.
func (s *Store) localizeItems(ctx context.Context, db interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, q *Query, items []Item) error {
	if q.Locale == "" || len(items) == 0 {
		return nil
	}
	if len(q.ModuleIDs) == 1 {
		localize(items, q.Fields, q.Locale)
		return nil
	}
	// Only objects may be localized values: the modules of the items
	// without any need not be read.
	var ids []string
	seen := map[string]bool{}
	for _, it := range items {
		if !seen[it.Module] && hasObject(it.Values) {
			seen[it.Module] = true
			ids = append(ids, it.Module)
		}
	}
	if len(ids) == 0 {
		return nil
	}
	rows, err := db.Query(ctx, `SELECT `+moduleColumns+` FROM content_modules m WHERE m.id = ANY($1)`, ids)
	if err != nil {
		return err
	}
	defer rows.Close()
	localized := make(map[string][]string, len(ids)) // module id → its localized fields' names
	for rows.Next() {
		m, err := s.scanModule(rows)
		if err != nil {
			return err
		}
		names := []string{}
		for _, f := range m.Fields {
			if f.Kind() == content.KindLocalized {
				names = append(names, f.Name)
			}
		}
		localized[m.ID] = names
	}
	if err := rows.Err(); err != nil {
		return err
	}
	for i := range items {
		for _, name := range localized[items[i].Module] {
			localizeValue(items[i].Values, name, q.Locale)
		}
	}
	return nil
}

// localize replaces, when a locale is asked for, every localized value (an
// object keyed by locale) of items, all of the module whose fields are
// fields, with its text in that locale, or nil.
func localize(items []Item, fields map[string]content.Field, locale string) {
	if locale == "" {
		return
	}
	for name, f := range fields {
		if f.Kind() != content.KindLocalized {
			continue
		}
		for i := range items {
			localizeValue(items[i].Values, name, locale)
		}
	}
}

// localizeValue replaces values[name], when it is an object keyed by
// locale, with its text in locale, or nil.
func localizeValue(values map[string]any, name, locale string) {
	if m, ok := values[name].(map[string]any); ok {
		s, ok := m[locale].(string)
		if ok {
			values[name] = s
		} else {
			values[name] = nil
		}
	}
}

// hasObject reports whether values hold an object.
func hasObject(values map[string]any) bool {
	for _, v := range values {
		if _, ok := v.(map[string]any); ok {
			return true
		}
	}
	return false
}
