package main

import (
	"bytes"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/halocms/halocms/adapters/postgres"
)

// Register, then sign in as Android (a form) and iOS (JSON) do; the login
// links the device's alias to the identified user, and its token is an
// APP+ token: refreshable, revocable, reading what the app token reads.
func TestAppUsersIdentifiedFlow(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app, appB := ts.createApp("APP+"), ts.createApp("other")
	tok, tokB := ts.appToken(app), ts.appToken(appB)
	device := ts.createAppUser(tok, map[string]any{"devices": []map[string]any{{"platform": "android", "token": "t1"}}})

	r := ts.post(registerPath, tok, map[string]any{
		"auth":    map[string]any{"email": "account@mobgen.com", "password": "secret-password", "deviceId": device.Alias},
		"profile": map[string]any{"email": "account@mobgen.com", "name": "name", "surname": "surname", "photoUrl": "https://example.com/p.png"},
	})
	var prof profileView
	ts.mustJSON(r, http.StatusCreated, &prof)
	checkShapeOf(t, r, "identified-register-response.android.json")
	if !identifiedRe.MatchString(prof.ID) || prof.DisplayName != "name surname" || prof.PhotoURL != "https://example.com/p.png" {
		t.Errorf("registered %+v", prof)
	}
	if got := ts.appUser(tok, device.ID); got.Identified != prof.ID {
		t.Errorf("registration did not link the device: %q", got.Identified)
	}

	// The email is the account's within the app, whatever its case.
	r = ts.post(registerPath, tok, map[string]any{"auth": map[string]any{"email": "Account@Mobgen.com", "password": "another-password"}})
	expectHaloError(t, r, http.StatusConflict)
	if p := ts.register(tokB, "account@mobgen.com", "b-password", ""); p.ID == prof.ID {
		t.Errorf("another app's user got the same id")
	}
	for _, bad := range []any{
		`{"auth": {"email": "x@example.com", "password": "short"}}`,
		`{"auth": {"email": "not-an-email", "password": "long-enough"}}`,
		`{"profile": {"name": "x"}}`,
		`{"auth": {"email": "x@example.com", "password": "long-enough", "network": "facebook", "token": "fb"}}`,
		`{"auth": {"email": "x@example.com", "password": "long-enough"}, "blah": 1}`,
		`{"auth": `,
	} {
		expectHaloError(t, ts.post(registerPath, tok, bad), http.StatusBadRequest)
	}
	expectHaloError(t, ts.post(registerPath, ts.admin, `{"auth": {"email": "x@example.com", "password": "long-enough"}}`), http.StatusForbidden)

	// A second device signs in with a form, as Android does.
	second := ts.createAppUser(tok, map[string]any{"devices": []map[string]any{{"platform": "android", "token": "t2"}}})
	r = ts.post(loginPath, tok, form("network", "halo", "email", "account@mobgen.com", "password", "secret-password", "deviceId", second.Alias))
	var login loginView
	ts.mustJSON(r, http.StatusOK, &login)
	checkShapeOf(t, r, "identified-login-response.android.json")
	if login.User == nil || login.User.ID != prof.ID || login.Token == nil || *login.Token.Scope != "app" || string(login.Token.ExpiresIn) == "" {
		t.Fatalf("login %s", r.Body)
	}
	if got := ts.appUser(tok, second.ID); got.Identified != prof.ID {
		t.Errorf("login did not link the second device: %q", got.Identified)
	}
	// iOS: JSON.
	r = ts.post(loginPath, tok, map[string]any{"network": "halo", "email": "account@mobgen.com", "password": "secret-password", "deviceId": device.Alias})
	var ios loginView
	ts.mustJSON(r, http.StatusOK, &ios)
	if ios.User == nil || ios.User.ID != prof.ID || ios.Token.AccessToken == login.Token.AccessToken {
		t.Errorf("iOS login %s", r.Body)
	}

	// Bad credentials: HALO's 400.
	for _, l := range []url.Values{
		form("network", "halo", "email", "account@mobgen.com", "password", "wrong-password"),
		form("network", "halo", "email", "nobody@mobgen.com", "password", "secret-password"),
		form("email", "account@mobgen.com"),
	} {
		r := ts.post(loginPath, tok, l)
		msg, _ := haloErrorOf(t, r, http.StatusBadRequest)
		if msg != "Credentials are not valid" {
			t.Errorf("message %q", msg)
		}
		checkShapeOf(t, r, "error-400-identified-login.ios.json")
	}
	// The account is the app's: another app's token does not find it.
	r = ts.post(loginPath, tokB, form("email", "account@mobgen.com", "password", "secret-password"))
	expectHaloError(t, r, http.StatusBadRequest)
	r = ts.post(loginPath, tok, map[string]any{"network": "google", "token": "id-token", "deviceId": device.Alias})
	if msg, _ := haloErrorOf(t, r, http.StatusBadRequest); !strings.Contains(msg, "network not supported") {
		t.Errorf("google: %q", msg)
	}
	expectHaloError(t, ts.post(loginPath, ts.admin, form("email", "account@mobgen.com", "password", "secret-password")), http.StatusForbidden)

	// The identified token reads the app's app users, not another app's.
	idTok := login.Token.AccessToken
	if got := ts.appUser(idTok, device.ID); got.ID != device.ID {
		t.Errorf("identified token GET %+v", got)
	}
	other := ts.createAppUser(tokB, map[string]any{})
	expectHaloError(t, ts.get(appUserPath+"/"+other.ID, idTok), http.StatusNotFound)

	// Refresh and revoke.
	var refreshed tokenResp
	ts.mustJSON(ts.post("/api/oauth/token?_app", "", form("grant_type", "refresh_token", "refresh_token", login.Token.RefreshToken,
		"client_id", app.ClientID, "client_secret", *app.ClientSecret)), http.StatusOK, &refreshed)
	if got := ts.appUser(refreshed.AccessToken, device.ID); got.ID != device.ID {
		t.Errorf("refreshed token GET %+v", got)
	}
	ts.mustJSON(ts.get(pocketSelfPath, refreshed.AccessToken), http.StatusOK, nil)
	ts.mustJSON(ts.post("/api/oauth/revoke", "", form("token", refreshed.AccessToken)), http.StatusOK, nil)
	expectHaloError(t, ts.get(pocketSelfPath, refreshed.AccessToken), http.StatusUnauthorized)
	if got := ts.appUser(ios.Token.AccessToken, device.ID); got.ID != device.ID {
		t.Errorf("another login's token was revoked too")
	}

	// The CMS lists the app's identified users.
	var page struct {
		Pagination paginationView `json:"pagination"`
		Items      []profileView  `json:"items"`
	}
	ts.mustJSON(ts.post(identifiedSearch, ts.admin, map[string]any{"appId": app.ID, "search": "MOBGEN"}), http.StatusOK, &page)
	if page.Pagination.TotalItems != 1 || len(page.Items) != 1 || page.Items[0].ID != prof.ID {
		t.Errorf("identified search: %+v", page)
	}
}

