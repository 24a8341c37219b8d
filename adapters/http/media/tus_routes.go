package media

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"
	tusd "github.com/tus/tusd/v2/pkg/handler"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/rights"
)

// uploadRoutes registers the tus endpoints (behind authentication, with
// the library's other routes).
func (s *API) uploadRoutes(r chi.Router) {
	r.Options(uploadsPath, s.tusHandle(s.uploadOptions))
	r.Post(uploadsPath, s.tusHandle(s.createUpload))
	r.Head(uploadsPath+"/{id}", s.tusHandle(s.onUpload))
	r.Patch(uploadsPath+"/{id}", s.tusHandle(s.onUpload))
	r.Delete(uploadsPath+"/{id}", s.tusHandle(s.onUpload))
}

// tusHandle is kit.Handle with the protocol's version on refusals too.
func (s *API) tusHandle(h func(w http.ResponseWriter, r *http.Request, u *Uploads) error) http.HandlerFunc {
	return s.kit.Handle(func(w http.ResponseWriter, r *http.Request) error {
		w.Header().Set("Tus-Resumable", "1.0.0")
		if s.Uploads == nil {
			return fault.NotFoundf("resumable uploads are not enabled on this server")
		}
		// Methods are routed by chi: an override would reach the wrong
		// handler (POST is creation only).
		r.Header.Del("X-HTTP-Method-Override")
		return h(w, r, s.Uploads)
	})
}

// OwnsIdempotency leaves the requests that carry a file to themselves:
// their bodies, as large as the upload limit, are streamed to storage and
// never held in memory to be hashed and replayed. A repeated tus creation
// makes another upload (the abandoned one is swept); a repeated upload
// stores the same bytes once and adds another file.
func (s *API) OwnsIdempotency(path string) bool {
	_, streamed := s.BodyLimit(path)
	return streamed
}

// uploadOptions serves OPTIONS /api/media/uploads: the protocol's version,
// extensions and size limit.
func (s *API) uploadOptions(w http.ResponseWriter, r *http.Request, u *Uploads) error {
	u.options.ServeHTTP(w, r)
	return nil
}

// createUpload serves POST /api/media/uploads: an upload of
// Upload-Length bytes for the app its Upload-Metadata names, by a CMS user
// holding write on it. What the file will be called is checked now, not
// after its bytes came.
func (s *API) createUpload(w http.ResponseWriter, r *http.Request, u *Uploads) error {
	ctx := r.Context()
	meta := tusd.ParseMetadataHeader(r.Header.Get("Upload-Metadata"))
	app, err := s.kit.AppOfField(ctx, meta[metaApp], "app")
	if err != nil {
		return s.kit.RefusedFirst(ctx, rights.Write, err)
	}
	// Refused before anything is kept.
	if err := s.Commands.Authorize(ctx, rights.Write, app); err != nil {
		return err
	}
	if err := s.checkLength(r.Header); err != nil {
		return err
	}
	n := newFileOf(meta)
	if _, err := media.CheckName(n.Name); err != nil {
		return err
	}
	if err := media.CheckFiling(n.Folder, n.Tags); err != nil {
		return err
	}
	stored := map[string]string{metaApp: app, metaOwner: access.From(ctx).ID, metaFilename: n.Name,
		metaFolder: n.Folder, metaTags: strings.Join(n.Tags, ",")}
	u.post.ServeHTTP(w, r.WithContext(context.WithValue(ctx, creationKey{}, stored)))
	return nil
}

// checkLength requires Upload-Length (no deferred length), within the
// upload limit.
func (s *API) checkLength(h http.Header) error {
	raw := h.Get("Upload-Length")
	if raw == "" {
		return fault.Invalidf("Upload-Length is required (deferred lengths are not supported)").With("header", "Upload-Length")
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n < 0 {
		return fault.Invalidf("Upload-Length must be a number of bytes").With("header", "Upload-Length")
	}
	if n > s.Commands.MaxBytes() {
		return tooLarge(s.Commands.MaxBytes())
	}
	return nil
}

// newFileOf reads what the library will call the file.
func newFileOf(meta map[string]string) media.New {
	return media.New{Name: strings.TrimSpace(meta[metaFilename]), Folder: strings.TrimSpace(meta[metaFolder]),
		Tags: tagsOf(map[string][]string{"tags": {meta[metaTags]}})}
}

// onUpload serves HEAD, PATCH and DELETE /api/media/uploads/{id}: only the
// user who created the upload may see, resume or end it (anyone else is
// told it does not exist), and a chunk needs write on the app still.
func (s *API) onUpload(w http.ResponseWriter, r *http.Request, u *Uploads) error {
	ctx := r.Context()
	id := chi.URLParam(r, "id")
	if a := access.From(ctx); a.Kind != access.User {
		return fault.Forbiddenf("app tokens (and app users' tokens) may not upload to the media library; use a CMS user's token")
	}
	info, ok, err := u.info(ctx, id)
	if err != nil {
		return err
	}
	if !ok || info.MetaData[metaOwner] != access.From(ctx).ID {
		return fault.NotFoundf("upload %s not found", id)
	}
	h := u.head
	switch r.Method {
	case http.MethodPatch:
		if err := s.Commands.Authorize(ctx, rights.Write, info.MetaData[metaApp]); err != nil {
			return err
		}
		if !info.SizeIsDeferred && info.Offset == info.Size {
			return s.finishAgain(w, r, u, id)
		}
		h = u.patch
	case http.MethodDelete:
		h = u.del
	}
	// tusd takes the upload's id from the path, once the base is stripped.
	r2 := r.Clone(ctx)
	r2.URL.Path, r2.URL.RawPath = "/"+id, ""
	h.ServeHTTP(w, r2)
	return nil
}

// finishAgain serves a PATCH of an upload whose bytes all came but which
// is not in the library yet (its completion failed for a reason of the
// server's, which keeps it): the completion is tried again.
func (s *API) finishAgain(w http.ResponseWriter, r *http.Request, u *Uploads, id string) error {
	ctx, cancel := context.WithTimeout(r.Context(), 20*time.Second)
	defer cancel()
	lock, err := u.locker.NewLock(id)
	if err != nil {
		return err
	}
	if err := lock.Lock(ctx, func() {}); err != nil {
		return fault.Conflictf("upload %s is busy", id)
	}
	defer lock.Unlock()
	info, ok, err := u.info(r.Context(), id)
	if err != nil {
		return err
	}
	if !ok {
		return fault.NotFoundf("upload %s not found", id)
	}
	if off, err := strconv.ParseInt(r.Header.Get("Upload-Offset"), 10, 64); err != nil || off != info.Offset {
		return fault.Conflictf("the upload is complete at offset %d", info.Offset).With("offset", info.Offset)
	}
	hdr, err := s.importUpload(r.Context(), u, info)
	if err != nil {
		return err
	}
	for k, v := range hdr {
		w.Header().Set(k, v)
	}
	w.Header().Set("Upload-Offset", strconv.FormatInt(info.Offset, 10))
	w.WriteHeader(http.StatusNoContent)
	return nil
}
