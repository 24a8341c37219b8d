// Package content holds the commands on modules, module types and content
// items: each loads its stream(s), authorizes, decides and appends.
package content

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/rights"
)

// Authorizer checks the caller's rights.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
}

// Names shows actors in createdBy/updatedBy.
type Names interface {
	DisplayName(ctx context.Context, a access.Actor) (string, error)
}

// Items is what the commands read from the content read model: which items
// exist (relation checks), a module's items' values (field changes), ids
// (single-item flag) and tags (allowed tags).
type Items interface {
	LiveItemModules(ctx context.Context, app string, ids []string) (map[string]string, error)
	ModuleValues(ctx context.Context, module string, fn func(id string, values map[string]any) error) error
	ModuleItemIDs(ctx context.Context, module string) ([]string, error)
	ModuleTags(ctx context.Context, module string, fn func(id string, tags []content.Tag) error) error
}

// Log tells where the event log ends, so that a check against the read
// model can first wait for the projection to get there.
type Log interface {
	Last(ctx context.Context) (event.Position, error)
}

// IDs generates identifiers.
type IDs interface{ NewID() string }

// Projection is the content read model's projection.
const Projection = "content"

// Projections this service's responses and the caller's next reads depend on.
var Projections = []string{Projection}

// Store is the event store as the content commands use it. Every item
// write is decided against its module as read at some version, and is
// appended with a guard on the module's stream at that version (see
// event.StreamAppend), unless it only deletes the item or changes its
// dates (see datesOnly); every change of a module is decided while
// AppendHeld holds the module's stream. So an item write never commits
// against a module that changed since it was checked, and a module change
// that checks the module's items (fields, allowed tags, single-item flag)
// sees every item write that can still commit against the module before
// it. An item write that meets a held module decides again until the
// change is done (up to heldWait).
type Store interface {
	commands.EventStore
	// AppendHeld holds stream at version while decide runs (appends
	// guarded on it fail meanwhile) and appends what decide returns in
	// the same transaction.
	AppendHeld(ctx context.Context, stream string, version int64,
		decide func(ctx context.Context) ([]event.StreamAppend, error)) (event.AppendResult, error)
}

// Service runs the content commands.
type Service struct {
	store Store
	log   Log
	authz Authorizer
	names Names
	items Items
	ids   IDs
	wait  commands.Waiter
	now   func() time.Time
}

// NewService wires the service; every dependency is required.
func NewService(store Store, log Log, authz Authorizer, names Names, items Items, ids IDs, wait commands.Waiter) *Service {
	if store == nil || log == nil || authz == nil || names == nil || items == nil || ids == nil || wait == nil {
		panic("content.NewService: nil dependency")
	}
	return &Service{store: store, log: log, authz: authz, names: names, items: items, ids: ids, wait: wait, now: time.Now}
}

// caughtUp waits (bounded) until the content projection has applied the
// whole log, before a decision that reads it: every item written before
// the command is then in the read model.
func (s *Service) caughtUp(ctx context.Context) error {
	head, err := s.log.Last(ctx)
	if err != nil {
		return err
	}
	if !head.IsZero() && !s.wait.WaitFor(ctx, head, Projections...) {
		return fault.Conflictf("the content read model is catching up with recent changes; try again shortly")
	}
	return nil
}

// moduleGuard is the guard of an item write decided against module id at
// version (see Store); none for a module that has no stream.
func moduleGuard(id string, version int64) []event.StreamAppend {
	if version <= 0 {
		return nil
	}
	return []event.StreamAppend{{Stream: content.ModuleStream(id), ExpectedVersion: version}}
}

// heldWait bounds how long an item write keeps deciding again while its
// module's stream is held by a change (see Store): a change first waits
// for the read model outside the hold, so it holds the module for the
// writes in flight and a check of the module's items (about 2 s for
// 40,000 items).
const heldWait = 5 * time.Second

