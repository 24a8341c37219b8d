package content

import (
	"context"
	"slices"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/rights"
)

// LoadModule returns a live module.
func (s *Service) LoadModule(ctx context.Context, id string) (content.Module, int64, error) {
	m, v, err := commands.Load(ctx, s.store, content.ModuleStream(id), content.Module{}, applyModule)
	if err == nil {
		err = liveModule(m, id)
	}
	return m, v, err
}

// liveModule refuses module m (read as id) unless it exists and is not
// deleted.
func liveModule(m content.Module, id string) error {
	if !m.Exists() || m.Deleted {
		return fault.NotFoundf("module %s not found", id).With("field", "module")
	}
	return nil
}

// ModuleInput creates or changes a module.
type ModuleInput struct {
	App        string
	Spec       content.ModuleSpec
	ModuleType string // create only: copy the fields (and single flag) of this module type when Fields is empty
}

// CreateModule creates a module of an app (write right on the app).
func (s *Service) CreateModule(ctx context.Context, in ModuleInput) (content.Module, error) {
	if in.App == "" {
		return content.Module{}, fault.Invalidf("app is required").With("field", "app")
	}
	if err := s.authorize(ctx, rights.Write, rights.Resource{App: in.App}); err != nil {
		return content.Module{}, err
	}
	app, _, err := commands.Load(ctx, s.store, identity.AppStream(in.App), identity.App{}, identity.App.Apply)
	if err != nil {
		return content.Module{}, err
	}
	if !app.Exists() {
		return content.Module{}, fault.Invalidf("app %s not found", in.App).With("field", "app")
	}
	if in.ModuleType != "" && len(in.Spec.Fields) == 0 {
		t, _, err := commands.Load(ctx, s.store, content.ModuleTypeStream(in.ModuleType), content.ModuleType{}, applyType)
		if err != nil {
			return content.Module{}, err
		}
		if !t.Exists() {
			return content.Module{}, fault.Invalidf("module type %s not found", in.ModuleType).With("field", "moduleType")
		}
		in.Spec.Fields, in.Spec.Single = t.Fields, in.Spec.Single || t.Single
	}
	in.Spec.ModuleType = in.ModuleType
	in.Spec.Fields = s.assignFieldIDs(nil, in.Spec.Fields)
	by, err := s.by(ctx)
	if err != nil {
		return content.Module{}, err
	}
	id := s.ids.NewID()
	evs, err := content.CreateModule(content.Module{}, id, in.App, in.Spec, by)
	if err != nil {
		return content.Module{}, err
	}
	created := evs[0].(content.ModuleCreated)
	nameStream := content.ModuleNameStream(in.App, created.Name)
	res, err := commands.UpdateMany(ctx, s.store, func() ([]event.StreamAppend, error) {
		guards, err := s.checkTargets(ctx, in.App, id, nil, in.Spec.Fields)
		if err != nil {
			return nil, err
		}
		n, nv, err := commands.Load(ctx, s.store, nameStream, content.ModuleName{}, applyName)
		if err != nil {
			return nil, err
		}
		if n.Module != "" {
			return nil, fault.Conflictf("the app already has a module named %q", created.Name).With("field", "name")
		}
		return append(guards,
			event.StreamAppend{Stream: content.ModuleStream(id), ExpectedVersion: event.NoStream, Events: commands.WithApp(commands.Wrap(ctx, created), in.App)},
			event.StreamAppend{Stream: nameStream, ExpectedVersion: nv, Events: commands.WithApp(commands.Wrap(ctx,
				content.ModuleNameClaimed{App: in.App, Name: created.Name, ModuleID: id}), in.App)}), nil
	})
	if err != nil {
		return content.Module{}, conflict(err)
	}
	s.settle(ctx, res.Last)
	return content.Module{}.Apply(created), nil
}

