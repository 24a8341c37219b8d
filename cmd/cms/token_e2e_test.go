package main

import (
	"encoding/json"
	"net"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres"
)

var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9]{40}$`)

// checkToken asserts the token response shape of wire-reference §2.1.
func checkToken(t *testing.T, r response, wantScope string) tokenResp {
	t.Helper()
	var tr tokenResp
	if !expectStatus(t, r, 200) {
		return tr
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		t.Fatalf("%s: %v", r, err)
	}
	for _, k := range []string{"access_token", "refresh_token", "expires_in", "scope", "token_type"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("%s: no %q", r, k)
		}
	}
	if err := json.Unmarshal(r.Body, &tr); err != nil {
		t.Fatalf("%s: %v", r, err)
	}
	if !tokenPattern.MatchString(tr.AccessToken) || !tokenPattern.MatchString(tr.RefreshToken) {
		t.Errorf("%s: tokens must be 40 alphanumerics", r)
	}
	if tr.AccessToken == tr.RefreshToken {
		t.Errorf("%s: access and refresh token are equal", r)
	}
	// expires_in: a JSON number of milliseconds (24 h by default).
	if string(tr.ExpiresIn) != "86400000" {
		t.Errorf("%s: expires_in = %s, want the number 86400000 (24 h in ms)", r, tr.ExpiresIn)
	}
	if tr.TokenType != "Bearer" {
		t.Errorf("%s: token_type %q, want Bearer", r, tr.TokenType)
	}
	if tr.Scope == nil || (wantScope != "" && *tr.Scope != wantScope) {
		t.Errorf("%s: scope %v, want %q", r, tr.Scope, wantScope)
	}
	if cc := r.Header.Get("Cache-Control"); !strings.Contains(cc, "no-store") {
		t.Errorf("%s: Cache-Control %q, want no-store", r, cc)
	}
	return tr
}

func form(kv ...string) url.Values {
	v := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		v.Set(kv[i], kv[i+1])
	}
	return v
}

func TestTokenEndpoint(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ed := ts.createUser("editor", nil)
	app := ts.createApp("Token App")
	secret := *app.ClientSecret

	// works reports whether an access token is accepted.
	works := func(tok string) int { return ts.get("/core-api/app/", tok).Status }

	t.Run("password grant as the SDKs send it", func(t *testing.T) {
		ts := ts.with(t)
		tr := checkToken(t, ts.passwordGrant("editor", userPass, nil), "")
		if got := works(tr.AccessToken); got != 200 {
			t.Errorf("the issued access token: status %d, want 200", got)
		}
		var self userView
		ts.mustJSON(ts.get("/api/core/user/self", tr.AccessToken), 200, &self)
		if self.ID != ed.ID {
			t.Errorf("token acts for %s, want %s", self.ID, ed.ID)
		}
	})

	t.Run("Basic and form credentials differ", func(t *testing.T) {
		ts := ts.with(t)
		for name, h := range map[string]string{
			"other password": basic("editor", "something-else"),
			"other user":     basic("admin", userPass),
		} {
			r := ts.do(request{method: "POST", path: "/api/oauth/token?_user", header: http.Header{"Authorization": {h}},
				body: form("grant_type", "password", "username", "editor", "password", userPass)})
			t.Run(name, func(t *testing.T) { expectHaloError(t, r, 400) })
		}
	})

	t.Run("wrong password", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.passwordGrant("editor", "wrong-password", nil)
		expectHaloError(t, r, 401)
		if !strings.Contains(r.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: no WWW-Authenticate: Bearer", r)
		}
		expectHaloError(t, ts.passwordGrant("nobody", userPass, nil), 401)
	})

	t.Run("client credentials", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.post("/api/oauth/token?_app", "", form("grant_type", "client_credentials", "client_id", app.ClientID, "client_secret", secret))
		tr := checkToken(t, r, "app")
		if got := ts.appIDs(tr.AccessToken); len(got) != 1 || got[0] != app.ID {
			t.Errorf("app token sees apps %v, want only %s", got, app.ID)
		}
	})

	t.Run("client credentials, wrong secret", func(t *testing.T) {
		ts := ts.with(t)
		for name, f := range map[string]url.Values{
			"wrong secret":   form("grant_type", "client_credentials", "client_id", app.ClientID, "client_secret", secret+"x"),
			"unknown client": form("grant_type", "client_credentials", "client_id", "app-nope", "client_secret", secret),
		} {
			r := ts.post("/api/oauth/token?_app", "", f)
			t.Run(name, func(t *testing.T) {
				expectHaloError(t, r, 401)
				var e haloErr
				_ = json.Unmarshal(r.Body, &e)
				if e.Error != nil && e.Error.Message != "Client not found or invalid secret" {
					t.Errorf("message %q, want HALO's %q", e.Error.Message, "Client not found or invalid secret")
				}
			})
		}
	})

	t.Run("JSON body", func(t *testing.T) {
		ts := ts.with(t)
		checkToken(t, ts.post("/api/oauth/token", "", map[string]string{"grant_type": "password", "username": "editor", "password": userPass}), "")
		checkToken(t, ts.post("/api/oauth/token?_app", "", map[string]string{"grant_type": "client_credentials", "client_id": app.ClientID, "client_secret": secret}), "app")
		expectHaloError(t, ts.post("/api/oauth/token", "", `{"grant_type": "password", "username": `), 400)
	})

	t.Run("markers and trailing slash", func(t *testing.T) {
		ts := ts.with(t)
		for _, p := range []string{"/api/oauth/token?_user", "/api/oauth/token?_app", "/api/oauth/token", "/api/oauth/token?_client",
			"/api/oauth/token?_2", "/api/oauth/token/", "/api/oauth/token/?_user"} {
			r := ts.do(request{method: "POST", path: p, header: http.Header{"Authorization": {basic("editor", userPass)}},
				body: form("grant_type", "password", "username", "editor", "password", userPass)})
			t.Run("password "+p, func(t *testing.T) { checkToken(t, r, "") })
			r = ts.post(p, "", form("grant_type", "client_credentials", "client_id", app.ClientID, "client_secret", secret))
			t.Run("client_credentials "+p, func(t *testing.T) { checkToken(t, r, "app") })
		}
	})

	t.Run("iOS form with charset", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.do(request{method: "POST", path: "/api/oauth/token?_app",
			header: http.Header{"Content-Type": {"application/x-www-form-urlencoded; charset=utf-8"}},
			body:   form("grant_type", "client_credentials", "client_id", app.ClientID, "client_secret", secret)})
		checkToken(t, r, "app")
		r = ts.do(request{method: "POST", path: "/api/oauth/token", header: http.Header{"Content-Type": {"application/json; charset=utf-8"}},
			body: map[string]string{"grant_type": "password", "username": "editor", "password": userPass}})
		checkToken(t, r, "")
	})

	t.Run("unknown or missing grant", func(t *testing.T) {
		ts := ts.with(t)
		expectHaloError(t, ts.post("/api/oauth/token?_user", "", form("grant_type", "authorization_code", "code", "x")), 400)
		expectHaloError(t, ts.post("/api/oauth/token?_user", "", form("username", "editor", "password", userPass)), 400)
		expectHaloError(t, ts.post("/api/oauth/token?_app", "", form("grant_type", "client_credentials")), 400)
	})

	t.Run("refresh rotates; reuse revokes the family", func(t *testing.T) {
		ts := ts.with(t)
		for _, c := range []struct {
			name  string
			issue func() tokenResp
			extra url.Values // what the client adds to the refresh form
			scope string
		}{
			{"app token (iOS, with client id and secret)", func() tokenResp {
				return checkToken(t, ts.post("/api/oauth/token?_app", "", form("grant_type", "client_credentials", "client_id", app.ClientID, "client_secret", secret)), "app")
			}, form("client_id", app.ClientID, "client_secret", secret), "app"},
			{"user token", func() tokenResp {
				return checkToken(t, ts.passwordGrant("editor", userPass, nil), "")
			}, url.Values{}, ""},
		} {
			t.Run(c.name, func(t *testing.T) {
				ts := ts.with(t)
				first := c.issue()
				refresh := func(tok string) response {
					f := form("grant_type", "refresh_token", "refresh_token", tok)
					for k, v := range c.extra {
						f[k] = v
					}
					return ts.post("/api/oauth/token?_app", "", f)
				}
				second := checkToken(t, refresh(first.RefreshToken), c.scope)
				if second.AccessToken == first.AccessToken || second.RefreshToken == first.RefreshToken {
					t.Fatalf("refresh did not rotate the tokens")
				}
				if got := works(second.AccessToken); got != 200 {
					t.Fatalf("rotated access token: %d, want 200", got)
				}
				// Presenting the spent refresh token revokes every token of
				// the family. It is refused, unless the client proves itself
				// with its credentials (iOS never falls back to
				// client_credentials by itself): then it gets a new family.
				wantReuse := func(r response) {
					t.Helper()
					if c.extra.Get("client_secret") != "" {
						checkToken(t, r, "app")
					} else {
						expectHaloError(t, r, 401)
					}
				}
				wantReuse(refresh(first.RefreshToken))
				if got := works(second.AccessToken); got != 401 {
					t.Errorf("after reuse of a spent refresh token, the rotated access token answers %d, want 401", got)
				}
				wantReuse(refresh(second.RefreshToken))
				if got := works(first.AccessToken); got != 401 {
					t.Errorf("after reuse, the first access token answers %d, want 401", got)
				}
			})
		}
		t.Run("refresh with another app's credentials", func(t *testing.T) {
			ts := ts.with(t)
			other := ts.createApp("Other App")
			tr := checkToken(t, ts.post("/api/oauth/token?_app", "", form("grant_type", "client_credentials", "client_id", app.ClientID, "client_secret", secret)), "app")
			r := ts.post("/api/oauth/token?_app", "", form("grant_type", "refresh_token", "refresh_token", tr.RefreshToken,
				"client_id", other.ClientID, "client_secret", *other.ClientSecret))
			expectHaloError(t, r, 401)
		})
		t.Run("garbage refresh token", func(t *testing.T) {
			ts := ts.with(t)
			expectHaloError(t, ts.post("/api/oauth/token?_app", "", form("grant_type", "refresh_token", "refresh_token", strings.Repeat("x", 40))), 401)
			expectHaloError(t, ts.post("/api/oauth/token?_app", "", form("grant_type", "refresh_token")), 400)
		})
	})
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	ts.createUser("reader", nil)
	tok := ts.login("reader", userPass)

	for _, path := range []string{"/core-api/app/", "/api/core/user/self", "/core-api/user", "/api/authentication/right"} {
		t.Run("no token "+path, func(t *testing.T) {
			ts := ts.with(t)
			r := ts.get(path, "")
			expectHaloError(t, r, 401)
			if !strings.Contains(r.Header.Get("WWW-Authenticate"), "Bearer") {
				t.Errorf("%s: no WWW-Authenticate: Bearer", r)
			}
		})
	}
	cases := []struct {
		name   string
		header http.Header
		want   int
	}{
		{"Authorization: Bearer", http.Header{"Authorization": {"Bearer " + tok}}, 200},
		{"Authentication: Bearer (seed style)", http.Header{"Authentication": {"Bearer " + tok}}, 200},
		{"lower-case bearer", http.Header{"Authorization": {"bearer " + tok}}, 200},
		{"upper-case BEARER in Authentication", http.Header{"Authentication": {"BEARER " + tok}}, 200},
		{"garbage token", http.Header{"Authorization": {"Bearer " + strings.Repeat("a", 40)}}, 401},
		{"garbage, short", http.Header{"Authorization": {"Bearer x"}}, 401},
		{"Basic scheme", http.Header{"Authorization": {basic("reader", userPass)}}, 401},
		{"scheme without token", http.Header{"Authorization": {"Bearer "}}, 401},
		{"token without scheme", http.Header{"Authorization": {tok}}, 401},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ts := ts.with(t)
			r := ts.do(request{method: "GET", path: "/api/core/user/self", header: c.header})
			if c.want == 200 {
				expectStatus(t, r, 200)
				return
			}
			expectHaloError(t, r, c.want)
		})
	}
	t.Run("revoked token", func(t *testing.T) {
		ts := ts.with(t)
		tok2 := ts.login("reader", userPass)
		expectStatus(t, ts.get("/api/core/user/self", tok2), 200)
		expectStatus(t, ts.post("/api/oauth/revoke", "", form("token", tok2)), 200)
		expectHaloError(t, ts.get("/api/core/user/self", tok2), 401)
		// Another session of the same user is not affected.
		expectStatus(t, ts.get("/api/core/user/self", tok), 200)
	})
}

func TestLoginRateLimit(t *testing.T) {
	t.Parallel()
	ts := startServer(t, withConfig(func(c *Config) { c.AccessTokenTTL = 1500 * time.Millisecond }),
		withTrustedProxies("127.0.0.1/32")) // so that X-Forwarded-For names other addresses
	// The admin's token lives 1.5 s too, less than a write may take on a
	// loaded machine: sign in again before each admin call.
	ts.createUser("victim", nil)
	ts.admin = ts.login(adminUser, adminPass)
	ts.createUser("bystander", nil)
	ts.admin = ts.login(adminUser, adminPass)
	app := ts.createApp("Throttled")
	// Failures from 127.0.0.1 so far, for the address limit: a first
	// sign-in of the admin that came too early counted as one.
	failures := ts.adminLoginAttempts - 1
	for i := 1; i <= postgres.DefaultUserLimit; i++ {
		r := ts.passwordGrant("victim", "wrong-password-"+strconv.Itoa(i), nil)
		if r.Status != 401 {
			t.Fatalf("failed attempt %d: %s, want 401", i, r)
		}
		failures++
	}
	// The guessing pair is slowed: wrong and right passwords alike wait,
	// whatever the username's case.
	r := ts.passwordGrant("victim", "wrong-password-again", nil)
	expectHaloError(t, r, 429)
	ra, err := strconv.Atoi(r.Header.Get("Retry-After"))
	if err != nil || ra <= 0 || ra > 15*60 {
		t.Errorf("%s: Retry-After %q, want seconds in (0, 900]", r, r.Header.Get("Retry-After"))
	}
	expectHaloError(t, ts.post("/api/oauth/token", "", map[string]string{"grant_type": "password", "username": "VICTIM", "password": userPass}), 429)
	// The account is not locked: the right password from another address
	// signs in, and so does another user from this one.
	expectStatus(t, ts.passwordGrant("victim", userPass, http.Header{"X-Forwarded-For": {"203.0.113.50"}}), 200)
	expectStatus(t, ts.passwordGrant("bystander", userPass, nil), 200)

	// Apps are throttled per client and address too: wrong secrets do not
	// lock the app's devices out.
	cc := func(secret string) response {
		return ts.post("/api/oauth/token?_app", "", form("grant_type", "client_credentials", "client_id", app.ClientID, "client_secret", secret))
	}
	for i := 1; i <= postgres.DefaultUserLimit; i++ {
		if r := cc("wrong-secret"); r.Status != 401 {
			t.Fatalf("failed client attempt %d: %s, want 401", i, r)
		}
		failures++
	}
	expectHaloError(t, cc("wrong-secret"), 429)
	r = cc(*app.ClientSecret)
	expectHaloError(t, r, 429)
	r = ts.do(request{method: http.MethodPost, path: "/api/oauth/token?_app", header: http.Header{"X-Forwarded-For": {"203.0.113.51"}},
		body: form("grant_type", "client_credentials", "client_id", app.ClientID, "client_secret", *app.ClientSecret)})
	expectStatus(t, r, 200)

	// This server's access tokens live 1.5 s: expires_in says so, and an
	// expired token gets 401 (what makes the SDKs sign in again).
	var tr tokenResp
	_ = json.Unmarshal(r.Body, &tr)
	if string(tr.ExpiresIn) != "1500" {
		t.Errorf("expires_in %s, want 1500 (ms)", tr.ExpiresIn)
	}
	expectStatus(t, ts.get("/core-api/app/", tr.AccessToken), 200)
	time.Sleep(1600 * time.Millisecond)
	expectHaloError(t, ts.get("/core-api/app/", tr.AccessToken), 401)
	// The refresh token outlives it.
	var fresh tokenResp
	ts.mustJSON(ts.post("/api/oauth/token", "", form("grant_type", "refresh_token", "refresh_token", tr.RefreshToken)), 200, &fresh)
	expectStatus(t, ts.get("/core-api/app/", fresh.AccessToken), 200)

	// The address limit: once one address failed that often, names that
	// failed from it wait, but the admin's right password still signs in.
	for i := 0; failures < postgres.DefaultIPLimit; i++ {
		if r := ts.passwordGrant("sprayed-"+strconv.Itoa(i), "guess", nil); r.Status != 401 {
			t.Fatalf("failed attempt %d from one address: %s, want 401", failures+1, r)
		}
		failures++
	}
	expectHaloError(t, ts.passwordGrant("sprayed-0", "guess", nil), 429)
	expectStatus(t, ts.passwordGrant(adminUser, adminPass, nil), 200)
}

func TestIPAllowlist(t *testing.T) {
	t.Parallel()
	ts := startServer(t) // no trusted proxies
	outside := ts.createUser("outside", map[string]any{"allowedIps": []string{"10.1.0.0/16"}})
	inside := ts.createUser("inside", map[string]any{"allowedIps": []string{"127.0.0.0/8"}})
	if len(outside.AllowedIPs) != 1 || outside.AllowedIPs[0] != "10.1.0.0/16" {
		t.Errorf("allowedIps = %v", outside.AllowedIPs)
	}

	t.Run("token refused outside the allowlist", func(t *testing.T) {
		ts := ts.with(t)
		expectHaloError(t, ts.passwordGrant("outside", userPass, nil), 403)
	})
	t.Run("token issued inside the allowlist", func(t *testing.T) {
		ts := ts.with(t)
		tok := ts.login("inside", userPass)
		expectStatus(t, ts.get("/api/core/user/self", tok), 200)
	})
	t.Run("allowlist changed after the token was issued", func(t *testing.T) {
		ts := ts.with(t)
		tok := ts.login("inside", userPass)
		expectStatus(t, ts.get("/api/core/user/self", tok), 200)
		expectStatus(t, ts.put("/core-api/user/"+inside.ID, ts.admin, map[string]any{"allowedIps": []string{"10.1.0.0/16"}}), 200)
		expectHaloError(t, ts.get("/api/core/user/self", tok), 403)
		expectHaloError(t, ts.get("/core-api/app/", tok), 403)
		expectStatus(t, ts.put("/core-api/user/"+inside.ID, ts.admin, map[string]any{"allowedIps": []string{}}), 200)
		expectStatus(t, ts.get("/api/core/user/self", tok), 200)
	})
	t.Run("X-Forwarded-For is ignored without trusted proxies", func(t *testing.T) {
		ts := ts.with(t)
		xff := http.Header{"X-Forwarded-For": {"10.1.2.3"}}
		expectHaloError(t, ts.passwordGrant("outside", userPass, xff), 403)
		ts.createUser("loopback", map[string]any{"allowedIps": []string{"127.0.0.1"}})
		r := ts.passwordGrant("loopback", userPass, xff)
		expectStatus(t, r, 200)
		var tr tokenResp
		_ = json.Unmarshal(r.Body, &tr)
		expectStatus(t, ts.do(request{method: "GET", path: "/api/core/user/self", token: tr.AccessToken, header: xff}), 200)
	})
}

func TestForwardedFor(t *testing.T) {
	t.Parallel()
	ts := startServer(t, withTrustedProxies("127.0.0.1/32"))
	ts.createUser("remote", map[string]any{"allowedIps": []string{"10.1.0.0/16"}})
	xff := func(v string) http.Header { return http.Header{"X-Forwarded-For": {v}} }

	expectHaloError(t, ts.passwordGrant("remote", userPass, nil), 403)
	r := ts.passwordGrant("remote", userPass, xff("10.1.2.3"))
	if !expectStatus(t, r, 200) {
		t.FailNow()
	}
	var tr tokenResp
	_ = json.Unmarshal(r.Body, &tr)
	self := func(h http.Header) response {
		return ts.do(request{method: "GET", path: "/api/core/user/self", token: tr.AccessToken, header: h})
	}
	expectStatus(t, self(xff("10.1.2.3")), 200)
	// A chain through another trusted hop: the right-most untrusted address.
	expectStatus(t, self(xff("10.1.2.3, 127.0.0.1")), 200)
	expectStatus(t, self(http.Header{"X-Forwarded-For": {"10.1.2.3", "127.0.0.1"}}), 200)
	// A client-supplied left-most entry is not believed past an untrusted hop.
	expectHaloError(t, self(xff("10.1.2.3, 192.168.7.7")), 403)
	// Without the header the proxy's own address counts.
	expectHaloError(t, self(nil), 403)
	// So it does for the refresh grant.
	refresh := func(tok string, h http.Header) response {
		return ts.do(request{method: "POST", path: "/api/oauth/token", header: h, body: form("grant_type", "refresh_token", "refresh_token", tok)})
	}
	expectHaloError(t, refresh(tr.RefreshToken, nil), 403)
	var next tokenResp
	ts.mustJSON(refresh(tr.RefreshToken, xff("10.1.200.1")), 200, &next)
	expectStatus(t, ts.do(request{method: "GET", path: "/api/core/user/self", token: next.AccessToken, header: xff("10.1.200.1")}), 200)

	// The resolved address is what the audit log records.
	u := ts.createUser("audited", nil)
	a := ts.createApp("XFF App")
	g := ts.do(request{method: "POST", path: "/api/authentication/right/grant", token: ts.admin, header: xff("10.9.8.7"),
		body: map[string]any{"user": u.ID, "app": a.ID, "permissions": []string{"read"}}})
	expectStatus(t, g, 200)
	rep := ts.audit(ts.admin, u.ID, "", "")
	if len(rep.Changes) != 1 || rep.Changes[0].ClientIP != "10.9.8.7" {
		t.Errorf("audit changes %+v, want one with clientIp 10.9.8.7", rep.Changes)
	}

	// A malformed hop is refused: it once made the client's address the
	// proxy's own, which a user allowed only from the proxy's network
	// would pass.
	ts.createUser("proxyside", map[string]any{"allowedIps": []string{"127.0.0.1/32"}})
	expectHaloError(t, ts.passwordGrant("proxyside", userPass, xff("not-an-ip")), 400)
	expectHaloError(t, ts.passwordGrant("proxyside", userPass, xff("10.1.2.3, unknown")), 400)
	expectHaloError(t, self(xff("unknown")), 400)
	expectStatus(t, ts.passwordGrant("proxyside", userPass, nil), 200)
}

func TestIPv6Allowlist(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "[::1]:0")
	if err != nil {
		t.Skipf("IPv6 loopback unavailable: %v", err)
	}
	ln.Close()
	ts := startServer(t, withListen("[::1]:0"))
	ts.createUser("six", map[string]any{"allowedIps": []string{"::1/128"}})
	ts.createUser("four", map[string]any{"allowedIps": []string{"127.0.0.0/8"}})
	tok := ts.login("six", userPass)
	expectStatus(t, ts.get("/api/core/user/self", tok), 200)
	expectHaloError(t, ts.passwordGrant("four", userPass, nil), 403)

	// The audit log records the IPv6 address.
	u := ts.createUser("target", nil)
	a := ts.createApp("Six")
	expectStatus(t, ts.grant(ts.admin, map[string]any{"user": u.ID, "app": a.ID, "permissions": []string{"read"}}), 200)
	if rep := ts.audit(ts.admin, u.ID, "", ""); len(rep.Changes) != 1 || rep.Changes[0].ClientIP != "::1" {
		t.Errorf("audit changes %+v, want one from ::1", rep.Changes)
	}
}