// retry reports, after a pause, whether an item write of module that
// failed with err on attempt (since start) should decide again: after a
// version conflict, up to commands.MaxAttempts times, or, when the conflict
// is on the module's stream (a change committed, or one is deciding), for
// up to heldWait.
func retry(ctx context.Context, err error, module string, attempt int, start time.Time) bool {
	if !errors.Is(err, event.ErrVersionConflict) {
		return false
	}
	var ce *event.ConflictError
	held := errors.As(err, &ce) && ce.StreamID == content.ModuleStream(module) && time.Since(start) < heldWait
	if !held && attempt >= commands.MaxAttempts {
		return false
	}
	commands.Backoff(ctx, min(attempt, 50))
	return ctx.Err() == nil
}

func applyModule(m content.Module, ev any) content.Module       { return m.Apply(ev) }
func applyName(n content.ModuleName, ev any) content.ModuleName { return n.Apply(ev) }
func applyItem(i content.Item, ev any) content.Item             { return i.Apply(ev) }
func applyType(t content.ModuleType, ev any) content.ModuleType { return t.Apply(ev) }

func (s *Service) by(ctx context.Context) (string, error) {
	return s.names.DisplayName(ctx, access.From(ctx))
}

func (s *Service) authorize(ctx context.Context, p rights.Permission, res rights.Resource) error {
	return s.authz.Authorize(ctx, access.From(ctx), p, res)
}

func (s *Service) settle(ctx context.Context, pos event.Position) {
	if !pos.IsZero() {
		s.wait.WaitFor(ctx, pos, Projections...)
	}
}