// checkTargets refuses a relation field whose target module is not a
// live module of app (or the module self itself): no item could ever be
// related through it. A target that one of the module's fields had before
// (old) is not checked again, so that a module whose target was deleted
// since can still be changed. The guards it returns, appended with the
// change, keep the targets checked as they were read (see Store).
func (s *Service) checkTargets(ctx context.Context, app, self string, old, fields []content.Field) ([]event.StreamAppend, error) {
	had := map[string]bool{self: true}
	for _, f := range old {
		had[f.Rules.Module] = true
	}
	var guards []event.StreamAppend
	for i, f := range fields {
		target := f.Rules.Module
		if target == "" || had[target] {
			continue
		}
		had[target] = true
		m, v, err := commands.Load(ctx, s.store, content.ModuleStream(target), content.Module{}, applyModule)
		if err != nil {
			return nil, err
		}
		if !m.Exists() || m.Deleted || m.App != app {
			return nil, fault.Invalidf("field %q: the target module %s is not a module of this app", f.Name, target).
				With("field", f.Name).With("position", i)
		}
		guards = append(guards, moduleGuard(target, v)...)
	}
	return guards, nil
}

// assignFieldIDs keeps the id of a field that keeps its id or its name and
// gives new fields a new id.
func (s *Service) assignFieldIDs(old, fields []content.Field) []content.Field {
	out := make([]content.Field, len(fields))
	for i, f := range fields {
		if f.ID == "" {
			for _, o := range old {
				if o.Name == f.Name {
					f.ID = o.ID
				}
			}
		}
		if f.ID == "" {
			f.ID = s.ids.NewID()
		}
		out[i] = f
	}
	return out
}

// AffectedItem is an item that a field change would break.
type AffectedItem struct {
	ID    string
	Field string
	Error string
	Rule  string
}

// maxAffected bounds the list of affected items a refused change reports.
const maxAffected = 100

// UpdateModule renames, reconfigures or changes the fields of a module
// (update right on the module). A field change that existing items would
// not satisfy is refused with a 409 that lists the affected items.
func (s *Service) UpdateModule(ctx context.Context, id string, spec content.ModuleSpec) (content.Module, error) {
	by, err := s.by(ctx)
	if err != nil {
		return content.Module{}, err
	}
	fields := spec.Fields
	var (
		m   content.Module
		evs []any
		res event.AppendResult
	)
	err = commands.Retry{}.Run(ctx, func(int) error {
		var version int64
		var err error
		evs, res = nil, event.AppendResult{}
		if m, version, err = s.LoadModule(ctx, id); err != nil {
			return err
		}
		if err := s.authorize(ctx, rights.Update, rights.Resource{App: m.App, Module: m.ID}); err != nil {
			return err
		}
		spec.Fields, spec.ModuleType = s.assignFieldIDs(m.Fields, fields), m.ModuleType
		if evs, err = m.Change(spec, by); err != nil || len(evs) == 0 {
			return err
		}
		guards, err := s.checkTargets(ctx, m.App, m.ID, m.Fields, spec.Fields)
		if err != nil {
			return err
		}
		// Held: no item write commits meanwhile, and those that took
		// their guard before have committed (see Store). A change that
		// checks the items lets the read model catch up with the log
		// first, so that the hold waits only for the writes in flight.
		if checksItems(m, evs) {
			if err := s.caughtUp(ctx); err != nil {
				return err
			}
		}
		res, err = s.store.AppendHeld(ctx, content.ModuleStream(id), version, func(ctx context.Context) ([]event.StreamAppend, error) {
			appends, err := s.changeAppends(ctx, m, evs)
			return append(append(appends, guards...), event.StreamAppend{Stream: content.ModuleStream(id), ExpectedVersion: version,
				Events: commands.WithApp(commands.Wrap(ctx, evs...), m.App)}), err
		})
		return err
	})
	if err != nil {
		return m, conflict(err)
	}
	s.modules.forget(id)
	for _, e := range evs {
		m = m.Apply(e)
	}
	s.settle(ctx, res.Last)
	return m, nil
}

