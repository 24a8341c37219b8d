package content

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"slices"
	"time"

	httpapi "github.com/halocms/halocms/adapters/http"

	cmdcontent "github.com/halocms/halocms/commands/content"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// batchBody is the batch request: Android says "truncate", iOS
// "truncated"; entries (E) are full instances or bare {id}/{module}.
type batchBody[E any] struct {
	Created          []E `json:"created"`
	Updated          []E `json:"updated"`
	CreatedOrUpdated []E `json:"createdOrUpdated"`
	Deleted          []E `json:"deleted"`
	Truncate         []E `json:"truncate"`
	Truncated        []E `json:"truncated"`
}

// batchEntry is one decoded entry, or why it did not decode.
type batchEntry struct {
	body instanceBody
	err  error
}

// decodeBatch decodes a batch body in one pass when every entry decodes
// (the common case), else each entry on its own, as strictly as a single
// request's body, so that a bad entry fails alone; malformed JSON, or a
// body or list of the wrong shape, fails the whole batch.
func decodeBatch(body []byte) (batchBody[batchEntry], error) {
	notObject := func() error {
		return fault.Invalidf("each entry must be a JSON object: an instance, {id} or {module}")
	}
	var typed batchBody[*instanceBody] // a null entry decodes as nil
	if httpapi.DecodeFrom(bytes.NewReader(body), &typed) == nil {
		return mapBatch(typed, func(ib *instanceBody) batchEntry {
			if ib == nil {
				return batchEntry{err: notObject()}
			}
			return batchEntry{body: *ib}
		}), nil
	}
	var raw batchBody[json.RawMessage]
	if err := httpapi.DecodeFrom(bytes.NewReader(body), &raw); err != nil {
		return batchBody[batchEntry]{}, err
	}
	return mapBatch(raw, func(m json.RawMessage) batchEntry {
		var e batchEntry
		if t := bytes.TrimSpace(m); len(t) == 0 || t[0] != '{' {
			e.err = notObject()
		} else {
			e.err = httpapi.DecodeFrom(bytes.NewReader(m), &e.body)
		}
		return e
	}), nil
}

func mapBatch[A, B any](b batchBody[A], f func(A) B) batchBody[B] {
	each := func(l []A) []B {
		out := make([]B, len(l))
		for i, a := range l {
			out[i] = f(a)
		}
		return out
	}
	return batchBody[B]{Created: each(b.Created), Updated: each(b.Updated), CreatedOrUpdated: each(b.CreatedOrUpdated),
		Deleted: each(b.Deleted), Truncate: each(b.Truncate), Truncated: each(b.Truncated)}
}

// maxBatchOps bounds the operations of one batch.
const maxBatchOps = 20000

type batchOpJSON struct {
	Operation string  `json:"operation"`
	Position  int     `json:"position"`
	Success   bool    `json:"success"`
	Module    *string `json:"module,omitempty"`
	Data      any     `json:"data"`
}

type counterJSON struct {
	Success int `json:"success"`
	Failure int `json:"failure"`
}

type totalJSON struct {
	Total   int `json:"total"`
	Success int `json:"success"`
	Failure int `json:"failure"`
}

func (s *API) batch(w http.ResponseWriter, r *http.Request) error {
	if err := s.writesSomewhere(r.Context()); err != nil {
		return err
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return httpapi.BadJSON(err)
	}
	b, err := decodeBatch(body)
	if err != nil {
		return err
	}
	ctx := r.Context()
	truncates := append(b.Truncate, b.Truncated...)
	if n := len(truncates) + len(b.Created) + len(b.Updated) + len(b.CreatedOrUpdated) + len(b.Deleted); n > maxBatchOps {
		return fault.Invalidf("a batch may hold at most %d operations", maxBatchOps)
	}
	var ops []cmdcontent.BatchOp
	var parseErrs = map[int]error{}
	add := func(kind string, list []batchEntry) {
		for pos, e := range list {
			err := e.err
			var in cmdcontent.ItemInput
			if err == nil {
				in, err = e.body.input()
			}
			if err != nil {
				parseErrs[len(ops)] = err
			}
			ops = append(ops, cmdcontent.BatchOp{Kind: kind, Position: pos, Item: in, Module: e.body.Module})
		}
	}
	add(cmdcontent.OpTruncate, truncates)
	add(cmdcontent.OpCreate, b.Created)
	add(cmdcontent.OpUpdate, b.Updated)
	add(cmdcontent.OpCreateOrUpdate, b.CreatedOrUpdated)
	add(cmdcontent.OpDelete, b.Deleted)
	// Operations whose entry did not decode fail on their own; the rest run.
	var run []cmdcontent.BatchOp
	var runIdx []int
	for i, op := range ops {
		if parseErrs[i] == nil {
			run = append(run, op)
			runIdx = append(runIdx, i)
		}
	}
	results := make([]cmdcontent.BatchResult, len(ops))
	for i, err := range parseErrs {
		results[i] = cmdcontent.BatchResult{Op: ops[i], Err: err}
	}
	for n, res := range s.Commands.Batch(ctx, run) {
		results[runIdx[n]] = res
	}
	s.kit.Metrics.Command("content.batch", nil)

	read := s.readBack(ctx, results)
	counters := map[string]*counterJSON{}
	for _, k := range []string{cmdcontent.OpTruncate, cmdcontent.OpCreate, cmdcontent.OpUpdate, cmdcontent.OpCreateOrUpdate, cmdcontent.OpDelete} {
		counters[k] = &counterJSON{}
	}
	total := totalJSON{Total: len(results)}
	out := make([]batchOpJSON, len(results))
	for i, res := range results {
		op := batchOpJSON{Operation: res.Op.Kind, Position: res.Op.Position, Success: res.Err == nil}
		if res.Op.Kind == cmdcontent.OpTruncate {
			m := res.Op.Module
			op.Module = &m
		}
		switch {
		case res.Err != nil:
			op.Data = map[string]any{"error": s.batchError(r, res.Err)}
			counters[res.Op.Kind].Failure++
			total.Failure++
			out[i] = op
			continue
		case res.Op.Kind == cmdcontent.OpTruncate:
			deleted := make([]deletedJSON, len(res.Truncated))
			for n, id := range res.Truncated {
				deleted[n] = deletedJSON{ID: id}
			}
			op.Data = deleted
		default:
			op.Data = read.view(res.Item)
		}
		counters[res.Op.Kind].Success++
		total.Success++
		out[i] = op
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"operations": out, "results": map[string]any{
		"total": total, "truncate": counters[cmdcontent.OpTruncate], "create": counters[cmdcontent.OpCreate],
		"update": counters[cmdcontent.OpUpdate], "createOrUpdate": counters[cmdcontent.OpCreateOrUpdate],
		"delete": counters[cmdcontent.OpDelete]}})
	return nil
}

