package appuser

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"

	httpapi "github.com/halocms/halocms/adapters/http"

	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/fault"
	rmappuser "github.com/halocms/halocms/readmodels/appuser"
)

// Wire shapes of the segmentation API (wire reference §6): app users,
// identified users and pockets.

type deviceJSON struct {
	Platform string `json:"platform"`
	Token    string `json:"token"`
}

// appUserJSON is an app user as the SDKs read it. appId is the app's
// number (an integer on the wire), customerId the one customer.
type appUserJSON struct {
	ID         string            `json:"id"`
	Alias      string            `json:"alias"`
	AppID      int               `json:"appId"`
	CustomerID int               `json:"customerId"`
	Email      string            `json:"email,omitempty"`
	Devices    []deviceJSON      `json:"devices"`
	Tags       []httpapi.TagJSON `json:"tags"`
	CreatedAt  int64             `json:"createdAt"`
	UpdatedAt  int64             `json:"updatedAt"`
	DeletedAt  *int64            `json:"deletedAt"`
	Identified string            `json:"identified,omitempty"` // the identified user last signed in on it
}

func appUserJSONOf(u rmappuser.AppUser) appUserJSON {
	j := appUserJSON{ID: u.ID, Alias: u.Alias, AppID: u.AppNumber, CustomerID: httpapi.CustomerID, Email: u.Email,
		Devices: make([]deviceJSON, len(u.Devices)), Tags: make([]httpapi.TagJSON, len(u.Tags)),
		CreatedAt: u.CreatedAt, UpdatedAt: u.UpdatedAt, Identified: u.Identified}
	for i, d := range u.Devices {
		j.Devices[i] = deviceJSON(d)
	}
	for i, t := range u.Tags {
		j.Tags[i] = httpapi.TagJSON(t)
	}
	return j
}

// Keys an app user body may carry: what the SDKs send, and the response's
// own keys (echoed back), which the server sets itself and ignores.
var (
	appUserKeys = []string{"id", "alias", "appId", "customerId", "email", "devices", "tags", "replaceTokens",
		"createdAt", "updatedAt", "deletedAt", "identified"}
	deviceKeys = []string{"platform", "token"}
	tagKeys    = []string{"id", "name", "value", "tagType"}
)

// appUserBody is a decoded app user body.
type appUserBody struct {
	ID            string
	AppID         any // a number (the app's number) or a string (its id or number), or nil
	Profile       appuser.Profile
	ReplaceTokens *bool
}

// readAppUserBody reads an app user body as HALO validates it: an
// attribute it does not know, or a value of the wrong type, is a 400 whose
// extra names the attribute ({"blah": "undefined_attribute"}).
func readAppUserBody(r *http.Request) (appUserBody, error) {
	var out appUserBody
	raw, err := readJSONObject(r)
	if err != nil {
		return out, err
	}
	bad := appuser.Problems{}
	undefinedKeys(raw, appUserKeys, "", bad)
	str := func(key string) string {
		v, ok := raw[key]
		if !ok || string(v) == "null" {
			return ""
		}
		var s string
		if json.Unmarshal(v, &s) != nil {
			bad.Add(key, appuser.CodeInvalid)
		}
		return s
	}
	out.ID = str("id")
	out.Profile.Email = str("email")
	if v, ok := raw["appId"]; ok {
		if out.AppID, err = appIDValue(v); err != nil {
			bad.Add("appId", appuser.CodeInvalid)
		}
	}
	if v, ok := raw["replaceTokens"]; ok && string(v) != "null" {
		var b bool
		if json.Unmarshal(v, &b) != nil {
			bad.Add("replaceTokens", appuser.CodeInvalid)
		}
		out.ReplaceTokens = &b
	}
	for i, d := range objectList(raw, "devices", bad) {
		at := fmt.Sprintf("devices[%d].", i)
		undefinedKeys(d, deviceKeys, at, bad)
		out.Profile.Devices = append(out.Profile.Devices, appuser.Device{
			Platform: bodyText(d, "platform", at, bad), Token: bodyText(d, "token", at, bad)})
	}
	for i, t := range objectList(raw, "tags", bad) {
		at := fmt.Sprintf("tags[%d].", i)
		undefinedKeys(t, tagKeys, at, bad)
		tag := appuser.Tag{ID: bodyText(t, "id", at, bad), Name: bodyText(t, "name", at, bad), Value: bodyText(t, "value", at, bad)}
		if v, ok := t["tagType"]; ok {
			var obj struct {
				ID string `json:"id"`
			}
			if json.Unmarshal(v, &obj) == nil && bytes.HasPrefix(bytes.TrimSpace(v), []byte("{")) {
				tag.TagType = obj.ID // the expanded {id, name, ...} form of old data
			} else {
				tag.TagType = bodyText(t, "tagType", at, bad)
			}
		}
		out.Profile.Tags = append(out.Profile.Tags, tag)
	}
	return out, bad.Err()
}

// readJSONObject reads a JSON object body into its raw members.
func readJSONObject(r *http.Request) (map[string]json.RawMessage, error) {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return nil, httpapi.BadJSON(err)
	}
	var raw map[string]json.RawMessage
	d := json.NewDecoder(bytes.NewReader(body))
	if err := d.Decode(&raw); err != nil {
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			return nil, fault.Invalidf("the body must be a JSON object")
		}
		return nil, httpapi.BadJSON(err)
	}
	if d.More() {
		return nil, fault.Invalidf("malformed JSON: more than one value in the body")
	}
	if raw == nil {
		return nil, fault.Invalidf("the body must be a JSON object")
	}
	return raw, nil
}