// checksItems reports whether changeAppends may check module m's change
// evs against the module's items in the read model.
func checksItems(m content.Module, evs []any) bool {
	for _, e := range evs {
		switch e := e.(type) {
		case content.ModuleFieldsChanged:
			if !content.KeepsValues(m.Fields, e.Fields) {
				return true
			}
		case content.ModuleConfigured:
			return true
		}
	}
	return false
}

// changeAppends checks module m's change evs against the module's items
// and returns the appends to other streams that go with it (name and
// single-item reservations).
func (s *Service) changeAppends(ctx context.Context, m content.Module, evs []any) ([]event.StreamAppend, error) {
	var appends []event.StreamAppend
	for _, e := range evs {
		switch e := e.(type) {
		case content.ModuleFieldsChanged:
			if err := s.checkItems(ctx, m, e.Fields); err != nil {
				return nil, err
			}
		case content.ModuleRenamed:
			claim, err := s.renameAppends(ctx, m, e.Name)
			if err != nil {
				return nil, err
			}
			appends = append(appends, claim...)
		case content.ModuleConfigured:
			if !slices.Equal(e.Tags, m.Tags) {
				if err := s.checkTags(ctx, m, e.Tags); err != nil {
					return nil, err
				}
			}
			if e.Single != m.Single { // a change of tags only leaves the reservation alone
				claim, err := s.configureSingle(ctx, m, e.Single)
				if err != nil {
					return nil, err
				}
				appends = append(appends, claim...)
			}
		}
	}
	return appends, nil
}

func (s *Service) renameAppends(ctx context.Context, m content.Module, name string) ([]event.StreamAppend, error) {
	newStream, oldStream := content.ModuleNameStream(m.App, name), content.ModuleNameStream(m.App, m.Name)
	n, nv, err := commands.Load(ctx, s.store, newStream, content.ModuleName{}, applyName)
	if err != nil {
		return nil, err
	}
	if n.Module != "" && n.Module != m.ID {
		return nil, fault.Conflictf("the app already has a module named %q", name).With("field", "name")
	}
	if newStream == oldStream {
		return nil, nil // a change of case only: the reservation stays
	}
	_, ov, err := commands.Load(ctx, s.store, oldStream, content.ModuleName{}, applyName)
	if err != nil {
		return nil, err
	}
	return []event.StreamAppend{
		{Stream: oldStream, ExpectedVersion: ov, Events: commands.WithApp(commands.Wrap(ctx,
			content.ModuleNameReleased{App: m.App, Name: m.Name, ModuleID: m.ID}), m.App)},
		{Stream: newStream, ExpectedVersion: nv, Events: commands.WithApp(commands.Wrap(ctx,
			content.ModuleNameClaimed{App: m.App, Name: name, ModuleID: m.ID}), m.App)},
	}, nil
}

// checkTags refuses a change of module m's allowed tags to allowed that
// would leave a live item holding a tag the new list does not allow
// (TagRestriction). Like the single-item flag and the fields, it reads the
// items in the read model once that has caught up with the log as it was
// when the check began (else a 409 asking to try again); the module's
// stream is held meanwhile (see Store), so every item write that was
// checked against the old list has committed before, and is seen.
func (s *Service) checkTags(ctx context.Context, m content.Module, allowed []content.Tag) error {
	r := m.RestrictTags(allowed)
	if !r.Needed() {
		return nil
	}
	if err := s.caughtUp(ctx); err != nil {
		return err
	}
	err := s.items.ModuleTags(ctx, m.ID, func(id string, tags []content.Tag) error {
		r.Item(id, tags)
		return nil
	})
	if err != nil {
		return err
	}
	return r.Decide()
}

