package appuser

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
	"time"

	httpapi "github.com/halocms/halocms/adapters/http"

	"github.com/go-chi/chi/v5"

	cmdappuser "github.com/halocms/halocms/commands/appuser"
	cmdsession "github.com/halocms/halocms/commands/session"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/fault"
	rmappuser "github.com/halocms/halocms/readmodels/appuser"
)

// Commands registers and changes app users, identified users and
// pockets.
type Commands interface {
	Create(ctx context.Context, app string, p appuser.Profile) (appuser.AppUser, error)
	Update(ctx context.Context, id string, p appuser.Profile, replaceTokens bool) (appuser.AppUser, error)
	Register(ctx context.Context, in cmdappuser.Registration) (appuser.Identified, error)
	Login(ctx context.Context, in cmdappuser.Login) (appuser.Identified, cmdsession.Token, error)
	PutPocket(ctx context.Context, c appuser.PocketChange) (appuser.Pocket, error)
}

// Queries answers the reads of app users for the caller (see
// rmappuser.Queries: it checks who may read what).
type Queries interface {
	AppUser(ctx context.Context, id string) (rmappuser.AppUser, error)
	Segment(ctx context.Context, l rmappuser.Listing, q rmappuser.SegmentQuery) (rmappuser.SegmentResult, error)
	SearchIdentified(ctx context.Context, l rmappuser.Listing, q rmappuser.IdentifiedQuery) (rmappuser.IdentifiedResult, error)
	Pocket(ctx context.Context) (rmappuser.Pocket, error)
	// ReadBack reads what a command wrote, to answer the write.
	ReadBack(ctx context.Context, id string) (rmappuser.AppUser, error)
	AppNumber(ctx context.Context, app string) (int, error)
	AppByNumber(ctx context.Context, n int) (string, error)
}

// MaxPocketData bounds a pocket's data (its JSON, in bytes): more is a 413.
const MaxPocketData = 64 << 10

// appUserView answers with the read model's app user (which has the dates
// and the app's number) once it has caught up with u, else with u as the
// command returned it.
func (s *API) appUserView(ctx context.Context, u appuser.AppUser) appUserJSON {
	if v, err := s.Queries.ReadBack(ctx, u.ID); err == nil && sameProfile(v, u) {
		return appUserJSONOf(v)
	}
	n, _ := s.Queries.AppNumber(ctx, u.App)
	now := time.Now().UnixMilli()
	v := rmappuser.AppUser{ID: u.ID, App: u.App, AppNumber: n, Alias: u.Alias, Email: u.Email, Identified: u.Identified,
		CreatedAt: now, UpdatedAt: now}
	for _, d := range u.Devices {
		v.Devices = append(v.Devices, rmappuser.Device(d))
	}
	for _, t := range u.Tags {
		v.Tags = append(v.Tags, rmappuser.Tag(t))
	}
	return appUserJSONOf(v)
}

func sameProfile(v rmappuser.AppUser, u appuser.AppUser) bool {
	if v.Email != u.Email || len(v.Devices) != len(u.Devices) || len(v.Tags) != len(u.Tags) {
		return false
	}
	for i, d := range u.Devices {
		if v.Devices[i] != rmappuser.Device(d) {
			return false
		}
	}
	for i, t := range u.Tags {
		if v.Tags[i] != rmappuser.Tag(t) {
			return false
		}
	}
	return true
}

// createAppUser serves POST /api/segmentation/appuser. The app is the
// token's (a body appId is ignored: the SDKs echo whatever they cached);
// admins, who have no app, name it with appId.
func (s *API) createAppUser(w http.ResponseWriter, r *http.Request) error {
	b, err := readAppUserBody(r)
	if err != nil {
		return writerFirst(r.Context(), err)
	}
	ctx := r.Context()
	app := access.From(ctx).ClientApp()
	if app == "" && access.From(ctx).IsAdmin() {
		if app, err = s.kit.AppOf(ctx, b.AppID); err != nil {
			return err
		}
	}
	u, err := s.Commands.Create(ctx, app, b.Profile)
	s.kit.Metrics.Command("appuser.create", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, s.appUserView(ctx, u))
	return nil
}

