package content

import (
	"context"
	"slices"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

// previewScope is the scope of a search with PreviewAt: what an app's
// token reads (the published content, judged at PreviewAt by the items'
// present dates: published by then, not yet expired, archived or
// deleted), over the modules the CMS user may read whole, their app's
// right or their own (a right on single items shows a module but does not
// cover it). A module the request names by id that the user may not read
// whole is a 403. An app's token, or a user identified through an app, is
// refused (400): it sees its app as it is now. A preview is never cached.
func (q *Queries) previewScope(ctx context.Context, sc scope, req SearchRequest) (scope, error) {
	if sc.publishedOnly {
		return scope{}, fault.Invalidf("previewAt is for CMS users: an app's token sees its app as it is now").With("field", "previewAt")
	}
	pv := scope{all: sc.all, apps: sc.apps, modules: sc.modules, publishedOnly: true, preview: true}
	if pv.all {
		return pv, nil
	}
	refused := fault.Forbiddenf("previewing content as the app needs the read right on the module or its app").
		With("permission", rights.Read.String())
	if len(pv.apps) == 0 && len(pv.modules) == 0 {
		return scope{}, refused
	}
	if len(req.ModuleIDs) > 0 {
		mods, err := q.store.Modules(ctx, ModuleQuery{AllApps: true, IDs: req.ModuleIDs})
		if err != nil {
			return scope{}, err
		}
		for _, id := range req.ModuleIDs {
			if !slices.ContainsFunc(mods, func(m Module) bool { return m.ID == id && pv.mayRead(m) }) {
				return scope{}, refused
			}
		}
	}
	return pv, nil
}