// undefinedKeys records the keys of obj that are not in allowed.
func undefinedKeys(obj map[string]json.RawMessage, allowed []string, at string, bad appuser.Problems) {
	for k := range obj {
		if !slices.Contains(allowed, k) {
			bad.Add(at+k, appuser.CodeUndefinedAttribute)
		}
	}
}

// objectList reads raw[key] as an array of objects (null or absent: none).
func objectList(raw map[string]json.RawMessage, key string, bad appuser.Problems) []map[string]json.RawMessage {
	v, ok := raw[key]
	if !ok || string(v) == "null" {
		return nil
	}
	var out []map[string]json.RawMessage
	if json.Unmarshal(v, &out) != nil {
		bad.Add(key, appuser.CodeInvalid)
		return nil
	}
	for i, o := range out {
		if o == nil {
			bad.Add(fmt.Sprintf("%s[%d]", key, i), appuser.CodeInvalid)
		}
	}
	return out
}

// bodyText reads obj[key] as a string; numbers and booleans are taken as
// their text (the SDKs stringify tag values), null as "".
func bodyText(obj map[string]json.RawMessage, key, at string, bad appuser.Problems) string {
	v, ok := obj[key]
	if !ok {
		return ""
	}
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		bad.Add(at+key, appuser.CodeInvalid)
		return ""
	}
	switch s := x.(type) {
	case nil:
		return ""
	case string:
		return s
	case json.Number:
		return s.String()
	case bool:
		return strconv.FormatBool(s)
	}
	bad.Add(at+key, appuser.CodeInvalid)
	return ""
}

// appIDValue reads a number or a string (an app's number or id); null is nil.
func appIDValue(v json.RawMessage) (any, error) {
	d := json.NewDecoder(bytes.NewReader(v))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return nil, err
	}
	switch x.(type) {
	case nil, string, json.Number:
		return x, nil
	}
	return nil, errors.New("not a number or a string")
}

// userProfileJSON is HALO's UserProfile.
type userProfileJSON struct {
	ID          string `json:"id"`
	Email       string `json:"email"`
	Name        string `json:"name"`
	Surname     string `json:"surname"`
	DisplayName string `json:"displayName"`
	PhotoURL    string `json:"photoUrl"`
}

func profileJSONOf(u appuser.Identified) userProfileJSON {
	return userProfileJSON{ID: u.ID, Email: u.Email, Name: u.Profile.Name, Surname: u.Profile.Surname,
		DisplayName: u.Profile.DisplayName, PhotoURL: u.Profile.PhotoURL}
}

func profileJSONFromView(u rmappuser.IdentifiedUser) userProfileJSON {
	return userProfileJSON{ID: u.ID, Email: u.Email, Name: u.Name, Surname: u.Surname, DisplayName: u.DisplayName, PhotoURL: u.PhotoURL}
}

// authBody is the credentials part of a sign-up or a sign-in.
type authBody struct {
	Network  string `json:"network"`
	Email    string `json:"email"`
	Password string `json:"password"`
	DeviceID string `json:"deviceId"`
	Token    string `json:"token"` // social networks' token: not supported
}

// registerBody is POST /api/segmentation/identified/register.
type registerBody struct {
	Auth    *authBody `json:"auth"`
	Profile *struct {
		ID          string `json:"id"`
		Email       string `json:"email"`
		Name        string `json:"name"`
		Surname     string `json:"surname"`
		DisplayName string `json:"displayName"`
		PhotoURL    string `json:"photoUrl"`
	} `json:"profile"`
}

// readLogin reads a sign-in: a form (Android) or JSON (iOS).
func readLogin(r *http.Request) (authBody, error) {
	var b authBody
	if jsonRequest(r) {
		d := json.NewDecoder(r.Body)
		if err := d.Decode(&b); err != nil {
			return b, httpapi.BadJSON(err)
		}
		return b, nil
	}
	if err := r.ParseForm(); err != nil {
		return b, httpapi.FormError(err)
	}
	f := r.PostForm
	return authBody{Network: f.Get("network"), Email: f.Get("email"), Password: f.Get("password"),
		DeviceID: f.Get("deviceId"), Token: f.Get("token")}, nil
}

func jsonRequest(r *http.Request) bool {
	ct := strings.ToLower(r.Header.Get("Content-Type"))
	return strings.HasPrefix(ct, "application/json") || strings.Contains(ct, "+json")
}

// pocketJSON is a pocket on the wire.
type pocketJSON struct {
	Data       map[string]any      `json:"data"`
	References map[string][]string `json:"references"`
}

// pocketBody is a PUT of a pocket: data (an object) replaces the data,
// references merge by name, a null list removes its name.
type pocketBody struct {
	Data       json.RawMessage     `json:"data"`
	References map[string][]string `json:"references"`
}

// segmentBody is POST /api/segmentation/appuser/search: the app users of
// an app with any (partial) or all (total) of the tags, page by page.
type segmentBody struct {
	AppID      any                     `json:"appId"`
	Tags       []segmentTag            `json:"tags"`
	Mode       string                  `json:"mode"`
	Pagination *httpapi.PaginationBody `json:"pagination"`
}

type segmentTag struct {
	ID      string `json:"id"`
	Name    string `json:"name"`
	Value   any    `json:"value"`
	TagType any    `json:"tagType"`
}

// identifiedSearchBody is POST /api/segmentation/identified/search.
type identifiedSearchBody struct {
	AppID      any                     `json:"appId"`
	Search     string                  `json:"search"`
	Pagination *httpapi.PaginationBody `json:"pagination"`
}
