package content

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	httpapi "github.com/halocms/halocms/adapters/http"

	"github.com/go-chi/chi/v5"

	cmdcontent "github.com/halocms/halocms/commands/content"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// Commands changes modules, module types and items.
type Commands interface {
	CreateModule(ctx context.Context, in cmdcontent.ModuleInput) (content.Module, error)
	UpdateModule(ctx context.Context, id string, spec content.ModuleSpec) (content.Module, error)
	DeleteModule(ctx context.Context, id string) (content.Module, error)
	SaveModuleType(ctx context.Context, id, name string, single bool, fields []content.Field) (content.ModuleType, error)
	ImportModuleTypes(ctx context.Context, in []cmdcontent.ModuleTypeInput) ([]content.ModuleType, error)
	DeleteModuleType(ctx context.Context, id string) error
	CreateItem(ctx context.Context, in cmdcontent.ItemInput) (content.Item, error)
	UpdateItem(ctx context.Context, in cmdcontent.ItemInput) (content.Item, error)
	DeleteItem(ctx context.Context, id string, revision *int64) (content.Item, error)
	Transit(ctx context.Context, id string, t cmdcontent.Transition, at time.Time, revision *int64) (content.Item, error)
	History(ctx context.Context, id string) ([]cmdcontent.Revision, error)
	RevertItem(ctx context.Context, id string, revision int64, current *int64) (content.Item, error)
	Batch(ctx context.Context, ops []cmdcontent.BatchOp) []cmdcontent.BatchResult
}

// Queries answers the reads of content for the caller (see
// rmcontent.Queries: it checks who may read what).
type Queries interface {
	Module(ctx context.Context, id string) (rmcontent.Module, error)
	Modules(ctx context.Context, app string) ([]rmcontent.Module, error)
	ModuleTypes(ctx context.Context) ([]rmcontent.ModuleType, error)
	Item(ctx context.Context, id string) (rmcontent.Item, error)
	Instances(ctx context.Context, req rmcontent.InstancesRequest) (rmcontent.Result, error)
	Search(ctx context.Context, req rmcontent.SearchRequest) (rmcontent.Answer, error)
	Sync(ctx context.Context, req rmcontent.SyncRequest) (rmcontent.SyncResult, error)
	// ReadBack, ReadBackItems and ReadBackModule read, unchecked, what a
	// command wrote, to answer the write; and, for a write that failed,
	// where an item or a module lives, so that the caller's right there
	// decides between their refusal and the request's fault.
	ReadBack(ctx context.Context, id string) (rmcontent.Item, error)
	ReadBackItems(ctx context.Context, ids []string) ([]rmcontent.Item, error)
	ReadBackModule(ctx context.Context, id string) (rmcontent.Module, error)
}

func (s *API) listModules(w http.ResponseWriter, r *http.Request) error {
	page, limit, err := httpapi.PageParams(r)
	if err != nil {
		return err
	}
	withFields, err := httpapi.BoolParam(r, "withFields", false)
	if err != nil {
		return err
	}
	skip, err := httpapi.BoolParam(r, "skip", false)
	if err != nil {
		return err
	}
	mods, err := s.Queries.Modules(r.Context(), r.URL.Query().Get("app"))
	if err != nil {
		return err
	}
	items := make([]moduleJSON, len(mods))
	for i, m := range mods {
		items[i] = moduleJSONOf(m, withFields)
	}
	if skip {
		httpapi.WriteJSON(w, http.StatusOK, items)
		return nil
	}
	total := len(items)
	from := min((page-1)*limit, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{
		"search": map[string]any{"facets": map[string]any{}}, "sort": map[string]any{"query": "updatedAt desc"},
		"pagination": httpapi.Pagination(page, limit, total), "items": items[from:min(from+limit, total)]})
	return nil
}

func (s *API) getModule(w http.ResponseWriter, r *http.Request) error {
	m, err := s.Queries.Module(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	withFields, err := httpapi.BoolParam(r, "withFields", true)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, moduleJSONOf(m, withFields))
	return nil
}

