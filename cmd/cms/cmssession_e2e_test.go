package main

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The web CMS's session endpoints: the password grant with the refresh
// token in an HttpOnly, SameSite=Strict cookie scoped to them, rotated on
// refresh (a spent one revokes the family), revoked on sign-out, behind a
// CSRF defence (the X-CMS-Session header, Origin and Sec-Fetch-Site).

const (
	cmsSessionPath = "/api/cms/session"
	cmsRefreshPath = "/api/cms/session/refresh"
	cmsCookie      = "cms_refresh"
)

// cmsSessionView is what the session endpoints answer.
type cmsSessionView struct {
	AccessToken string `json:"accessToken"`
	ExpiresIn   int64  `json:"expiresIn"`
	TokenType   string `json:"tokenType"`
}

// cmsCall is a request to a session endpoint as the CMS sends it (with
// X-CMS-Session), carrying the refresh cookie when not empty; h adds or
// (an empty value) removes headers.
func (ts *testServer) cmsCall(method, path, cookie string, body any, h http.Header) response {
	ts.t.Helper()
	hd := http.Header{"X-Cms-Session": {"1"}}
	if cookie != "" {
		hd.Set("Cookie", cmsCookie+"="+cookie)
	}
	for k, v := range h {
		hd[http.CanonicalHeaderKey(k)] = v
	}
	rq := request{method: method, path: path, body: body, header: hd}
	return ts.do(rq)
}

// signInCMS signs user in through the session endpoint (200 required) and
// returns the answer and the refresh cookie.
func (ts *testServer) signInCMS(user, pass string, h http.Header) (cmsSessionView, *http.Cookie) {
	ts.t.Helper()
	r := ts.cmsCall("POST", cmsSessionPath, "", map[string]string{"username": user, "password": pass}, h)
	var v cmsSessionView
	ts.mustJSON(r, 200, &v)
	c := cmsCookieOf(r)
	if c == nil || c.Value == "" {
		ts.t.Fatalf("%s: no %s cookie (Set-Cookie %q)", r, cmsCookie, r.Header.Values("Set-Cookie"))
	}
	return v, c
}

// cmsCookieOf is the answer's refresh cookie (nil when it sets none).
func cmsCookieOf(r response) *http.Cookie {
	for _, c := range (&http.Response{Header: r.Header}).Cookies() {
		if c.Name == cmsCookie {
			return c
		}
	}
	return nil
}

// expectSessionCookie asserts the cookie's attributes: HttpOnly,
// SameSite=Strict, scoped to the session endpoints, Secure as wanted, no
// lasting expiry (a session cookie).
func expectSessionCookie(t testing.TB, r response, c *http.Cookie, secure bool) {
	t.Helper()
	raw := strings.Join(r.Header.Values("Set-Cookie"), "\n")
	if c == nil {
		t.Fatalf("%s: no %s cookie", r, cmsCookie)
	}
	if !c.HttpOnly || c.SameSite != http.SameSiteStrictMode || c.Path != cmsSessionPath || c.Secure != secure {
		t.Errorf("%s: cookie %q: want HttpOnly, SameSite=Strict, Path=%s, Secure %v", r, raw, cmsSessionPath, secure)
	}
	if c.Domain != "" || (c.MaxAge > 0 || !c.Expires.IsZero()) && c.Value != "" {
		t.Errorf("%s: cookie %q: want no Domain and no lasting expiry", r, raw)
	}
}

// expectCleared asserts the answer deletes the refresh cookie.
func expectCleared(t testing.TB, r response, secure bool) {
	t.Helper()
	c := cmsCookieOf(r)
	if c == nil || c.Value != "" || c.MaxAge >= 0 {
		t.Errorf("%s: want the %s cookie cleared (Set-Cookie %q)", r, cmsCookie, r.Header.Values("Set-Cookie"))
		return
	}
	expectSessionCookie(t, r, c, secure)
}

