package appuser_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/fault"
)

// ids returns a newID that counts.
func ids() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("tag%d", n) }
}

func fold(evs []any) appuser.AppUser {
	var u appuser.AppUser
	for _, e := range evs {
		u = u.Apply(e)
	}
	return u
}

func problems(t *testing.T, err error) map[string]any {
	t.Helper()
	var fe *fault.Error
	if !fault.Is(err, fault.Invalid) {
		t.Fatalf("error %v, want a validation error", err)
	}
	fe, _ = err.(*fault.Error)
	if fe.Message != appuser.ValidationMessage {
		t.Errorf("message %q, want %q", fe.Message, appuser.ValidationMessage)
	}
	return fe.Extra
}

func TestCreateNormalizes(t *testing.T) {
	evs, err := appuser.Create(appuser.AppUser{}, "u1", "app1", "anonymous-x", appuser.Profile{
		Email: " a@example.com ",
		Devices: []appuser.Device{
			{Platform: "Android", Token: "t1"}, {Platform: "ios", Token: "t2"}, {Platform: "android", Token: "t1"},
		},
		Tags: []appuser.Tag{
			{Name: "Platform Name", Value: "android", TagType: appuser.SystemTag},
			{Name: "color", Value: "red"},
			{Name: "color", Value: "red"}, // exact duplicate
			{ID: "000000000000000000000100", Name: "Afghanistan", TagType: appuser.MarketTag},
		},
	}, ids())
	if err != nil {
		t.Fatal(err)
	}
	u := fold(evs)
	if !u.Live() || u.ID != "u1" || u.App != "app1" || u.Alias != "anonymous-x" || u.Email != "a@example.com" {
		t.Fatalf("state %+v", u)
	}
	wantDevices := []appuser.Device{{Platform: "android", Token: "t1"}, {Platform: "ios", Token: "t2"}}
	if !slices.Equal(u.Devices, wantDevices) {
		t.Errorf("devices %+v, want %+v (lower-case platforms, one entry per token)", u.Devices, wantDevices)
	}
	wantTags := []appuser.Tag{
		{ID: "tag1", Name: "Platform Name", Value: "android", TagType: appuser.SystemTag},
		{ID: "tag2", Name: "color", Value: "red", TagType: appuser.UserTag},
		{ID: "000000000000000000000100", Name: "Afghanistan", TagType: appuser.MarketTag},
	}
	if !slices.Equal(u.Tags, wantTags) {
		t.Errorf("tags %+v, want %+v", u.Tags, wantTags)
	}
	if _, err := appuser.Create(u, "u1", "app1", "anonymous-x", appuser.Profile{}, ids()); !fault.Is(err, fault.Conflict) {
		t.Errorf("creating twice: %v, want a conflict", err)
	}
}

func TestCreateValidation(t *testing.T) {
	long := strings.Repeat("x", appuser.MaxTextLength+1)
	many := make([]appuser.Tag, appuser.MaxTags+1)
	for i := range many {
		many[i] = appuser.Tag{Name: fmt.Sprint(i)}
	}
	for _, c := range []struct {
		name  string
		p     appuser.Profile
		field string
		code  string
	}{
		{"platform", appuser.Profile{Devices: []appuser.Device{{Platform: "windows", Token: "t"}}}, "devices[0].platform", appuser.CodeInvalid},
		{"empty token", appuser.Profile{Devices: []appuser.Device{{Platform: "ios", Token: " "}}}, "devices[0].token", appuser.CodeRequired},
		{"long token", appuser.Profile{Devices: []appuser.Device{{Platform: "ios", Token: strings.Repeat("t", appuser.MaxTokenLength+1)}}}, "devices[0].token", appuser.CodeTooLong},
		{"tag type", appuser.Profile{Tags: []appuser.Tag{{Name: "a", TagType: "000000000000000000000004"}}}, "tags[0].tagType", appuser.CodeInvalid},
		{"tag name", appuser.Profile{Tags: []appuser.Tag{{Name: "ok"}, {Name: "", Value: "v"}}}, "tags[1].name", appuser.CodeRequired},
		{"long name", appuser.Profile{Tags: []appuser.Tag{{Name: long}}}, "tags[0].name", appuser.CodeTooLong},
		{"long value", appuser.Profile{Tags: []appuser.Tag{{Name: "n", Value: long}}}, "tags[0].value", appuser.CodeTooLong},
		// Limits are in bytes: 100 CJK characters are 300 bytes, too long for an index key budget of 255.
		{"long value in bytes", appuser.Profile{Tags: []appuser.Tag{{Name: "n", Value: strings.Repeat("語", 100)}}}, "tags[0].value", appuser.CodeTooLong},
		{"too many tags", appuser.Profile{Tags: many}, "tags", appuser.CodeTooMany},
		{"too many devices", appuser.Profile{Devices: make([]appuser.Device, appuser.MaxDevices+1)}, "devices", appuser.CodeTooMany},
		{"email", appuser.Profile{Email: "not an email"}, "email", appuser.CodeInvalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := appuser.Create(appuser.AppUser{}, "u1", "app1", "anonymous-x", c.p, ids())
			extra := problems(t, err)
			if extra[c.field] != c.code {
				t.Errorf("extra %v, want %s: %s", extra, c.field, c.code)
			}
		})
	}
}