// LoadModule returns a live module.
func (s *Service) LoadModule(ctx context.Context, id string) (content.Module, int64, error) {
	m, v, err := commands.Load(ctx, s.store, content.ModuleStream(id), content.Module{}, applyModule)
	if err == nil && (!m.Exists() || m.Deleted) {
		err = fault.NotFoundf("module %s not found", id).With("field", "module")
	}
	return m, v, err
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
		return content.Module{}, fault.NotFoundf("app %s not found", in.App).With("field", "app")
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
	for attempt := 1; ; attempt++ {
		guards, err := s.checkTargets(ctx, in.App, id, nil, in.Spec.Fields)
		if err != nil {
			return content.Module{}, err
		}
		n, nv, err := commands.Load(ctx, s.store, nameStream, content.ModuleName{}, applyName)
		if err != nil {
			return content.Module{}, err
		}
		if n.Module != "" {
			return content.Module{}, fault.Conflictf("the app already has a module named %q", created.Name).With("field", "name")
		}
		res, err := s.store.AppendMulti(ctx, append(guards,
			event.StreamAppend{Stream: content.ModuleStream(id), ExpectedVersion: event.NoStream, Events: commands.WithApp(commands.Wrap(ctx, created), in.App)},
			event.StreamAppend{Stream: nameStream, ExpectedVersion: nv, Events: commands.WithApp(commands.Wrap(ctx,
				content.ModuleNameClaimed{App: in.App, Name: created.Name, ModuleID: id}), in.App)})...)
		if errors.Is(err, event.ErrVersionConflict) && attempt < commands.MaxAttempts {
			commands.Backoff(ctx, attempt)
			continue
		}
		if err != nil {
			return content.Module{}, conflict(err)
		}
		s.settle(ctx, res.Last)
		return content.Module{}.Apply(created), nil
	}
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

func conflict(err error) error {
	if errors.Is(err, event.ErrVersionConflict) {
		return fault.Conflictf("changed concurrently; try again")
	}
	return err
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
	for attempt := 1; ; attempt++ {
		m, version, err := s.LoadModule(ctx, id)
		if err != nil {
			return m, err
		}
		if err := s.authorize(ctx, rights.Update, rights.Resource{App: m.App, Module: m.ID}); err != nil {
			return m, err
		}
		spec.Fields, spec.ModuleType = s.assignFieldIDs(m.Fields, fields), m.ModuleType
		evs, err := m.Change(spec, by)
		if err != nil || len(evs) == 0 {
			return m, err
		}
		guards, err := s.checkTargets(ctx, m.App, m.ID, m.Fields, spec.Fields)
		if err != nil {
			return m, err
		}
		// Held: no item write commits meanwhile, and those that took
		// their guard before have committed (see Store). A change that
		// checks the items lets the read model catch up with the log
		// first, so that the hold waits only for the writes in flight.
		if checksItems(m, evs) {
			if err := s.caughtUp(ctx); err != nil {
				return m, err
			}
		}
		res, err := s.store.AppendHeld(ctx, content.ModuleStream(id), version, func(ctx context.Context) ([]event.StreamAppend, error) {
			appends, err := s.changeAppends(ctx, m, evs)
			return append(append(appends, guards...), event.StreamAppend{Stream: content.ModuleStream(id), ExpectedVersion: version,
				Events: commands.WithApp(commands.Wrap(ctx, evs...), m.App)}), err
		})
		if errors.Is(err, event.ErrVersionConflict) && attempt < commands.MaxAttempts {
			commands.Backoff(ctx, attempt)
			continue
		}
		if err != nil {
			return m, conflict(err)
		}
		for _, e := range evs {
			m = m.Apply(e)
		}
		s.settle(ctx, res.Last)
		return m, nil
	}
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

// configureSingle decides what turning module m's single-item flag to
// single does to its reservation (see SingleItem.Configure): turning it on
// is refused while the module holds more than one live item, and claims
// the module for its one item; turning it off releases the module. The
// items are counted in the read model once it has caught up.
func (s *Service) configureSingle(ctx context.Context, m content.Module, single bool) ([]event.StreamAppend, error) {
	var live []string
	if single {
		if err := s.caughtUp(ctx); err != nil {
			return nil, err
		}
		var err error
		if live, err = s.items.ModuleItemIDs(ctx, m.ID); err != nil {
			return nil, err
		}
	}
	r, v, err := s.loadSingle(ctx, m)
	if err != nil {
		return nil, err
	}
	evs, err := r.Configure(m, single, live)
	if err != nil || len(evs) == 0 {
		return nil, err
	}
	return []event.StreamAppend{{Stream: content.SingleItemStream(m.ID), ExpectedVersion: v,
		Events: commands.WithApp(commands.Wrap(ctx, evs...), m.App)}}, nil
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
	for attempt := 1; ; attempt++ {
		m, version, err := s.LoadModule(ctx, id)
		if err != nil {
			return m, err
		}
		if err := s.authorize(ctx, rights.Delete, rights.Resource{App: m.App, Module: m.ID}); err != nil {
			return m, err
		}
		evs, err := m.Delete(by)
		if err != nil {
			return m, err
		}
		nameStream := content.ModuleNameStream(m.App, m.Name)
		_, nv, err := commands.Load(ctx, s.store, nameStream, content.ModuleName{}, applyName)
		if err != nil {
			return m, err
		}
		// Held, as every change of a module (see Store): an item write
		// checked against the module either commits first (and is
		// deleted with it) or finds the module deleted.
		res, err := s.store.AppendHeld(ctx, content.ModuleStream(id), version, func(ctx context.Context) ([]event.StreamAppend, error) {
			return []event.StreamAppend{
				{Stream: content.ModuleStream(id), ExpectedVersion: version, Events: commands.WithApp(commands.Wrap(ctx, evs...), m.App)},
				{Stream: nameStream, ExpectedVersion: nv, Events: commands.WithApp(commands.Wrap(ctx,
					content.ModuleNameReleased{App: m.App, Name: m.Name, ModuleID: m.ID}), m.App)}}, nil
		})
		if errors.Is(err, event.ErrVersionConflict) && attempt < commands.MaxAttempts {
			commands.Backoff(ctx, attempt)
			continue
		}
		if err != nil {
			return m, conflict(err)
		}
		s.settle(ctx, res.Last)
		return m.Apply(evs[0]), nil
	}
}

// SaveModuleType creates (empty id) or replaces a module type; admins only.
func (s *Service) SaveModuleType(ctx context.Context, id, name string, single bool, fields []content.Field) (content.ModuleType, error) {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return content.ModuleType{}, err
	}
	if id == "" {
		id = s.ids.NewID()
	}
	t, res, err := commands.Update(ctx, s.store, content.ModuleTypeStream(id), "", content.ModuleType{}, applyType,
		func(t content.ModuleType) ([]any, error) {
			return t.Save(id, name, single, s.assignFieldIDs(t.Fields, fields))
		})
	if err == nil {
		s.settle(ctx, res.Last)
	}
	return t, err
}

// ModuleTypeInput is one module type of an import.
type ModuleTypeInput struct {
	ID     string
	Name   string
	Single bool
	Fields []content.Field
}

// ImportModuleTypes creates or replaces each type under its id, all or
// nothing (admins only): each type is decided as SaveModuleType decides
// it, and every changed stream is appended in one transaction, retried as
// a whole when any of them moved on. It returns the types as saved.
func (s *Service) ImportModuleTypes(ctx context.Context, in []ModuleTypeInput) ([]content.ModuleType, error) {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return nil, err
	}
	for attempt := 1; ; attempt++ {
		out := make([]content.ModuleType, len(in))
		var appends []event.StreamAppend
		for i, p := range in {
			stream := content.ModuleTypeStream(p.ID)
			t, version, err := commands.Load(ctx, s.store, stream, content.ModuleType{}, applyType)
			if err != nil {
				return nil, err
			}
			evs, err := t.Save(p.ID, p.Name, p.Single, s.assignFieldIDs(t.Fields, p.Fields))
			if err != nil {
				return nil, err
			}
			for _, e := range evs {
				t = t.Apply(e)
			}
			out[i] = t
			if len(evs) > 0 {
				appends = append(appends, event.StreamAppend{Stream: stream, ExpectedVersion: version, Events: commands.Wrap(ctx, evs...)})
			}
		}
		if len(appends) == 0 {
			return out, nil
		}
		res, err := s.store.AppendMulti(ctx, appends...)
		if errors.Is(err, event.ErrVersionConflict) && attempt < commands.MaxAttempts {
			commands.Backoff(ctx, attempt)
			continue
		}
		if errors.Is(err, event.ErrVersionConflict) {
			return nil, fault.Conflictf("the module types changed concurrently; try again")
		}
		if err != nil {
			return nil, fmt.Errorf("import module types: %w", err)
		}
		s.settle(ctx, res.Last)
		return out, nil
	}
}

