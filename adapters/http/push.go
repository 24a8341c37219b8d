package httpapi

import (
	"context"
	"mime"
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"

	cmdpush "github.com/halocms/halocms/commands/push"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/push"
	"github.com/halocms/halocms/domain/rights"
	rmpush "github.com/halocms/halocms/readmodels/push"
)

// PushCommands schedules, changes and deletes pushes, and records device
// activity.
type PushCommands interface {
	Schedule(ctx context.Context, app string, spec push.Spec) (push.Schedule, error)
	Edit(ctx context.Context, id string, spec push.Spec) (push.Schedule, error)
	Cancel(ctx context.Context, id string) (push.Schedule, error)
	Delete(ctx context.Context, id string) (push.Schedule, error)
	RecordActivity(ctx context.Context, in cmdpush.Activity) error
}

// PushQueries answers the reads of push schedules for the caller (see
// rmpush.Queries: it checks who may read what).
type PushQueries interface {
	Schedule(ctx context.Context, id string) (rmpush.Schedule, error)
	Search(ctx context.Context, req rmpush.SearchRequest) (rmpush.Page, error)
	// ReadBack reads what a command wrote, to answer the write.
	ReadBack(ctx context.Context, id string) (rmpush.Schedule, error)
}

// scheduleView reads a schedule back after a write; if the projection has
// not caught up within its bound, the command's own result answers.
func (s *server) scheduleView(ctx context.Context, sc push.Schedule) scheduleJSON {
	v, err := s.PushRead.ReadBack(ctx, sc.ID)
	if err != nil || v.Name != sc.Name || v.Status != sc.Status || v.SendOn != sc.SendOn.UnixMilli() {
		return scheduleFromDomain(sc)
	}
	return scheduleFromView(v)
}

// schedulePush serves the scheduling paths; kind restricts the target.
func (s *server) schedulePush(kind targetKind) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		var b pushBody
		if err := decode(r, &b); err != nil {
			return s.refusedFirst(ctx, rights.Write, err)
		}
		spec, err := b.spec(kind)
		if err != nil {
			return s.refusedFirst(ctx, rights.Write, err)
		}
		app, err := s.appOf(ctx, string(b.AppID)) // HALO's number, or our id
		if err != nil {
			return s.refusedFirst(ctx, rights.Write, err)
		}
		sc, err := s.Push.Schedule(ctx, app, spec)
		s.Metrics.Command("push.schedule", err)
		if err != nil {
			return s.refusedFirst(ctx, rights.Write, err)
		}
		writeJSON(w, http.StatusCreated, s.scheduleView(r.Context(), sc))
		return nil
	}
}

// updatePush serves PUT /api/push/schedule/{id}. Push rights are
// app-wide: whoever may change a push holds the right on its whole app,
// so here, as in cancel, delete, get and schedule, a request fault (400,
// 404) reaches only callers who hold it on some app (refusedFirst); the
// others get their 403, whatever the id or body.
func (s *server) updatePush(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	var b pushBody
	if err := decode(r, &b); err != nil {
		return s.refusedFirst(ctx, rights.Update, err)
	}
	spec, err := b.spec(anyTarget)
	if err != nil {
		return s.refusedFirst(ctx, rights.Update, err)
	}
	sc, err := s.Push.Edit(ctx, chi.URLParam(r, "id"), spec)
	s.Metrics.Command("push.edit", err)
	if err != nil {
		return s.refusedFirst(ctx, rights.Update, err)
	}
	writeJSON(w, http.StatusOK, s.scheduleView(r.Context(), sc))
	return nil
}

func (s *server) cancelPush(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.Push.Cancel(r.Context(), chi.URLParam(r, "id"))
	s.Metrics.Command("push.cancel", err)
	if err != nil {
		return s.refusedFirst(r.Context(), rights.Update, err)
	}
	writeJSON(w, http.StatusOK, s.scheduleView(r.Context(), sc))
	return nil
}

func (s *server) deletePush(w http.ResponseWriter, r *http.Request) error {
	sc, err := s.Push.Delete(r.Context(), chi.URLParam(r, "id"))
	s.Metrics.Command("push.delete", err)
	if err != nil {
		return s.refusedFirst(r.Context(), rights.Delete, err)
	}
	writeJSON(w, http.StatusOK, scheduleFromDomain(sc))
	return nil
}

func (s *server) getPush(w http.ResponseWriter, r *http.Request) error {
	v, err := s.PushRead.Schedule(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, scheduleFromView(v))
	return nil
}

// listPushes lists (and searches by name) the schedules of the apps the
// caller may read, paginated like the content lists.
func (s *server) listPushes(w http.ResponseWriter, r *http.Request) error {
	query := r.URL.Query()
	req := rmpush.SearchRequest{Query: rmpush.Query{App: query.Get("appId"), Name: strings.TrimSpace(query.Get("name")),
		Status: push.Status(query.Get("status"))}}
	req.Query.Page, req.Query.Limit, req.Malformed = pageParams(r)
	res, err := s.PushRead.Search(r.Context(), req)
	if err != nil {
		return err
	}
	out := schedulePageJSON{Pagination: pagination(req.Query.Page, req.Query.Limit, res.Total), Items: make([]scheduleJSON, len(res.Items))}
	for i, v := range res.Items {
		out.Items[i] = scheduleFromView(v)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// pushActivity records a device's receipt, open or dismissal of a push;
// the Android SDK sends a form, iOS JSON. Devices (app tokens) are told
// what is wrong and see another app's push as unknown; a CMS user who
// holds write on no app gets 403 before any 400 or 404.
func (s *server) pushActivity(w http.ResponseWriter, r *http.Request) error {
	refused := func(err error) error {
		if access.From(r.Context()).ClientApp() == "" {
			return s.refusedFirst(r.Context(), rights.Write, err)
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
			return refused(formError(err))
		}
		b = activityJSON{Device: r.PostForm.Get("device"), Schedule: r.PostForm.Get("schedule"),
			Action: r.PostForm.Get("action"), Platform: r.PostForm.Get("platform")}
	} else if err := decode(r, &b); err != nil {
		return refused(err)
	}
	err := s.Push.RecordActivity(r.Context(), cmdpush.Activity{Device: b.Device, Schedule: b.Schedule, Action: b.Action, Platform: b.Platform})
	s.Metrics.Command("push.activity", err)
	if err != nil {
		return refused(err)
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}
