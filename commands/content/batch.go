package content

import (
	"context"
	"errors"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// Batch operation kinds, in the order a batch runs them.
const (
	OpTruncate       = "truncate"
	OpCreate         = "create"
	OpUpdate         = "update"
	OpCreateOrUpdate = "createOrUpdate"
	OpDelete         = "delete"
)

// BatchOp is one operation of a batch.
type BatchOp struct {
	Kind     string
	Position int // index within its operation's list
	Item     ItemInput
	Module   string // truncate: the module to empty
}

// BatchResult is the outcome of one operation: the item written, the ids a
// truncate deleted, or the operation's own error.
type BatchResult struct {
	Op        BatchOp
	Item      content.Item
	Truncated []string
	Err       error
}

// createChunk bounds how many item streams one append transaction writes.
const createChunk = 500

// Batch runs operations independently: each succeeds or fails on its own
// (with its own error), truncates first, then creates, updates,
// creates-or-updates and deletes. Creates are validated one by one and
// appended in chunks of createChunk streams per transaction, which is what
// makes bulk imports fast. It answers once the content projection has
// caught up with everything written.
func (s *Service) Batch(ctx context.Context, ops []BatchOp) []BatchResult {
	results := make([]BatchResult, len(ops))
	var last event.Position
	note := func(p event.Position) {
		if last.Less(p) {
			last = p
		}
	}
	var creates []int
	for _, kind := range []string{OpTruncate, OpCreate, OpUpdate, OpCreateOrUpdate, OpDelete} {
		for n, op := range ops {
			if op.Kind != kind {
				continue
			}
			r := &results[n]
			r.Op = op
			switch kind {
			case OpTruncate:
				r.Truncated, r.Err = s.truncate(ctx, op.Module, note)
			case OpCreate:
				creates = append(creates, n)
				continue
			case OpUpdate:
				if op.Item.ID == "" {
					r.Err = fault.Invalidf("id is required").With("field", "id")
					continue
				}
				var p event.Position
				r.Item, p, r.Err = s.updateItem(ctx, op.Item)
				note(p)
			case OpCreateOrUpdate:
				var p event.Position
				if op.Item.ID != "" {
					r.Item, p, r.Err = s.updateItem(ctx, op.Item)
					if fault.Is(r.Err, fault.NotFound) && r.Item.ID == "" {
						r.Item, p, r.Err = s.createItem(ctx, op.Item)
					}
				} else {
					r.Item, p, r.Err = s.createItem(ctx, op.Item)
				}
				note(p)
			case OpDelete:
				var p event.Position
				r.Item, p, r.Err = s.deleteItem(ctx, op.Item.ID, op.Item.Revision)
				note(p)
			}
		}
		if kind == OpCreate && len(creates) > 0 {
			note(s.createMany(ctx, ops, results, creates))
		}
	}
	s.settle(ctx, last)
	return results
}

// createMany validates the creates, appends the valid ones in chunks and
// falls back to one-by-one appends for a chunk whose append fails with a
// conflict or an item the store cannot hold: each item then fails with its
// own error while the rest of the chunk is written. Any other failure
// fails the chunk's items with it.
func (s *Service) createMany(ctx context.Context, ops []BatchOp, results []BatchResult, idx []int) event.Position {
	var last event.Position
	by, err := s.by(ctx)
	if err != nil {
		for _, n := range idx {
			results[n].Err = err
		}
		return last
	}
	type pending struct {
		n       int
		append  event.StreamAppend
		item    content.Item
		version int64 // the module's, as the item was checked against it
	}
	modules := map[string]content.Module{}
	versions := map[string]int64{} // each module's version, as read
	allowed := map[string]error{}
	var batch []pending
	flush := func() {
		if len(batch) == 0 {
			return
		}
		appends := make([]event.StreamAppend, len(batch), len(batch)+1)
		guarded := map[string]int64{}
		for i, p := range batch {
			appends[i] = p.append
			if m := p.item.Module; guarded[m] != p.version {
				guarded[m] = p.version
				appends = append(appends, moduleGuard(m, p.version)...)
			}
		}
		res, err := s.store.AppendMulti(ctx, appends...)
		switch {
		case err == nil:
			for _, p := range batch {
				results[p.n].Item = p.item
			}
			if last.Less(res.Last) {
				last = res.Last
			}
		case ctx.Err() == nil && (errors.Is(err, event.ErrVersionConflict) || errors.Is(err, event.ErrDataRejected)):
			// A conflict, or an item the store cannot hold: the chunk's
			// transaction wrote nothing, so its items run one by one and
			// only the culprit fails. A module changed meanwhile is read
			// again for the items after the chunk.
			for m := range guarded {
				delete(modules, m)
			}
			for _, p := range batch {
				var pos event.Position
				results[p.n].Item, pos, results[p.n].Err = s.createItem(ctx, ops[p.n].Item)
				if last.Less(pos) {
					last = pos
				}
			}
		default:
			// The chunk may have been written (the connection lost after
			// its commit): creating its items again would duplicate them
			// under new ids.
			for _, p := range batch {
				results[p.n].Err = err
			}
		}
		batch = batch[:0]
	}
	for _, n := range idx {
		in := ops[n].Item
		m, ok := modules[in.Module]
		if !ok && in.Module != "" {
			var err error
			m, versions[in.Module], err = s.LoadModule(ctx, in.Module)
			if err == nil {
				err = s.authz.Authorize(ctx, access.From(ctx), rights.Write, rights.Resource{App: m.App, Module: m.ID})
			}
			modules[in.Module], allowed[in.Module] = m, err
		}
		if in.Module == "" || allowed[in.Module] != nil || m.Single || in.ID != "" {
			var pos event.Position
			results[n].Item, pos, results[n].Err = s.createItem(ctx, in) // reports the error, or takes the careful path
			if last.Less(pos) {
				last = pos
			}
			continue
		}
		id := s.ids.NewID()
		evs, err := content.CreateItem(content.Item{}, id, m, in.Content, in.Dates, by)
		if err == nil {
			err = s.checkRelations(ctx, m, evs[0].(content.ItemCreated).Values, nil)
		}
		if err != nil {
			results[n].Err = err
			continue
		}
		batch = append(batch, pending{n: n, item: content.Item{}.Apply(evs[0]), version: versions[in.Module], append: event.StreamAppend{
			Stream: content.ItemStream(id), ExpectedVersion: event.NoStream,
			Events: commands.WithApp(commands.Wrap(ctx, evs...), m.App)}})
		if len(batch) == createChunk {
			flush()
		}
	}
	flush()
	return last
}

// truncate deletes every live item of a module (delete right on it).
func (s *Service) truncate(ctx context.Context, module string, note func(event.Position)) ([]string, error) {
	if module == "" {
		return nil, fault.Invalidf("module is required").With("field", "module")
	}
	m, _, err := s.LoadModule(ctx, module)
	if err != nil {
		return nil, err
	}
	if err := s.authorize(ctx, rights.Delete, rights.Resource{App: m.App, Module: m.ID}); err != nil {
		return nil, err
	}
	if err := s.caughtUp(ctx); err != nil {
		return nil, err
	}
	ids, err := s.items.ModuleItemIDs(ctx, module)
	if err != nil {
		return nil, err
	}
	deleted := []string{}
	for _, id := range ids {
		_, p, err := s.deleteItem(ctx, id, nil)
		if err != nil {
			if fault.Is(err, fault.Conflict) || fault.Is(err, fault.NotFound) {
				continue // deleted meanwhile
			}
			return deleted, err
		}
		note(p)
		deleted = append(deleted, id)
	}
	return deleted, nil
}
