package main

import (
	"encoding/json"
	"net/http"
	"testing"
)

// serverVersionView is HALO's ServerVersion (wire reference §8.2) with the
// types the SDKs decode it into: the strings iOS force-casts are never null.
type serverVersionView struct {
	ID               *int64  `json:"id"`
	Server           *string `json:"server"`
	ServerChangeLog  *string `json:"serverChangeLog"`
	MinAndroid       *string `json:"minAndroid"`
	AndroidChangeLog *string `json:"androidChangeLog"`
	MinIOS           *string `json:"minIOS"`
	IOSChangeLog     *string `json:"iosChangeLog"`
	Current          *bool   `json:"current"`
	CreatedAt        *int64  `json:"createdAt"`
	UpdatedAt        *int64  `json:"updatedAt"`
}

func (v serverVersionView) complete() bool {
	return v.ID != nil && v.Server != nil && v.ServerChangeLog != nil && v.MinAndroid != nil && v.AndroidChangeLog != nil &&
		v.MinIOS != nil && v.IOSChangeLog != nil && v.Current != nil && v.CreatedAt != nil && v.UpdatedAt != nil
}

// The SDKs' version check: Android's GET …/version/current (one object),
// iOS's GET …/version with {"current":"true"} in the body (an array whose
// first element has minIOS and iosChangeLog). A default answers before any
// is set; an administrator sets a version and everyone reads it back; no
// one else may set it.
func TestServerVersion(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Versioned app")
	appTok := ts.appToken(app)
	alias := ts.createAppUser(appTok, map[string]any{"devices": []any{}, "tags": []any{}}).Alias
	ts.register(appTok, "ann@example.com", "ann-secret-1", alias)
	identified := ts.loginForm(appTok, "ann@example.com", "ann-secret-1", alias).Token.AccessToken
	ts.createUser("editor", nil)
	editor := ts.login("editor", userPass)

	android := func(tok string) serverVersionView {
		t.Helper()
		r := ts.get("/api/authentication/version/current", tok)
		var v serverVersionView
		ts.mustJSON(r, http.StatusOK, &v)
		checkShapeOf(t, r, "server-version-current.android.json")
		if !v.complete() || !*v.Current {
			t.Errorf("Android's current version %s: want every field, current true", r.Body)
		}
		return v
	}
	ios := func(tok string) serverVersionView {
		t.Helper()
		r := ts.do(request{method: "GET", path: "/api/authentication/version", token: tok, body: map[string]any{"current": "true"}})
		var vs []serverVersionView
		ts.mustJSON(r, http.StatusOK, &vs)
		if len(vs) != 1 || !vs[0].complete() || !*vs[0].Current {
			t.Fatalf("iOS's versions %s: want one, complete and current", r.Body)
		}
		var raw []any
		_ = json.Unmarshal(r.Body, &raw)
		checkShape(t, "server-version-current.android.json", []any{loadFixture(t, "server-version-current.android.json")}, raw[0])
		return vs[0]
	}

	def := android(appTok)
	if *def.MinAndroid == "" || *def.MinIOS == "" || *def.Server == "" {
		t.Errorf("default %+v: want versions", def)
	}
	if d := ios(appTok); *d.MinIOS != *def.MinIOS || *d.IOSChangeLog != *def.IOSChangeLog {
		t.Errorf("iOS reads %s/%s, Android %s/%s", *d.MinIOS, *d.IOSChangeLog, *def.MinIOS, *def.IOSChangeLog)
	}

	set := map[string]any{"server": "2.7.1", "serverChangeLog": "https://example.com/server/2.7.1",
		"minAndroid": "2.3.0", "androidChangeLog": "https://example.com/android/2.3.0",
		"minIOS": "2.4.0", "iosChangeLog": "https://example.com/ios/2.4.0"}
	// Only administrators set it: app, identified and other CMS tokens get 403.
	for name, tok := range map[string]string{"app": appTok, "identified": identified, "editor": editor} {
		if r := ts.put("/api/authentication/version", tok, set); r.Status != http.StatusForbidden {
			t.Errorf("%s sets the version: %s, want 403", name, r)
		} else {
			expectHaloError(t, r, http.StatusForbidden)
		}
	}
	expectHaloError(t, ts.put("/api/authentication/version", ts.admin, map[string]any{"server": "2.7.1", "minAndroid": "", "minIOS": "2"}), http.StatusBadRequest)
	expectHaloError(t, ts.put("/api/authentication/version", ts.admin, map[string]any{"server": "2.7.1", "minAndroid": "2", "minIOS": "2", "iosChangeLog": "javascript:alert(1)"}), http.StatusBadRequest)
	expectHaloError(t, ts.do(request{method: "GET", path: "/api/authentication/version", token: appTok, body: map[string]any{"current": "maybe"}}), http.StatusBadRequest)
	if v := android(appTok); *v.Server != *def.Server || *v.MinIOS != *def.MinIOS {
		t.Errorf("refused changes changed the version: %+v", v)
	}

	var put serverVersionView
	ts.mustJSON(ts.put("/api/authentication/version", ts.admin, set), http.StatusOK, &put)
	if !put.complete() || *put.MinIOS != "2.4.0" || !*put.Current || *put.CreatedAt == 0 {
		t.Errorf("PUT answered %+v", put)
	}
	// Any token reads it back, both ways.
	for name, tok := range map[string]string{"app": appTok, "identified": identified, "editor": editor, "admin": ts.admin} {
		a, i := android(tok), ios(tok)
		if *a.Server != "2.7.1" || *a.MinAndroid != "2.3.0" || *a.AndroidChangeLog != "https://example.com/android/2.3.0" {
			t.Errorf("%s: Android reads %+v", name, a)
		}
		if *i.MinIOS != "2.4.0" || *i.IOSChangeLog != "https://example.com/ios/2.4.0" || *i.ID != *a.ID {
			t.Errorf("%s: iOS reads %+v", name, i)
		}
	}
	// Without current, the history, newest first; the query says current too.
	var all []serverVersionView
	ts.mustJSON(ts.get("/api/authentication/version", appTok), http.StatusOK, &all)
	if len(all) != 1 || *all[0].MinIOS != "2.4.0" {
		t.Errorf("history %+v: want the one version set", all)
	}
	set["minIOS"] = "2.5.0"
	ts.mustJSON(ts.put("/api/authentication/version/", ts.admin, set), http.StatusOK, &put)
	ts.mustJSON(ts.get("/api/authentication/version", appTok), http.StatusOK, &all)
	if len(all) != 2 || *all[0].MinIOS != "2.5.0" || !*all[0].Current || *all[1].MinIOS != "2.4.0" || *all[1].Current {
		t.Errorf("history after a second set: %d versions", len(all))
	}
	ts.mustJSON(ts.get("/api/authentication/version?current=true", appTok), http.StatusOK, &all)
	if len(all) != 1 || *all[0].MinIOS != "2.5.0" {
		t.Errorf("?current=true: %d versions", len(all))
	}
	expectHaloError(t, ts.get("/api/authentication/version/current", ""), http.StatusUnauthorized)
}
