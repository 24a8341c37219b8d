// Package appuser is the app-user context: app users (the devices of an
// app, with their push tokens and segmentation tags), identified users
// (APP+ accounts that sign in through an app) and their pockets (free data
// and named reference lists). Pure: no SQL, HTTP or JSON.
package appuser

import (
	"fmt"
	"net/mail"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/halocms/halocms/domain/fault"
)

// Streams of this context.
func Stream(id string) string           { return "appuser-" + id }
func IdentifiedStream(id string) string { return "identified-" + id }
func PocketStream(id string) string     { return "pocket-" + id }

// IdentifiedEmailStream reserves an identified user's email within an app.
func IdentifiedEmailStream(app, email string) string {
	return "identifiedemail-" + app + "-" + strings.ToLower(email)
}

// Prefixes of generated names: HALO's aliases look like
// anonymous-city9aodr02be0hrbwdcebt4q and identified users' ids like
// identified-civ7vppyr1fee0isfzjlkbsk5.
const (
	AliasPrefix      = "anonymous-"
	IdentifiedPrefix = "identified-"
)

// Tag types (HALO's fixed ids).
const (
	SystemTag = "000000000000000000000001" // set by the SDKs (platform, versions, device)
	UserTag   = "000000000000000000000002" // set by the app (the default)
	MarketTag = "000000000000000000000003" // a country, with a fixed id per market
)

// Platforms of push tokens.
const (
	Android = "android"
	IOS     = "ios"
)

// Limits of an app user.
const (
	MaxTags    = 200
	MaxDevices = 20
	// Tag names and values, and push tokens, are index keys of the
	// segmentation read model, whose rows PostgreSQL caps at 2,704 bytes:
	// their limits are in bytes and leave room. (FCM tokens are about 160
	// characters, APNs tokens 64.)
	MaxTextLength  = 255  // tag names and values, bytes
	MaxIDLength    = 64   // tag ids
	MaxTokenLength = 1024 // bytes
	MaxEmailLength = 254
)

// Validation codes, as HALO reports them in a 400's extra
// ({"<field>": "<code>"}).
const (
	CodeUndefinedAttribute = "undefined_attribute"
	CodeRequired           = "required"
	CodeInvalid            = "invalid_value"
	CodeTooLong            = "too_long"
	CodeTooMany            = "too_many"
)

// ValidationMessage is HALO's message for a body that fails validation.
const ValidationMessage = "One or more fields have validation problems"

// Problems collects validation problems, field path → code.
type Problems map[string]string

// Add records a problem with a field (the first one per field stays).
func (p Problems) Add(field, code string) {
	if _, dup := p[field]; !dup {
		p[field] = code
	}
}

// Err returns nil, or the 400 that lists the problems.
func (p Problems) Err() error {
	if len(p) == 0 {
		return nil
	}
	e := fault.Invalidf(ValidationMessage)
	e.Extra = make(map[string]any, len(p))
	for k, v := range p {
		e.Extra[k] = v
	}
	return e
}

// Device is one push token of an app user.
type Device struct {
	Platform string
	Token    string
}

// Tag is a segmentation tag of an app user. ID is fixed for market tags
// and assigned by the server to tags sent without one.
type Tag struct {
	ID      string
	Name    string
	Value   string
	TagType string
}

// Profile is what an SDK sends about its app user.
type Profile struct {
	Email   string
	Devices []Device
	Tags    []Tag
}

// AppUser is an app user, rebuilt from its events.
type AppUser struct {
	ID         string
	App        string
	Alias      string
	Email      string
	Devices    []Device
	Tags       []Tag
	Identified string // the identified user last signed in on it
	Deleted    bool
	exists     bool
}

// Exists reports whether the app user was created.
func (u AppUser) Exists() bool { return u.exists }

// Live reports whether the app user exists and is not deleted.
func (u AppUser) Live() bool { return u.exists && !u.Deleted }

// Apply folds one event into the state.
func (u AppUser) Apply(ev any) AppUser {
	switch e := ev.(type) {
	case Created:
		u = AppUser{ID: e.AppUserID, App: e.App, Alias: e.Alias, Email: e.Email, Devices: e.Devices, Tags: e.Tags, exists: true}
	case Updated:
		u.Email, u.Devices, u.Tags = e.Email, e.Devices, e.Tags
	case TokenRemoved:
		u.Devices = slices.DeleteFunc(slices.Clone(u.Devices), func(d Device) bool { return d.Token == e.Token })
	case Linked:
		u.Identified = e.IdentifiedID
	case Deleted:
		u.Deleted = true
	}
	return u
}

// Create decides the registration of a new app user. Tags sent without an
// id get one from newID.
func Create(existing AppUser, id, app, alias string, p Profile, newID func() string) ([]any, error) {
	if existing.exists {
		return nil, fault.Conflictf("app user %s already exists", id)
	}
	p, err := normalize(p, nil, newID)
	if err != nil {
		return nil, err
	}
	return []any{Created{AppUserID: id, App: app, Alias: alias, Email: p.Email, Devices: p.Devices, Tags: p.Tags}}, nil
}

