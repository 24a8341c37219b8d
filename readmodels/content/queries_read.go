package content

import (
	"context"
	"time"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
	"github.com/halocms/halocms/readmodels/internal/guard"
)

// Module reads a module the caller may see. App tokens get another app's
// module as unknown; a CMS user who may read no app, module or item at
// all gets 403 for an unknown module too, so that neither can probe ids.
func (q *Queries) Module(ctx context.Context, id string) (Module, error) {
	m, err := q.store.Module(ctx, id)
	if err == nil && m.DeletedAt != nil {
		err = fault.NotFoundf("module %s not found", id)
	}
	if err != nil {
		return m, guard.RefusedFirstIn(ctx, q.authz, rights.Read, err, rights.CoveringItem...)
	}
	sc, err := q.scope(ctx)
	if err != nil {
		return m, err
	}
	if !sc.canSeeModule(m) {
		return m, guard.UnknownToClients(ctx, fault.Forbiddenf("read permission on this module is required").With("permission", rights.Read.String()),
			fault.NotFoundf("module %s not found", id))
	}
	return m, nil
}

// Modules lists the live modules the caller may see, of one app or (app
// empty) of every app.
func (q *Queries) Modules(ctx context.Context, app string) ([]Module, error) {
	sc, err := q.scope(ctx)
	if err != nil {
		return nil, err
	}
	mods, err := q.store.Modules(ctx, ModuleQuery{AllApps: true, App: app})
	if err != nil {
		return nil, err
	}
	out := []Module{}
	for _, m := range mods {
		if sc.canSeeModule(m) {
			out = append(out, m)
		}
	}
	return out, nil
}

// ModuleTypes lists the module types, for CMS users.
func (q *Queries) ModuleTypes(ctx context.Context) ([]ModuleType, error) {
	if a := access.From(ctx); a.Kind != access.User && !a.IsAdmin() {
		return nil, fault.Forbiddenf("module types are for CMS users")
	}
	return q.store.ModuleTypes(ctx)
}

// Item reads an item for the caller: someone holding read on it, its
// module or its app; app tokens read their app's published items only,
// and another app's, or an unpublished one, as unknown. A CMS user who
// may read no app, module or item at all is refused an unknown item too.
func (q *Queries) Item(ctx context.Context, id string) (Item, error) {
	it, err := q.store.Item(ctx, id)
	if err == nil {
		err = q.authz.Authorize(ctx, access.From(ctx), rights.Read, rights.Resource{App: it.App, Module: it.Module, Item: it.ID})
	}
	if err == nil && access.From(ctx).ClientApp() != "" {
		d := content.Dates{PublishedAt: fromMs(it.PublishedAt), RemovedAt: fromMs(it.RemovedAt), ArchivedAt: fromMs(it.ArchivedAt)}
		if content.StateOf(d, it.DeletedAt != nil, time.Now()) != content.Published {
			err = fault.NotFoundf("Instance not found")
		}
	}
	if err != nil {
		return Item{}, guard.RefusedFirstIn(ctx, q.authz, rights.Read, guard.UnknownToClients(ctx, err, fault.NotFoundf("Instance not found")), rights.CoveringItem...)
	}
	return it, nil
}

func fromMs(p *int64) time.Time {
	if p == nil {
		return time.Time{}
	}
	return time.UnixMilli(*p)
}

// InstancesRequest lists a module's items, or every visible item.
type InstancesRequest struct {
	Module      string // empty: every module the caller sees
	Locale      string
	Page, Limit int
	Skip        bool // every item (up to MaxAll), without a total
}

// Instances lists items the caller may read, oldest first.
func (q *Queries) Instances(ctx context.Context, req InstancesRequest) (Result, error) {
	sc, err := q.scope(ctx)
	if err != nil {
		return Result{}, err
	}
	s := Query{Now: time.Now().UnixMilli(), Locale: req.Locale}
	sc.apply(&s)
	var ids []string
	if req.Module != "" {
		ids = []string{req.Module}
	}
	if _, err := q.searchModules(ctx, sc, &s, ids, nil); err != nil {
		return Result{}, err
	}
	if req.Skip {
		s.Limit = MaxAll
	} else {
		s.Offset, s.Limit, s.Count = (req.Page-1)*req.Limit, req.Limit, true
	}
	return q.store.Search(ctx, s)
}

// ReadBack reads an item as the projection has it after a write that a
// command authorized (no read check: the writer may write, not
// necessarily read).
func (q *Queries) ReadBack(ctx context.Context, id string) (Item, error) {
	return q.store.Item(ctx, id)
}

// ReadBackItems reads items as the projection has them after a write that
// a command authorized.
func (q *Queries) ReadBackItems(ctx context.Context, ids []string) ([]Item, error) {
	return q.store.Items(ctx, ids)
}

// ReadBackModule reads a module as the projection has it after a write
// that a command authorized.
func (q *Queries) ReadBackModule(ctx context.Context, id string) (Module, error) {
	return q.store.Module(ctx, id)
}