func TestCMSSession(t *testing.T) {
	t.Parallel()
	ts := startServer(t) // no trusted proxies
	ts.createUser("editor", nil)
	self := func(tok string) int { return ts.get("/api/core/user/self", tok).Status }

	t.Run("sign in sets the cookie, answers the access token only", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.cmsCall("POST", cmsSessionPath, "", map[string]string{"username": "editor", "password": userPass}, nil)
		var v cmsSessionView
		ts.mustJSON(r, 200, &v)
		c := cmsCookieOf(r)
		expectSessionCookie(t, r, c, false)
		if v.AccessToken == "" || v.TokenType != "Bearer" || v.ExpiresIn != (ts.app.cfg.AccessTokenTTL).Milliseconds() {
			t.Errorf("answer %+v", v)
		}
		var raw map[string]any
		_ = json.Unmarshal(r.Body, &raw)
		if _, ok := raw["refreshToken"]; ok || strings.Contains(string(r.Body), c.Value) {
			t.Errorf("%s: the refresh token is in the body", r)
		}
		if r.Header.Get("Cache-Control") != "no-store" {
			t.Errorf("%s: Cache-Control %q, want no-store", r, r.Header.Get("Cache-Control"))
		}
		if got := self(v.AccessToken); got != 200 {
			t.Errorf("the access token answers %d", got)
		}
	})

	t.Run("refresh rotates; a spent cookie revokes the family", func(t *testing.T) {
		ts := ts.with(t)
		first, c1 := ts.signInCMS("editor", userPass, nil)
		r := ts.cmsCall("POST", cmsRefreshPath, c1.Value, nil, nil)
		var second cmsSessionView
		ts.mustJSON(r, 200, &second)
		c2 := cmsCookieOf(r)
		expectSessionCookie(t, r, c2, false)
		if c2 == nil || c2.Value == c1.Value || second.AccessToken == first.AccessToken {
			t.Fatalf("refresh did not rotate: cookie %v, access token the same %v", c2, second.AccessToken == first.AccessToken)
		}
		if self(second.AccessToken) != 200 {
			t.Errorf("the refreshed access token is refused")
		}
		// The old cookie again: refused, the cookie cleared, and every
		// token of the session revoked (someone else may hold it).
		r = ts.cmsCall("POST", cmsRefreshPath, c1.Value, nil, nil)
		expectHaloError(t, r, 401)
		expectCleared(t, r, false)
		expectHaloError(t, ts.cmsCall("POST", cmsRefreshPath, c2.Value, nil, nil), 401)
		if got := self(second.AccessToken); got != 401 {
			t.Errorf("after a spent cookie was reused, the session's access token answers %d, want 401", got)
		}
		// No cookie, or an unknown one: 401.
		expectHaloError(t, ts.cmsCall("POST", cmsRefreshPath, "", nil, nil), 401)
		expectHaloError(t, ts.cmsCall("POST", cmsRefreshPath, strings.Repeat("x", 40), nil, nil), 401)
	})

	t.Run("sign-out revokes", func(t *testing.T) {
		ts := ts.with(t)
		v, c := ts.signInCMS("editor", userPass, nil)
		r := ts.cmsCall("DELETE", cmsSessionPath, c.Value, nil, nil)
		expectStatus(t, r, 204)
		expectCleared(t, r, false)
		expectHaloError(t, ts.cmsCall("POST", cmsRefreshPath, c.Value, nil, nil), 401)
		if got := self(v.AccessToken); got != 401 {
			t.Errorf("after sign-out the access token answers %d, want 401", got)
		}
		// Signing out without a session (twice, or never signed in): 204.
		expectStatus(t, ts.cmsCall("DELETE", cmsSessionPath, c.Value, nil, nil), 204)
		expectStatus(t, ts.cmsCall("DELETE", cmsSessionPath, "", nil, nil), 204)
	})

	t.Run("CSRF defence", func(t *testing.T) {
		ts := ts.with(t)
		_, c := ts.signInCMS("editor", userPass, nil)
		creds := map[string]string{"username": "editor", "password": userPass}
		calls := []struct {
			method, path, cookie string
			body                 any
		}{{"POST", cmsSessionPath, "", creds}, {"POST", cmsRefreshPath, c.Value, nil}, {"DELETE", cmsSessionPath, c.Value, nil}}
		for _, call := range calls {
			// Without X-CMS-Session (what a form or an image on another
			// site sends).
			r := ts.do(request{method: call.method, path: call.path, body: call.body, header: http.Header{"Cookie": {cmsCookie + "=" + call.cookie}}})
			expectHaloError(t, r, 403)
			if cmsCookieOf(r) != nil {
				t.Errorf("%s: a refused request set a cookie", r)
			}
			// From another origin, or another site.
			expectHaloError(t, ts.cmsCall(call.method, call.path, call.cookie, call.body, http.Header{"Origin": {"https://evil.example"}}), 403)
			expectHaloError(t, ts.cmsCall(call.method, call.path, call.cookie, call.body, http.Header{"Origin": {"null"}}), 403)
			expectHaloError(t, ts.cmsCall(call.method, call.path, call.cookie, call.body, http.Header{"Sec-Fetch-Site": {"cross-site"}}), 403)
			expectHaloError(t, ts.cmsCall(call.method, call.path, call.cookie, call.body, http.Header{"Sec-Fetch-Site": {"same-site"}}), 403)
		}
		// None of that spent the cookie: from this origin it still works.
		host := strings.TrimPrefix(ts.base, "http://")
		r := ts.cmsCall("POST", cmsRefreshPath, c.Value, nil, http.Header{"Origin": {"http://" + host}, "Sec-Fetch-Site": {"same-origin"}})
		expectStatus(t, r, 200)
	})

	t.Run("refusals", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.cmsCall("POST", cmsSessionPath, "", map[string]string{"username": "editor", "password": "wrong-password"}, nil)
		expectHaloError(t, r, 401)
		if cmsCookieOf(r) != nil {
			t.Errorf("%s: a failed sign-in set a cookie", r)
		}
		expectHaloError(t, ts.cmsCall("POST", cmsSessionPath, "", map[string]string{"username": "nobody", "password": userPass}, nil), 401)
		expectHaloError(t, ts.cmsCall("POST", cmsSessionPath, "", map[string]string{"username": "editor"}, nil), 400)
		expectHaloError(t, ts.cmsCall("POST", cmsSessionPath, "", `{"username": "editor", "password": `, nil), 400)
		// Outside the user's IP allowlist: 403, as on the token endpoint.
		ts.createUser("far-away", map[string]any{"allowedIps": []string{"10.1.0.0/16"}})
		r = ts.cmsCall("POST", cmsSessionPath, "", map[string]string{"username": "far-away", "password": userPass}, nil)
		expectHaloError(t, r, 403)
		if cmsCookieOf(r) != nil {
			t.Errorf("%s: a refused sign-in set a cookie", r)
		}
		// X-Forwarded-For from an untrusted peer changes nothing, and
		// X-Forwarded-Proto does not make the cookie Secure.
		expectHaloError(t, ts.cmsCall("POST", cmsSessionPath, "", map[string]string{"username": "far-away", "password": userPass},
			http.Header{"X-Forwarded-For": {"10.1.2.3"}}), 403)
		r = ts.cmsCall("POST", cmsSessionPath, "", map[string]string{"username": "editor", "password": userPass},
			http.Header{"X-Forwarded-Proto": {"https"}})
		expectStatus(t, r, 200)
		expectSessionCookie(t, r, cmsCookieOf(r), false)
	})
}

