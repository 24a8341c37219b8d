package main

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
)

// noSecrets asserts that a user payload carries no password and no bcrypt
// hash anywhere.
func noSecrets(t *testing.T, r response) {
	t.Helper()
	if bytes.Contains(r.Body, []byte(`$2`)) {
		t.Errorf("%s: body contains a bcrypt hash prefix", r)
	}
	var v any
	if err := json.Unmarshal(r.Body, &v); err != nil {
		t.Errorf("%s: %v", r, err)
		return
	}
	var walk func(any)
	walk = func(v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, e := range x {
				if strings.Contains(strings.ToLower(k), "password") || strings.Contains(strings.ToLower(k), "hash") {
					t.Errorf("%s: key %q in a user payload", r, k)
				}
				walk(e)
			}
		case []any:
			for _, e := range x {
				walk(e)
			}
		case string:
			if x == userPass || x == adminPass {
				t.Errorf("%s: a password in the body", r)
			}
		}
	}
	walk(v)
}

// usernames lists GET /core-api/user/ as admin.
func (ts *testServer) usernames() []string {
	ts.t.Helper()
	var us []userView
	ts.mustJSON(ts.get("/core-api/user/", ts.admin), 200, &us)
	out := make([]string, len(us))
	for i, u := range us {
		out[i] = u.Username
	}
	return out
}

func (ts *testServer) user(id string) userView {
	ts.t.Helper()
	var u userView
	ts.mustJSON(ts.get("/core-api/user/"+id, ts.admin), 200, &u)
	return u
}

// slashes returns path with and without a trailing slash.
func slashes(path string) []string {
	p := strings.TrimSuffix(path, "/")
	return []string{p, p + "/"}
}

