package content

import (
	"context"
	"maps"
	"slices"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/rights"
	rmrights "github.com/halocms/halocms/readmodels/rights"
)

// Projection is the name of the projection that writes this read model
// (the name Horizon takes).
const Projection = "content"

// scope is what a caller may read: everything (admins), or the apps,
// modules and items they hold the read right on; app tokens read the
// published content of their own app.
type scope struct {
	all           bool
	apps          []string
	modules       []string
	items         []string
	itemModules   []string // the modules of items: a right on an item shows its module
	publishedOnly bool
	preview       bool // a CMS user's view as the app (see previewScope)
}

// scope reads what the actor in ctx may read.
func (q *Queries) scope(ctx context.Context) (scope, error) {
	a := access.From(ctx)
	switch {
	case a.IsAdmin():
		return scope{all: true}, nil
	case a.ClientApp() != "":
		// App tokens, and users identified through an app, read the
		// published content of that app.
		return scope{apps: []string{a.ClientApp()}, publishedOnly: true}, nil
	case a.Kind != access.User:
		return scope{}, access.ErrUnauthenticated
	}
	rs, err := q.authz.Of(ctx, a.ID, "")
	if err != nil {
		return scope{}, err
	}
	return q.scopeOf(ctx, rs)
}

// scopeOf is what a CMS user holding the rights rs may read.
func (q *Queries) scopeOf(ctx context.Context, rs []rmrights.Right) (scope, error) {
	sc := scope{apps: []string{}, modules: []string{}, items: []string{}}
	modules, items := map[string][]string{}, map[string][]string{} // id → the apps of its rights
	for _, r := range rs {
		if !slices.Contains(r.Permissions, rights.Read.String()) {
			continue
		}
		switch r.ScopeKind {
		case rights.AppScope.String():
			sc.apps = append(sc.apps, r.App)
		case rights.ModuleScope.String():
			modules[r.ScopeID] = append(modules[r.ScopeID], r.App)
		case rights.ItemScope.String():
			items[r.ScopeID] = append(items[r.ScopeID], r.App)
		}
	}
	// A right on a module or an item counts only inside its own app: the
	// searches match module and item ids whatever their app, and a right
	// recorded before grants checked this could name another app's.
	if len(modules) > 0 {
		ms, err := q.store.Modules(ctx, ModuleQuery{AllApps: true, IDs: slices.Collect(maps.Keys(modules))})
		if err != nil {
			return scope{}, err
		}
		for _, m := range ms {
			if slices.Contains(modules[m.ID], m.App) {
				sc.modules = append(sc.modules, m.ID)
			}
		}
	}
	if len(items) > 0 {
		its, err := q.store.ItemPlaces(ctx, slices.Collect(maps.Keys(items)))
		if err != nil {
			return scope{}, err
		}
		for _, it := range its {
			if slices.Contains(items[it.ID], it.App) {
				sc.items, sc.itemModules = append(sc.items, it.ID), append(sc.itemModules, it.Module)
			}
		}
	}
	return sc, nil
}

// canSeeModule reports whether the scope lets the caller see a module (a
// right on one of its items shows the module too).
func (sc scope) canSeeModule(m Module) bool {
	return sc.all || slices.Contains(sc.apps, m.App) || slices.Contains(sc.modules, m.ID) || slices.Contains(sc.itemModules, m.ID)
}

// mayRead reports whether the scope reads a whole module, its app's or
// its own right (a right on single items shows the module but does not
// cover it all).
func (sc scope) mayRead(m Module) bool {
	return sc.all || slices.Contains(sc.apps, m.App) || slices.Contains(sc.modules, m.ID)
}

// cacheableApp is the app whose published content the scope reads, when
// that is all it reads (app and identified-user tokens; not a preview,
// whose answer is judged at another instant than now).
func (sc scope) cacheableApp() (string, bool) {
	if sc.all || !sc.publishedOnly || sc.preview || len(sc.apps) != 1 || len(sc.modules) > 0 || len(sc.items) > 0 {
		return "", false
	}
	return sc.apps[0], true
}

// visible keeps the modules the scope sees, each once.
func (sc scope) visible(mods []Module) []Module {
	out := []Module{}
	for _, m := range mods {
		if sc.canSeeModule(m) && !slices.ContainsFunc(out, func(o Module) bool { return o.ID == m.ID }) {
			out = append(out, m)
		}
	}
	return out
}

// apply restricts q to what the scope reads.
func (sc scope) apply(q *Query) {
	q.AllApps, q.Apps, q.PublishedOnly = sc.all, sc.apps, sc.publishedOnly
	q.VisibleModules, q.VisibleItems = sc.modules, sc.items
}

// fieldsOf gathers the field definitions of mods by name, the first
// module's where several define a name.
func fieldsOf(mods []Module) map[string]content.Field {
	out := map[string]content.Field{}
	for _, m := range mods {
		for _, f := range m.Fields {
			if _, ok := out[f.Name]; !ok {
				out[f.Name] = f
			}
		}
	}
	return out
}
