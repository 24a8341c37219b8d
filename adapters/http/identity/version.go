package identity

import (
	"net/http"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/identity"
)

// serverVersionTexts are the strings of a ServerVersion on the wire, what
// an administrator sets (identity.ServerVersionSet with its JSON names).
type serverVersionTexts struct {
	Server           string `json:"server"`
	ServerChangeLog  string `json:"serverChangeLog"`
	MinAndroid       string `json:"minAndroid"`
	AndroidChangeLog string `json:"androidChangeLog"`
	MinIOS           string `json:"minIOS"`
	IOSChangeLog     string `json:"iosChangeLog"`
}

// serverVersionJSON is HALO's ServerVersion (wire reference §8.2), its
// fields in HALO's order. Every string is present (iOS force-casts minIOS
// and iosChangeLog).
type serverVersionJSON struct {
	ID int `json:"id"`
	serverVersionTexts
	Current   bool  `json:"current"`
	CreatedAt int64 `json:"createdAt"`
	UpdatedAt int64 `json:"updatedAt"`
}

func serverVersionView(v identity.ServerVersion) serverVersionJSON {
	at := httpapi.Ms(v.CreatedAt)
	return serverVersionJSON{ID: v.ID, serverVersionTexts: serverVersionTexts(v.ServerVersionSet),
		Current: v.Current, CreatedAt: at, UpdatedAt: at}
}

// serverVersionBody is what an administrator PUTs: a ServerVersion as read
// back will do (its id, current flag and dates are ignored).
type serverVersionBody struct {
	serverVersionTexts
	ID        any `json:"id"`
	Current   any `json:"current"`
	CreatedAt any `json:"createdAt"`
	UpdatedAt any `json:"updatedAt"`
}

// currentServerVersion answers Android's GET /api/authentication/version/current.
func (s *API) currentServerVersion(w http.ResponseWriter, r *http.Request) error {
	vs, err := s.Versions.ServerVersions(r.Context())
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, serverVersionView(vs[0]))
	return nil
}

// listServerVersions answers GET /api/authentication/version: every
// version, newest first, or only the current one with current=true in the
// query or, as iOS sends it even on a GET, in a JSON body.
func (s *API) listServerVersions(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		Current any `json:"current"`
	}
	if err := httpapi.DecodeOptional(r, &b); err != nil {
		return err
	}
	if q := r.URL.Query(); q.Has("current") {
		b.Current = q.Get("current")
	}
	current := false
	if b.Current != nil {
		var err error
		if current, err = httpapi.FlexBool(b.Current, "current"); err != nil {
			return err
		}
	}
	vs, err := s.Versions.ServerVersions(r.Context())
	if err != nil {
		return err
	}
	if current {
		vs = vs[:1]
	}
	out := make([]serverVersionJSON, len(vs))
	for i, v := range vs {
		out[i] = serverVersionView(v)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// setServerVersion is an administrator's PUT /api/authentication/version:
// the new current version, answered as Android reads it.
func (s *API) setServerVersion(w http.ResponseWriter, r *http.Request) error {
	if err := access.RequireAdmin(access.From(r.Context())); err != nil {
		return err // refused before what is wrong with the body
	}
	var b serverVersionBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	err := s.Identity.SetServerVersion(r.Context(), identity.ServerVersionSet(b.serverVersionTexts))
	s.kit.Metrics.Command("identity.set_server_version", err)
	if err != nil {
		return err
	}
	return s.currentServerVersion(w, r)
}
