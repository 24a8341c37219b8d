package main

import (
	"net/http"
	"regexp"
	"strconv"
	"testing"
	"time"
)

// HALO 2.0.0 deprecated GET, POST and PUT on /api/segmentation/appuser:
// they keep working, every answer says so (RFC 9745, RFC 8594, and the
// successor's link), and a counter by route and app tells operators which
// apps still call them. The search of app users (the CMS's) is not
// deprecated.
func TestDeprecatedAppUsers(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Deprecated app")
	tok := ts.appToken(app)

	check := func(what string, r response) {
		t.Helper()
		if d := r.Header.Get("Deprecation"); !regexp.MustCompile(`^@\d+$`).MatchString(d) {
			t.Errorf("%s: Deprecation %q, want @<epoch seconds>", what, d)
		} else if s, _ := strconv.ParseInt(d[1:], 10, 64); time.Unix(s, 0).UTC().Format("2006-01-02") != "2016-10-17" {
			t.Errorf("%s: Deprecation %q, want HALO 2.0.0's 2016-10-17", what, d)
		}
		sunset, err := http.ParseTime(r.Header.Get("Sunset"))
		if err != nil || !sunset.After(time.Unix(1476662400, 0)) {
			t.Errorf("%s: Sunset %q, want an HTTP-date after the deprecation", what, r.Header.Get("Sunset"))
		}
		if l := r.Header.Get("Link"); l != `</api/segmentation/identified/register>; rel="successor-version"` {
			t.Errorf("%s: Link %q", what, l)
		}
	}
	body := map[string]any{"devices": []map[string]any{{"platform": "android", "token": "tok-1"}}, "tags": []any{}}
	r := ts.post(appUserPath+"/", tok, body)
	var u appUserView
	ts.mustJSON(r, http.StatusCreated, &u)
	check("POST", r)
	r = ts.get(appUserPath+"/"+u.ID, tok)
	expectStatus(t, r, http.StatusOK)
	check("GET", r)
	r = ts.put(appUserPath+"/"+u.ID, tok, map[string]any{"devices": body["devices"], "tags": []any{}, "replaceTokens": true})
	expectStatus(t, r, http.StatusOK)
	check("PUT", r)
	// A failure is an answer of the deprecated endpoint too.
	r = ts.get(appUserPath+"/57f63492df4b73110013feca", tok)
	expectHaloError(t, r, http.StatusNotFound)
	check("GET unknown", r)
	// An administrator (no app) reads it as well.
	check("GET by an admin", ts.get(appUserPath+"/"+u.ID, ts.admin))

	r = ts.post(appUserPath+"/search", ts.admin, map[string]any{"appId": app.ID, "tags": []any{}})
	expectStatus(t, r, http.StatusOK)
	if r.Header.Get("Deprecation") != "" || r.Header.Get("Sunset") != "" {
		t.Errorf("the search is not deprecated: %v", r.Header)
	}

	metrics := string(ts.get("/metrics", "").Body)
	for _, want := range []string{
		`cms_deprecated_calls_total{app="` + app.ID + `",route="/api/segmentation/appuser"} 1`,
		`cms_deprecated_calls_total{app="` + app.ID + `",route="/api/segmentation/appuser/{id}"} 3`,
		`cms_deprecated_calls_total{app="",route="/api/segmentation/appuser/{id}"} 1`,
	} {
		if !regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(want) + `$`).MatchString(metrics) {
			t.Errorf("/metrics has no %s", want)
		}
	}
	if regexp.MustCompile(`cms_deprecated_calls_total\{[^}]*search`).MatchString(metrics) {
		t.Errorf("the search was counted as deprecated")
	}
}
