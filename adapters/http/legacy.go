package httpapi

import (
	"net/http"
	"strings"

	"github.com/go-chi/chi/v5"
)

// legacy serves the release history as HTTP semantics: paths that HALO
// 2.0.0 migrated answer 308 Permanent Redirect to their new place; paths it
// removed answer 410 Gone.
func legacy(r chi.Router) {
	moved := map[string]string{
		"/api/authentication/app":  "/core-api/app/",
		"/api/authentication/user": "/core-api/user/",
	}
	for old, to := range moved {
		to := to
		r.HandleFunc(old, redirect(func(*http.Request) string { return to }))
		r.HandleFunc(old+"/{id}", redirect(func(r *http.Request) string { return to + chi.URLParam(r, "id") }))
	}
	// HALO 2.0.0 migrated only the collection of instances, not one by id.
	r.HandleFunc("/api/authentication/instance", redirect(func(*http.Request) string { return "/api/generalcontent/instance/" }))
	gone := []string{
		"/api/authentication/module", "/api/authentication/module/{id}",
		"/api/generalcontent/fieldTypeFormat", "/api/generalcontent/fieldTypeFormat/{id}",
		"/api/authentication/useraddons", "/api/authentication/useraddons/{id}",
		"/api/authentication/usermodules", "/api/authentication/usermodules/{id}",
		"/core-api/module", "/core-api/module/{id}",
	}
	for _, p := range gone {
		r.HandleFunc(p, Removed)
	}
}

// Removed answers 410 Gone for an endpoint HALO 2.0.0 removed.
func Removed(w http.ResponseWriter, r *http.Request) {
	WriteJSON(w, http.StatusGone, haloError{Error: ErrorBody{Status: http.StatusGone,
		Message: "this endpoint was removed in HALO 2.0.0", Extra: map[string]any{}, Type: "HaloError"}})
}

func redirect(target func(*http.Request) string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		to := target(r)
		if q := r.URL.RawQuery; q != "" {
			to += "?" + q
		}
		if !strings.HasPrefix(to, "/") {
			to = "/" + to
		}
		http.Redirect(w, r, to, http.StatusPermanentRedirect)
	}
}