func TestUsers(t *testing.T) {
	t.Parallel()
	ts := startServer(t)

	var bob userView
	t.Run("create", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.post("/core-api/user/", ts.admin, map[string]any{"username": "bob", "password": userPass, "email": "bob@example.com",
			"name": "Bob", "allowedIps": []string{"127.0.0.1", "10.0.0.0/8"}})
		ts.mustJSON(r, 201, &bob)
		noSecrets(t, r)
		if bob.ID == "" || bob.Username != "bob" || bob.Email != "bob@example.com" || bob.Name != "Bob" || bob.Admin || bob.Disabled {
			t.Errorf("created %+v", bob)
		}
		if !slices.Equal(bob.AllowedIPs, []string{"10.0.0.0/8", "127.0.0.1/32"}) {
			t.Errorf("allowedIps %v, want canonical [10.0.0.0/8 127.0.0.1/32]", bob.AllowedIPs)
		}
		// Without the trailing slash too.
		r = ts.post("/core-api/user", ts.admin, map[string]any{"username": "carol", "password": userPass})
		expectStatus(t, r, 201)
		noSecrets(t, r)
	})

	t.Run("list and get, with and without trailing slash", func(t *testing.T) {
		ts := ts.with(t)
		for _, p := range slashes("/core-api/user") {
			r := ts.get(p, ts.admin)
			var us []userView
			ts.mustJSON(r, 200, &us)
			noSecrets(t, r)
			var names []string
			for _, u := range us {
				names = append(names, u.Username)
			}
			if !slices.Equal(names, []string{"admin", "bob", "carol"}) {
				t.Errorf("GET %s: users %v, want [admin bob carol]", p, names)
			}
		}
		for _, p := range slashes("/core-api/user/" + bob.ID) {
			r := ts.get(p, ts.admin)
			var u userView
			ts.mustJSON(r, 200, &u)
			noSecrets(t, r)
			if u.ID != bob.ID || u.Username != "bob" {
				t.Errorf("GET %s: %+v", p, u)
			}
		}
		expectHaloError(t, ts.get("/core-api/user/no-such-user", ts.admin), 404)
	})

	t.Run("update by path and by body", func(t *testing.T) {
		ts := ts.with(t)
		for _, p := range slashes("/core-api/user/" + bob.ID) {
			name := "Bob " + p
			r := ts.put(p, ts.admin, map[string]any{"name": name})
			expectStatus(t, r, 200)
			noSecrets(t, r)
			if got := ts.user(bob.ID); got.Name != name || got.Email != "bob@example.com" {
				t.Errorf("after PUT %s: %+v", p, got)
			}
		}
		for i, p := range slashes("/core-api/user") {
			email := []string{"bob1@example.com", "bob2@example.com"}[i]
			r := ts.put(p, ts.admin, map[string]any{"id": bob.ID, "email": email})
			expectStatus(t, r, 200)
			noSecrets(t, r)
			if got := ts.user(bob.ID); got.Email != email {
				t.Errorf("after PUT %s with id in the body: email %q, want %q", p, got.Email, email)
			}
		}
		// A GET's output can be sent back as is.
		r := ts.get("/core-api/user/"+bob.ID, ts.admin)
		var echo map[string]any
		_ = json.Unmarshal(r.Body, &echo)
		echo["name"] = "Bob Echo"
		expectStatus(t, ts.put("/core-api/user/"+bob.ID, ts.admin, echo), 200)
		if got := ts.user(bob.ID); got.Name != "Bob Echo" {
			t.Errorf("after echoed PUT: %+v", got)
		}
		expectHaloError(t, ts.put("/core-api/user/"+bob.ID, ts.admin, map[string]any{"id": "someone-else", "name": "x"}), 400)
		expectHaloError(t, ts.put("/core-api/user/", ts.admin, map[string]any{"name": "x"}), 400)
		expectHaloError(t, ts.put("/core-api/user/no-such-user", ts.admin, map[string]any{"name": "x"}), 404)
	})

	t.Run("duplicate username", func(t *testing.T) {
		ts := ts.with(t)
		before := ts.usernames()
		expectHaloError(t, ts.post("/core-api/user/", ts.admin, map[string]any{"username": "bob", "password": userPass}), 409)
		expectHaloError(t, ts.post("/core-api/user/", ts.admin, map[string]any{"username": "BOB", "password": userPass}), 409)
		expectHaloError(t, ts.put("/core-api/user/"+bob.ID, ts.admin, map[string]any{"username": "carol"}), 409)
		if after := ts.usernames(); !slices.Equal(before, after) {
			t.Errorf("users changed: %v -> %v", before, after)
		}
	})

	t.Run("invalid input changes nothing", func(t *testing.T) {
		ts := ts.with(t)
		before := ts.usernames()
		bobBefore := ts.user(bob.ID)
		for name, body := range map[string]any{
			"bad email":         map[string]any{"username": "dave", "password": userPass, "email": "not an email"},
			"short password":    map[string]any{"username": "dave", "password": "short"},
			"bad CIDR":          map[string]any{"username": "dave", "password": userPass, "allowedIps": []string{"10.0.0.0/33"}},
			"not an IP":         map[string]any{"username": "dave", "password": userPass, "allowedIps": []string{"localhost"}},
			"malformed JSON":    `{"username": "dave", "password": `,
			"two JSON values":   `{"username": "dave", "password": "` + userPass + `"} {}`,
			"unknown field":     map[string]any{"username": "dave", "password": userPass, "role": "admin"},
			"wrong type":        map[string]any{"username": "dave", "password": userPass, "admin": "yes"},
			"missing username":  map[string]any{"password": userPass},
			"missing password":  map[string]any{"username": "dave"},
			"bad username":      map[string]any{"username": "d", "password": userPass},
			"username w/ space": map[string]any{"username": "da ve", "password": userPass},
			"empty body":        "",
		} {
			t.Run("create "+name, func(t *testing.T) {
				ts := ts.with(t)
				expectHaloError(t, ts.post("/core-api/user/", ts.admin, body), 400)
			})
		}
		for name, body := range map[string]any{
			"bad email":      map[string]any{"email": "bob@"},
			"short password": map[string]any{"password": "1234567"},
			"bad CIDR":       map[string]any{"allowedIps": []string{"300.1.1.1/8"}},
			"malformed JSON": `{"name": `,
			"unknown field":  map[string]any{"name": "Bobby", "role": "admin"},
			"bad username":   map[string]any{"username": "b!"},
		} {
			t.Run("update "+name, func(t *testing.T) {
				ts := ts.with(t)
				expectHaloError(t, ts.put("/core-api/user/"+bob.ID, ts.admin, body), 400)
			})
		}
		if after := ts.usernames(); !slices.Equal(before, after) {
			t.Errorf("users changed: %v -> %v", before, after)
		}
		if after := ts.user(bob.ID); !equalUsers(bobBefore, after) {
			t.Errorf("bob changed: %+v -> %+v", bobBefore, after)
		}
		// Bob's password is unchanged.
		ts.login("bob", userPass)
	})

	t.Run("non-admin", func(t *testing.T) {
		ts := ts.with(t)
		tok := ts.login("bob", userPass)
		var carol userView
		for _, u := range func() []userView {
			var us []userView
			ts.mustJSON(ts.get("/core-api/user/", ts.admin), 200, &us)
			return us
		}() {
			if u.Username == "carol" {
				carol = u
			}
		}
		before := ts.usernames()
		for _, p := range slashes("/core-api/user") {
			expectHaloError(t, ts.get(p, tok), 403)
			expectHaloError(t, ts.post(p, tok, map[string]any{"username": "eve", "password": userPass}), 403)
			expectHaloError(t, ts.put(p, tok, map[string]any{"id": carol.ID, "name": "pwned"}), 403)
		}
		for _, p := range slashes("/core-api/user/" + carol.ID) {
			expectHaloError(t, ts.get(p, tok), 403)
			expectHaloError(t, ts.put(p, tok, map[string]any{"name": "pwned"}), 403)
		}
		// Their own record, by id, is theirs to read and edit.
		for _, p := range slashes("/core-api/user/" + bob.ID) {
			expectStatus(t, ts.get(p, tok), 200)
			expectStatus(t, ts.put(p, tok, map[string]any{"name": "Bob by id " + p}), 200)
		}
		// Nor may a user raise their own privileges.
		expectHaloError(t, ts.put("/core-api/user/"+bob.ID, tok, map[string]any{"admin": true}), 403)
		expectHaloError(t, ts.put("/core-api/user/"+bob.ID, tok, map[string]any{"allowedIps": []string{}}), 403)
		if after := ts.usernames(); !slices.Equal(before, after) {
			t.Errorf("users changed: %v -> %v", before, after)
		}
		if got := ts.user(carol.ID); got.Name == "pwned" {
			t.Errorf("carol was renamed by bob")
		}
		if got := ts.user(bob.ID); got.Admin {
			t.Errorf("bob made himself admin")
		}
	})

	t.Run("self", func(t *testing.T) {
		ts := ts.with(t)
		tok := ts.login("bob", userPass)
		for _, p := range slashes("/api/core/user/self") {
			r := ts.get(p, tok)
			var u userView
			ts.mustJSON(r, 200, &u)
			noSecrets(t, r)
			if u.ID != bob.ID {
				t.Errorf("GET %s: %+v", p, u)
			}
		}
		for _, p := range slashes("/api/core/user/self") {
			name := "Self " + p
			r := ts.put(p, tok, map[string]any{"name": name})
			expectStatus(t, r, 200)
			noSecrets(t, r)
			if got := ts.user(bob.ID); got.Name != name {
				t.Errorf("after PUT %s: %+v", p, got)
			}
		}
		// Only admins change admin, allowedIps or disabled; echoing the
		// current values back is fine.
		expectHaloError(t, ts.put("/api/core/user/self", tok, map[string]any{"allowedIps": []string{}}), 403)
		expectHaloError(t, ts.put("/api/core/user/self", tok, map[string]any{"allowedIps": []string{"0.0.0.0/0"}}), 403)
		expectHaloError(t, ts.put("/api/core/user/self", tok, map[string]any{"admin": true}), 403)
		if r := ts.put("/api/core/user/self", tok, map[string]any{"disabled": true}); r.Status != 400 && r.Status != 403 {
			t.Errorf("%s: a user disabled themselves", r)
		}
		if got := ts.user(bob.ID); got.Admin || got.Disabled || len(got.AllowedIPs) != 2 {
			t.Errorf("bob changed his own admin, disabled or allowedIps: %+v", got)
		}
		// A non-admin sends back the record GET returned, with a new name
		// (what a CMS profile form does).
		for _, p := range []string{"/api/core/user/self", "/core-api/user/" + bob.ID} {
			echo := ts.get("/api/core/user/self", tok)
			var rec map[string]any
			_ = json.Unmarshal(echo.Body, &rec)
			rec["name"] = "Bob echoed via " + p
			r := ts.put(p, tok, rec)
			if r.Status != 200 {
				t.Errorf("BUG: a non-admin echoing their own record (admin: false unchanged) to PUT %s is refused: %s. "+
					"commands/identity/service.go UpdateUser refuses any self-update with admin == false "+
					"(`c.Admin != nil && !*c.Admin`), which is meant for admins removing their own flag; "+
					"it should refuse only an actual change (actor.Admin && !*c.Admin, or a UserAdminChanged/UserDisabled event for oneself)", p, r)
				continue
			}
			if got := ts.user(bob.ID); got.Name != rec["name"] {
				t.Errorf("after echoing the own record to %s: %+v", p, got)
			}
		}
		expectHaloError(t, ts.put("/api/core/user/self", tok, map[string]any{"email": "nope"}), 400)
		expectHaloError(t, ts.put("/api/core/user/self", tok, map[string]any{"unknown": 1}), 400)
		// An app token has no profile.
		a := ts.createApp("Self App")
		var at tokenResp
		ts.mustJSON(ts.post("/api/oauth/token?_app", "", url.Values{"grant_type": {"client_credentials"}, "client_id": {a.ClientID},
			"client_secret": {*a.ClientSecret}}), 200, &at)
		expectHaloError(t, ts.get("/api/core/user/self", at.AccessToken), 403)
		expectHaloError(t, ts.get("/core-api/user/", at.AccessToken), 403)
	})

	t.Run("password change through self ends sessions", func(t *testing.T) {
		ts := ts.with(t)
		tok := ts.login("bob", userPass)
		var otherTR tokenResp
		ts.mustJSON(ts.passwordGrant("bob", userPass, nil), 200, &otherTR)
		other := otherTR.AccessToken
		const newPass = "a-brand-new-password"
		// The current password is required, and must be right.
		expectHaloError(t, ts.put("/api/core/user/self", tok, map[string]any{"password": newPass}), 400)
		expectHaloError(t, ts.put("/api/core/user/self", tok, map[string]any{"password": newPass, "currentPassword": "not-it-at-all"}), 403)
		expectStatus(t, ts.get("/api/core/user/self", tok), 200) // nothing changed
		r := ts.put("/api/core/user/self", tok, map[string]any{"password": newPass, "currentPassword": userPass})
		expectStatus(t, r, 200)
		noSecrets(t, r)
		if bytes.Contains(r.Body, []byte(newPass)) {
			t.Errorf("%s: the new password is echoed", r)
		}
		expectHaloError(t, ts.get("/api/core/user/self", tok), 401)
		expectHaloError(t, ts.get("/api/core/user/self", other), 401)
		expectHaloError(t, ts.passwordGrant("bob", userPass, nil), 401)
		// The refresh token of an old session is dead too.
		expectHaloError(t, ts.post("/api/oauth/token", "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {otherTR.RefreshToken}}), 401)
		nt := ts.login("bob", newPass)
		expectStatus(t, ts.get("/api/core/user/self", nt), 200)
		// Back, by the admin, for the next subtests; that ends sessions too.
		expectStatus(t, ts.put("/core-api/user/"+bob.ID, ts.admin, map[string]any{"password": userPass}), 200)
		expectHaloError(t, ts.get("/api/core/user/self", nt), 401)
		ts.login("bob", userPass)
	})

	t.Run("disabled user", func(t *testing.T) {
		ts := ts.with(t)
		var tr tokenResp
		ts.mustJSON(ts.passwordGrant("bob", userPass, nil), 200, &tr)
		tok := tr.AccessToken
		r := ts.put("/core-api/user/"+bob.ID, ts.admin, map[string]any{"disabled": true})
		var u userView
		ts.mustJSON(r, 200, &u)
		if !u.Disabled {
			t.Errorf("PUT disabled: %+v", u)
		}
		expectHaloError(t, ts.get("/api/core/user/self", tok), 401)
		expectHaloError(t, ts.passwordGrant("bob", userPass, nil), 401)
		expectHaloError(t, ts.post("/api/oauth/token", "", url.Values{"grant_type": {"refresh_token"}, "refresh_token": {tr.RefreshToken}}), 401)
		if !ts.user(bob.ID).Disabled {
			t.Errorf("GET does not show bob disabled")
		}
		expectStatus(t, ts.put("/core-api/user/"+bob.ID, ts.admin, map[string]any{"disabled": false}), 200)
		ts.login("bob", userPass)
		// An admin may echo their own record (admin: true, disabled: false).
		var rec map[string]any
		ts.mustJSON(ts.get("/api/core/user/self", ts.admin), 200, &rec)
		rec["name"] = "Administrator, echoed"
		expectStatus(t, ts.put("/api/core/user/self", ts.admin, rec), 200)
		// Admins cannot lock themselves out.
		expectHaloError(t, ts.put("/core-api/user/"+ts.adminID, ts.admin, map[string]any{"disabled": true}), 400)
		expectHaloError(t, ts.put("/core-api/user/"+ts.adminID, ts.admin, map[string]any{"admin": false}), 400)
	})

	t.Run("rename frees the old name", func(t *testing.T) {
		ts := ts.with(t)
		expectStatus(t, ts.put("/core-api/user/"+bob.ID, ts.admin, map[string]any{"username": "robert"}), 200)
		expectHaloError(t, ts.passwordGrant("bob", userPass, nil), 401)
		ts.login("robert", userPass)
		impostor := ts.createUser("bob", nil)
		if impostor.ID == bob.ID {
			t.Fatalf("same id")
		}
		tok := ts.login("bob", userPass)
		var self userView
		ts.mustJSON(ts.get("/api/core/user/self", tok), 200, &self)
		if self.ID != impostor.ID {
			t.Errorf("login as the new bob acts for %s, want %s", self.ID, impostor.ID)
		}
		expectHaloError(t, ts.put("/core-api/user/"+bob.ID, ts.admin, map[string]any{"username": "bob"}), 409)
		// A change of case only keeps the reservation.
		expectStatus(t, ts.put("/core-api/user/"+bob.ID, ts.admin, map[string]any{"username": "Robert"}), 200)
		ts.login("robert", userPass)
		expectHaloError(t, ts.post("/core-api/user/", ts.admin, map[string]any{"username": "ROBERT", "password": userPass}), 409)
		// Back to the old name for what follows: free the impostor's.
		expectStatus(t, ts.put("/core-api/user/"+impostor.ID, ts.admin, map[string]any{"username": "bob-impostor"}), 200)
		expectStatus(t, ts.put("/core-api/user/"+bob.ID, ts.admin, map[string]any{"username": "bob"}), 200)
		ts.login("bob", userPass)
	})

	t.Run("admin flag takes effect at once", func(t *testing.T) {
		ts := ts.with(t)
		tok := ts.login("bob", userPass)
		expectHaloError(t, ts.get("/core-api/user/", tok), 403)
		expectStatus(t, ts.put("/core-api/user/"+bob.ID, ts.admin, map[string]any{"admin": true}), 200)
		expectStatus(t, ts.get("/core-api/user/", tok), 200)
		expectStatus(t, ts.put("/core-api/user/"+bob.ID, ts.admin, map[string]any{"admin": false}), 200)
		expectHaloError(t, ts.get("/core-api/user/", tok), 403)
	})
}

func equalUsers(a, b userView) bool {
	return a.ID == b.ID && a.Username == b.Username && a.Email == b.Email && a.Name == b.Name && a.Admin == b.Admin &&
		a.Disabled == b.Disabled && slices.Equal(a.AllowedIPs, b.AllowedIPs)
}

func TestApps(t *testing.T) {
	t.Parallel()
	ts := startServer(t)

	var one, two appView
	t.Run("create returns the secret once", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.post("/core-api/app/", ts.admin, map[string]any{"name": "One"})
		ts.mustJSON(r, 201, &one)
		var raw map[string]any
		_ = json.Unmarshal(r.Body, &raw)
		for _, k := range []string{"id", "name", "clientId", "clientSecret"} {
			if s, _ := raw[k].(string); s == "" {
				t.Errorf("%s: no %s", r, k)
			}
		}
		r = ts.post("/core-api/app", ts.admin, map[string]any{"name": "Two"})
		ts.mustJSON(r, 201, &two)
		if two.ClientSecret == nil || *two.ClientSecret == *one.ClientSecret || two.ClientID == one.ClientID {
			t.Errorf("apps share credentials: %+v %+v", one, two)
		}
		for _, p := range slashes("/core-api/app") {
			r := ts.get(p, ts.admin)
			var apps []appView
			ts.mustJSON(r, 200, &apps)
			if bytes.Contains(r.Body, []byte("clientSecret")) || bytes.Contains(r.Body, []byte(*one.ClientSecret)) ||
				bytes.Contains(r.Body, []byte("$2")) {
				t.Errorf("%s: the list shows a secret", r)
			}
			if len(apps) != 2 || apps[0].ID != one.ID || apps[1].ID != two.ID || apps[0].ClientID != one.ClientID {
				t.Errorf("GET %s as admin: %+v", p, apps)
			}
		}
		r = ts.get("/core-api/app/"+one.ID, ts.admin)
		var got appView
		ts.mustJSON(r, 200, &got)
		if got.ID != one.ID || got.ClientSecret != nil {
			t.Errorf("%s", r)
		}
		expectHaloError(t, ts.post("/core-api/app/", ts.admin, map[string]any{}), 400)
		expectHaloError(t, ts.post("/core-api/app/", ts.admin, map[string]any{"name": "x", "clientSecret": "mine"}), 400)
		expectHaloError(t, ts.get("/core-api/app/nope", ts.admin), 404)
	})

	t.Run("a user sees the apps they hold a right on", func(t *testing.T) {
		ts := ts.with(t)
		u := ts.createUser("member", nil)
		tok := ts.login("member", userPass)
		if got := ts.appIDs(tok); len(got) != 0 {
			t.Errorf("no rights: sees %v", got)
		}
		i9 := seedScopes(ts, two.ID).id(two.ID, "i1")
		expectStatus(t, ts.grant(ts.admin, map[string]any{"user": u.ID, "app": two.ID, "item": i9, "permissions": []string{"read"}}), 200)
		if got := ts.appIDs(tok); !slices.Equal(got, []string{two.ID}) {
			t.Errorf("right on Two: sees %v", got)
		}
		expectStatus(t, ts.get("/core-api/app/"+two.ID, tok), 200)
		expectHaloError(t, ts.get("/core-api/app/"+one.ID, tok), 404)
		expectHaloError(t, ts.post("/core-api/app/", tok, map[string]any{"name": "Mine"}), 403)
		expectHaloError(t, ts.put("/core-api/app/"+two.ID, tok, map[string]any{"name": "Renamed"}), 403)
	})

	t.Run("an app token sees only its app", func(t *testing.T) {
		ts := ts.with(t)
		var tr tokenResp
		ts.mustJSON(ts.post("/api/oauth/token?_app", "", url.Values{"grant_type": {"client_credentials"}, "client_id": {one.ClientID},
			"client_secret": {*one.ClientSecret}}), 200, &tr)
		if got := ts.appIDs(tr.AccessToken); !slices.Equal(got, []string{one.ID}) {
			t.Errorf("app token sees %v, want [%s]", got, one.ID)
		}
		expectStatus(t, ts.get("/core-api/app/"+one.ID, tr.AccessToken), 200)
		expectHaloError(t, ts.get("/core-api/app/"+two.ID, tr.AccessToken), 404)
		expectHaloError(t, ts.post("/core-api/app/", tr.AccessToken, map[string]any{"name": "Spawn"}), 403)
		expectHaloError(t, ts.grant(tr.AccessToken, map[string]any{"user": ts.adminID, "app": one.ID, "permissions": []string{"read"}}), 403)
	})

	t.Run("rename", func(t *testing.T) {
		ts := ts.with(t)
		r := ts.put("/core-api/app/"+one.ID, ts.admin, map[string]any{"name": "One renamed"})
		var got appView
		ts.mustJSON(r, 200, &got)
		if got.Name != "One renamed" || got.ClientSecret != nil {
			t.Errorf("%s", r)
		}
		var apps []appView
		ts.mustJSON(ts.get("/core-api/app/", ts.admin), 200, &apps)
		if len(apps) != 2 || apps[0].Name != "One renamed" {
			t.Errorf("after rename: %+v", apps)
		}
		// The secret still works after a rename.
		expectStatus(t, ts.post("/api/oauth/token?_app", "", url.Values{"grant_type": {"client_credentials"}, "client_id": {one.ClientID},
			"client_secret": {*one.ClientSecret}}), 200)
	})
}