// batchError is the HALO error body of one failed operation.
func (s *API) batchError(r *http.Request, err error) httpapi.ErrorBody {
	return s.kit.ErrorBody(r, s.contentError(r.Context(), err, version{}))
}

// writesSomewhere refuses, before anything else, a batch from a caller who
// may write, update and delete nothing anywhere (app tokens, identified
// users, readers): every operation would be refused, and answering each of
// them (403 for another app's item, 404 for an unknown id) would let the
// caller probe ids, at the cost of reads per operation.
func (s *API) writesSomewhere(ctx context.Context) error {
	a := access.From(ctx)
	err := s.Authorizer.AuthorizeAnywhere(ctx, a, rights.Write, rights.CoveringModule...)
	for _, p := range []rights.Permission{rights.Update, rights.Delete} {
		if err == nil || !fault.Is(err, fault.Forbidden) {
			return err
		}
		err = s.Authorizer.AuthorizeAnywhere(ctx, a, p, rights.CoveringItem...)
	}
	if fault.Is(err, fault.Forbidden) {
		return fault.Forbiddenf("a batch needs the write, update or delete permission on some app, module or item").
			With("permission", rights.Write.String())
	}
	return err
}

// readBack reads every written item back from the read model at once.
// The items it does not show at their written revision yet (the bounded
// wait for the projection ran out) are read once more, together: never
// one read per item, which would slow a lagging server down further.
func (s *API) readBack(ctx context.Context, results []cmdcontent.BatchResult) batchRead {
	want := map[string]int64{} // item id → highest revision written
	for _, res := range results {
		if res.Err == nil && res.Item.ID != "" {
			if r, ok := want[res.Item.ID]; !ok || res.Item.Revision > r {
				want[res.Item.ID] = res.Item.Revision
			}
		}
	}
	found := make(map[string]rmcontent.Item, len(want))
	ids := make([]string, 0, len(want))
	for id := range want {
		ids = append(ids, id)
	}
	for try := 0; try < 2 && len(ids) > 0; try++ {
		items, err := s.Queries.ReadBackItems(ctx, ids)
		if err != nil {
			continue
		}
		for _, it := range items {
			found[it.ID] = it
		}
		ids = slices.DeleteFunc(ids, func(id string) bool { it, ok := found[id]; return ok && it.Revision >= want[id] })
	}
	return batchRead{found: found}
}

// batchRead is what the read model showed of a batch's items.
type batchRead struct{ found map[string]rmcontent.Item }

// view is the answer for an item a batch operation wrote: the read
// model's row if it shows that revision, else the item as the command left
// it (as instanceView answers).
func (b batchRead) view(i content.Item) instanceJSON {
	it, ok := b.found[i.ID]
	if ok && it.Revision >= i.Revision {
		return instanceJSONOf(it)
	}
	return instanceJSONOf(itemFromCommand(it, ok, i))
}

// itemFromCommand is the item as the command left it, over what the read
// model has of it (ok false: nothing yet).
func itemFromCommand(it rmcontent.Item, ok bool, i content.Item) rmcontent.Item {
	now := time.Now().UnixMilli()
	if !ok {
		it = rmcontent.Item{ID: i.ID, App: i.App, Module: i.Module, CreatedAt: now}
	}
	it.Name, it.Values, it.RawValues, it.ExternalID, it.Revision = i.Content.Name, i.Content.Values, nil, i.Content.ExternalID, i.Revision
	it.Tags = make([]rmcontent.Tag, len(i.Content.Tags))
	for n, t := range i.Content.Tags {
		it.Tags[n] = rmcontent.Tag(t)
	}
	it.PublishedAt, it.RemovedAt, it.ArchivedAt = msp(i.Dates.PublishedAt), msp(i.Dates.RemovedAt), msp(i.Dates.ArchivedAt)
	if i.Deleted && it.DeletedAt == nil {
		it.DeletedAt = &now
	}
	return it
}
