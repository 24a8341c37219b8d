package main

import (
	"net/http"
	"strings"
	"testing"
)

// Input that PostgreSQL cannot store (a NUL character) is a 400 that
// changes nothing, on bodies, path parameters and the token endpoint.
func TestUnstorableInputIs400(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	before := ts.appIDs(ts.admin)

	r := ts.post("/core-api/app/", ts.admin, map[string]any{"name": "a\u0000b"})
	expectHaloError(t, r, http.StatusBadRequest)
	r = ts.get("/core-api/user/a%00b", ts.admin)
	expectHaloError(t, r, http.StatusBadRequest)
	r = ts.passwordGrant("ad\u0000min", "whatever-pw", nil)
	expectHaloError(t, r, http.StatusBadRequest)
	r = ts.do(request{method: "FOO1", path: "/healthz"})
	if r.Status == http.StatusInternalServerError {
		t.Errorf("an unknown method gave 500")
	}

	if after := ts.appIDs(ts.admin); len(after) != len(before) {
		t.Errorf("apps changed: %v -> %v", before, after)
	}
	m := ts.get("/metrics", "")
	if !expectStatus(t, m, http.StatusOK) {
		return
	}
	if strings.Contains(string(m.Body), `method="FOO1"`) {
		t.Errorf("an unknown method became a metric label")
	}
}