// Failed sign-ins are throttled per account and address, like the CMS
// password grant.
func TestAppUsersIdentifiedLoginThrottle(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("throttle")
	tok := ts.appToken(app)
	ts.register(tok, "ann@example.com", "ann-password", "")
	var last response
	for range 11 {
		last = ts.post(loginPath, tok, form("email", "ann@example.com", "password", "guess-guess"))
	}
	expectHaloError(t, last, http.StatusTooManyRequests)
	if last.Header.Get("Retry-After") == "" {
		t.Errorf("no Retry-After")
	}
	expectHaloError(t, ts.post(loginPath, tok, form("email", "ann@example.com", "password", "ann-password")), http.StatusTooManyRequests)
}

// An identified user's token reads the app's published content exactly as
// the app token does, and writes none.
func TestAppUsersIdentifiedReadsContentLikeTheApp(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app, appB := ts.createApp("content"), ts.createApp("other")
	tok := ts.appToken(app)
	news := ts.createModule(ts.admin, moduleBody(app.ID, "News", fld("title", ftText)))
	past := nowMS() - 60_000
	pub := ts.createItem(ts.admin, itemBody(news.ID, "published", map[string]any{"title": "p"}, "publishedAt", past))
	ts.createItem(ts.admin, itemBody(news.ID, "concept", map[string]any{"title": "c"}))
	otherNews := ts.createModule(ts.admin, moduleBody(appB.ID, "News", fld("title", ftText)))
	ts.createItem(ts.admin, itemBody(otherNews.ID, "other app", map[string]any{"title": "o"}, "publishedAt", past))

	ts.register(tok, "reader@example.com", "reader-password", "")
	idTok := ts.loginForm(tok, "reader@example.com", "reader-password", "").Token.AccessToken

	for _, body := range []map[string]any{{}, {"moduleName": "News"}, {"moduleIds": []string{otherNews.ID}}} {
		want := ts.searchIDs(tok, body)
		got := ts.searchIDs(idTok, body)
		if !slices.Equal(got, want) {
			t.Errorf("search %v: identified %v, app %v", body, got, want)
		}
	}
	if got := ts.searchIDs(idTok, map[string]any{}); !slices.Equal(got, []string{pub.ID}) {
		t.Errorf("identified search: %v, want only the published item of its app", got)
	}
	r := ts.post(instancePath, idTok, itemBody(news.ID, "by identified", map[string]any{"title": "x"}))
	expectHaloError(t, r, http.StatusForbidden)
	expectHaloError(t, ts.put(instancePath+"/"+pub.ID, idTok, itemBody(news.ID, "changed", map[string]any{"title": "x"})), http.StatusForbidden)
	if got := ts.searchIDs(ts.admin, map[string]any{"moduleIds": []string{news.ID}}); len(got) != 2 {
		t.Errorf("the module has %d items, want 2", len(got))
	}
}