func TestUpdate(t *testing.T) {
	evs, _ := appuser.Create(appuser.AppUser{}, "u1", "app1", "anonymous-x", appuser.Profile{
		Devices: []appuser.Device{{Platform: "android", Token: "old"}},
		Tags:    []appuser.Tag{{Name: "color", Value: "red"}},
	}, ids())
	u := fold(evs)
	newID := ids()
	newID() // tag1 is taken

	t.Run("merge tokens", func(t *testing.T) {
		evs, err := u.Update(appuser.Profile{Devices: []appuser.Device{{Platform: "android", Token: "new"}},
			Tags: []appuser.Tag{{Name: "color", Value: "red"}}}, false, newID)
		if err != nil || len(evs) != 1 {
			t.Fatalf("%v %v", evs, err)
		}
		got := u.Apply(evs[0])
		if want := []appuser.Device{{Platform: "android", Token: "old"}, {Platform: "android", Token: "new"}}; !slices.Equal(got.Devices, want) {
			t.Errorf("devices %+v, want %+v", got.Devices, want)
		}
		if got.Tags[0].ID != u.Tags[0].ID {
			t.Errorf("the same tag sent without its id got a new id: %s, was %s", got.Tags[0].ID, u.Tags[0].ID)
		}
	})
	t.Run("replace tokens", func(t *testing.T) {
		evs, err := u.Update(appuser.Profile{Devices: []appuser.Device{{Platform: "ios", Token: "new"}}}, true, newID)
		if err != nil || len(evs) != 1 {
			t.Fatalf("%v %v", evs, err)
		}
		got := u.Apply(evs[0])
		if want := []appuser.Device{{Platform: "ios", Token: "new"}}; !slices.Equal(got.Devices, want) {
			t.Errorf("devices %+v, want %+v", got.Devices, want)
		}
		if len(got.Tags) != 0 {
			t.Errorf("tags %+v: a PUT without tags removes them", got.Tags)
		}
	})
	t.Run("unchanged", func(t *testing.T) {
		evs, err := u.Update(appuser.Profile{Devices: u.Devices, Tags: []appuser.Tag{{Name: "color", Value: "red"}}}, true, newID)
		if err != nil || len(evs) != 0 {
			t.Errorf("an update to the same state: %v %v, want nothing", evs, err)
		}
	})
	t.Run("invalid changes nothing", func(t *testing.T) {
		_, err := u.Update(appuser.Profile{Devices: []appuser.Device{{Platform: "blackberry", Token: "x"}}}, true, newID)
		problems(t, err)
	})
	t.Run("deleted", func(t *testing.T) {
		devs, err := u.Delete()
		if err != nil {
			t.Fatal(err)
		}
		d := u.Apply(devs[0])
		if _, err := d.Update(appuser.Profile{}, true, newID); !fault.Is(err, fault.NotFound) {
			t.Errorf("update of a deleted app user: %v, want not found", err)
		}
		if evs := d.RemoveToken("old", "x"); len(evs) != 0 {
			t.Errorf("token removal from a deleted app user recorded %v", evs)
		}
		if _, err := d.Delete(); !fault.Is(err, fault.NotFound) {
			t.Errorf("deleting twice: %v", err)
		}
	})
}

func TestRemoveTokenAndLink(t *testing.T) {
	evs, _ := appuser.Create(appuser.AppUser{}, "u1", "app1", "anonymous-x", appuser.Profile{
		Devices: []appuser.Device{{Platform: "android", Token: "a"}, {Platform: "ios", Token: "b"}},
	}, ids())
	u := fold(evs)
	rm := u.RemoveToken("a", "invalid_token")
	if len(rm) != 1 || rm[0].(appuser.TokenRemoved).Token != "a" {
		t.Fatalf("remove: %v", rm)
	}
	after := u.Apply(rm[0])
	if want := []appuser.Device{{Platform: "ios", Token: "b"}}; !slices.Equal(after.Devices, want) {
		t.Errorf("devices %+v, want %+v", after.Devices, want)
	}
	if len(u.Devices) != 2 {
		t.Errorf("Apply changed the earlier state's devices: %+v", u.Devices)
	}
	if again := after.RemoveToken("a", "invalid_token"); len(again) != 0 {
		t.Errorf("removing a gone token recorded %v", again)
	}

	link, err := after.Link("identified-1")
	if err != nil || len(link) != 1 {
		t.Fatalf("link: %v %v", link, err)
	}
	linked := after.Apply(link[0])
	if linked.Identified != "identified-1" {
		t.Errorf("identified %q", linked.Identified)
	}
	if again, _ := linked.Link("identified-1"); len(again) != 0 {
		t.Errorf("linking again recorded %v", again)
	}
	if other, _ := linked.Link("identified-2"); len(other) != 1 {
		t.Errorf("another user signing in on the device: %v, want a link", other)
	}
}