// DeleteModuleType deletes a module type; admins only.
func (s *Service) DeleteModuleType(ctx context.Context, id string) error {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return err
	}
	_, res, err := commands.Update(ctx, s.store, content.ModuleTypeStream(id), "", content.ModuleType{}, applyType,
		func(t content.ModuleType) ([]any, error) { return t.Delete() })
	if err == nil {
		s.settle(ctx, res.Last)
	}
	return err
}

// LoadItem returns an existing item (deleted ones too) with its version.
func (s *Service) LoadItem(ctx context.Context, id string) (content.Item, int64, error) {
	i, v, err := commands.Load(ctx, s.store, content.ItemStream(id), content.Item{}, applyItem)
	if err == nil && !i.Exists() {
		err = fault.NotFoundf("Instance not found").With("id", id)
	}
	return i, v, err
}

// ItemInput is an item as a client writes it.
type ItemInput struct {
	ID       string // create: optional client-chosen id; update: the item
	Module   string
	Content  content.Content
	Dates    content.Dates
	Revision *int64 // update, delete: the revision the client read
}

// checkRelations refuses relation values that name items that do not
// exist, or that are not in the field's target module. The ids a field
// held already (kept: the item's values before an edit) are not checked
// again: a related item deleted since, or a target module narrowed since,
// must not stop the item from being saved with the relation it has.
func (s *Service) checkRelations(ctx context.Context, m content.Module, values, kept map[string]any) error {
	gained := map[string][]string{} // field → the ids it relates that it did not
	var ids []string
	for _, f := range m.Fields {
		old := content.RelationIDs(f, kept[f.Name])
		gained[f.Name] = slices.DeleteFunc(content.RelationIDs(f, values[f.Name]), func(id string) bool { return slices.Contains(old, id) })
		ids = append(ids, gained[f.Name]...)
	}
	if len(ids) == 0 {
		return nil
	}
	// A relation names a live item of the module's own app: another app's
	// items are not the caller's to point at (nor to learn of).
	found, err := s.items.LiveItemModules(ctx, m.App, ids)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if _, ok := found[id]; !ok {
			// Not projected (yet): the streams are the truth. A module's
			// deletion deletes its items in the read model only, so the
			// item's module must be live too.
			i, _, err := commands.Load(ctx, s.store, content.ItemStream(id), content.Item{}, applyItem)
			if err != nil {
				return err
			}
			if !i.Exists() || i.Deleted || i.App != m.App {
				continue
			}
			im, _, err := commands.Load(ctx, s.store, content.ModuleStream(i.Module), content.Module{}, applyModule)
			if err != nil {
				return err
			}
			if im.Exists() && !im.Deleted {
				found[id] = i.Module
			}
		}
	}
	for _, f := range m.Fields {
		for _, id := range gained[f.Name] {
			mod, ok := found[id]
			if !ok {
				return content.Violation{Field: f.Name, Error: content.ErrRelation, Rule: "isRelation",
					Message: fmt.Sprintf("related item %s does not exist", id)}.Fault()
			}
			if f.Rules.Module != "" && mod != f.Rules.Module {
				return content.Violation{Field: f.Name, Error: content.ErrTargetModel, Rule: "module",
					Message: fmt.Sprintf("related item %s is not in module %s", id, f.Rules.Module)}.Fault()
			}
		}
	}
	return nil
}

