package content

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

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
	i, pos, cached, err := s.createAgainst(ctx, in, true)
	if cached && fault.KindOf(err) != fault.Internal && s.moduleMoved(ctx, in.Module) {
		// Refused against a cached module that moved on: decide against a fresh read.
		i, pos, _, err = s.createAgainst(ctx, in, false)
	}
	return i, pos, err
}

// createAgainst is createItem, deciding its first attempt against the
// cached module if cached says so; hit tells whether it did.
func (s *Service) createAgainst(ctx context.Context, in ItemInput, cached bool) (_ content.Item, _ event.Position, hit bool, _ error) {
	m, mv, hit, err := s.itemModule(ctx, in.Module, cached)
	if err != nil {
		return content.Item{}, event.Position{}, hit, err
	}
	if err := liveModule(m, in.Module); err != nil {
		return content.Item{}, event.Position{}, hit, err
	}
	if err := s.authorize(ctx, rights.Write, rights.Resource{App: m.App, Module: m.ID}); err != nil {
		return content.Item{}, event.Position{}, hit, err
	}
	by, err := s.by(ctx)
	if err != nil {
		return content.Item{}, event.Position{}, hit, err
	}
	if in.Content.Values, err = s.resolveMedia(ctx, m, in.Content.Values, nil); err != nil {
		return content.Item{}, event.Position{}, hit, err
	}
	id := in.ID
	if id == "" {
		id = s.ids.NewID()
	} else if !validItemID(id) {
		return content.Item{}, event.Position{}, hit, fault.Invalidf("id must be 1 to 64 letters, digits, '-' or '_'").With("field", "id")
	}
	var (
		item content.Item
		res  event.AppendResult
	)
	err = itemRetry(func() string { return m.ID }).Run(ctx, func(attempt int) error {
		if attempt > 1 { // decided against the module as it is now
			var err error
			if m, mv, _, err = s.itemModule(ctx, in.Module, false); err != nil {
				return err
			}
			if err := liveModule(m, in.Module); err != nil {
				return err
			}
		}
		evs, err := content.CreateItem(content.Item{}, id, m, in.Content, in.Dates, by)
		if err != nil {
			return err
		}
		created := evs[0].(content.ItemCreated)
		if err := s.checkRelations(ctx, m, created.Values, nil); err != nil {
			return err
		}
		appends := append([]event.StreamAppend{{Stream: content.ItemStream(id), ExpectedVersion: event.NoStream,
			Events: commands.WithApp(commands.Wrap(ctx, created), m.App)}}, moduleGuard(m.ID, mv)...)
		if m.Single {
			claim, err := s.claimAppend(ctx, m, id)
			if err != nil {
				return err
			}
			appends = append(appends, claim)
		}
		item = content.Item{}.Apply(created)
		res, err = s.store.AppendMulti(ctx, appends...)
		if errors.Is(err, event.ErrVersionConflict) {
			// The item's id is taken, or the module or (single-item
			// module) its reservation moved on, or the module is held
			// by a change: decide again from their new state.
			_, v, lerr := commands.Load(ctx, s.store, content.ItemStream(id), content.Item{}, applyItem)
			if lerr != nil {
				return lerr
			}
			if v > 0 {
				return fault.Conflictf("instance %s already exists", id).With("field", "id")
			}
		}
		return err
	})
	if err != nil {
		return content.Item{}, event.Position{}, hit, conflict(err)
	}
	return item, res.Last, hit, nil
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
		c := in.Content
		var err error
		if c.Values, err = s.resolveMedia(ctx, m, c.Values, i.Content.Values); err != nil {
			return nil, err
		}
		evs, err := i.Edit(m, c, in.Dates, in.Revision, by)
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
	var (
		i   content.Item
		m   content.Module
		evs []any
		res event.AppendResult
	)
	err = itemRetry(func() string { return m.ID }).Run(ctx, func(attempt int) error {
		var version, mv int64
		var err error
		evs, res = nil, event.AppendResult{}
		if i, version, err = s.LoadItem(ctx, id); err != nil {
			return err
		}
		if err := s.authorize(ctx, p, rights.Resource{App: i.App, Module: i.Module, Item: i.ID}); err != nil {
			return err
		}
		for fresh := attempt > 1; ; fresh = true {
			var hit bool
			if m, mv, hit, err = s.itemModule(ctx, i.Module, !fresh); err != nil {
				return err
			}
			if m.Deleted {
				// Its module's deletion deleted it too (see the projection).
				return fault.NotFoundf("Instance not found: its module was deleted").With("id", id)
			}
			evs, err = decide(i, m, by)
			if hit && (err != nil || len(evs) == 0 || datesOnly(evs)) && s.moduleMoved(ctx, i.Module) {
				continue // only the guard checks a cached module (see itemModule)
			}
			if err != nil || len(evs) == 0 {
				return err
			}
			break
		}
		var claim []event.StreamAppend
		if m.Single {
			if claim, err = s.singleAppends(ctx, m, id, evs); err != nil {
				return err
			}
		}
		if !datesOnly(evs) {
			claim = append(claim, moduleGuard(m.ID, mv)...)
		}
		res, err = s.store.AppendMulti(ctx, append(claim, event.StreamAppend{Stream: content.ItemStream(id),
			ExpectedVersion: version, Events: commands.WithApp(commands.Wrap(ctx, evs...), i.App)})...)
		return err
	})
	if err != nil {
		return i, event.Position{}, conflict(err)
	}
	for _, e := range evs {
		i = i.Apply(e)
	}
	return i, res.Last, nil
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

// heldWait bounds how long an item write keeps deciding again while its
// module's stream is held by a change (see Store): a change first waits
// for the read model outside the hold, so it holds the module for the
// writes in flight and a check of the module's items (about 2 s for
// 40,000 items).
const heldWait = 5 * time.Second

// itemRetry is how an item write of a module decides again after a
// version conflict: up to commands.MaxAttempts times, or, while the
// conflict is on the module's stream (a change committed, or one is
// deciding), for up to heldWait from now. module returns the module's id
// as the write last read it.
func itemRetry(module func() string) commands.Retry {
	start := time.Now()
	return commands.Retry{Held: func(err error) bool {
		var ce *event.ConflictError
		return errors.As(err, &ce) && ce.StreamID == content.ModuleStream(module()) && time.Since(start) < heldWait
	}}
}
