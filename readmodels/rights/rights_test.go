package rights_test

import (
	"context"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
	projrights "github.com/halocms/halocms/projections/rights"
	rmrights "github.com/halocms/halocms/readmodels/rights"
)

// TestAuthorizeAnywhere: which grants count for AuthorizeAnyApp and
// AuthorizeAnywhere, and the rule every caller kind shares with
// Authorize.
func TestAuthorizeAnywhere(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := pgtest.Pool(t)
	if err := (projrights.Projector{}).Create(ctx, pool, "public"); err != nil {
		t.Fatal(err)
	}
	grants := []rights.Granted{
		{UserID: "onapp", AppID: "a1", ScopeKind: "app", Permissions: []string{"write"}},
		{UserID: "onmodule", AppID: "a1", ScopeKind: "module", ScopeID: "m1", Permissions: []string{"write", "read"}},
		{UserID: "onitem", AppID: "a2", ScopeKind: "item", ScopeID: "i1", Permissions: []string{"write"}},
		{UserID: "reader", AppID: "a1", ScopeKind: "app", Permissions: []string{"read"}},
	}
	evs := make([]event.Recorded, len(grants))
	for i, g := range grants {
		evs[i] = event.Recorded{Position: event.Position{TxID: uint64(i + 1), Pos: int64(i + 1)}, StreamVersion: 1,
			Type: g.EventType(), SchemaVersion: 1, Data: g, RecordedAt: time.Now()}
	}
	if err := (projrights.Projector{}).Apply(ctx, pool, "public", evs); err != nil {
		t.Fatal(err)
	}
	authz := rmrights.NewAuthorizer(pool)

	user := func(id string) access.Actor { return access.Actor{Kind: access.User, ID: id} }
	const (
		ok = iota
		forbidden
		unauthenticated
	)
	onModule := []rights.ScopeKind{rights.AppScope, rights.ModuleScope}
	onItem := []rights.ScopeKind{rights.AppScope, rights.ModuleScope, rights.ItemScope}
	for _, c := range []struct {
		name  string
		actor access.Actor
		p     rights.Permission
		kinds []rights.ScopeKind // nil: AuthorizeAnyApp
		want  int
	}{
		{"app grant, any app", user("onapp"), rights.Write, nil, ok},
		{"app grant, app kind", user("onapp"), rights.Write, []rights.ScopeKind{rights.AppScope}, ok},
		{"app grant, item kinds", user("onapp"), rights.Write, onItem, ok},
		{"app grant, another permission", user("onapp"), rights.Update, onItem, forbidden},
		{"module grant, any app", user("onmodule"), rights.Write, nil, forbidden},
		{"module grant, app kind", user("onmodule"), rights.Write, []rights.ScopeKind{rights.AppScope}, forbidden},
		{"module grant, module kinds", user("onmodule"), rights.Write, onModule, ok},
		{"module grant, item kinds", user("onmodule"), rights.Read, onItem, ok},
		{"module grant, another permission", user("onmodule"), rights.Delete, onItem, forbidden},
		{"item grant, module kinds", user("onitem"), rights.Write, onModule, forbidden},
		{"item grant, item kinds", user("onitem"), rights.Write, onItem, ok},
		{"item grant, item kind only", user("onitem"), rights.Write, []rights.ScopeKind{rights.ItemScope}, ok},
		{"module grant, no kinds", user("onmodule"), rights.Write, []rights.ScopeKind{}, forbidden},
		{"no grant", user("nobody"), rights.Read, onItem, forbidden},
		{"anonymous", access.Actor{}, rights.Read, onItem, unauthenticated},
		{"admin", access.Actor{Kind: access.User, ID: "root", Admin: true}, rights.Manage, nil, ok},
		{"system", access.SystemActor, rights.Delete, onModule, ok},
		{"app token reads", access.Actor{Kind: access.App, ID: "a1"}, rights.Read, onItem, ok},
		{"app token writes", access.Actor{Kind: access.App, ID: "a1"}, rights.Write, onItem, forbidden},
		{"identified reads", access.Actor{Kind: access.Identified, ID: "u", App: "a1"}, rights.Read, nil, ok},
		{"identified writes", access.Actor{Kind: access.Identified, ID: "u", App: "a1"}, rights.Write, onModule, forbidden},
	} {
		var err error
		if c.kinds == nil {
			err = authz.AuthorizeAnyApp(ctx, c.actor, c.p)
		} else {
			err = authz.AuthorizeAnywhere(ctx, c.actor, c.p, c.kinds...)
		}
		var got int
		switch {
		case err == nil:
			got = ok
		case fault.Is(err, fault.Unauthenticated):
			got = unauthenticated
		case fault.Is(err, fault.Forbidden):
			got = forbidden
		default:
			t.Errorf("%s: %v", c.name, err)
			continue
		}
		if got != c.want {
			t.Errorf("%s: %v, want %d", c.name, err, c.want)
		}
	}

	// The refusal names what would have allowed it.
	err := authz.AuthorizeAnywhere(ctx, user("nobody"), rights.Write, onItem...)
	if want := "write permission on an app, a module or an item is required"; err == nil || err.Error() != want {
		t.Errorf("refusal %q, want %q", err, want)
	}
	err = authz.AuthorizeAnyApp(ctx, user("nobody"), rights.Write)
	if want := "write permission on an app is required"; err == nil || err.Error() != want {
		t.Errorf("refusal %q, want %q", err, want)
	}
}
