package media

import (
	"net/http"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
)

type settingsJSON struct {
	App    string `json:"app"`
	Access string `json:"access"` // "public" or "signed"
}

func accessName(signed bool) string {
	if signed {
		return "signed"
	}
	return "public"
}

// settings serves GET /api/media/settings?app=.
func (s *API) settings(w http.ResponseWriter, r *http.Request) error {
	app, malformed := s.kit.AppParam(r)
	signed, err := s.Queries.Access(r.Context(), app, malformed)
	if err != nil {
		return err
	}
	w.Header().Set("Cache-Control", "no-store")
	httpapi.WriteJSON(w, http.StatusOK, settingsJSON{App: app, Access: accessName(signed)})
	return nil
}

// setSettings serves PUT /api/media/settings {app, access}.
func (s *API) setSettings(w http.ResponseWriter, r *http.Request) error {
	var b struct {
		App    any    `json:"app"`
		Access string `json:"access"`
	}
	err := httpapi.Decode(r, &b)
	if err == nil && b.Access != "public" && b.Access != "signed" {
		err = fault.Invalidf(`access must be "public" or "signed"`).With("field", "access")
	}
	var app string
	if err == nil {
		app, err = s.kit.AppOfField(r.Context(), b.App, "app")
	}
	if err != nil {
		return s.kit.RefusedFirst(r.Context(), rights.Update, err)
	}
	if err := s.Commands.SetAccess(r.Context(), app, b.Access == "signed"); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, settingsJSON{App: app, Access: b.Access})
	return nil
}
