package appuser_test

import (
	"context"
	"io"
	"log/slog"
	"net/netip"
	"regexp"
	"sync"
	"testing"
	"time"

	"golang.org/x/crypto/bcrypt"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/password"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/adapters/projection"
	cmdappuser "github.com/halocms/halocms/commands/appuser"
	cmdsession "github.com/halocms/halocms/commands/session"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
	projappuser "github.com/halocms/halocms/projections/appuser"
	rmappuser "github.com/halocms/halocms/readmodels/appuser"
	rmidentity "github.com/halocms/halocms/readmodels/identity"
)

// env is the service over a real event store, with the appusers
// projection running (read-your-writes), real tokens and throttle.
type env struct {
	ctx      context.Context
	store    *postgres.EventStore
	svc      *cmdappuser.Service
	read     *rmappuser.Store
	sessions *cmdsession.Service
}

const userLimit = 3

func newEnv(t *testing.T) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	pool := pgtest.Pool(t)
	store := postgres.NewEventStore(pool, eventcodec.Default())
	t.Cleanup(store.Close)
	rt := projection.NewRuntime(pool, store, nil, slog.New(slog.NewTextHandler(io.Discard, nil)),
		projection.Options{WaitTimeout: 20 * time.Second}, projappuser.Projector{})
	rctx, stop := context.WithCancel(context.Background())
	if err := rt.Start(rctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); rt.Wait() })
	th := postgres.NewLoginThrottle(pool)
	th.UserLimit = userLimit
	pw := password.Bcrypt{Cost: bcrypt.MinCost}
	idr := rmidentity.New(pool)
	sessions := cmdsession.NewService(idr, idr, pw, ids.Generator{}, postgres.NewTokenStore(pool), th, cmdsession.Config{})
	read := rmappuser.New(pool)
	e := &env{ctx: ctx, store: store, read: read, sessions: sessions,
		svc: cmdappuser.NewService(store, ids.Generator{}, read, pw, th, sessions, rt)}
	for _, app := range []string{"app1", "app2"} {
		if _, err := store.Append(ctx, identity.AppStream(app), event.NoStream, event.Event{Data: identity.AppCreated{AppID: app, Name: app}}); err != nil {
			t.Fatal(err)
		}
	}
	return e
}

func as(ctx context.Context, a access.Actor) context.Context { return access.WithActor(ctx, a) }

var (
	app1   = access.Actor{Kind: access.App, ID: "app1", App: "app1", ClientIP: "203.0.113.5"}
	app2   = access.Actor{Kind: access.App, ID: "app2", App: "app2"}
	editor = access.Actor{Kind: access.User, ID: "u1"}
	admin  = access.Actor{Kind: access.User, ID: "root", Admin: true}
)

func wantKind(t *testing.T, err error, kind fault.Kind) {
	t.Helper()
	if !fault.Is(err, kind) {
		t.Fatalf("error %v (kind %v), want kind %v", err, fault.KindOf(err), kind)
	}
}

func (e *env) version(t *testing.T, stream string) int {
	t.Helper()
	recs, err := e.store.ReadStream(e.ctx, stream, 0)
	if err != nil {
		t.Fatal(err)
	}
	return len(recs)
}

var aliasPattern = regexp.MustCompile(`^anonymous-[a-z2-7]{26}$`)