// updateAppUser serves PUT /api/segmentation/appuser/{id}: the SDKs send
// the whole app user; replaceTokens (body, or the query as iOS 1.x sent
// it; true when absent) says whether the devices replace the stored ones.
func (s *API) updateAppUser(w http.ResponseWriter, r *http.Request) error {
	b, err := readAppUserBody(r)
	if err != nil {
		return writerFirst(r.Context(), err)
	}
	id := chi.URLParam(r, "id")
	if b.ID != "" && b.ID != id {
		return writerFirst(r.Context(), fault.Invalidf("the body's id %s is not the path's %s", b.ID, id).With("field", "id"))
	}
	replace := true
	if b.ReplaceTokens != nil {
		replace = *b.ReplaceTokens
	} else if q := r.URL.Query().Get("replaceTokens"); q != "" {
		if replace, err = strconv.ParseBool(q); err != nil {
			return writerFirst(r.Context(), fault.Invalidf("replaceTokens must be true or false").With("field", "replaceTokens"))
		}
	}
	u, err := s.Commands.Update(r.Context(), id, b.Profile, replace)
	s.kit.Metrics.Command("appuser.update", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, s.appUserView(r.Context(), u))
	return nil
}

// writerFirst puts the refusal the app-user commands give whatever the
// request holds (CMS users write no app users) before a request's own
// fault err, so that such a caller learns nothing from the request.
func writerFirst(ctx context.Context, err error) error {
	if refused := cmdappuser.CheckWriter(access.From(ctx)); refused != nil && httpapi.RequestFault(err) {
		return refused
	}
	return err
}

// getAppUser serves GET /api/segmentation/appuser/{id}.
func (s *API) getAppUser(w http.ResponseWriter, r *http.Request) error {
	u, err := s.Queries.AppUser(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, appUserJSONOf(u))
	return nil
}

// searchAppUsers serves POST /api/segmentation/appuser/search: a segment
// of an app's app users for the CMS.
func (s *API) searchAppUsers(w http.ResponseWriter, r *http.Request) error {
	l, q, pg, limit := s.segment(r)
	res, err := s.Queries.Segment(r.Context(), l, q)
	if err != nil {
		return err
	}
	items := make([]appUserJSON, len(res.Items))
	for i, u := range res.Items {
		items[i] = appUserJSONOf(u)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"pagination": httpapi.Pagination(pg, limit, res.Total), "items": items})
	return nil
}

// segment maps a segment body to the listing and its query; what is wrong
// with the body goes in the listing's Malformed.
func (s *API) segment(r *http.Request) (l rmappuser.Listing, q rmappuser.SegmentQuery, pg, limit int) {
	var b segmentBody
	if l.Malformed = httpapi.Decode(r, &b); l.Malformed != nil {
		return
	}
	switch strings.ToLower(b.Mode) {
	case "", "partial":
	case "total":
		q.Total = true
	default:
		l.Malformed = fault.Invalidf(`mode must be "partial" or "total"`).With("field", "mode")
		return
	}
	for i, t := range b.Tags {
		tag, err := httpapi.TagBody(t).Tag()
		if err == nil && tag.ID == "" && tag.Name == "" {
			err = fault.Invalidf("tags[%d] needs an id or a name", i).With("field", "tags")
		}
		if err != nil {
			l.Malformed = err
			return
		}
		q.Tags = append(q.Tags, rmappuser.TagFilter{ID: tag.ID, Name: tag.Name, Value: tag.Value})
	}
	if pg, limit, l.Malformed = httpapi.ListPage(b.Pagination); l.Malformed != nil {
		return
	}
	q.Offset, q.Limit = (pg-1)*limit, limit
	l.App, l.Malformed = s.kit.AppOf(r.Context(), b.AppID)
	return
}

