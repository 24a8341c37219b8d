package media

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"

	httpapi "github.com/halocms/halocms/adapters/http"
	cmdmedia "github.com/halocms/halocms/commands/media"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/media"
	"github.com/halocms/halocms/domain/rights"
	rmmedia "github.com/halocms/halocms/readmodels/media"
)

// list serves GET /api/media/file?app=&q=&kind=&tag=&folder=&…
func (s *API) list(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	req := rmmedia.ListRequest{Filter: rmmedia.Filter{Q: q.Get("q"), Kind: q.Get("kind"), Tags: q["tag"],
		UploadedBy: q.Get("uploadedBy"), Sort: q.Get("sort")}}
	if q.Has("folder") {
		folder := strings.Trim(q.Get("folder"), "/")
		req.Folder = &folder
	}
	var err error
	fail := func(e error) {
		if req.Malformed == nil {
			req.Malformed = e
		}
	}
	if req.Page, req.Limit, err = httpapi.PageParams(r); err != nil {
		fail(err)
	}
	if req.Recursive, err = httpapi.BoolParam(r, "recursive", false); err != nil {
		fail(err)
	}
	for _, p := range []struct {
		name string
		into *int64
	}{{"from", &req.From}, {"to", &req.To}} {
		if v := q.Get(p.name); v != "" {
			if *p.into, err = strconv.ParseInt(v, 10, 64); err != nil || *p.into < 0 {
				fail(fault.Invalidf("%s must be epoch milliseconds", p.name).With("field", p.name))
			}
		}
	}
	if len(req.Q) > 200 {
		fail(fault.Invalidf("q is at most 200 characters").With("field", "q"))
	}
	if req.App, err = s.kit.AppParam(r); err != nil {
		fail(err)
	}
	files, total, err := s.Queries.List(r.Context(), req)
	if err != nil {
		return err
	}
	out := struct {
		Items      []fileJSON             `json:"items"`
		Pagination httpapi.PaginationJSON `json:"pagination"`
	}{Items: make([]fileJSON, len(files)), Pagination: httpapi.Pagination(max(req.Page, 1), req.Limit, total)}
	for i, f := range files {
		out.Items[i] = s.Files.fileJSON(r.Context(), f, false)
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// get serves GET /api/media/file/{id}.
func (s *API) get(w http.ResponseWriter, r *http.Request) error {
	f, err := s.Queries.File(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, http.StatusOK, s.Files.fileJSON(r.Context(), f, true))
	return nil
}

type changeJSON struct {
	Name    *string            `json:"name"`
	Folder  *string            `json:"folder"`
	Tags    *[]string          `json:"tags"`
	Alt     *map[string]string `json:"alt"`
	Caption *map[string]string `json:"caption"`
}

// change serves PATCH /api/media/file/{id}.
func (s *API) change(w http.ResponseWriter, r *http.Request) error {
	var c changeJSON
	if err := httpapi.Decode(r, &c); err != nil {
		return s.kit.RefusedFirst(r.Context(), rights.Update, err)
	}
	f, err := s.Commands.Change(r.Context(), chi.URLParam(r, "id"),
		cmdmedia.Change{Name: c.Name, Folder: c.Folder, Tags: c.Tags, Alt: c.Alt, Caption: c.Caption})
	if err != nil {
		return err
	}
	return s.answerFile(w, r, http.StatusOK, f)
}

// delete serves DELETE /api/media/file/{id}?force=.
func (s *API) delete(w http.ResponseWriter, r *http.Request) error {
	force, err := httpapi.BoolParam(r, "force", false)
	if err != nil {
		return s.kit.RefusedFirst(r.Context(), rights.Delete, err)
	}
	if err := s.Commands.Delete(r.Context(), chi.URLParam(r, "id"), force); err != nil {
		return s.usedIn(r, chi.URLParam(r, "id"), err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// usedIn adds to a refused delete the items and pushes that use the file,
// named (the domain names them by id only).
func (s *API) usedIn(r *http.Request, id string, err error) error {
	fe, ok := err.(*fault.Error)
	if !ok || fe.Kind != fault.Conflict || fe.Extra["usedBy"] == nil {
		return err
	}
	f, ferr := s.Queries.File(r.Context(), id)
	if ferr != nil {
		return err
	}
	return fe.With("usedIn", usesJSON(f.UsedIn))
}

type byURLJSON struct {
	App    any      `json:"app"`
	URL    string   `json:"url"`
	Action string   `json:"action"`
	Name   string   `json:"name"`
	Folder string   `json:"folder"`
	Tags   []string `json:"tags"`
	Fetch  bool     `json:"fetch"`
	Force  bool     `json:"force"`
}

// updateByURL serves POST /api/media/file/updateByUrl.
func (s *API) updateByURL(w http.ResponseWriter, r *http.Request) error {
	var b byURLJSON
	err := httpapi.Decode(r, &b)
	p := rights.Write
	if b.Action == "delete" {
		p = rights.Delete
	}
	if err == nil && b.Action != "save" && b.Action != "delete" {
		err = fault.Invalidf(`action must be "save" or "delete"`).With("field", "action")
	}
	var app string
	if err == nil {
		app, err = s.kit.AppOfField(r.Context(), b.App, "app")
	}
	if err != nil {
		return s.kit.RefusedFirst(r.Context(), p, err)
	}
	if b.Action == "delete" {
		f, err := s.Commands.DeleteURL(r.Context(), app, b.URL, b.Force)
		if err != nil {
			return s.usedIn(r, f.ID, err)
		}
		out := s.Files.fileJSON(r.Context(), fromDomain(f), false)
		out.Deleted = true
		httpapi.WriteJSON(w, http.StatusOK, out)
		return nil
	}
	f, _, err := s.Commands.SaveURL(r.Context(), cmdmedia.ByURL{App: app, URL: b.URL, Name: b.Name, Folder: b.Folder, Tags: b.Tags, Fetch: b.Fetch})
	if err != nil {
		return err
	}
	return s.answerFile(w, r, http.StatusOK, f)
}

type (
	folderJSON struct {
		Path  string `json:"path"`
		Count int    `json:"count"`
	}
	tagJSON struct {
		Name  string `json:"name"`
		Count int    `json:"count"`
	}
	kindJSON struct {
		Kind  string `json:"kind"`
		Count int    `json:"count"`
	}
)

// facets serves GET /api/media/facets?app=.
func (s *API) facets(w http.ResponseWriter, r *http.Request) error {
	app, malformed := s.kit.AppParam(r)
	fc, err := s.Queries.Facets(r.Context(), app, malformed)
	if err != nil {
		return err
	}
	out := struct {
		Folders []folderJSON `json:"folders"`
		Tags    []tagJSON    `json:"tags"`
		Kinds   []kindJSON   `json:"kinds"`
	}{Folders: []folderJSON{}, Tags: []tagJSON{}, Kinds: []kindJSON{}}
	for _, c := range fc.Folders {
		out.Folders = append(out.Folders, folderJSON{Path: c.Value, Count: c.Count})
	}
	for _, c := range fc.Tags {
		out.Tags = append(out.Tags, tagJSON{Name: c.Value, Count: c.Count})
	}
	for _, c := range fc.Kinds {
		out.Kinds = append(out.Kinds, kindJSON{Kind: c.Value, Count: c.Count})
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// transform serves GET /api/media/file/{id}/transform?w=&h=&fit=&g=&q=&fm=:
// the signed URL of that transform of the file's current version, for
// a reader of its app (the CMS shows any transform; apps ask the server
// only for presets and the sizes anyone may ask for).
func (s *API) transform(w http.ResponseWriter, r *http.Request) error {
	t, perr := s.Files.transforms.FromQuery(r.URL.Query())
	if perr == nil {
		perr = t.Validate(media.DefaultBounds)
	}
	if perr != nil {
		return s.kit.RefusedFirst(r.Context(), rights.Read, perr)
	}
	f, err := s.Queries.File(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	if f.URL != "" || f.Kind != string(media.Image) || f.MIME == "image/svg+xml" {
		return fault.Invalidf("only raster images stored here can be transformed; this file is %s", f.MIME)
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, http.StatusOK, struct {
		URL string `json:"url"`
	}{s.Files.transformURL(r.Context(), f, t)})
	return nil
}
