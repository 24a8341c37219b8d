// Package content holds the commands on modules, module types and content
// items: each loads its stream(s), authorizes, decides and appends. One
// Service (this file: its ports and what its commands share) runs them,
// a file per aggregate: modules.go, moduletypes.go, items.go (with the
// single-item modules' reservations in singleitem.go), history.go, and
// batch.go for batches of item operations.
package content

import (
	"context"
	"errors"
	"time"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
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
	media MediaFiles // nil: values name no media files by id
	// modules are the modules item writes last decided against
	// (modulecache.go).
	modules moduleCache
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

func conflict(err error) error {
	if errors.Is(err, event.ErrVersionConflict) {
		return fault.Conflictf("changed concurrently; try again")
	}
	return err
}