// CreateItem creates an item (write right on the module).
func (s *Service) CreateItem(ctx context.Context, in ItemInput) (content.Item, error) {
	i, pos, err := s.createItem(ctx, in)
	if err == nil {
		s.settle(ctx, pos)
	}
	return i, err
}

func (s *Service) createItem(ctx context.Context, in ItemInput) (content.Item, event.Position, error) {
	if in.Module == "" {
		return content.Item{}, event.Position{}, fault.Invalidf("module is required").With("field", "module")
	}
	m, mv, err := s.LoadModule(ctx, in.Module)
	if err != nil {
		return content.Item{}, event.Position{}, err
	}
	if err := s.authorize(ctx, rights.Write, rights.Resource{App: m.App, Module: m.ID}); err != nil {
		return content.Item{}, event.Position{}, err
	}
	by, err := s.by(ctx)
	if err != nil {
		return content.Item{}, event.Position{}, err
	}
	id := in.ID
	if id == "" {
		id = s.ids.NewID()
	} else if !validItemID(id) {
		return content.Item{}, event.Position{}, fault.Invalidf("id must be 1 to 64 letters, digits, '-' or '_'").With("field", "id")
	}
	start := time.Now()
	for attempt := 1; ; attempt++ {
		if attempt > 1 { // decided against the module as it is now
			if m, mv, err = s.LoadModule(ctx, in.Module); err != nil {
				return content.Item{}, event.Position{}, err
			}
		}
		evs, err := content.CreateItem(content.Item{}, id, m, in.Content, in.Dates, by)
		if err != nil {
			return content.Item{}, event.Position{}, err
		}
		created := evs[0].(content.ItemCreated)
		if err := s.checkRelations(ctx, m, created.Values, nil); err != nil {
			return content.Item{}, event.Position{}, err
		}
		appends := append([]event.StreamAppend{{Stream: content.ItemStream(id), ExpectedVersion: event.NoStream,
			Events: commands.WithApp(commands.Wrap(ctx, created), m.App)}}, moduleGuard(m.ID, mv)...)
		if m.Single {
			claim, err := s.claimAppend(ctx, m, id)
			if err != nil {
				return content.Item{}, event.Position{}, err
			}
			appends = append(appends, claim)
		}
		res, err := s.store.AppendMulti(ctx, appends...)
		if errors.Is(err, event.ErrVersionConflict) {
			// The item's id is taken, or the module or (single-item
			// module) its reservation moved on, or the module is held
			// by a change: decide again from their new state.
			_, v, lerr := commands.Load(ctx, s.store, content.ItemStream(id), content.Item{}, applyItem)
			if lerr != nil {
				return content.Item{}, event.Position{}, lerr
			}
			if v > 0 {
				return content.Item{}, event.Position{}, fault.Conflictf("instance %s already exists", id).With("field", "id")
			}
			if retry(ctx, err, m.ID, attempt, start) {
				continue
			}
			return content.Item{}, event.Position{}, conflict(err)
		}
		if err != nil {
			return content.Item{}, event.Position{}, err
		}
		return content.Item{}.Apply(created), res.Last, nil
	}
}