// The pocket: GET with filterReferences[], PUT on the three paths the
// SDKs and the release notes use; data replaces, references merge, null
// clears; identified users only; bad input changes nothing.
func TestAppUsersPocket(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("pocket")
	tok := ts.appToken(app)
	ts.register(tok, "p@example.com", "pocket-password", "")
	me := ts.loginForm(tok, "p@example.com", "pocket-password", "").Token.AccessToken

	expectHaloError(t, ts.get(pocketSelfPath, tok), http.StatusForbidden)
	expectHaloError(t, ts.put(pocketPath, tok, `{"data": {}}`), http.StatusForbidden)
	expectHaloError(t, ts.get(pocketSelfPath, ts.admin), http.StatusForbidden)

	var p pocketView
	read := func(r response) {
		t.Helper()
		p = pocketView{} // decoding into old maps would merge
		ts.mustNum(r, http.StatusOK, &p)
	}
	r := ts.get(pocketSelfPath, me)
	read(r)
	if p.Data == nil || p.References == nil || len(p.Data)+len(p.References) != 0 {
		t.Errorf("a new pocket: %s", r.Body)
	}

	fixture := `{"data":{"Date":1498140119461,"Thumbnail":"https://mobgen.com/x.png","Title":"userName","Id":"132224","ContentHtml":"This is my bio"},
		"references":{"favorites":["fav_1","fav_2"],"newsCollection":["new_1","new_2"],"eventsCollection":["event_1","event_2"]}}`
	r = ts.put(pocketPath+"/", me, fixture) // Android
	read(r)
	checkShapeOf(t, r, "pocket-response.android.json")
	if !strings.Contains(string(r.Body), `"Date":1498140119461`) {
		t.Errorf("a number in data changed: %s", r.Body)
	}
	r = ts.get(pocketSelfPath+"?filterReferences[]=favorites", me)
	read(r)
	checkShapeOf(t, r, "pocket-response-filtered.android.json")
	if len(p.References) != 1 || !slices.Equal(p.References["favorites"], []string{"fav_1", "fav_2"}) || p.Data["Title"] != "userName" {
		t.Errorf("filtered: %s", r.Body)
	}
	r = ts.get(pocketSelfPath+"?"+url.Values{"filterReferences[]": {"favorites", "eventsCollection", "nope"}}.Encode(), me)
	read(r)
	if len(p.References) != 2 {
		t.Errorf("two filters: %s", r.Body)
	}
	r = ts.get(pocketSelfPath+"?filterReferences[]=", me)
	read(r)
	if len(p.References) != 0 || len(p.Data) != 5 {
		t.Errorf("an empty filter keeps no references: %s", r.Body)
	}

	// iOS path: references merge, null clears; data left out stays.
	r = ts.put(pocketPath, me, `{"references":{"newsCollection":null,"favorites":["fav_3"],"added":[]}}`)
	read(r)
	if _, ok := p.References["newsCollection"]; ok || !slices.Equal(p.References["favorites"], []string{"fav_3"}) ||
		len(p.References["eventsCollection"]) != 2 || p.References["added"] == nil || p.Data["Title"] != "userName" {
		t.Errorf("after the merge: %s", r.Body)
	}
	// 2.5.0 path: data replaced.
	r = ts.put(pocketSelfPath, me, `{"data":{"n":12345678901234567890}}`)
	read(r)
	if len(p.Data) != 1 || !strings.Contains(string(r.Body), `12345678901234567890`) || len(p.References) != 3 {
		t.Errorf("after replacing data: %s", r.Body)
	}
	before := ts.get(pocketSelfPath, me).Body

	big := `{"data":{"x":"` + strings.Repeat("a", 65<<10) + `"}}`
	expectHaloError(t, ts.put(pocketPath, me, big), http.StatusRequestEntityTooLarge)
	for _, bad := range []string{`{"data":[1,2]}`, `{"data":"x"}`, `{"references":{"a":"x"}}`, `{"references":[]}`, `{"blah":1}`, `{"data":`} {
		expectHaloError(t, ts.put(pocketPath, me, bad), http.StatusBadRequest)
	}
	many := map[string][]string{}
	for i := range 101 {
		many["r"+strings.Repeat("x", i)] = []string{"1"}
	}
	expectHaloError(t, ts.put(pocketPath, me, map[string]any{"references": many}), http.StatusBadRequest)
	if after := ts.get(pocketSelfPath, me).Body; !bytes.Equal(before, after) {
		t.Errorf("bad input changed the pocket:\n%s\n%s", before, after)
	}
}

