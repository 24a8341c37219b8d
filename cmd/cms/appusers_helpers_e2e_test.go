package main

// Helpers of the segmentation end-to-end tests: app users (devices),
// identified users, pockets and segments.

import (
	"encoding/json"
	"net/http"
	"regexp"
	"testing"
)

// Paths of the segmentation API.
const (
	appUserPath       = "/api/segmentation/appuser"
	appUserSearchPath = "/api/segmentation/appuser/search"
	registerPath      = "/api/segmentation/identified/register"
	loginPath         = "/api/segmentation/identified/login"
	identifiedSearch  = "/api/segmentation/identified/search"
	pocketPath        = "/api/segmentation/identified-pocket"
	pocketSelfPath    = "/api/segmentation/identified-pocket/self"
)

// Tag types.
const (
	systemTag = "000000000000000000000001"
	userTag   = "000000000000000000000002"
	marketTag = "000000000000000000000003"
)

var (
	aliasRe      = regexp.MustCompile(`^anonymous-[a-z2-7]{26}$`)
	identifiedRe = regexp.MustCompile(`^identified-[a-z2-7]{26}$`)
	objectIDRe   = regexp.MustCompile(`^[0-9a-f]{24}$`)
)

// appUserView is an app user on the wire.
type appUserView struct {
	ID         string          `json:"id"`
	Alias      string          `json:"alias"`
	AppID      json.RawMessage `json:"appId"`
	CustomerID json.RawMessage `json:"customerId"`
	Email      string          `json:"email"`
	Devices    []deviceView    `json:"devices"`
	Tags       []tagView       `json:"tags"`
	CreatedAt  int64           `json:"createdAt"`
	UpdatedAt  int64           `json:"updatedAt"`
	DeletedAt  json.RawMessage `json:"deletedAt"`
	Identified string          `json:"identified"`
}

type deviceView struct {
	Platform string `json:"platform"`
	Token    string `json:"token"`
}

// tag finds a tag by name.
func (u appUserView) tag(name string) (tagView, bool) {
	for _, t := range u.Tags {
		if t.Name == name {
			return t, true
		}
	}
	return tagView{}, false
}

// androidTags are the system tags the Android SDK collects, a user tag and
// a market tag, as it sends them.
func androidTags() []map[string]any {
	tags := []map[string]any{}
	for _, nv := range [][2]string{{"Platform Name", "android"}, {"Android Version", "6.0"}, {"Application Name", "Halo"},
		{"Application Version", "2.0.0"}, {"Device Manufacturer", "unknown"}, {"Device Model", "Android SDK built for x86_64"},
		{"Device Type", "Phone"}, {"Bluetooth 4 Support", "false"}, {"NFC Support", "false"}, {"Screen Size", "1080x1794"},
		{"Android SDK Version", "2.0.0-SNAPSHOT"}, {"Test Device", "true"}} {
		tags = append(tags, map[string]any{"name": nv[0], "value": nv[1], "tagType": systemTag})
	}
	tags = append(tags, map[string]any{"name": "myCustomTagYear", "value": "1984", "tagType": userTag})
	tags = append(tags, map[string]any{"id": "000000000000000000000100", "name": "Afghanistan", "tagType": marketTag})
	return tags
}

// createAppUser POSTs an app user (201 required).
func (ts *testServer) createAppUser(token string, body any) appUserView {
	ts.t.Helper()
	var u appUserView
	ts.mustJSON(ts.post(appUserPath, token, body), http.StatusCreated, &u)
	if !objectIDRe.MatchString(u.ID) || !aliasRe.MatchString(u.Alias) {
		ts.t.Fatalf("created app user: id %q alias %q", u.ID, u.Alias)
	}
	return u
}

func (ts *testServer) appUser(token, id string) appUserView {
	ts.t.Helper()
	var u appUserView
	ts.mustJSON(ts.get(appUserPath+"/"+id, token), http.StatusOK, &u)
	return u
}

// appUserPage is a segment search answer.
type appUserPage struct {
	Pagination paginationView `json:"pagination"`
	Items      []appUserView  `json:"items"`
}

func (ts *testServer) segment(token string, body map[string]any) appUserPage {
	ts.t.Helper()
	var p appUserPage
	ts.mustJSON(ts.post(appUserSearchPath, token, body), http.StatusOK, &p)
	return p
}

func (p appUserPage) ids() []string {
	out := make([]string, len(p.Items))
	for i, u := range p.Items {
		out[i] = u.ID
	}
	return out
}

// profileView is HALO's UserProfile.
type profileView struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	Name        string `json:"name"`
	Surname     string `json:"surname"`
	DisplayName string `json:"displayName"`
	PhotoURL    string `json:"photoUrl"`
}

type loginView struct {
	User  *profileView `json:"user"`
	Token *tokenResp   `json:"token"`
}

// register signs an identified user up (201 required).
func (ts *testServer) register(appToken, email, password, alias string) profileView {
	ts.t.Helper()
	var p profileView
	ts.mustJSON(ts.post(registerPath, appToken, map[string]any{
		"auth":    map[string]any{"email": email, "password": password, "deviceId": alias, "network": "halo"},
		"profile": map[string]any{"email": email, "name": "name", "surname": "surname", "photoUrl": ""},
	}), http.StatusCreated, &p)
	if !identifiedRe.MatchString(p.ID) || p.Email != email {
		ts.t.Fatalf("registered %+v", p)
	}
	return p
}

// loginForm signs in as Android does (a form body), 200 required.
func (ts *testServer) loginForm(appToken, email, password, alias string) loginView {
	ts.t.Helper()
	var l loginView
	ts.mustJSON(ts.post(loginPath, appToken, form("network", "halo", "email", email, "password", password, "deviceId", alias)), http.StatusOK, &l)
	if l.User == nil || l.Token == nil || l.Token.AccessToken == "" || l.Token.TokenType != "Bearer" {
		ts.t.Fatalf("login: %+v", l)
	}
	return l
}

type pocketView struct {
	Data       map[string]any      `json:"data"`
	References map[string][]string `json:"references"`
}

// haloErrorOf decodes a HALO error body after checking the status.
func haloErrorOf(t testing.TB, r response, status int) (string, map[string]any) {
	t.Helper()
	expectHaloError(t, r, status)
	var e haloErr
	if err := json.Unmarshal(r.Body, &e); err != nil || e.Error == nil {
		return "", nil
	}
	return e.Error.Message, e.Error.Extra
}