// checkItems refuses new fields that the module's items do not satisfy,
// listing the affected items (up to maxAffected) and their total count.
func (s *Service) checkItems(ctx context.Context, m content.Module, fields []content.Field) error {
	if content.KeepsValues(m.Fields, fields) {
		return nil // no item can be refused: nothing to read, and the hold is short
	}
	if err := s.caughtUp(ctx); err != nil {
		return err
	}
	var affected []AffectedItem
	total := 0
	refuse := func(id string, v content.Violation) {
		total++
		if len(affected) < maxAffected {
			affected = append(affected, AffectedItem{ID: id, Field: v.Field, Error: v.Error, Rule: v.Rule})
		}
	}
	// A relation field given another target module: the items it relates
	// must be in that module, which only their rows tell.
	retargeted := map[string]string{} // field → its new target module
	for _, f := range fields {
		if old, ok := m.Field(f.Name); ok && f.Kind().Relation() && f.Rules.Module != "" && f.Rules.Module != old.Rules.Module {
			retargeted[f.Name] = f.Rules.Module
		}
	}
	type relation struct{ item, field, to string }
	var related []relation
	err := s.items.ModuleValues(ctx, m.ID, func(id string, values map[string]any) error {
		if vs := content.ValidateValues(fields, values); len(vs) > 0 {
			refuse(id, vs[0])
			return nil
		}
		for _, f := range fields {
			if _, ok := retargeted[f.Name]; ok {
				for _, to := range content.RelationIDs(f, values[f.Name]) {
					related = append(related, relation{id, f.Name, to})
				}
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(related) > 0 {
		ids := make([]string, len(related))
		for i, r := range related {
			ids[i] = r.to
		}
		modules, err := s.items.LiveItemModules(ctx, m.App, ids)
		if err != nil {
			return err
		}
		refused := map[string]bool{}
		for _, r := range related {
			// A related item deleted since stays as it is (see
			// checkRelations): only live items of another module count.
			if mod, ok := modules[r.to]; ok && mod != retargeted[r.field] && !refused[r.item] {
				refused[r.item] = true
				refuse(r.item, content.Violation{Field: r.field, Error: content.ErrTargetModel, Rule: "module"})
			}
		}
	}
	if total == 0 {
		return nil
	}
	list := make([]map[string]any, len(affected))
	for i, a := range affected {
		list[i] = map[string]any{"id": a.ID, "field": a.Field, "error": a.Error, "rule": a.Rule}
	}
	return fault.Conflictf("the field change does not fit %d existing item(s); change or delete them first", total).
		With("affectedItems", list).With("affectedCount", total)
}

// DeleteModule deletes a module (delete right on it) and frees its name.
func (s *Service) DeleteModule(ctx context.Context, id string) (content.Module, error) {
	by, err := s.by(ctx)
	if err != nil {
		return content.Module{}, err
	}
	var (
		m   content.Module
		evs []any
		res event.AppendResult
	)
	err = commands.Retry{}.Run(ctx, func(int) error {
		var version int64
		var err error
		if m, version, err = s.LoadModule(ctx, id); err != nil {
			return err
		}
		if err := s.authorize(ctx, rights.Delete, rights.Resource{App: m.App, Module: m.ID}); err != nil {
			return err
		}
		if evs, err = m.Delete(by); err != nil {
			return err
		}
		nameStream := content.ModuleNameStream(m.App, m.Name)
		_, nv, err := commands.Load(ctx, s.store, nameStream, content.ModuleName{}, applyName)
		if err != nil {
			return err
		}
		// Held, as every change of a module (see Store): an item write
		// checked against the module either commits first (and is
		// deleted with it) or finds the module deleted.
		res, err = s.store.AppendHeld(ctx, content.ModuleStream(id), version, func(ctx context.Context) ([]event.StreamAppend, error) {
			return []event.StreamAppend{
				{Stream: content.ModuleStream(id), ExpectedVersion: version, Events: commands.WithApp(commands.Wrap(ctx, evs...), m.App)},
				{Stream: nameStream, ExpectedVersion: nv, Events: commands.WithApp(commands.Wrap(ctx,
					content.ModuleNameReleased{App: m.App, Name: m.Name, ModuleID: m.ID}), m.App)}}, nil
		})
		return err
	})
	if err != nil {
		return m, conflict(err)
	}
	s.modules.forget(id)
	s.settle(ctx, res.Last)
	return m.Apply(evs[0]), nil
}