// Update decides a full update as the SDKs send it: email and tags are
// replaced; devices are replaced when replaceTokens is true and otherwise
// merged by token (a sent token keeps its place or is added). Nothing
// changes, and no event is recorded, when the result equals the state.
func (u AppUser) Update(p Profile, replaceTokens bool, newID func() string) ([]any, error) {
	if !u.Live() {
		return nil, fault.NotFoundf("app user not found")
	}
	p, err := normalize(p, u.Tags, newID)
	if err != nil {
		return nil, err
	}
	if !replaceTokens {
		p.Devices = mergeDevices(u.Devices, p.Devices)
		if len(p.Devices) > MaxDevices {
			return nil, Problems{"devices": CodeTooMany}.Err()
		}
	}
	if p.Email == u.Email && slices.Equal(p.Devices, u.Devices) && slices.Equal(p.Tags, u.Tags) {
		return nil, nil
	}
	return []any{Updated{AppUserID: u.ID, App: u.App, Email: p.Email, Devices: p.Devices, Tags: p.Tags}}, nil
}

// RemoveToken decides the removal of a push token; removing a token the
// app user does not have records nothing.
func (u AppUser) RemoveToken(token, reason string) []any {
	if !u.Live() || !slices.ContainsFunc(u.Devices, func(d Device) bool { return d.Token == token }) {
		return nil
	}
	return []any{TokenRemoved{AppUserID: u.ID, App: u.App, Token: token, Reason: reason}}
}

// Link decides that an identified user signed in on this app user.
func (u AppUser) Link(identifiedID string) ([]any, error) {
	if !u.Live() {
		return nil, fault.NotFoundf("app user not found")
	}
	if u.Identified == identifiedID {
		return nil, nil
	}
	return []any{Linked{AppUserID: u.ID, App: u.App, IdentifiedID: identifiedID}}, nil
}

// Delete decides the deletion of the app user.
func (u AppUser) Delete() ([]any, error) {
	if !u.Live() {
		return nil, fault.NotFoundf("app user not found")
	}
	return []any{Deleted{AppUserID: u.ID, App: u.App}}, nil
}

func mergeDevices(old, sent []Device) []Device {
	out := slices.Clone(old)
	for _, d := range sent {
		if i := slices.IndexFunc(out, func(o Device) bool { return o.Token == d.Token }); i >= 0 {
			out[i] = d
		} else {
			out = append(out, d)
		}
	}
	return out
}

func tooLong(s string, n int) bool { return utf8.RuneCountInString(s) > n }

// ValidEmail reports whether s is a plain email address.
func ValidEmail(s string) bool {
	if len(s) > MaxEmailLength {
		return false
	}
	a, err := mail.ParseAddress(s)
	return err == nil && a.Address == s
}

// normalize validates a profile and puts it in canonical form: platforms
// lower-case, one entry per token (the last one sent), tag types defaulted
// to user tags, exact duplicate tags dropped, and ids on every tag (the id
// of the same tag in old, else a new one).
func normalize(p Profile, old []Tag, newID func() string) (Profile, error) {
	bad := Problems{}
	p.Email = strings.TrimSpace(p.Email)
	if p.Email != "" && !ValidEmail(p.Email) {
		bad.Add("email", CodeInvalid)
	}
	if len(p.Devices) > MaxDevices {
		bad.Add("devices", CodeTooMany)
	}
	if len(p.Tags) > MaxTags {
		bad.Add("tags", CodeTooMany)
	}
	if len(bad) > 0 {
		return p, bad.Err()
	}
	devices := make([]Device, 0, len(p.Devices))
	for i, d := range p.Devices {
		at := fmt.Sprintf("devices[%d].", i)
		d.Platform = strings.ToLower(strings.TrimSpace(d.Platform))
		if d.Platform != Android && d.Platform != IOS {
			bad.Add(at+"platform", CodeInvalid)
		}
		switch {
		case strings.TrimSpace(d.Token) == "":
			bad.Add(at+"token", CodeRequired)
		case len(d.Token) > MaxTokenLength:
			bad.Add(at+"token", CodeTooLong)
		}
		if j := slices.IndexFunc(devices, func(o Device) bool { return o.Token == d.Token }); j >= 0 {
			devices[j] = d
		} else {
			devices = append(devices, d)
		}
	}
	tags := make([]Tag, 0, len(p.Tags))
	for i, t := range p.Tags {
		at := fmt.Sprintf("tags[%d].", i)
		if t.TagType == "" {
			t.TagType = UserTag
		}
		switch t.TagType {
		case SystemTag, UserTag, MarketTag:
		default:
			bad.Add(at+"tagType", CodeInvalid)
		}
		switch {
		case strings.TrimSpace(t.Name) == "":
			bad.Add(at+"name", CodeRequired)
		case len(t.Name) > MaxTextLength:
			bad.Add(at+"name", CodeTooLong)
		}
		if len(t.Value) > MaxTextLength {
			bad.Add(at+"value", CodeTooLong)
		}
		if len(t.ID) > MaxIDLength {
			bad.Add(at+"id", CodeTooLong)
		}
		if !slices.ContainsFunc(tags, func(o Tag) bool { return sameTag(o, t) }) {
			tags = append(tags, t)
		}
	}
	if err := bad.Err(); err != nil {
		return p, err
	}
	for i, t := range tags {
		if t.ID != "" {
			continue
		}
		if j := slices.IndexFunc(old, func(o Tag) bool {
			return o.Name == t.Name && o.Value == t.Value && o.TagType == t.TagType
		}); j >= 0 {
			tags[i].ID = old[j].ID
		} else {
			tags[i].ID = newID()
		}
	}
	p.Devices, p.Tags = devices, tags
	return p, nil
}

// sameTag reports whether two sent tags are the same tag: same id when
// both carry one, else same name, value and type.
func sameTag(a, b Tag) bool {
	if a.ID != "" && b.ID != "" {
		return a.ID == b.ID
	}
	return a.ID == b.ID && a.Name == b.Name && a.Value == b.Value && a.TagType == b.TagType
}