// moduleView answers a module write with the module as read back, its
// content taken from the command's result: if the projection has not
// caught up within its bound, the answer is still the module as written.
func (s *API) moduleView(w http.ResponseWriter, r *http.Request, status int, m content.Module) error {
	v, err := s.Queries.ReadBackModule(r.Context(), m.ID)
	if err != nil && !fault.Is(err, fault.NotFound) {
		return err
	}
	now := time.Now().UnixMilli()
	if err != nil {
		v = rmcontent.Module{ID: m.ID, App: m.App, CreatedAt: now}
	}
	v.Name, v.Single, v.Fields, v.ModuleType = m.Name, m.Single, m.Fields, m.ModuleType
	v.Tags = make([]rmcontent.Tag, len(m.Tags))
	for i, t := range m.Tags {
		v.Tags[i] = rmcontent.Tag(t)
	}
	if m.Deleted && v.DeletedAt == nil {
		v.DeletedAt = &now
	}
	httpapi.WriteJSON(w, status, moduleJSONOf(v, true))
	return nil
}

// readModuleBody decodes a module body and the spec it describes.
func readModuleBody(r *http.Request) (moduleBody, content.ModuleSpec, error) {
	var b moduleBody
	if err := httpapi.Decode(r, &b); err != nil {
		return b, content.ModuleSpec{}, err
	}
	spec, err := b.spec()
	return b, spec, err
}

func (s *API) createModule(w http.ResponseWriter, r *http.Request) error {
	b, spec, err := readModuleBody(r)
	if err != nil {
		return s.kit.RefusedFirst(r.Context(), rights.Write, err)
	}
	in := cmdcontent.ModuleInput{App: b.App, Spec: spec}
	if b.ModuleType != nil {
		in.ModuleType = *b.ModuleType
	}
	m, err := s.Commands.CreateModule(r.Context(), in)
	s.kit.Metrics.Command("content.create_module", err)
	if err != nil {
		return s.kit.RefusedFirst(r.Context(), rights.Write, err)
	}
	return s.moduleView(w, r, http.StatusCreated, m)
}

func (s *API) updateModule(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), chi.URLParam(r, "id")
	b, spec, err := readModuleBody(r)
	switch bid, _ := b.ID.(string); {
	case err != nil:
	case b.ID != nil && bid != id:
		err = fault.Invalidf("id in the body must be the module's (%s)", id).With("field", "id")
	case b.App != "":
		// app, when sent, must be the module's own: a module stays in its app.
		if m, rerr := s.Queries.ReadBackModule(ctx, id); rerr == nil && m.App != b.App {
			err = fault.Invalidf("app must be the module's own: a module cannot move to another app").With("field", "app")
		}
	}
	if err != nil {
		return s.moduleRefusedFirst(ctx, id, rights.Update, err)
	}
	m, err := s.Commands.UpdateModule(ctx, id, spec)
	s.kit.Metrics.Command("content.update_module", err)
	if err != nil {
		return s.moduleRefusedFirst(ctx, id, rights.Update, err)
	}
	return s.moduleView(w, r, http.StatusOK, m)
}

func (s *API) deleteModule(w http.ResponseWriter, r *http.Request) error {
	m, err := s.Commands.DeleteModule(r.Context(), chi.URLParam(r, "id"))
	s.kit.Metrics.Command("content.delete_module", err)
	if err != nil {
		return s.moduleRefusedFirst(r.Context(), chi.URLParam(r, "id"), rights.Delete, err)
	}
	return s.moduleView(w, r, http.StatusOK, m)
}

// instanceView reads an item back after a write. If the projection has
// not caught up within its bound, the command's own result fills in.
func (s *API) instanceView(ctx context.Context, i content.Item) instanceJSON {
	it, err := s.Queries.ReadBack(ctx, i.ID)
	if err != nil || it.Revision < i.Revision {
		it = itemFromCommand(it, err == nil, i)
	}
	return instanceJSONOf(it)
}