// Behind a trusted proxy: the cookie is Secure when the proxy says the
// request came over TLS, and the allowlist judges the forwarded address,
// on refresh too.
func TestCMSSessionBehindProxy(t *testing.T) {
	t.Parallel()
	ts := startServer(t, withTrustedProxies("127.0.0.1/32"))
	ts.createUser("remote", map[string]any{"allowedIps": []string{"10.1.0.0/16"}})
	tls := http.Header{"X-Forwarded-Proto": {"https"}, "X-Forwarded-For": {"10.1.2.3"}}

	creds := map[string]string{"username": "remote", "password": userPass}
	r := ts.cmsCall("POST", cmsSessionPath, "", creds, tls)
	expectStatus(t, r, 200)
	c := cmsCookieOf(r)
	expectSessionCookie(t, r, c, true)

	r = ts.cmsCall("POST", cmsRefreshPath, c.Value, nil, tls)
	expectStatus(t, r, 200)
	c = cmsCookieOf(r)
	expectSessionCookie(t, r, c, true)

	// The proxy forwards a client outside the allowlist: refused, on
	// sign-in and on refresh.
	outside := http.Header{"X-Forwarded-Proto": {"https"}, "X-Forwarded-For": {"192.168.7.7"}}
	expectHaloError(t, ts.cmsCall("POST", cmsSessionPath, "", creds, outside), 403)
	expectHaloError(t, ts.cmsCall("POST", cmsRefreshPath, c.Value, nil, outside), 403)

	// Plain http behind the proxy: not Secure.
	r = ts.cmsCall("POST", cmsSessionPath, "", creds, http.Header{"X-Forwarded-For": {"10.1.2.3"}})
	expectStatus(t, r, 200)
	expectSessionCookie(t, r, cmsCookieOf(r), false)

	r = ts.cmsCall("DELETE", cmsSessionPath, c.Value, nil, tls)
	expectStatus(t, r, 204)
	expectCleared(t, r, true)
	expectHaloError(t, ts.cmsCall("POST", cmsRefreshPath, c.Value, nil, tls), 401)
}