func TestRegister(t *testing.T) {
	if err := appuser.CheckCredentials("a@example.com", "short"); !fault.Is(err, fault.Invalid) {
		t.Errorf("short password: %v", err)
	}
	if err := appuser.CheckCredentials("nope", "long-enough-pw"); !fault.Is(err, fault.Invalid) {
		t.Errorf("bad email: %v", err)
	}
	if err := appuser.CheckCredentials("a@example.com", "long-enough-pw"); err != nil {
		t.Errorf("good credentials: %v", err)
	}
	evs, err := appuser.Register(appuser.Identified{}, appuser.EmailClaim{}, "identified-1", "app1", "a@example.com", "hash",
		appuser.UserProfile{Name: " Ann ", Surname: "Lee"})
	if err != nil || len(evs) != 2 {
		t.Fatalf("%v %v", evs, err)
	}
	reg := evs[0].(appuser.IdentifiedRegistered)
	if reg.Profile.DisplayName != "Ann Lee" || reg.Profile.Name != "Ann" || reg.Network != appuser.NetworkHalo {
		t.Errorf("registered %+v", reg)
	}
	claim := appuser.EmailClaim{}.Apply(evs[1])
	if claim.IdentifiedID != "identified-1" {
		t.Errorf("claim %+v", claim)
	}
	if _, err := appuser.Register(appuser.Identified{}, claim, "identified-2", "app1", "A@example.com", "hash", appuser.UserProfile{}); !fault.Is(err, fault.Conflict) {
		t.Errorf("second registration of the email: %v, want a conflict", err)
	}
	id := appuser.Identified{}.Apply(reg)
	if !id.Exists() || id.PasswordHash != "hash" || id.App != "app1" {
		t.Errorf("identified %+v", id)
	}
	if appuser.IdentifiedEmailStream("app1", "A@Example.com") != appuser.IdentifiedEmailStream("app1", "a@example.com") {
		t.Errorf("email reservations must ignore case")
	}
}

func TestPocket(t *testing.T) {
	var p appuser.Pocket
	step := func(c appuser.PocketChange) []any {
		t.Helper()
		evs, err := p.Change("identified-1", "app1", c)
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range evs {
			p = p.Apply(e)
		}
		return evs
	}
	step(appuser.PocketChange{SetData: true, Data: map[string]any{"a": "1"},
		References: map[string][]string{"favorites": {"f1"}, "news": {"n1", "n2"}}})
	if p.Data["a"] != "1" || len(p.References) != 2 {
		t.Fatalf("pocket %+v", p)
	}
	// References merge by name; data stays when not sent.
	step(appuser.PocketChange{References: map[string][]string{"events": {"e1"}, "favorites": {"f2"}}})
	if p.Data["a"] != "1" || !slices.Equal(p.References["favorites"], []string{"f2"}) || !slices.Equal(p.References["news"], []string{"n1", "n2"}) ||
		!slices.Equal(p.References["events"], []string{"e1"}) {
		t.Fatalf("after merge: %+v", p)
	}
	// A nil list clears its name; data is replaced.
	step(appuser.PocketChange{SetData: true, Data: map[string]any{"b": true}, References: map[string][]string{"news": nil}})
	if _, ok := p.References["news"]; ok || p.Data["a"] != nil || p.Data["b"] != true {
		t.Fatalf("after clear: %+v", p)
	}
	if evs := step(appuser.PocketChange{SetData: true, Data: map[string]any{"b": true}, References: map[string][]string{"news": nil, "events": {"e1"}}}); len(evs) != 0 {
		t.Errorf("a change to the same pocket recorded %v", evs)
	}
	many := map[string][]string{}
	for i := 0; i <= appuser.MaxReferenceNames; i++ {
		many[fmt.Sprint("r", i)] = []string{"x"}
	}
	if _, err := p.Change("identified-1", "app1", appuser.PocketChange{References: many}); !fault.Is(err, fault.Invalid) {
		t.Errorf("too many reference lists: %v", err)
	}
	if _, err := p.Change("identified-1", "app1", appuser.PocketChange{References: map[string][]string{"x": make([]string, appuser.MaxReferenceIDs+1)}}); !fault.Is(err, fault.Invalid) {
		t.Errorf("too many ids: %v", err)
	}
}
