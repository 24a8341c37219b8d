package push

import (
	"context"
	"mime"
	"net/http"
	"strings"

	httpapi "github.com/halocms/halocms/adapters/http"

	"github.com/go-chi/chi/v5"

	cmdpush "github.com/halocms/halocms/commands/push"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/push"
	"github.com/halocms/halocms/domain/rights"
	rmpush "github.com/halocms/halocms/readmodels/push"
)

// Commands schedules, changes and deletes pushes, and records device
// activity.
type Commands interface {
	Schedule(ctx context.Context, app string, spec push.Spec) (push.Schedule, error)
	Edit(ctx context.Context, id string, spec push.Spec) (push.Schedule, error)
	Cancel(ctx context.Context, id string) (push.Schedule, error)
	Delete(ctx context.Context, id string) (push.Schedule, error)
	RecordActivity(ctx context.Context, in cmdpush.Activity) error
}

// Queries answers the reads of push schedules for the caller (see
// rmpush.Queries: it checks who may read what).
type Queries interface {
	Schedule(ctx context.Context, id string) (rmpush.Schedule, error)
	Search(ctx context.Context, req rmpush.SearchRequest) (rmpush.Page, error)
	// ReadBack reads what a command wrote, to answer the write.
	ReadBack(ctx context.Context, id string) (rmpush.Schedule, error)
}

// scheduleView reads a schedule back after a write; if the projection has
// not caught up within its bound, the command's own result answers.
func (s *API) scheduleView(ctx context.Context, sc push.Schedule) scheduleJSON {
	v, err := s.Queries.ReadBack(ctx, sc.ID)
	if err != nil || v.Name != sc.Name || v.Status != sc.Status || v.SendOn != sc.SendOn.UnixMilli() {
		return scheduleFromDomain(sc)
	}
	return scheduleFromView(v)
}

// schedulePush serves the scheduling paths; kind restricts the target.
func (s *API) schedulePush(kind targetKind) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		var b pushBody
		if err := httpapi.Decode(r, &b); err != nil {
			return s.kit.RefusedFirst(ctx, rights.Write, err)
		}
		spec, err := b.spec(kind)
		if err != nil {
			return s.kit.RefusedFirst(ctx, rights.Write, err)
		}
		app, err := s.kit.AppOf(ctx, string(b.AppID)) // HALO's number, or our id
		if err != nil {
			return s.kit.RefusedFirst(ctx, rights.Write, err)
		}
		sc, err := s.Commands.Schedule(ctx, app, spec)
		s.kit.Metrics.Command("push.schedule", err)
		if err != nil {
			return s.kit.RefusedFirst(ctx, rights.Write, err)
		}
		httpapi.WriteJSON(w, http.StatusCreated, s.scheduleView(r.Context(), sc))
		return nil
	}
}

// updatePush serves PUT /api/push/schedule/{id}. Push rights are
// app-wide: whoever may change a push holds the right on its whole app,
// so here, as in cancel, delete, get and schedule, a request fault (400,
// 404) reaches only callers who hold it on some app (Kit.RefusedFirst); the
// others get their 403, whatever the id or body.
func (s *API) updatePush(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var b pushBody
	if err := httpapi.Decode(r, &b); err != nil {
		return s.kit.RefusedFirst(ctx, rights.Update, err)
	}
	spec, err := b.spec(anyTarget)
	if err != nil {
		return s.kit.RefusedFirst(ctx, rights.Update, err)
	}
	sc, err := s.Commands.Edit(ctx, chi.URLParam(r, "id"), spec)
	s.kit.Metrics.Command("push.edit", err)
	if err != nil {
		return s.kit.RefusedFirst(ctx, rights.Update, err)
	}
	httpapi.WriteJSON(w, http.StatusOK, s.scheduleView(r.Context(), sc))
	return nil
}

func (s *API) cancelPush(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.Commands.Cancel(r.Context(), chi.URLParam(r, "id"))
	s.kit.Metrics.Command("push.cancel", err)
	if err != nil {
		return s.kit.RefusedFirst(r.Context(), rights.Update, err)
	}
	httpapi.WriteJSON(w, http.StatusOK, s.scheduleView(r.Context(), sc))
	return nil
}

func (s *API) deletePush(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.Commands.Delete(r.Context(), chi.URLParam(r, "id"))
	s.kit.Metrics.Command("push.delete", err)
	if err != nil {
		return s.kit.RefusedFirst(r.Context(), rights.Delete, err)
	}
	httpapi.WriteJSON(w, http.StatusOK, scheduleFromDomain(sc))
	return nil
}

func (s *API) getPush(w http.ResponseWriter, r *http.Request) error {
	v, err := s.Queries.Schedule(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, scheduleFromView(v))
	return nil
}

// listPushes lists (and searches by name) the schedules of the apps the
// caller may read, paginated like the content lists.
func (s *API) listPushes(w http.ResponseWriter, r *http.Request) error {
	query := r.URL.Query()
	req := rmpush.SearchRequest{Query: rmpush.Query{App: query.Get("appId"), Name: strings.TrimSpace(query.Get("name")),
		Status: push.Status(query.Get("status"))}}
	req.Query.Page, req.Query.Limit, req.Malformed = httpapi.PageParams(r)
	res, err := s.Queries.Search(r.Context(), req)
	if err != nil {
		return err
	}
	out := schedulePageJSON{Pagination: httpapi.Pagination(req.Query.Page, req.Query.Limit, res.Total), Items: make([]scheduleJSON, len(res.Items))}
	for i, v := range res.Items {
		out.Items[i] = scheduleFromView(v)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// pushActivity records a device's receipt, open or dismissal of a push;
// the Android SDK sends a form, iOS JSON. Devices (app tokens) are told
// what is wrong and see another app's push as unknown; a CMS user who
// holds write on no app gets 403 before any 400 or 404.
func (s *API) pushActivity(w http.ResponseWriter, r *http.Request) error {
	refused := func(err error) error {
		if access.From(r.Context()).ClientApp() == "" {
			return s.kit.RefusedFirst(r.Context(), rights.Write, err)
		}
		return err
	}
	var b activityJSON
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if ct == "application/x-www-form-urlencoded" || ct == "multipart/form-data" {
		parse := r.ParseForm
		if ct == "multipart/form-data" {
			parse = func() error { return r.ParseMultipartForm(64 << 10) }
		}
		if err := parse(); err != nil {
			return refused(httpapi.FormError(err))
		}
		b = activityJSON{Device: r.PostForm.Get("device"), Schedule: r.PostForm.Get("schedule"),
			Action: r.PostForm.Get("action"), Platform: r.PostForm.Get("platform")}
	} else if err := httpapi.Decode(r, &b); err != nil {
		return refused(err)
	}
	err := s.Commands.RecordActivity(r.Context(), cmdpush.Activity{Device: b.Device, Schedule: b.Schedule, Action: b.Action, Platform: b.Platform})
	s.kit.Metrics.Command("push.activity", err)
	if err != nil {
		return refused(err)
	}
	httpapi.WriteJSON(w, http.StatusOK, b)
	return nil
}
