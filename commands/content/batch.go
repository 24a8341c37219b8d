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
	by, err := s.by(ctx)
	if err != nil {
		for _, n := range idx {
			results[n].Err = err
		}
		return event.Position{}
	}
	c := &bulkCreate{s: s, ops: ops, results: results, by: by,
		modules: map[string]content.Module{}, versions: map[string]int64{}, allowed: map[string]error{}}
	for _, n := range idx {
		c.add(ctx, n)
		if len(c.chunk) == createChunk {
			c.flush(ctx)
		}
	}
	c.flush(ctx)
	return c.last
}

// bulkCreate is one run of createMany: what it learnt of each module, the
// creates decided and waiting for their chunk's append, and where the
// last append landed.
type bulkCreate struct {
	s       *Service
	ops     []BatchOp
	results []BatchResult
	by      string

	modules  map[string]content.Module
	versions map[string]int64 // each module's version, as read
	allowed  map[string]error // the caller's write right on each module
	chunk    []pendingCreate
	last     event.Position
}

// pendingCreate is a create decided and waiting for its chunk's append.
type pendingCreate struct {
	n       int
	append  event.StreamAppend
	item    content.Item
	version int64 // the module's, as the item was checked against it
}

func (c *bulkCreate) note(p event.Position) {
	if c.last.Less(p) {
		c.last = p
	}
}

// module returns the module of a create, loaded and authorized once per
// run (until a failed chunk makes it read again).
func (c *bulkCreate) module(ctx context.Context, id string) content.Module {
	m, ok := c.modules[id]
	if !ok && id != "" {
		var err error
		m, c.versions[id], err = c.s.LoadModule(ctx, id)
		if err == nil {
			err = c.s.authz.Authorize(ctx, access.From(ctx), rights.Write, rights.Resource{App: m.App, Module: m.ID})
		}
		c.modules[id], c.allowed[id] = m, err
	}
	return m
}

// add decides create n and queues it for the chunk's append. A create
// the fast path does not fit (no module or no right: createItem reports
// the error; a single-item module or a client-chosen id: createItem takes
// the careful path) is run on its own at once.
func (c *bulkCreate) add(ctx context.Context, n int) {
	in := c.ops[n].Item
	m := c.module(ctx, in.Module)
	if in.Module == "" || c.allowed[in.Module] != nil || m.Single || in.ID != "" {
		c.createOne(ctx, n)
		return
	}
	id := c.s.ids.NewID()
	values, err := c.s.resolveMedia(ctx, m, in.Content.Values, nil)
	if err != nil {
		c.results[n].Err = err
		return
	}
	in.Content.Values = values
	evs, err := content.CreateItem(content.Item{}, id, m, in.Content, in.Dates, c.by)
	if err == nil {
		err = c.s.checkRelations(ctx, m, evs[0].(content.ItemCreated).Values, nil)
	}
	if err != nil {
		c.results[n].Err = err
		return
	}
	c.chunk = append(c.chunk, pendingCreate{n: n, item: content.Item{}.Apply(evs[0]), version: c.versions[in.Module], append: event.StreamAppend{
		Stream: content.ItemStream(id), ExpectedVersion: event.NoStream,
		Events: commands.WithApp(commands.Wrap(ctx, evs...), m.App)}})
}

// createOne runs create n through createItem.
func (c *bulkCreate) createOne(ctx context.Context, n int) {
	var pos event.Position
	c.results[n].Item, pos, c.results[n].Err = c.s.createItem(ctx, c.ops[n].Item)
	c.note(pos)
}

// flush appends the queued creates in one transaction, with a guard on
// each module at the version its items were checked against.
func (c *bulkCreate) flush(ctx context.Context) {
	if len(c.chunk) == 0 {
		return
	}
	appends := make([]event.StreamAppend, len(c.chunk), len(c.chunk)+1)
	guarded := map[string]int64{}
	for i, p := range c.chunk {
		appends[i] = p.append
		if m := p.item.Module; guarded[m] != p.version {
			guarded[m] = p.version
			appends = append(appends, moduleGuard(m, p.version)...)
		}
	}
	res, err := c.s.store.AppendMulti(ctx, appends...)
	switch {
	case err == nil:
		for _, p := range c.chunk {
			c.results[p.n].Item = p.item
		}
		c.note(res.Last)
	case ctx.Err() == nil && (errors.Is(err, event.ErrVersionConflict) || errors.Is(err, event.ErrDataRejected)):
		// A conflict, or an item the store cannot hold: the chunk's
		// transaction wrote nothing, so its items run one by one and
		// only the culprit fails. A module changed meanwhile is read
		// again for the items after the chunk.
		for m := range guarded {
			delete(c.modules, m)
		}
		for _, p := range c.chunk {
			c.createOne(ctx, p.n)
		}
	default:
		// The chunk may have been written (the connection lost after
		// its commit): creating its items again would duplicate them
		// under new ids.
		for _, p := range c.chunk {
			c.results[p.n].Err = err
		}
	}
	c.chunk = c.chunk[:0]
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