// Sign-ups are throttled per address as failed sign-ins are: each taken
// email counts, successful sign-ups are taken back, and once an address
// is over the limit every sign-up and sign-in from it is refused.
func TestAppUsersRegisterThrottled(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	tok := ts.appToken(ts.createApp("throttled"))
	for i := range 3 {
		ts.register(tok, fmt.Sprintf("u%d@example.com", i), "user-password", "")
	}
	taken := map[string]any{"auth": map[string]any{"email": "u0@example.com", "password": "user-password"}}
	for i := 3; i < postgres.DefaultIPLimit; i++ { // the 3 successes were taken back
		if r := ts.post(registerPath, tok, taken); r.Status != http.StatusConflict {
			t.Fatalf("taken email, attempt %d: %s, want 409", i, r)
		}
	}
	for i := range 3 {
		if r := ts.post(registerPath, tok, taken); r.Status != http.StatusConflict {
			t.Fatalf("taken email, attempt %d past the successes: %s, want 409", i, r)
		}
	}
	_, extra := haloErrorOf(t, ts.post(registerPath, tok, taken), http.StatusTooManyRequests)
	if extra["retryAfter"] == nil {
		t.Errorf("429 without retryAfter: %v", extra)
	}
	fresh := map[string]any{"auth": map[string]any{"email": "new@example.com", "password": "user-password"}}
	expectHaloError(t, ts.post(registerPath, tok, fresh), http.StatusTooManyRequests)
	// Sign-ins of those who have not failed from the address still work.
	expectStatus(t, ts.post(loginPath, tok, form("network", "halo", "email", "u1@example.com", "password", "user-password")), 200)
}