func msp(t time.Time) *int64 {
	if t.IsZero() {
		return nil
	}
	v := t.UnixMilli()
	return &v
}

// version is the revision a write names: the body's (HALO's revision:
// stale, a 409 whose extra is the item) or If-Match's (a precondition:
// stale, a 412 whose extra.current is the item).
type version struct {
	revision *int64
	ifMatch  bool
}

// versionOf reads If-Match beside the revision a body sent. Both may be
// sent, naming the same revision.
func versionOf(r *http.Request, body *int64) (version, error) {
	rev, err := httpapi.IfMatch(r)
	switch {
	case err != nil:
		return version{}, err
	case rev == nil:
		return version{revision: body}, nil
	case body != nil && *body != *rev:
		return version{}, fault.Invalidf("If-Match names revision %d and the body revision %d: send one, or the same", *rev, *body).
			With("field", "revision")
	}
	return version{revision: rev, ifMatch: true}, nil
}

// contentError turns a stale-revision error, and a write of a deleted
// item, into HALO's 409, whose extra is the item as the server has it; a
// stale If-Match into a 412 whose extra.current is.
func (s *API) contentError(ctx context.Context, err error, v version) error {
	var stale *content.StaleRevisionError
	var deleted *content.DeletedError
	var id string
	fe := fault.Conflictf("The specified instance was updated after your data retrieval. Please, resolve the conflict and try again.")
	switch {
	case errors.As(err, &stale) && v.ifMatch:
		fe = fault.New(fault.Precondition, "If-Match names revision %d; the instance is at revision %d. Resolve the conflict and try again.",
			stale.Sent, stale.Current)
		if it, rerr := s.Queries.ReadBack(ctx, stale.ItemID); rerr == nil {
			fe = fe.With("current", asMap(instanceJSONOf(it)))
		}
		return fe
	case errors.As(err, &stale):
		id = stale.ItemID
	case errors.As(err, &deleted):
		id, fe = deleted.ItemID, fault.Conflictf("%s", deleted.Error())
	default:
		return err
	}
	it, rerr := s.Queries.ReadBack(ctx, id)
	if rerr == nil {
		fe.Extra = asMap(instanceJSONOf(it))
	}
	return fe
}

// writeInstance answers an item with its revision as ETag.
func writeInstance(w http.ResponseWriter, status int, it instanceJSON) {
	httpapi.SetETag(w, it.Revision)
	httpapi.WriteJSON(w, status, it)
}

func (s *API) getInstance(w http.ResponseWriter, r *http.Request) error {
	it, err := s.Queries.Item(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	writeInstance(w, http.StatusOK, instanceJSONOf(it))
	return nil
}

// readInstanceBody decodes an instance body into a command's input.
func readInstanceBody(r *http.Request) (cmdcontent.ItemInput, error) {
	var b instanceBody
	if err := httpapi.Decode(r, &b); err != nil {
		return cmdcontent.ItemInput{}, err
	}
	return b.input()
}

func (s *API) createInstance(w http.ResponseWriter, r *http.Request) error {
	in, err := readInstanceBody(r)
	if err != nil {
		return s.moduleRefusedFirst(r.Context(), in.Module, rights.Write, err)
	}
	i, err := s.Commands.CreateItem(r.Context(), in)
	s.kit.Metrics.Command("content.create_item", err)
	if err != nil {
		return s.moduleRefusedFirst(r.Context(), in.Module, rights.Write, err)
	}
	writeInstance(w, http.StatusCreated, s.instanceView(r.Context(), i))
	return nil
}

func (s *API) updateInstance(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), chi.URLParam(r, "id")
	in, err := readInstanceBody(r)
	if err != nil {
		return s.itemRefusedFirst(ctx, id, rights.Update, err)
	}
	if in.ID != "" && in.ID != id {
		return s.itemRefusedFirst(ctx, id, rights.Update, fault.Invalidf("the body's id %s is not the path's %s", in.ID, id).With("field", "id"))
	}
	v, err := versionOf(r, in.Revision)
	if err != nil {
		return s.itemRefusedFirst(ctx, id, rights.Update, err)
	}
	in.ID, in.Revision = id, v.revision
	i, err := s.Commands.UpdateItem(ctx, in)
	s.kit.Metrics.Command("content.update_item", err)
	if err != nil {
		return s.itemRefusedFirst(ctx, id, rights.Update, s.contentError(ctx, err, v))
	}
	writeInstance(w, http.StatusOK, s.instanceView(r.Context(), i))
	return nil
}