// validItemID accepts a client-chosen item id: 1 to 64 letters, digits,
// '-' or '_'.
func validItemID(id string) bool {
	if len(id) > 64 {
		return false
	}
	for _, c := range id {
		if !(c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return id != ""
}

func applySingle(r content.SingleItem, ev any) content.SingleItem { return r.Apply(ev) }

// loadSingle returns single-item module m's reservation with its stream
// version.
func (s *Service) loadSingle(ctx context.Context, m content.Module) (content.SingleItem, int64, error) {
	return commands.Load(ctx, s.store, content.SingleItemStream(m.ID), content.SingleItem{}, applySingle)
}

// claimAppend decides that item claims single-item module m (its creation
// or restore) and returns the append to the reservation's stream, expected
// at the version read: a concurrent claim or release makes the caller's
// whole append fail and decide again. A holder that is no longer live (see
// SingleItem.Claim) does not block.
func (s *Service) claimAppend(ctx context.Context, m content.Module, item string) (event.StreamAppend, error) {
	r, v, err := s.loadSingle(ctx, m)
	if err != nil {
		return event.StreamAppend{}, err
	}
	live := false
	if h := r.Holder(); h != "" && h != item {
		i, _, err := commands.Load(ctx, s.store, content.ItemStream(h), content.Item{}, applyItem)
		if err != nil {
			return event.StreamAppend{}, err
		}
		live = i.Exists() && !i.Deleted
	}
	evs, err := r.Claim(m, item, live)
	if err != nil {
		return event.StreamAppend{}, err
	}
	return event.StreamAppend{Stream: content.SingleItemStream(m.ID), ExpectedVersion: v,
		Events: commands.WithApp(commands.Wrap(ctx, evs...), m.App)}, nil
}

// singleAppends are the changes to single-item module m's reservation that
// go with events of item: its deletion releases the module, its restore
// claims it (refused while another live item holds it).
func (s *Service) singleAppends(ctx context.Context, m content.Module, item string, evs []any) ([]event.StreamAppend, error) {
	for _, e := range evs {
		switch e.(type) {
		case content.ItemDeleted:
			r, v, err := s.loadSingle(ctx, m)
			if err != nil {
				return nil, err
			}
			if rel := r.Release(m, item); len(rel) > 0 {
				return []event.StreamAppend{{Stream: content.SingleItemStream(m.ID), ExpectedVersion: v,
					Events: commands.WithApp(commands.Wrap(ctx, rel...), m.App)}}, nil
			}
		case content.ItemRestored:
			claim, err := s.claimAppend(ctx, m, item)
			if err != nil {
				return nil, err
			}
			return []event.StreamAppend{claim}, nil
		}
	}
	return nil, nil
}

// UpdateItem replaces an item's content and dates (update right on it).
func (s *Service) UpdateItem(ctx context.Context, in ItemInput) (content.Item, error) {
	i, pos, err := s.updateItem(ctx, in)
	if err == nil {
		s.settle(ctx, pos)
	}
	return i, err
}

func (s *Service) updateItem(ctx context.Context, in ItemInput) (content.Item, event.Position, error) {
	return s.itemCommand(ctx, in.ID, rights.Update, func(i content.Item, m content.Module, by string) ([]any, error) {
		if in.Module != "" && in.Module != i.Module {
			return nil, fault.Invalidf("an item cannot move to another module").With("field", "module")
		}
		evs, err := i.Edit(m, in.Content, in.Dates, in.Revision, by)
		if err != nil {
			return nil, err
		}
		for _, e := range evs {
			if ed, ok := e.(content.ItemEdited); ok {
				if err := s.checkRelations(ctx, m, ed.Values, i.Content.Values); err != nil {
					return nil, err
				}
			}
		}
		return evs, nil
	})
}

// itemCommand loads an item and its module, authorizes p on the item,
// decides and appends, retrying on a concurrent change.
func (s *Service) itemCommand(ctx context.Context, id string, p rights.Permission,
	decide func(content.Item, content.Module, string) ([]any, error)) (content.Item, event.Position, error) {
	by, err := s.by(ctx)
	if err != nil {
		return content.Item{}, event.Position{}, err
	}
	start := time.Now()
	for attempt := 1; ; attempt++ {
		i, version, err := s.LoadItem(ctx, id)
		if err != nil {
			return i, event.Position{}, err
		}
		if err := s.authorize(ctx, p, rights.Resource{App: i.App, Module: i.Module, Item: i.ID}); err != nil {
			return i, event.Position{}, err
		}
		m, mv, err := commands.Load(ctx, s.store, content.ModuleStream(i.Module), content.Module{}, applyModule)
		if err != nil {
			return i, event.Position{}, err
		}
		if m.Deleted {
			// Its module's deletion deleted it too (see the projection).
			return i, event.Position{}, fault.NotFoundf("Instance not found: its module was deleted").With("id", id)
		}
		evs, err := decide(i, m, by)
		if err != nil || len(evs) == 0 {
			return i, event.Position{}, err
		}
		var claim []event.StreamAppend
		if m.Single {
			if claim, err = s.singleAppends(ctx, m, id, evs); err != nil {
				return i, event.Position{}, err
			}
		}
		if !datesOnly(evs) {
			claim = append(claim, moduleGuard(m.ID, mv)...)
		}
		res, err := s.store.AppendMulti(ctx, append(claim, event.StreamAppend{Stream: content.ItemStream(id),
			ExpectedVersion: version, Events: commands.WithApp(commands.Wrap(ctx, evs...), i.App)})...)
		if retry(ctx, err, m.ID, attempt, start) {
			continue
		}
		if err != nil {
			return i, event.Position{}, conflict(err)
		}
		for _, e := range evs {
			i = i.Apply(e)
		}
		return i, res.Last, nil
	}
}

// datesOnly reports whether evs only delete an item or change its
// publication dates, which no rule of its module constrains: such a write
// takes no guard (see Store), so it goes through while the module changes.
func datesOnly(evs []any) bool {
	for _, e := range evs {
		switch e.(type) {
		case content.ItemDeleted, content.ItemPublished, content.ItemUnpublished, content.ItemExpirySet,
			content.ItemArchived, content.ItemUnarchived:
		default:
			return false
		}
	}
	return true
}

// DeleteItem deletes an item logically (delete right on it).
func (s *Service) DeleteItem(ctx context.Context, id string, revision *int64) (content.Item, error) {
	i, pos, err := s.deleteItem(ctx, id, revision)
	if err == nil {
		s.settle(ctx, pos)
	}
	return i, err
}

func (s *Service) deleteItem(ctx context.Context, id string, revision *int64) (content.Item, event.Position, error) {
	return s.itemCommand(ctx, id, rights.Delete, func(i content.Item, _ content.Module, by string) ([]any, error) {
		return i.Delete(revision, by)
	})
}

// Transition is a state command on an item.
type Transition string

const (
	Publish   Transition = "publish"
	Unpublish Transition = "unpublish"
	Archive   Transition = "archive"
	Unarchive Transition = "unarchive"
	Restore   Transition = "restore"
)

// Transit publishes (now, or at a future date: scheduled), unpublishes,
// archives, unarchives or restores an item (update right on it).
// revision, when given, must be the item's current one.
func (s *Service) Transit(ctx context.Context, id string, t Transition, at time.Time, revision *int64) (content.Item, error) {
	now := s.now()
	if at.IsZero() {
		at = now
	}
	i, pos, err := s.itemCommand(ctx, id, rights.Update, func(i content.Item, m content.Module, by string) ([]any, error) {
		if err := i.CheckRevision(revision); err != nil {
			return nil, err
		}
		switch t {
		case Publish:
			return i.Publish(at, now, by)
		case Unpublish:
			return i.Unpublish(by)
		case Archive:
			return i.Archive(at, by)
		case Unarchive:
			return i.Unarchive(by)
		case Restore:
			return i.Restore(m, by)
		}
		return nil, fault.Invalidf("unknown transition %q", t)
	})
	if err == nil {
		s.settle(ctx, pos)
	}
	return i, err
}

// Revision is one entry of an item's history.
type Revision struct {
	Revision int64
	Type     string // the event type, e.g. "content.item_edited"
	At       time.Time
	Actor    string // "user:<id>", "app:<id>", "system"
	By       string // display name
	ClientIP string
	Changed  []string // what changed: "name", "values.<field>", "publishedAt", ...
	Item     content.Item
}

// History lists an item's revisions, oldest first, from its stream (read
// right on the item). It is for CMS users: app tokens read published
// content only, and a history shows every draft.
func (s *Service) History(ctx context.Context, id string) ([]Revision, error) {
	if a := access.From(ctx); a.ClientApp() != "" {
		return nil, fault.Forbiddenf("an item's history is for CMS users")
	}
	recs, err := s.store.ReadStream(ctx, content.ItemStream(id), 0)
	if err != nil {
		return nil, err
	}
	if len(recs) == 0 {
		return nil, fault.NotFoundf("Instance not found").With("id", id)
	}
	var i content.Item
	out := make([]Revision, 0, len(recs))
	for _, r := range recs {
		prev := i
		i = i.Apply(r.Data)
		out = append(out, Revision{Revision: i.Revision, Type: r.Type, At: r.RecordedAt, Actor: r.Meta.Actor,
			By: byOf(r.Data), ClientIP: r.Meta.ClientIP, Changed: changed(prev, i, r.Data), Item: i})
	}
	if err := s.authorize(ctx, rights.Read, rights.Resource{App: i.App, Module: i.Module, Item: i.ID}); err != nil {
		return nil, err
	}
	return out, nil
}

func byOf(data any) string {
	if e, ok := data.(content.ItemEvent); ok {
		return e.Author()
	}
	return ""
}

func changed(prev, cur content.Item, data any) []string {
	switch e := data.(type) {
	case content.ItemCreated:
		return []string{"created"}
	case content.ItemEdited:
		return e.Changed
	case content.ItemReverted:
		return prev.Changes(cur.Content)
	}
	var out []string
	if !prev.Dates.PublishedAt.Equal(cur.Dates.PublishedAt) {
		out = append(out, "publishedAt")
	}
	if !prev.Dates.RemovedAt.Equal(cur.Dates.RemovedAt) {
		out = append(out, "removedAt")
	}
	if !prev.Dates.ArchivedAt.Equal(cur.Dates.ArchivedAt) {
		out = append(out, "archivedAt")
	}
	if prev.Deleted != cur.Deleted {
		out = append(out, "deletedAt")
	}
	return out
}

// RevertItem sets an item's content back to an earlier revision (update
// right on it).
func (s *Service) RevertItem(ctx context.Context, id string, revision int64, current *int64) (content.Item, error) {
	i, pos, err := s.itemCommand(ctx, id, rights.Update, func(i content.Item, m content.Module, by string) ([]any, error) {
		if err := i.CheckRevision(current); err != nil {
			return nil, err
		}
		if revision < 0 || revision >= i.Revision {
			return nil, fault.Invalidf("revision must be between 0 and %d", i.Revision-1).With("field", "revision")
		}
		recs, err := s.store.ReadStream(ctx, content.ItemStream(id), 0)
		if err != nil {
			return nil, err
		}
		var old content.Item
		for _, r := range recs[:revision+1] {
			old = old.Apply(r.Data)
		}
		evs, err := i.Revert(m, revision, old, by)
		for _, e := range evs {
			// The relations the revert brings back are checked as an
			// edit's: a related item deleted since is not related again.
			if rv, ok := e.(content.ItemReverted); ok && err == nil {
				err = s.checkRelations(ctx, m, rv.Values, i.Content.Values)
			}
		}
		if err != nil {
			return nil, err
		}
		return evs, nil
	})
	if err == nil {
		s.settle(ctx, pos)
	}
	return i, err
}
