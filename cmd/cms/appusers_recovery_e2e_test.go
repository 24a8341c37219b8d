package main

import (
	"context"
	"net/http"
	"testing"
	"time"
)

// When an identified (APP+) token expires, iOS signs in again with
// POST /api/segmentation/identified/login and the expired token as its
// bearer. That one call takes an expired, unrevoked identified token as
// its app's credentials (the login then checks the user's own); a revoked,
// unknown or non-identified token stays 401, and no other endpoint takes
// the expired token.
func TestAppUsersIdentifiedLoginWithExpiredToken(t *testing.T) {
	t.Parallel()
	const ttl = 3 * time.Second
	ts := startServer(t, withConfig(func(c *Config) {
		c.AccessTokenTTL = ttl
		c.ReadYourWrites = 20 * time.Second
	}))
	// Every token lives 3 s here, the admin's too: sign in again before
	// each admin call.
	ts.admin = ts.login(adminUser, adminPass)
	app := ts.createApp("APP+")
	ts.admin = ts.login(adminUser, adminPass)
	appB := ts.createApp("other")

	tok := ts.appToken(app)
	ts.register(tok, "ios@example.com", "ios-password", "")
	tokB := ts.appToken(appB)
	ts.register(tokB, "b@example.com", "b-password", "")

	start := time.Now()
	expired := ts.loginForm(ts.appToken(app), "ios@example.com", "ios-password", "").Token.AccessToken
	revoked := ts.loginForm(ts.appToken(app), "ios@example.com", "ios-password", "").Token.AccessToken
	ts.mustJSON(ts.post("/api/oauth/revoke", "", form("token", revoked)), http.StatusOK, nil)
	otherApp := ts.loginForm(ts.appToken(appB), "b@example.com", "b-password", "").Token.AccessToken
	appTok := ts.appToken(app)
	time.Sleep(time.Until(start.Add(ttl + 1500*time.Millisecond)))

	// The hourly clean-up keeps expired identified tokens for recovery.
	if _, err := ts.app.sessions.Cleanup(context.Background()); err != nil {
		t.Fatal(err)
	}

	// The expired token is refused everywhere else.
	expectHaloError(t, ts.get(pocketSelfPath, expired), http.StatusUnauthorized)
	expectHaloError(t, ts.put(pocketSelfPath, expired, `{"data": {}}`), http.StatusUnauthorized)
	expectHaloError(t, ts.post(registerPath, expired, map[string]any{"auth": map[string]any{"email": "new@example.com", "password": "new-password"}}), http.StatusUnauthorized)
	expectHaloError(t, ts.post(identifiedSearch, expired, map[string]any{"appId": app.ID}), http.StatusUnauthorized)

	ios := func(bearer, email, password string) response {
		return ts.post(loginPath, bearer, map[string]any{"network": "halo", "email": email, "password": password})
	}
	// Revoked, unknown, an expired app (client credentials) token: 401.
	expectHaloError(t, ios(revoked, "ios@example.com", "ios-password"), http.StatusUnauthorized)
	expectHaloError(t, ios("no-such-token-0123456789abcdefghijklmnop", "ios@example.com", "ios-password"), http.StatusUnauthorized)
	expectHaloError(t, ios(appTok, "ios@example.com", "ios-password"), http.StatusUnauthorized)
	// Another app's expired token stands for that app only: it does not
	// sign this app's user in.
	if r := ios(otherApp, "ios@example.com", "ios-password"); r.Status == http.StatusOK {
		t.Errorf("another app's expired token signed this app's user in: %s", r)
	}
	// The expired token still needs the user's right password.
	expectHaloError(t, ios(expired, "ios@example.com", "wrong-password"), http.StatusBadRequest)

	// iOS's recovery: the expired token of the same app signs in again.
	var again loginView
	ts.mustJSON(ios(expired, "ios@example.com", "ios-password"), http.StatusOK, &again)
	if again.User == nil || again.User.Email != "ios@example.com" || again.Token == nil || again.Token.AccessToken == expired {
		t.Fatalf("recovery login: %+v", again)
	}
	ts.mustJSON(ts.get(pocketSelfPath, again.Token.AccessToken), http.StatusOK, nil)
	// Recovery did not revive the expired token.
	expectHaloError(t, ts.get(pocketSelfPath, expired), http.StatusUnauthorized)
}
