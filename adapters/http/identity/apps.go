package identity

import (
	"net/http"

	httpapi "github.com/halocms/halocms/adapters/http"

	"github.com/go-chi/chi/v5"

	"github.com/halocms/halocms/domain/fault"
	rmidentity "github.com/halocms/halocms/readmodels/identity"
)

type appJSON struct {
	ID           string `json:"id"`
	Name         string `json:"name"`
	ClientID     string `json:"clientId"`
	ClientSecret string `json:"clientSecret,omitempty"` // only in the create response
	CreatedAt    int64  `json:"createdAt,omitempty"`
	UpdatedAt    int64  `json:"updatedAt,omitempty"`
}

func appFromView(a rmidentity.App) appJSON {
	return appJSON{ID: a.ID, Name: a.Name, ClientID: a.ClientID, CreatedAt: httpapi.Ms(a.CreatedAt), UpdatedAt: httpapi.Ms(a.UpdatedAt)}
}

type appBody struct {
	ID        string  `json:"id"`
	Name      *string `json:"name"`
	ClientID  any     `json:"clientId"`
	CreatedAt any     `json:"createdAt"`
	UpdatedAt any     `json:"updatedAt"`
}

func (s *API) listApps(w http.ResponseWriter, r *http.Request) error {
	apps, err := s.Users.Apps(r.Context(), s.Authorizer)
	if err != nil {
		return err
	}
	out := make([]appJSON, len(apps))
	for i, a := range apps {
		out[i] = appFromView(a)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *API) getApp(w http.ResponseWriter, r *http.Request) error {
	id := chi.URLParam(r, "id")
	apps, err := s.Users.Apps(r.Context(), s.Authorizer)
	if err != nil {
		return err
	}
	for _, a := range apps {
		if a.ID == id {
			httpapi.WriteJSON(w, http.StatusOK, appFromView(a))
			return nil
		}
	}
	return fault.NotFoundf("app %s not found", id)
}

func (s *API) createApp(w http.ResponseWriter, r *http.Request) error {
	var b appBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	if b.Name == nil {
		return fault.Invalidf("name is required").With("field", "name")
	}
	a, err := s.Identity.CreateApp(r.Context(), *b.Name)
	s.kit.Metrics.Command("identity.create_app", err)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store") // the secret: never cached, nor kept for an Idempotency-Key's replay
	httpapi.WriteJSON(w, http.StatusCreated, appJSON{ID: a.ID, Name: a.Name, ClientID: a.ClientID, ClientSecret: a.ClientSecret})
	return nil
}

func (s *API) renameApp(w http.ResponseWriter, r *http.Request) error {
	var b appBody
	if err := httpapi.Decode(r, &b); err != nil {
		return err
	}
	if b.Name == nil {
		return fault.Invalidf("name is required").With("field", "name")
	}
	a, err := s.Identity.RenameApp(r.Context(), chi.URLParam(r, "id"), *b.Name)
	s.kit.Metrics.Command("identity.rename_app", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, appJSON{ID: a.ID, Name: a.Name, ClientID: a.ClientID})
	return nil
}