func (s *API) deleteInstance(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), chi.URLParam(r, "id")
	var rev *int64
	if q := r.URL.Query().Get("revision"); q != "" {
		n, err := strconv.ParseInt(q, 10, 64)
		if err != nil {
			return s.itemRefusedFirst(ctx, id, rights.Delete, fault.Invalidf("revision must be a whole number").With("field", "revision"))
		}
		rev = &n
	}
	v, err := versionOf(r, rev)
	if err != nil {
		return s.itemRefusedFirst(ctx, id, rights.Delete, err)
	}
	i, err := s.Commands.DeleteItem(ctx, id, v.revision)
	s.kit.Metrics.Command("content.delete_item", err)
	if err != nil {
		return s.itemRefusedFirst(ctx, id, rights.Delete, s.contentError(ctx, err, v))
	}
	writeInstance(w, http.StatusOK, s.instanceView(ctx, i))
	return nil
}

// transitBody is the optional body of publish and archive: the date the
// state starts (default now; a future date schedules it).
type transitBody struct {
	PublishedAt any    `json:"publishedAt"`
	ArchivedAt  any    `json:"archivedAt"`
	Revision    *int64 `json:"revision"` // the item's revision as the caller read it: 409 when stale
}

func (s *API) transit(t cmdcontent.Transition) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx, id := r.Context(), chi.URLParam(r, "id")
		var b transitBody
		if err := httpapi.DecodeOptional(r, &b); err != nil {
			return s.itemRefusedFirst(ctx, id, rights.Update, err)
		}
		var at time.Time
		var err error
		switch {
		case t == cmdcontent.Publish && b.ArchivedAt == nil:
			at, err = content.ParseMillis(b.PublishedAt, "publishedAt")
		case t == cmdcontent.Archive && b.PublishedAt == nil:
			at, err = content.ParseMillis(b.ArchivedAt, "archivedAt")
		case b.PublishedAt != nil || b.ArchivedAt != nil:
			// A date this command does not take is a mistake, not to be
			// ignored.
			key := "publishedAt"
			if t == cmdcontent.Publish || b.PublishedAt == nil {
				key = "archivedAt"
			}
			err = fault.Invalidf("%s takes no %s (publish takes publishedAt, archive archivedAt)", t, key).With("field", key)
		}
		var v version
		if err == nil {
			v, err = versionOf(r, b.Revision)
		}
		if err != nil {
			return s.itemRefusedFirst(ctx, id, rights.Update, err)
		}
		i, err := s.Commands.Transit(ctx, id, t, at, v.revision)
		s.kit.Metrics.Command("content."+string(t)+"_item", err)
		if err != nil {
			return s.itemRefusedFirst(ctx, id, rights.Update, s.contentError(ctx, err, v))
		}
		writeInstance(w, http.StatusOK, s.instanceView(r.Context(), i))
		return nil
	}
}

type revisionJSON struct {
	Revision int64        `json:"revision"`
	Type     string       `json:"type"`
	At       int64        `json:"at"`
	Actor    string       `json:"actor"`
	By       string       `json:"by"`
	ClientIP string       `json:"clientIp"`
	Changed  []string     `json:"changed"`
	Instance instanceJSON `json:"instance"`
}

