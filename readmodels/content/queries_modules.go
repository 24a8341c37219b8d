package content

import (
	"context"
	"slices"

	"github.com/halocms/halocms/domain/content"
)

// resolveModules turns a request's module references into the visible
// modules they name; named is false when the request names none (search
// all).
func (q *Queries) resolveModules(ctx context.Context, sc scope, ids []string, names []string) (mods []Module, named bool, err error) {
	if ids == nil && names == nil {
		mods, err := q.store.Modules(ctx, ModuleQuery{AllApps: true})
		return sc.visible(mods), false, err
	}
	var out []Module
	if ids != nil {
		mods, err := q.store.Modules(ctx, ModuleQuery{AllApps: true, IDs: ids})
		if err != nil {
			return nil, true, err
		}
		out = append(out, mods...)
	}
	if names != nil {
		mods, err := q.store.Modules(ctx, ModuleQuery{AllApps: true, Names: names})
		if err != nil {
			return nil, true, err
		}
		out = append(out, mods...)
	}
	return sc.visible(out), true, nil
}

// searchModules restricts s to the visible modules the request names (all
// visible modules when it names none), gives it their fields and returns
// them.
func (q *Queries) searchModules(ctx context.Context, sc scope, s *Query, ids, names []string) ([]Module, error) {
	mods, named, err := q.resolveModules(ctx, sc, ids, names)
	if err != nil {
		return nil, err
	}
	useModules(s, mods, named)
	return mods, nil
}

// useModules restricts s to mods (when the request named modules) and
// gives it their fields: each module's too when the search may span
// several.
func useModules(s *Query, mods []Module, named bool) {
	s.Fields = fieldsOf(mods)
	s.ModuleIDs, s.Slots, s.Revision, s.ModuleFields = nil, nil, 0, nil
	if len(mods) > 1 || !named {
		s.ModuleFields = make(map[string]map[string]content.Field, len(mods))
		for _, m := range mods {
			s.ModuleFields[m.ID] = fieldsOf([]Module{m})
		}
	}
	if named {
		s.ModuleIDs = []string{}
		for _, m := range mods {
			s.ModuleIDs = append(s.ModuleIDs, m.ID)
		}
		if len(mods) == 1 {
			s.Slots, s.Revision = mods[0].Slots, mods[0].Revision
		}
	}
}

// knownModule gives s the one module the request names by id as the
// store last read it, when it has it and the caller may see it, marks s
// Known (see Query.Known) and returns the module: a search of one module
// then costs no read of the module unless it changed.
func (q *Queries) knownModule(sc scope, s *Query, ids, names []string) []Module {
	if len(ids) != 1 || names != nil {
		return nil
	}
	m, ok := q.store.KnownModule(ids[0])
	if !ok {
		return nil
	}
	mods := sc.visible([]Module{m})
	if len(mods) != 1 {
		return nil
	}
	useModules(s, mods, true)
	s.Known = true
	return mods
}

// deletedModules resolves an incremental sync's module reference among
// deleted modules, when no live one answers to it: a client that synced a
// module before its deletion is told that its items are gone (they were
// deleted with it). By name, the most recently deleted module of that
// name in each visible app.
func (q *Queries) deletedModules(ctx context.Context, sc scope, ids, names []string) ([]Module, error) {
	mods, err := q.store.Modules(ctx, ModuleQuery{AllApps: true, IDs: ids, Names: names, Deleted: true})
	if err != nil {
		return nil, err
	}
	var out []Module
	for _, m := range sc.visible(mods) {
		if !slices.ContainsFunc(out, func(o Module) bool { return o.App == m.App }) {
			out = append(out, m)
		}
	}
	return out, nil
}
