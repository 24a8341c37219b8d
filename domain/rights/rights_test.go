package rights

import (
	"reflect"
	"testing"

	"github.com/halocms/halocms/domain/fault"
)

func grant(t *testing.T, r Rights, c Change) Rights {
	t.Helper()
	evs, err := r.Grant(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range evs {
		r = r.Apply(e)
	}
	return r
}

func TestGrantRecordsOnlyNewPermissions(t *testing.T) {
	r := NewRights("u1")
	app := Scope{Kind: AppScope}
	r = grant(t, r, Change{App: "a1", Scope: app, Permissions: []Permission{Read, Write}})
	evs, err := r.Grant(Change{App: "a1", Scope: app, Permissions: []Permission{Read, Delete}, By: "user:x"})
	if err != nil {
		t.Fatal(err)
	}
	want := []any{Granted{UserID: "u1", AppID: "a1", ScopeKind: "app", Permissions: []string{"delete"}, By: "user:x"}}
	if !reflect.DeepEqual(evs, want) {
		t.Fatalf("got %#v, want %#v", evs, want)
	}
	if evs, _ := r.Grant(Change{App: "a1", Scope: app, Permissions: []Permission{Read}}); len(evs) != 0 {
		t.Fatalf("granting held permissions recorded %v", evs)
	}
}

func TestRevokeRemovesFromExactlyThatScope(t *testing.T) {
	r := NewRights("u1")
	mod := Scope{Kind: ModuleScope, ID: "m1"}
	r = grant(t, r, Change{App: "a1", Scope: Scope{Kind: AppScope}, Permissions: []Permission{Read}})
	r = grant(t, r, Change{App: "a1", Scope: mod, Permissions: []Permission{Read, Update}})
	evs, err := r.Revoke(Change{App: "a1", Scope: mod, Permissions: []Permission{Read, Delete}})
	if err != nil {
		t.Fatal(err)
	}
	if len(evs) != 1 || !reflect.DeepEqual(evs[0].(Revoked).Permissions, []string{"read"}) {
		t.Fatalf("revoke recorded %#v", evs)
	}
	r = r.Apply(evs[0])
	// The app-wide read still holds for the module.
	if !r.Allows(Read, Resource{App: "a1", Module: "m1"}) {
		t.Fatal("app-scope read should still cover module m1")
	}
	if !r.Allows(Update, Resource{App: "a1", Module: "m1"}) || r.Allows(Update, Resource{App: "a1", Module: "m2"}) {
		t.Fatal("module-scope update should cover m1 only")
	}
}

func TestAllowsMatrix(t *testing.T) {
	r := NewRights("u")
	r = grant(t, r, Change{App: "a", Scope: Scope{Kind: ItemScope, ID: "i1"}, Permissions: []Permission{Delete}})
	cases := []struct {
		p    Permission
		res  Resource
		want bool
	}{
		{Delete, Resource{App: "a", Module: "m", Item: "i1"}, true},
		{Delete, Resource{App: "a", Module: "m", Item: "i2"}, false},
		{Delete, Resource{App: "b", Module: "m", Item: "i1"}, false},
		{Read, Resource{App: "a", Module: "m", Item: "i1"}, false},
		{Delete, Resource{App: "a"}, false},
	}
	for _, c := range cases {
		if got := r.Allows(c.p, c.res); got != c.want {
			t.Errorf("Allows(%s, %+v) = %v, want %v", c.p, c.res, got, c.want)
		}
	}
}

func TestInvalidChanges(t *testing.T) {
	r := NewRights("u")
	for name, c := range map[string]Change{
		"no app":               {Scope: Scope{Kind: AppScope}, Permissions: []Permission{Read}},
		"no permissions":       {App: "a", Scope: Scope{Kind: AppScope}},
		"manage below the app": {App: "a", Scope: Scope{Kind: ModuleScope, ID: "m"}, Permissions: []Permission{Manage}},
	} {
		if _, err := r.Grant(c); !fault.Is(err, fault.Invalid) {
			t.Errorf("%s: got %v, want an invalid fault", name, err)
		}
	}
	if _, err := NewScope("m", "i"); !fault.Is(err, fault.Invalid) {
		t.Errorf("module and item together: got %v", err)
	}
	if _, err := ParsePermission("admin"); !fault.Is(err, fault.Invalid) {
		t.Errorf("unknown permission: got %v", err)
	}
}

func TestApplyDoesNotModifyItsInput(t *testing.T) {
	r := NewRights("u")
	r1 := grant(t, r, Change{App: "a", Scope: Scope{Kind: AppScope}, Permissions: []Permission{Read}})
	_ = r1.Apply(Revoked{UserID: "u", AppID: "a", ScopeKind: "app", Permissions: []string{"read"}})
	if !r1.Allows(Read, Resource{App: "a"}) {
		t.Fatal("Apply changed the state it was given")
	}
}
