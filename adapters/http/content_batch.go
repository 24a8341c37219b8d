package httpapi

import (
	"net/http"

	cmdcontent "github.com/halocms/halocms/commands/content"
	"github.com/halocms/halocms/domain/fault"
)

// batchBody is the batch request: Android says "truncate", iOS
// "truncated"; entries are full instances or bare {id}/{module}.
type batchBody struct {
	Created          []instanceBody `json:"created"`
	Updated          []instanceBody `json:"updated"`
	CreatedOrUpdated []instanceBody `json:"createdOrUpdated"`
	Deleted          []instanceBody `json:"deleted"`
	Truncate         []instanceBody `json:"truncate"`
	Truncated        []instanceBody `json:"truncated"`
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

func (s *server) batch(w http.ResponseWriter, r *http.Request) {
	var b batchBody
	if err := decode(r, &b); err != nil {
		s.fail(w, r, err)
		return
	}
	ctx := r.Context()
	var ops []cmdcontent.BatchOp
	var parseErrs = map[int]error{}
	add := func(kind string, list []instanceBody) {
		for pos, ib := range list {
			in, err := ib.input()
			if err != nil {
				parseErrs[len(ops)] = err
			}
			ops = append(ops, cmdcontent.BatchOp{Kind: kind, Position: pos, Item: in, Module: ib.Module})
		}
	}
	add(cmdcontent.OpTruncate, append(b.Truncate, b.Truncated...))
	add(cmdcontent.OpCreate, b.Created)
	add(cmdcontent.OpUpdate, b.Updated)
	add(cmdcontent.OpCreateOrUpdate, b.CreatedOrUpdated)
	add(cmdcontent.OpDelete, b.Deleted)
	if len(ops) > maxBatchOps {
		s.fail(w, r, fault.Invalidf("a batch may hold at most %d operations", maxBatchOps))
		return
	}
	// Operations whose body did not parse fail on their own; the rest run.
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
	for n, res := range s.Content.Batch(ctx, run) {
		results[runIdx[n]] = res
	}
	s.Metrics.Command("content.batch", nil)

	// Read back every written item at once.
	var ids []string
	for _, res := range results {
		if res.Err == nil && res.Item.ID != "" {
			ids = append(ids, res.Item.ID)
		}
	}
	views := map[string]instanceJSON{}
	if len(ids) > 0 {
		if items, err := s.ContentRead.Items(ctx, ids); err == nil {
			for _, it := range items {
				views[it.ID] = instanceJSONOf(it)
			}
		}
	}
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
			if v, ok := views[res.Item.ID]; ok && v.Revision >= res.Item.Revision {
				op.Data = v
			} else {
				op.Data = s.instanceView(ctx, res.Item)
			}
		}
		counters[res.Op.Kind].Success++
		total.Success++
		out[i] = op
	}
	writeJSON(w, http.StatusOK, map[string]any{"operations": out, "results": map[string]any{
		"total": total, "truncate": counters[cmdcontent.OpTruncate], "create": counters[cmdcontent.OpCreate],
		"update": counters[cmdcontent.OpUpdate], "createOrUpdate": counters[cmdcontent.OpCreateOrUpdate],
		"delete": counters[cmdcontent.OpDelete]}})
}

// batchError is the HALO error body of one failed operation.
func (s *server) batchError(r *http.Request, err error) haloErrorBody {
	return errorBody(r, s.Log, s.contentError(r.Context(), err))
}