func (s *API) history(w http.ResponseWriter, r *http.Request) error {
	revs, err := s.Commands.History(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return s.itemRefusedFirst(r.Context(), chi.URLParam(r, "id"), rights.Read, err)
	}
	out := make([]revisionJSON, len(revs))
	var created int64
	var createdBy string
	var deletedAt *int64
	var deletedBy *string
	for n, rv := range revs {
		at, by := rv.At.UnixMilli(), rv.By
		if n == 0 {
			created, createdBy = at, by
		}
		it := rmcontent.Item{ID: rv.Item.ID, App: rv.Item.App, Module: rv.Item.Module, CreatedAt: created, CreatedBy: createdBy,
			Revision: rv.Item.Revision, Name: rv.Item.Content.Name, Values: rv.Item.Content.Values, ExternalID: rv.Item.Content.ExternalID,
			PublishedAt: msp(rv.Item.Dates.PublishedAt), RemovedAt: msp(rv.Item.Dates.RemovedAt), ArchivedAt: msp(rv.Item.Dates.ArchivedAt)}
		for _, t := range rv.Item.Content.Tags {
			it.Tags = append(it.Tags, rmcontent.Tag(t))
		}
		if n > 0 {
			it.UpdatedAt, it.UpdatedBy = &at, &by
		}
		switch {
		case !rv.Item.Deleted:
			deletedAt, deletedBy = nil, nil
		case deletedAt == nil: // this revision deleted it
			deletedAt, deletedBy = &at, &by
		}
		it.DeletedAt, it.DeletedBy = deletedAt, deletedBy
		changed := rv.Changed
		if changed == nil {
			changed = []string{}
		}
		out[n] = revisionJSON{Revision: rv.Revision, Type: rv.Type, At: at, Actor: rv.Actor, By: rv.By, ClientIP: rv.ClientIP,
			Changed: changed, Instance: instanceJSONOf(it)}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *API) revertInstance(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), chi.URLParam(r, "id")
	rev, err := strconv.ParseInt(chi.URLParam(r, "revision"), 10, 64)
	if err != nil {
		return s.itemRefusedFirst(ctx, id, rights.Update, fault.Invalidf("revision must be a whole number").With("field", "revision"))
	}
	var b struct {
		Revision *int64 `json:"revision"` // the item's current revision as the caller read it: 409 when stale
	}
	if err := httpapi.DecodeOptional(r, &b); err != nil {
		return s.itemRefusedFirst(ctx, id, rights.Update, err)
	}
	v, err := versionOf(r, b.Revision)
	if err != nil {
		return s.itemRefusedFirst(ctx, id, rights.Update, err)
	}
	i, err := s.Commands.RevertItem(ctx, id, rev, v.revision)
	s.kit.Metrics.Command("content.revert_item", err)
	if err != nil {
		return s.itemRefusedFirst(ctx, id, rights.Update, s.contentError(ctx, err, v))
	}
	writeInstance(w, http.StatusOK, s.instanceView(ctx, i))
	return nil
}

// itemRefusedFirst is Kit.RefusedFirst for a request naming content item id:
// when the item is known, the caller's right p on it decides (someone who
// may do p on it is told what is wrong with the request; anyone else gets
// their refusal, as for an unknown item); otherwise a right p on some
// app, module or item does. It costs queries on the failure path only.
func (s *API) itemRefusedFirst(ctx context.Context, id string, p rights.Permission, err error) error {
	return s.kit.KnownRefusedFirst(ctx, p, err, rights.CoveringItem, func() (rights.Resource, error) {
		it, err := s.Queries.ReadBack(ctx, id)
		return rights.Resource{App: it.App, Module: it.Module, Item: it.ID}, err
	})
}

// moduleRefusedFirst is itemRefusedFirst for a request naming module id
// (or, empty, a module the request does not tell): a right p on some app
// or module counts when the module is not known.
func (s *API) moduleRefusedFirst(ctx context.Context, id string, p rights.Permission, err error) error {
	if id == "" {
		return s.kit.RefusedFirstIn(ctx, p, err, rights.CoveringModule...)
	}
	return s.kit.KnownRefusedFirst(ctx, p, err, rights.CoveringModule, func() (rights.Resource, error) {
		m, err := s.Queries.ReadBackModule(ctx, id)
		return rights.Resource{App: m.App, Module: m.ID}, err
	})
}
