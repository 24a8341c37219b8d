package httpapi

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/halocms/halocms/domain/access"
)

// Deprecation is how a deprecated endpoint announces its end: since when
// it is deprecated (RFC 9745's Deprecation header), when it may stop
// answering (RFC 8594's Sunset header) and what replaces it (a Link with
// rel="successor-version").
type Deprecation struct {
	Since     time.Time
	Sunset    time.Time
	Successor string // a path
}

// Deprecated wraps h: every answer, failures included, carries d's
// headers, and the call is counted in cms_deprecated_calls_total by route
// pattern and by the app of the caller's token ("" for CMS users), so that
// operators know which apps still have to move.
func (k *Kit) Deprecated(d Deprecation, h http.HandlerFunc) http.HandlerFunc {
	deprecation := "@" + strconv.FormatInt(d.Since.Unix(), 10)
	sunset := d.Sunset.UTC().Format(http.TimeFormat)
	link := "<" + d.Successor + `>; rel="successor-version"`
	return func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Deprecation", deprecation)
		hd.Set("Sunset", sunset)
		hd.Add("Link", link)
		route := r.URL.Path
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		k.Metrics.deprecated.WithLabelValues(route, k.realApp(r)).Inc()
		h(w, r)
	}
}

// realApp is the app of the caller's token when it names an app that
// exists, "" otherwise: the label values stay as few as the apps.
func (k *Kit) realApp(r *http.Request) string {
	app := access.From(r.Context()).ClientApp()
	if app == "" || k.AppNumber(r.Context(), app) <= 0 {
		return ""
	}
	return app
}