func TestAppUsers(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	profile := appuser.Profile{Devices: []appuser.Device{{Platform: "android", Token: "tok1"}},
		Tags: []appuser.Tag{{Name: "color", Value: "red"}}}

	_, err := e.svc.Create(e.ctx, "app1", profile)
	wantKind(t, err, fault.Unauthenticated)
	_, err = e.svc.Create(as(e.ctx, editor), "app1", profile)
	wantKind(t, err, fault.Forbidden)
	_, err = e.svc.Create(as(e.ctx, app2), "app1", profile)
	wantKind(t, err, fault.Forbidden)
	_, err = e.svc.Create(as(e.ctx, admin), "nope", profile)
	wantKind(t, err, fault.Invalid)

	u, err := e.svc.Create(as(e.ctx, app1), "app1", profile)
	if err != nil {
		t.Fatal(err)
	}
	if !aliasPattern.MatchString(u.Alias) || u.App != "app1" || len(u.Tags) != 1 || u.Tags[0].ID == "" {
		t.Fatalf("created %+v", u)
	}
	// Read your writes: the read model has it when Create returns.
	got, err := e.read.AppUser(e.ctx, u.ID)
	if err != nil || got.Alias != u.Alias || got.AppNumber != 1 {
		t.Fatalf("read model: %+v %v", got, err)
	}
	if other, err := e.svc.Create(as(e.ctx, admin), "app2", appuser.Profile{}); err != nil || other.App != "app2" {
		t.Fatalf("admin create: %+v %v", other, err)
	}

	// Another app's token: as unknown.
	_, err = e.svc.Update(as(e.ctx, app2), u.ID, profile, true)
	wantKind(t, err, fault.NotFound)
	_, err = e.svc.Update(as(e.ctx, app1), "000000000000000000000000", profile, true)
	wantKind(t, err, fault.NotFound)
	_, err = e.svc.Update(as(e.ctx, editor), u.ID, profile, true)
	wantKind(t, err, fault.Forbidden)

	v := e.version(t, appuser.Stream(u.ID))
	up, err := e.svc.Update(as(e.ctx, app1), u.ID, appuser.Profile{Devices: []appuser.Device{{Platform: "ios", Token: "tok2"}},
		Tags: []appuser.Tag{{Name: "color", Value: "red"}}}, false)
	if err != nil || len(up.Devices) != 2 || up.Tags[0].ID != u.Tags[0].ID {
		t.Fatalf("update: %+v %v", up, err)
	}
	if e.version(t, appuser.Stream(u.ID)) != v+1 {
		t.Errorf("an update appended %d events", e.version(t, appuser.Stream(u.ID))-v)
	}

	// RemoveToken: idempotent, app-scoped.
	err = e.svc.RemoveToken(as(e.ctx, app2), "app1", u.ID, "tok1")
	wantKind(t, err, fault.NotFound)
	err = e.svc.RemoveToken(as(e.ctx, access.SystemActor), "app2", u.ID, "tok1")
	wantKind(t, err, fault.NotFound)
	v = e.version(t, appuser.Stream(u.ID))
	for range 2 {
		if err := e.svc.RemoveToken(as(e.ctx, access.SystemActor), "app1", u.ID, "tok1"); err != nil {
			t.Fatal(err)
		}
	}
	if n := e.version(t, appuser.Stream(u.ID)) - v; n != 1 {
		t.Errorf("two removals of one token appended %d events, want 1", n)
	}
	recs, _ := e.store.ReadStream(e.ctx, appuser.Stream(u.ID), 0)
	if last := recs[len(recs)-1]; last.Type != "appuser.token_removed" || last.Meta.App != "app1" || last.Meta.Actor != "system" {
		t.Errorf("last event %s meta %+v", last.Type, last.Meta)
	}

	err = e.svc.Delete(as(e.ctx, app1), u.ID)
	wantKind(t, err, fault.Forbidden)
	if err := e.svc.Delete(as(e.ctx, admin), u.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := e.read.AppUser(e.ctx, u.ID); !fault.Is(err, fault.NotFound) {
		t.Errorf("deleted app user reads %v", err)
	}
	_, err = e.svc.Update(as(e.ctx, app1), u.ID, profile, true)
	wantKind(t, err, fault.NotFound)
}

func TestRegisterLoginPocket(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	device, err := e.svc.Create(as(e.ctx, app1), "app1", appuser.Profile{Devices: []appuser.Device{{Platform: "ios", Token: "t"}}})
	if err != nil {
		t.Fatal(err)
	}
	reg := cmdappuser.Registration{Email: "Ann@Example.com", Password: "ann-password", DeviceID: device.Alias,
		Profile: appuser.UserProfile{Name: "Ann", Surname: "Lee"}}

	_, err = e.svc.Register(as(e.ctx, editor), reg)
	wantKind(t, err, fault.Forbidden)
	_, err = e.svc.Register(as(e.ctx, app1), cmdappuser.Registration{Network: "facebook", Email: "a@example.com", Password: "xxxxxxxxx"})
	wantKind(t, err, fault.Invalid)
	_, err = e.svc.Register(as(e.ctx, app1), cmdappuser.Registration{Email: "a@example.com", Password: "short"})
	wantKind(t, err, fault.Invalid)

	// Concurrent sign-ups with one email (any case): exactly one wins.
	var wg sync.WaitGroup
	results := make([]error, 4)
	ids := make([]string, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := reg
			if i%2 == 1 {
				r.Email = "ann@example.COM"
			}
			u, err := e.svc.Register(as(e.ctx, app1), r)
			results[i], ids[i] = err, u.ID
		}()
	}
	wg.Wait()
	var id string
	wins := 0
	for i, err := range results {
		switch {
		case err == nil:
			wins++
			id = ids[i]
		case !fault.Is(err, fault.Conflict):
			t.Errorf("registration %d: %v", i, err)
		}
	}
	if wins != 1 || !regexp.MustCompile(`^identified-[a-z2-7]{26}$`).MatchString(id) {
		t.Fatalf("%d registrations won (id %q), want exactly one", wins, id)
	}
	// Another app may register the same email.
	if _, err := e.svc.Register(as(e.ctx, app2), reg); err != nil {
		t.Fatalf("the same email in another app: %v", err)
	}
	u, _ := e.read.AppUser(e.ctx, device.ID)
	if u.Identified != id {
		t.Errorf("registration did not link the device: identified %q, want %q", u.Identified, id)
	}

	// Login: wrong password, unknown email, other network.
	for _, l := range []cmdappuser.Login{{Email: "ann@example.com", Password: "wrong-password"}, {Email: "nobody@example.com", Password: "ann-password"}} {
		_, _, err := e.svc.Login(as(e.ctx, app1), l)
		wantKind(t, err, fault.Invalid)
		if err.Error() != cmdappuser.MsgBadCredentials {
			t.Errorf("message %q", err.Error())
		}
	}
	_, _, err = e.svc.Login(as(e.ctx, app1), cmdappuser.Login{Network: "google", Email: "ann@example.com", Password: "ann-password"})
	wantKind(t, err, fault.Invalid)
	_, _, err = e.svc.Login(as(e.ctx, app1), cmdappuser.Login{Email: "only@example.com", Password: "ann-password"})
	wantKind(t, err, fault.Invalid)
	user, tok, err := e.svc.Login(as(e.ctx, app1), cmdappuser.Login{Email: "ann@example.com", Password: "ann-password", DeviceID: device.Alias})
	if err != nil || user.ID != id || user.Profile.DisplayName != "Ann Lee" || tok.AccessToken == "" || tok.Scope != "app" {
		t.Fatalf("login: %+v %+v %v", user, tok, err)
	}
	actor, err := e.sessions.Authenticate(e.ctx, tok.AccessToken, netip.Addr{})
	if err != nil || actor.Kind != access.Identified || actor.ID != id || actor.App != "app1" {
		t.Fatalf("token acts as %+v %v", actor, err)
	}

	// A second device: logging in there links it too.
	other, _ := e.svc.Create(as(e.ctx, app1), "app1", appuser.Profile{})
	if _, _, err := e.svc.Login(as(e.ctx, app1), cmdappuser.Login{Email: "ann@example.com", Password: "ann-password", DeviceID: other.Alias}); err != nil {
		t.Fatal(err)
	}
	if u, _ := e.read.AppUser(e.ctx, other.ID); u.Identified != id {
		t.Errorf("login did not link the second device: %q", u.Identified)
	}

	// Throttle: after userLimit failures the account-and-address pair (here
	// no address is known) waits, even with the right password.
	for range userLimit {
		_, _, err := e.svc.Login(as(e.ctx, app1), cmdappuser.Login{Email: "ann@example.com", Password: "guess-guess"})
		wantKind(t, err, fault.Invalid)
	}
	_, _, err = e.svc.Login(as(e.ctx, app1), cmdappuser.Login{Email: "ann@example.com", Password: "ann-password"})
	wantKind(t, err, fault.TooManyRequests)

	// Pocket: identified users only.
	_, err = e.svc.PutPocket(as(e.ctx, app1), appuser.PocketChange{SetData: true, Data: map[string]any{"a": 1}})
	wantKind(t, err, fault.Forbidden)
	me := as(e.ctx, actor)
	p, err := e.svc.PutPocket(me, appuser.PocketChange{SetData: true, Data: map[string]any{"a": "1"},
		References: map[string][]string{"favorites": {"f1"}}})
	if err != nil || p.Data["a"] != "1" || len(p.References["favorites"]) != 1 {
		t.Fatalf("pocket: %+v %v", p, err)
	}
	p, err = e.svc.PutPocket(me, appuser.PocketChange{References: map[string][]string{"favorites": nil}})
	if err != nil || p.Data["a"] != "1" || len(p.References) != 0 {
		t.Fatalf("pocket after clearing: %+v %v", p, err)
	}
	stored, err := e.read.Pocket(e.ctx, id)
	if err != nil || stored.Data["a"] != "1" || len(stored.References) != 0 {
		t.Errorf("read model pocket %+v %v", stored, err)
	}
}