func TestReadYourWrites(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	app := ts.createApp("RYW")
	m1 := seedScopes(ts, app.ID).id(app.ID, "m1")
	for i := 0; i < 5; i++ {
		name := "ryw" + string(rune('a'+i))
		var u userView
		ts.mustJSON(ts.post("/core-api/user/", ts.admin, map[string]any{"username": name, "password": userPass}), 201, &u)
		// No retry: the very next requests must see the write.
		r := ts.passwordGrant(name, userPass, nil)
		if !expectStatus(t, r, 200) {
			continue
		}
		var tr tokenResp
		_ = json.Unmarshal(r.Body, &tr)
		expectStatus(t, ts.get("/core-api/user/"+u.ID, ts.admin), 200)
		expectStatus(t, ts.get("/api/core/user/self", tr.AccessToken), 200)

		expectStatus(t, ts.grant(ts.admin, map[string]any{"user": u.ID, "app": app.ID, "module": m1, "permissions": []string{"read"}}), 200)
		if got := ts.appIDs(tr.AccessToken); !slices.Equal(got, []string{app.ID}) {
			t.Errorf("right after the grant, %s sees apps %v, want [%s]", name, got, app.ID)
		}
		expectStatus(t, ts.revoke(ts.admin, map[string]any{"user": u.ID, "app": app.ID, "module": m1, "permissions": []string{"read"}}), 200)
		if got := ts.appIDs(tr.AccessToken); len(got) != 0 {
			t.Errorf("right after the revoke, %s sees apps %v, want none", name, got)
		}
		// An update is visible at once too.
		expectStatus(t, ts.put("/core-api/user/"+u.ID, ts.admin, map[string]any{"name": "Renamed " + name}), 200)
		var self userView
		ts.mustJSON(ts.get("/api/core/user/self", tr.AccessToken), 200, &self)
		if self.Name != "Renamed "+name {
			t.Errorf("right after the update, self shows name %q", self.Name)
		}
	}
	_ = http.StatusOK
}