// searchIdentified serves POST /api/segmentation/identified/search (HALO
// 2.5.0): an app's identified users whose email or name contains search.
func (s *API) searchIdentified(w http.ResponseWriter, r *http.Request) error {
	var l rmappuser.Listing
	var b identifiedSearchBody
	pg, limit := 0, 0
	if l.Malformed = httpapi.Decode(r, &b); l.Malformed == nil {
		if pg, limit, l.Malformed = httpapi.ListPage(b.Pagination); l.Malformed == nil {
			l.App, l.Malformed = s.kit.AppOf(r.Context(), b.AppID)
		}
	}
	res, err := s.Queries.SearchIdentified(r.Context(), l, rmappuser.IdentifiedQuery{Text: b.Search, Offset: (pg - 1) * limit, Limit: limit})
	if err != nil {
		return err
	}
	items := make([]userProfileJSON, len(res.Items))
	for i, u := range res.Items {
		items[i] = profileJSONFromView(u)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"pagination": httpapi.Pagination(pg, limit, res.Total), "items": items})
	return nil
}

// registerIdentified serves POST /api/segmentation/identified/register.
func (s *API) registerIdentified(w http.ResponseWriter, r *http.Request) error {
	var b registerBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	if b.Auth == nil {
		return appuser.Problems{"auth": appuser.CodeRequired}.Err()
	}
	in := cmdappuser.Registration{Network: b.Auth.Network, Email: b.Auth.Email, Password: b.Auth.Password, DeviceID: b.Auth.DeviceID}
	if p := b.Profile; p != nil {
		in.Profile = appuser.UserProfile{Name: p.Name, Surname: p.Surname, DisplayName: p.DisplayName, PhotoURL: p.PhotoURL}
	}
	u, err := s.Commands.Register(r.Context(), in)
	s.kit.Metrics.Command("appuser.register", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, profileJSONOf(u))
	return nil
}

// loginIdentified serves POST /api/segmentation/identified/login: a form
// (Android) or JSON (iOS) with the app's token; the answer is {user,
// token}, the token acting for the identified user (scope "app").
func (s *API) loginIdentified(w http.ResponseWriter, r *http.Request) error {
	b, err := readLogin(r)
	if err != nil {
		return err
	}
	u, tok, err := s.Commands.Login(r.Context(), cmdappuser.Login{Network: b.Network, Email: b.Email, Password: b.Password, DeviceID: b.DeviceID})
	s.kit.Metrics.Command("appuser.login", err)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"user": profileJSONOf(u), "token": httpapi.TokenResponse{AccessToken: tok.AccessToken,
		RefreshToken: tok.RefreshToken, ExpiresIn: tok.ExpiresIn.Milliseconds(), Scope: tok.Scope, TokenType: "Bearer"}})
	return nil
}

// getPocket serves GET /api/segmentation/identified-pocket/self: the
// identified user's pocket; filterReferences[] (repeated) keeps only those
// reference lists, and one empty filterReferences[] keeps none.
func (s *API) getPocket(w http.ResponseWriter, r *http.Request) error {
	p, err := s.Queries.Pocket(r.Context())
	if err != nil {
		return err
	}
	q := r.URL.Query()
	filter, filtered := q["filterReferences[]"]
	if !filtered {
		filter, filtered = q["filterReferences"]
	}
	refs := p.References
	if filtered {
		refs = map[string][]string{}
		for _, name := range filter {
			if ids, ok := p.References[name]; ok && name != "" {
				refs[name] = ids
			}
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, pocketJSON{Data: p.Data, References: refs})
	return nil
}

// putPocket serves PUT /api/segmentation/identified-pocket[/self].
func (s *API) putPocket(w http.ResponseWriter, r *http.Request) error {
	var b pocketBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	c := appuser.PocketChange{References: b.References}
	if len(b.Data) > MaxPocketData {
		return &http.MaxBytesError{Limit: MaxPocketData}
	}
	if d := bytes.TrimSpace(b.Data); len(d) > 0 && string(d) != "null" {
		dec := json.NewDecoder(bytes.NewReader(d))
		dec.UseNumber()
		if err := dec.Decode(&c.Data); err != nil || c.Data == nil {
			return fault.Invalidf("data must be a JSON object").With("field", "data")
		}
		c.SetData = true
	}
	p, err := s.Commands.PutPocket(r.Context(), c)
	s.kit.Metrics.Command("appuser.put_pocket", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, pocketJSON{Data: p.Data, References: p.References})
	return nil
}
