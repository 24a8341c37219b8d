package loyalty_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/memstore"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/commands"
	cmdloyalty "github.com/halocms/halocms/commands/loyalty"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/loyalty"
	"github.com/halocms/halocms/domain/rights"
	projloyalty "github.com/halocms/halocms/projections/loyalty"
	projrights "github.com/halocms/halocms/projections/rights"
	rmrights "github.com/halocms/halocms/readmodels/rights"
)

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// env is the service over an event store: the real one, with the rights
// projection (the authorizer reads it) and the loyalty projection
// (read-your-writes) running (newEnv), or the in-memory one (newMemEnv).
// Apps app1 and app2; identified users ann and bob of app1, cid of app2;
// CMS users with one right each on app1 (reader, writer, updater,
// deleter) and writer2 with write on app2.
type env struct {
	ctx   context.Context
	pool  *pgxpool.Pool // nil over the in-memory store
	store commands.EventStore
	authz cmdloyalty.Authorizer
	wait  commands.Waiter
	svc   *cmdloyalty.Service
}

var (
	admin    = access.Actor{Kind: access.User, ID: "root", Admin: true}
	reader   = access.Actor{Kind: access.User, ID: "reader"}
	writer   = access.Actor{Kind: access.User, ID: "writer", ClientIP: "198.51.100.7"}
	updater  = access.Actor{Kind: access.User, ID: "updater"}
	deleter  = access.Actor{Kind: access.User, ID: "deleter"}
	writer2  = access.Actor{Kind: access.User, ID: "writer2"}
	noRights = access.Actor{Kind: access.User, ID: "norights"}
	appTok   = access.Actor{Kind: access.App, ID: "app1", App: "app1"}
	ann      = access.Actor{Kind: access.Identified, ID: "ann", App: "app1"}
	bob      = access.Actor{Kind: access.Identified, ID: "bob", App: "app1"}
)

func newEnv(t testing.TB, opts cmdloyalty.Options) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	pool := pgtest.Pool(t)
	store := postgres.NewEventStore(pool, eventcodec.Default())
	t.Cleanup(store.Close)
	rt := projection.NewRuntime(pool, store, nil, quiet, projection.Options{WaitTimeout: 20 * time.Second},
		projrights.Projector{}, projloyalty.Projector{})
	rctx, stop := context.WithCancel(context.Background())
	if err := rt.Start(rctx); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stop(); rt.Wait() })
	e := &env{ctx: ctx, pool: pool, store: store, authz: rmrights.NewAuthorizer(pool), wait: rt}
	e.svc = e.service(opts)
	if !rt.WaitFor(ctx, e.seed(t), "rights") {
		t.Fatal("the rights projection did not catch up")
	}
	return e
}

// newMemEnv is newEnv over the in-memory store, for the tests of
// decisions: there is no rights read model, so every caller may do
// anything (the tests that use it are refused nothing over the real
// store either; TestRightsRefusals and TestCheck test the refusals), and
// no projection to wait for.
func newMemEnv(t testing.TB, opts cmdloyalty.Options) *env {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	e := &env{ctx: ctx, store: memstore.New(eventcodec.Default()), authz: allowAll{}, wait: noWait{}}
	e.svc = e.service(opts)
	e.seed(t)
	return e
}

// allowAll lets every caller do everything.
type allowAll struct{}

func (allowAll) Authorize(context.Context, access.Actor, rights.Permission, rights.Resource) error {
	return nil
}
func (allowAll) AuthorizeAnyApp(context.Context, access.Actor, rights.Permission) error { return nil }

// seed appends the apps, the identified users and the CMS users' rights,
// and returns where the last landed.
func (e *env) seed(t testing.TB) event.Position {
	t.Helper()
	var last event.Position
	add := func(stream string, data any) {
		res, err := e.store.Append(e.ctx, stream, event.AnyVersion, event.Event{Data: data})
		if err != nil {
			t.Fatal(err)
		}
		last = res.Last
	}
	for _, app := range []string{"app1", "app2"} {
		add(identity.AppStream(app), identity.AppCreated{AppID: app, Name: app})
	}
	for id, app := range map[string]string{"ann": "app1", "bob": "app1", "cid": "app2"} {
		add(appuser.IdentifiedStream(id), appuser.IdentifiedRegistered{IdentifiedID: id, App: app, Email: id + "@example.com", Network: "halo"})
	}
	for user, g := range map[string][2]string{"reader": {"app1", "read"}, "writer": {"app1", "write"},
		"updater": {"app1", "update"}, "deleter": {"app1", "delete"}, "writer2": {"app2", "write"}} {
		add(rights.Stream(user), rights.Granted{UserID: user, AppID: g[0], ScopeKind: "app", Permissions: []string{g[1]}, By: "system"})
	}
	return last
}

// service is another Service over the same store (as another process).
func (e *env) service(opts cmdloyalty.Options) *cmdloyalty.Service {
	return cmdloyalty.NewService(e.store, ids.Generator{}, e.authz, e.wait, opts)
}

func as(ctx context.Context, a access.Actor) context.Context { return access.WithActor(ctx, a) }

func wantKind(t testing.TB, err error, kind fault.Kind) {
	t.Helper()
	if !fault.Is(err, kind) {
		t.Fatalf("error %v (kind %v), want kind %v", err, fault.KindOf(err), kind)
	}
}

// history reads an account's stream.
func (e *env) history(t testing.TB, account string) []event.Recorded {
	t.Helper()
	recs, err := e.store.ReadStream(e.ctx, loyalty.AccountStream(account), 0)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// fold folds an account's stream.
func (e *env) fold(t testing.TB, account string) *loyalty.Account {
	t.Helper()
	a := loyalty.NewAccount(account, "")
	for _, r := range e.history(t, account) {
		a.Apply(r.Data)
	}
	return a
}

func count(recs []event.Recorded, typ string) int {
	n := 0
	for _, r := range recs {
		if r.Type == typ {
			n++
		}
	}
	return n
}

func TestRightsRefusals(t *testing.T) {
	t.Parallel()
	e := newEnv(t, cmdloyalty.Options{})
	p := cmdloyalty.Points{Amount: 10, Reason: "test"}
	if _, err := e.svc.Earn(as(e.ctx, writer), "ann", cmdloyalty.Points{Amount: 100, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	card, _, err := e.svc.DefineCard(as(e.ctx, writer), "app1", cmdloyalty.CardDefinition{Name: "Coffee", Reward: "Coffee", StampsNeeded: 2})
	if err != nil {
		t.Fatal(err)
	}
	before := len(e.history(t, "ann"))

	for _, c := range []struct {
		name  string
		actor access.Actor
		do    func(ctx context.Context) error
		kind  fault.Kind
	}{
		{"anonymous earns", access.Actor{}, func(ctx context.Context) error { _, err := e.svc.Earn(ctx, "ann", p); return err }, fault.Unauthenticated},
		{"anonymous redeems", access.Actor{}, func(ctx context.Context) error { _, err := e.svc.Redeem(ctx, "ann", p); return err }, fault.Unauthenticated},
		{"app token earns", appTok, func(ctx context.Context) error { _, err := e.svc.Earn(ctx, "ann", p); return err }, fault.Forbidden},
		{"app token redeems", appTok, func(ctx context.Context) error { _, err := e.svc.Redeem(ctx, "ann", p); return err }, fault.Forbidden},
		{"app token stamps", appTok, func(ctx context.Context) error {
			_, err := e.svc.AddStamps(ctx, "ann", cmdloyalty.Stamps{Card: card, Count: 1})
			return err
		}, fault.Forbidden},
		{"app token defines a card", appTok, func(ctx context.Context) error {
			_, _, err := e.svc.DefineCard(ctx, "app1", cmdloyalty.CardDefinition{Name: "x", Reward: "y", StampsNeeded: 1})
			return err
		}, fault.Forbidden},
		{"identified user redeems from another account", bob, func(ctx context.Context) error { _, err := e.svc.Redeem(ctx, "ann", p); return err }, fault.Forbidden},
		{"identified user redeems another's card", bob, func(ctx context.Context) error { _, err := e.svc.RedeemCard(ctx, "ann", "x", ""); return err }, fault.Forbidden},
		{"identified user earns on their own account", ann, func(ctx context.Context) error { _, err := e.svc.Earn(ctx, "ann", p); return err }, fault.Forbidden},
		{"identified user adjusts their own account", ann, func(ctx context.Context) error { _, err := e.svc.Adjust(ctx, "ann", p); return err }, fault.Forbidden},
		{"identified user of another app with the same id", access.Actor{Kind: access.Identified, ID: "ann", App: "app2"},
			func(ctx context.Context) error { _, err := e.svc.Redeem(ctx, "ann", p); return err }, fault.Forbidden},
		{"reader earns", reader, func(ctx context.Context) error { _, err := e.svc.Earn(ctx, "ann", p); return err }, fault.Forbidden},
		{"reader redeems", reader, func(ctx context.Context) error { _, err := e.svc.Redeem(ctx, "ann", p); return err }, fault.Forbidden},
		{"writer of another app earns", writer2, func(ctx context.Context) error { _, err := e.svc.Earn(ctx, "ann", p); return err }, fault.Forbidden},
		{"writer adjusts", writer, func(ctx context.Context) error { _, err := e.svc.Adjust(ctx, "ann", p); return err }, fault.Forbidden},
		{"writer rebalances", writer, func(ctx context.Context) error { _, err := e.svc.Rebalance(ctx, "ann"); return err }, fault.Forbidden},
		{"updater earns", updater, func(ctx context.Context) error { _, err := e.svc.Earn(ctx, "ann", p); return err }, fault.Forbidden},
		{"writer expires", writer, func(ctx context.Context) error { _, err := e.svc.ExpireDue(ctx, "ann", time.Now()); return err }, fault.Forbidden},
		{"reader defines a card", reader, func(ctx context.Context) error {
			_, _, err := e.svc.DefineCard(ctx, "app1", cmdloyalty.CardDefinition{Name: "x", Reward: "y", StampsNeeded: 1})
			return err
		}, fault.Forbidden},
		{"writer changes a card", writer, func(ctx context.Context) error {
			_, err := e.svc.ChangeCard(ctx, card, cmdloyalty.CardDefinition{Name: "x", Reward: "y", StampsNeeded: 1})
			return err
		}, fault.Forbidden},
		{"updater retires a card", updater, func(ctx context.Context) error { _, err := e.svc.RetireCard(ctx, card); return err }, fault.Forbidden},
		{"writer of another app stamps", writer2, func(ctx context.Context) error {
			_, err := e.svc.AddStamps(ctx, "ann", cmdloyalty.Stamps{Card: card, Count: 1})
			return err
		}, fault.Forbidden},
		{"unknown identified user", admin, func(ctx context.Context) error { _, err := e.svc.Earn(ctx, "nobody", p); return err }, fault.NotFound},
		// A CMS user who holds the command's permission on no app learns
		// nothing: not whether the account, the card or the app exists.
		{"no rights earns on a known account", noRights, func(ctx context.Context) error { _, err := e.svc.Earn(ctx, "ann", p); return err }, fault.Forbidden},
		{"no rights earns on an unknown account", noRights, func(ctx context.Context) error { _, err := e.svc.Earn(ctx, "nobody", p); return err }, fault.Forbidden},
		{"no rights earns on no account", noRights, func(ctx context.Context) error { _, err := e.svc.Earn(ctx, "", p); return err }, fault.Forbidden},
		{"reader redeems from an unknown account", reader, func(ctx context.Context) error { _, err := e.svc.Redeem(ctx, "nobody", p); return err }, fault.Forbidden},
		{"writer rebalances an unknown account", writer, func(ctx context.Context) error { _, err := e.svc.Rebalance(ctx, "nobody"); return err }, fault.Forbidden},
		{"no rights stamps with no card", noRights, func(ctx context.Context) error {
			_, err := e.svc.AddStamps(ctx, "nobody", cmdloyalty.Stamps{Count: 1})
			return err
		}, fault.Forbidden},
		{"no rights defines a card of no app", noRights, func(ctx context.Context) error {
			_, _, err := e.svc.DefineCard(ctx, "", cmdloyalty.CardDefinition{})
			return err
		}, fault.Forbidden},
		{"writer changes an unknown card", writer, func(ctx context.Context) error {
			_, err := e.svc.ChangeCard(ctx, "nosuchcard", cmdloyalty.CardDefinition{Name: "x", Reward: "y", StampsNeeded: 1})
			return err
		}, fault.Forbidden},
		{"updater retires an unknown card", updater, func(ctx context.Context) error { _, err := e.svc.RetireCard(ctx, "nosuchcard"); return err }, fault.Forbidden},
		// With the permission on some app, an unknown id is a 404 (the app
		// that counts is the account's, and there is none).
		{"writer of another app earns on an unknown account", writer2, func(ctx context.Context) error { _, err := e.svc.Earn(ctx, "nobody", p); return err }, fault.NotFound},
		{"updater changes an unknown card", updater, func(ctx context.Context) error {
			_, err := e.svc.ChangeCard(ctx, "nosuchcard", cmdloyalty.CardDefinition{Name: "x", Reward: "y", StampsNeeded: 1})
			return err
		}, fault.NotFound},
		{"writer defines a card of no app", writer, func(ctx context.Context) error {
			_, _, err := e.svc.DefineCard(ctx, "", cmdloyalty.CardDefinition{})
			return err
		}, fault.Invalid},
	} {
		t.Run(c.name, func(t *testing.T) {
			ctx := e.ctx
			if c.actor.Kind != access.Anonymous {
				ctx = as(ctx, c.actor)
			}
			wantKind(t, c.do(ctx), c.kind)
		})
	}
	if after := len(e.history(t, "ann")); after != before {
		t.Errorf("refused commands appended %d events", after-before)
	}
	if recs := e.history(t, "nobody"); len(recs) != 0 {
		t.Errorf("an unknown user got a stream of %d events", len(recs))
	}

	// The rights that suffice.
	if _, err := e.svc.Redeem(as(e.ctx, ann), "ann", p); err != nil {
		t.Errorf("ann redeems from her own account: %v", err)
	}
	if _, err := e.svc.Redeem(as(e.ctx, writer), "ann", p); err != nil {
		t.Errorf("writer redeems: %v", err)
	}
	if _, err := e.svc.Adjust(as(e.ctx, updater), "ann", cmdloyalty.Points{Amount: -5, Reason: "typo"}); err != nil {
		t.Errorf("updater adjusts: %v", err)
	}
	if _, err := e.svc.Rebalance(as(e.ctx, updater), "ann"); err != nil {
		t.Errorf("updater rebalances: %v", err)
	}
	if _, err := e.svc.ChangeCard(as(e.ctx, updater), card, cmdloyalty.CardDefinition{Name: "Tea", Reward: "Tea", StampsNeeded: 2}); err != nil {
		t.Errorf("updater changes a card: %v", err)
	}
	if _, err := e.svc.RetireCard(as(e.ctx, deleter), card); err != nil {
		t.Errorf("deleter retires a card: %v", err)
	}
	if a := e.fold(t, "ann"); a.Balance() != 75 {
		t.Errorf("balance %d, want 100-10-10-5", a.Balance())
	}
}

// TestCheck: the refusal a caller gets whatever the request holds, for
// handlers to give before a request's own faults.
func TestCheck(t *testing.T) {
	t.Parallel()
	e := newEnv(t, cmdloyalty.Options{})
	for _, c := range []struct {
		name    string
		actor   access.Actor
		account string
		op      cmdloyalty.Op
		kind    fault.Kind // 0 (Internal): allowed
	}{
		{"anonymous", access.Actor{}, "ann", cmdloyalty.OpEarn, fault.Unauthenticated},
		{"app token", appTok, "ann", cmdloyalty.OpRedeem, fault.Forbidden},
		{"identified user redeems their own", ann, "ann", cmdloyalty.OpRedeem, 0},
		{"identified user redeems their own card", ann, "ann", cmdloyalty.OpRedeemCard, 0},
		{"identified user redeems another's", ann, "bob", cmdloyalty.OpRedeem, fault.Forbidden},
		{"identified user earns", ann, "ann", cmdloyalty.OpEarn, fault.Forbidden},
		{"identified user defines a card", ann, "", cmdloyalty.OpDefineCard, fault.Forbidden},
		{"no rights", noRights, "ann", cmdloyalty.OpEarn, fault.Forbidden},
		{"no rights, unknown account", noRights, "nobody", cmdloyalty.OpRedeem, fault.Forbidden},
		{"reader earns", reader, "ann", cmdloyalty.OpEarn, fault.Forbidden},
		{"writer adjusts", writer, "", cmdloyalty.OpAdjust, fault.Forbidden},
		{"writer earns", writer, "ann", cmdloyalty.OpEarn, 0},
		{"writer of another app earns: it depends on the account", writer2, "ann", cmdloyalty.OpEarn, 0},
		{"updater rebalances", updater, "", cmdloyalty.OpRebalance, 0},
		{"deleter retires a card", deleter, "", cmdloyalty.OpRetireCard, 0},
		{"admin", admin, "nobody", cmdloyalty.OpAdjust, 0},
	} {
		ctx := e.ctx
		if c.actor.Kind != access.Anonymous {
			ctx = as(ctx, c.actor)
		}
		err := e.svc.Check(ctx, c.account, c.op)
		if c.kind == 0 {
			if err != nil {
				t.Errorf("%s: %v, want allowed", c.name, err)
			}
			continue
		}
		if !fault.Is(err, c.kind) {
			t.Errorf("%s: %v, want %v", c.name, err, c.kind)
		}
	}
}

func TestFirstTransactionAndReadYourWrites(t *testing.T) {
	t.Parallel()
	e := newEnv(t, cmdloyalty.Options{})
	exp := time.Now().Add(time.Hour)
	res, err := e.svc.Earn(as(e.ctx, writer), "ann", cmdloyalty.Points{Amount: 40, Reason: "welcome", Reference: "ref-1", ExpiresAt: &exp})
	if err != nil {
		t.Fatal(err)
	}
	if res.Account != "ann" || res.App != "app1" || res.Balance != 40 || res.Replayed || len(res.Transaction) != 24 || res.Position.IsZero() {
		t.Fatalf("result %+v", res)
	}
	recs := e.history(t, "ann")
	if len(recs) != 2 || recs[0].Type != "loyalty.account_opened" || recs[1].Type != "loyalty.points_earned" {
		t.Fatalf("stream %v", recs)
	}
	if recs[0].Position.TxID != recs[1].Position.TxID {
		t.Error("the opening and the first transaction were not appended together")
	}
	if m := recs[1].Meta; m.App != "app1" || m.Actor != "user:writer" || m.ClientIP != "198.51.100.7" {
		t.Errorf("metadata %+v", m)
	}
	earned := recs[1].Data.(loyalty.PointsEarned)
	if earned.Transaction != res.Transaction || earned.Reason != "welcome" || earned.Reference != "ref-1" ||
		earned.ExpiresAt == nil || !earned.ExpiresAt.Equal(exp.Truncate(time.Millisecond)) {
		t.Errorf("event %+v", earned)
	}
	if want := [2]int64{recs[0].StreamVersion, recs[1].StreamVersion}; res.Versions != want {
		t.Errorf("result's versions %v, want the stream versions the command wrote, %v", res.Versions, want)
	}
	// Read your writes: the loyalty projection has applied the append.
	var tx, pos int64
	if err := e.pool.QueryRow(e.ctx, `SELECT tx_id::text::bigint, position FROM projection_checkpoints WHERE name = 'loyalty'`).Scan(&tx, &pos); err != nil {
		t.Fatal(err)
	}
	if (event.Position{TxID: uint64(tx), Pos: pos}).Less(res.Position) {
		t.Errorf("Earn returned before the loyalty projection reached %v (it is at %d/%d)", res.Position, tx, pos)
	}
	// Bad input changes nothing.
	for _, p := range []cmdloyalty.Points{{Amount: 0, Reason: "test"}, {Amount: 5, Reason: "test", ExpiresAt: new(time.Now().Add(-time.Minute))},
		{Amount: 1, Reason: "test", IdempotencyKey: string(make([]byte, 256))}, {Amount: 1}, {Amount: 1, Reason: " \t\n"}} {
		_, err := e.svc.Earn(as(e.ctx, writer), "ann", p)
		wantKind(t, err, fault.Invalid)
	}
	if n := len(e.history(t, "ann")); n != 2 {
		t.Errorf("invalid earns appended: %d events", n)
	}
	// Redeeming more than the balance: 409 with the figures.
	_, err = e.svc.Redeem(as(e.ctx, ann), "ann", cmdloyalty.Points{Amount: 41, Reason: "test"})
	wantKind(t, err, fault.Conflict)
	if fe := err.(*fault.Error); fe.Message != loyalty.MsgInsufficient || fe.Extra["balance"] != int64(40) || fe.Extra["requested"] != int64(41) {
		t.Errorf("insufficient: %q %v", fe.Message, fe.Extra)
	}
	// A rebalance of an account whose balances agree records nothing.
	rb, err := e.svc.Rebalance(as(e.ctx, admin), "bob")
	if err != nil || rb.Corrected || rb.Old != 0 || rb.New != 0 || rb.App != "app1" {
		t.Errorf("rebalancing an unopened account: %+v %v", rb, err)
	}
	if n := len(e.history(t, "bob")); n != 0 {
		t.Errorf("rebalance opened an account: %d events", n)
	}
}

func TestIdempotentReplay(t *testing.T) {
	t.Parallel()
	e := newMemEnv(t, cmdloyalty.Options{})
	ctx := as(e.ctx, writer)
	p := cmdloyalty.Points{Amount: 25, Reason: "order 17", IdempotencyKey: "order-17"}
	first, err := e.svc.Earn(ctx, "ann", p)
	if err != nil {
		t.Fatal(err)
	}
	// Another process (no shared cache) replays it too.
	other := e.service(cmdloyalty.Options{})
	for _, svc := range []*cmdloyalty.Service{e.svc, other} {
		again, err := svc.Earn(ctx, "ann", p)
		if err != nil || !again.Replayed || again.Transaction != first.Transaction || again.Balance != 25 || again.Versions != [2]int64{} {
			t.Fatalf("replay: %+v %v", again, err)
		}
	}
	p.Amount = 26
	_, err = e.svc.Earn(ctx, "ann", p)
	wantKind(t, err, fault.Conflict)
	if fe := err.(*fault.Error); fe.Message != loyalty.MsgKeyReused || fe.Extra["transaction"] != first.Transaction || fe.Extra["idempotencyKey"] != "order-17" {
		t.Errorf("reused key: %q %v", fe.Message, fe.Extra)
	}
	// The key is the account's: redeeming with it is another request.
	_, err = e.svc.Redeem(as(e.ctx, ann), "ann", cmdloyalty.Points{Amount: 25, Reason: "order 17", IdempotencyKey: "order-17"})
	wantKind(t, err, fault.Conflict)
	// Another account may use the same key.
	if r, err := e.svc.Earn(ctx, "bob", cmdloyalty.Points{Amount: 25, Reason: "order 17", IdempotencyKey: "order-17"}); err != nil || r.Replayed {
		t.Errorf("same key on another account: %+v %v", r, err)
	}
	recs := e.history(t, "ann")
	if n := count(recs, "loyalty.points_earned"); n != 1 {
		t.Errorf("%d earns recorded, want 1", n)
	}
	// Without a key, two identical requests are two transactions.
	for range 2 {
		if _, err := e.svc.Earn(ctx, "ann", cmdloyalty.Points{Amount: 1, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	if n := count(e.history(t, "ann"), "loyalty.points_earned"); n != 3 {
		t.Errorf("%d earns recorded, want 3", n)
	}
}

// redeemRace has 32 clients redeem 7 points each at once from an account
// holding 100, spread over svcs, and checks that exactly 14 succeed, the
// others are refused for insufficient points, the balance is 2 and the
// stream holds exactly 14 redemptions, every recorded balance agreeing
// with the amounts.
func redeemRace(t *testing.T, e *env, account string, actor access.Actor, svcs ...*cmdloyalty.Service) {
	t.Helper()
	if a := e.fold(t, account); a.Balance() != 0 {
		t.Fatalf("balance %d before the race", a.Balance())
	}
	if _, err := svcs[0].Earn(as(e.ctx, admin), account, cmdloyalty.Points{Amount: 100, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	before := len(e.history(t, account))
	const clients, each, start = 32, 7, 100
	errs := make([]error, clients)
	results := make([]cmdloyalty.Result, clients)
	var wg sync.WaitGroup
	gate := make(chan struct{})
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-gate
			results[i], errs[i] = svcs[i%len(svcs)].Redeem(as(e.ctx, actor), account, cmdloyalty.Points{Amount: each, Reason: "race"})
		}()
	}
	close(gate)
	wg.Wait()
	ok := 0
	seen := map[int64]bool{}
	for i, err := range errs {
		switch {
		case err == nil:
			ok++
			if seen[results[i].Balance] || results[i].Balance < 0 {
				t.Errorf("balance %d reported twice or negative", results[i].Balance)
			}
			seen[results[i].Balance] = true
		case fault.Is(err, fault.Conflict) && err.Error() == loyalty.MsgInsufficient:
		default:
			t.Errorf("client %d: unexpected error %v", i, err)
		}
	}
	if ok != start/each {
		t.Errorf("%d redemptions succeeded, want %d", ok, start/each)
	}
	recs := e.history(t, account)
	if n := count(recs[before:], "loyalty.points_redeemed"); n != ok {
		t.Errorf("the stream holds %d redemptions, %d succeeded", n, ok)
	}
	a := loyalty.NewAccount(account, "")
	for _, r := range recs {
		a.Apply(r.Data)
		if a.Balance() < 0 || a.Balance() != a.Sum() {
			t.Fatalf("after version %d: recorded %d, sum %d", r.StreamVersion, a.Balance(), a.Sum())
		}
	}
	if a.Balance() != start-each*int64(ok) {
		t.Errorf("final balance %d, want %d", a.Balance(), start-each*int64(ok))
	}
}

func TestConcurrentRedeemsNeverOverdraw(t *testing.T) {
	t.Parallel()
	e := newMemEnv(t, cmdloyalty.Options{})
	redeemRace(t, e, "ann", ann, e.svc)
}

func TestTwoProcessesNeverOverdraw(t *testing.T) {
	t.Parallel()
	e := newMemEnv(t, cmdloyalty.Options{})
	// Both have the account cached at an older version before the race.
	other := e.service(cmdloyalty.Options{})
	for _, svc := range []*cmdloyalty.Service{e.svc, other} {
		if _, err := svc.Earn(as(e.ctx, writer), "bob", cmdloyalty.Points{Amount: 1, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
		if _, err := svc.Redeem(as(e.ctx, writer), "bob", cmdloyalty.Points{Amount: 1, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	redeemRace(t, e, "bob", writer, e.svc, other)
	// Without a cache too.
	uncached := e.service(cmdloyalty.Options{CacheEntries: -1})
	redeemRace(t, e, "ann", ann, uncached, e.service(cmdloyalty.Options{CacheEntries: -1}), other)
}

func TestStampsAndCards(t *testing.T) {
	t.Parallel()
	e := newMemEnv(t, cmdloyalty.Options{})
	w := as(e.ctx, writer)
	card, pos, err := e.svc.DefineCard(w, "app1", cmdloyalty.CardDefinition{Name: " Coffee ", Reward: "A coffee", StampsNeeded: 3})
	if err != nil || pos.IsZero() {
		t.Fatal(err)
	}
	_, _, err = e.svc.DefineCard(as(e.ctx, admin), "nope", cmdloyalty.CardDefinition{Name: "x", Reward: "y", StampsNeeded: 1})
	wantKind(t, err, fault.Invalid)
	_, _, err = e.svc.DefineCard(w, "app1", cmdloyalty.CardDefinition{Name: "x", Reward: "y", StampsNeeded: 0})
	wantKind(t, err, fault.Invalid)
	other, _, err := e.svc.DefineCard(as(e.ctx, admin), "app2", cmdloyalty.CardDefinition{Name: "x", Reward: "y", StampsNeeded: 1})
	if err != nil {
		t.Fatal(err)
	}

	st, err := e.svc.AddStamps(w, "ann", cmdloyalty.Stamps{Card: card, Count: 7, IdempotencyKey: "visit-1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(st.UserCards) != 3 || len(st.Completed) != 2 || st.App != "app1" || st.Transaction == "" {
		t.Fatalf("stamps %+v", st)
	}
	replay, err := e.svc.AddStamps(w, "ann", cmdloyalty.Stamps{Card: card, Count: 7, IdempotencyKey: "visit-1"})
	if err != nil || !replay.Replayed || replay.Transaction != st.Transaction || len(replay.UserCards) != 3 {
		t.Errorf("replay %+v %v", replay, err)
	}
	_, err = e.svc.AddStamps(w, "ann", cmdloyalty.Stamps{Card: other, Count: 1})
	wantKind(t, err, fault.NotFound)
	_, err = e.svc.AddStamps(w, "ann", cmdloyalty.Stamps{Card: "", Count: 1})
	wantKind(t, err, fault.Invalid)
	_, err = e.svc.AddStamps(w, "ann", cmdloyalty.Stamps{Card: card, Count: 0})
	wantKind(t, err, fault.Invalid)

	// Ann redeems her first completed card; not twice; not the open one.
	if _, err := e.svc.RedeemCard(as(e.ctx, ann), "ann", st.Completed[0], ""); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.RedeemCard(as(e.ctx, ann), "ann", st.Completed[0], "")
	wantKind(t, err, fault.Conflict)
	_, err = e.svc.RedeemCard(as(e.ctx, ann), "ann", st.UserCards[2], "")
	wantKind(t, err, fault.Conflict)
	_, err = e.svc.RedeemCard(as(e.ctx, ann), "ann", "unknown", "")
	wantKind(t, err, fault.NotFound)

	// Retired: no stamps; the other completed card still redeems.
	if _, err := e.svc.RetireCard(as(e.ctx, admin), card); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.AddStamps(w, "ann", cmdloyalty.Stamps{Card: card, Count: 1})
	wantKind(t, err, fault.Conflict)
	_, err = e.svc.ChangeCard(as(e.ctx, admin), card, cmdloyalty.CardDefinition{Name: "x", Reward: "y", StampsNeeded: 1})
	wantKind(t, err, fault.Conflict)
	if _, err := e.svc.RedeemCard(w, "ann", st.Completed[1], "gift"); err != nil {
		t.Errorf("redeeming a completed card of a retired definition: %v", err)
	}
	_, err = e.svc.RetireCard(as(e.ctx, admin), "unknown")
	wantKind(t, err, fault.NotFound)

	recs := e.history(t, "ann")
	if count(recs, "loyalty.stamps_added") != 3 || count(recs, "loyalty.card_completed") != 2 || count(recs, "loyalty.card_redeemed") != 2 {
		t.Errorf("stream %d events: stamps %d completed %d redeemed %d", len(recs), count(recs, "loyalty.stamps_added"),
			count(recs, "loyalty.card_completed"), count(recs, "loyalty.card_redeemed"))
	}
}

func TestRebalanceDamagedHistory(t *testing.T) {
	t.Parallel()
	e := newMemEnv(t, cmdloyalty.Options{})
	if _, err := e.svc.Earn(as(e.ctx, writer), "ann", cmdloyalty.Points{Amount: 50, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	// An earlier version recorded a wrong running balance (appended behind
	// the service's back, after it cached the account).
	if _, err := e.store.Append(e.ctx, loyalty.AccountStream("ann"), 2, event.Event{Data: loyalty.PointsEarned{
		Account: "ann", App: "app1", Transaction: "imported", Amount: 30, Balance: 100, IdempotencyKey: "imported"}}); err != nil {
		t.Fatal(err)
	}
	res, err := e.svc.Redeem(as(e.ctx, ann), "ann", cmdloyalty.Points{Amount: 10, Reason: "test"})
	if err != nil || res.Balance != 90 {
		t.Fatalf("redeem continues the recorded balance: %+v %v", res, err)
	}
	rb, err := e.svc.Rebalance(as(e.ctx, updater), "ann")
	if err != nil || !rb.Corrected || rb.Old != 90 || rb.New != 70 || rb.Position.IsZero() {
		t.Fatalf("rebalance %+v %v", rb, err)
	}
	rb, err = e.svc.Rebalance(as(e.ctx, updater), "ann")
	if err != nil || rb.Corrected || rb.Old != 70 || rb.New != 70 {
		t.Errorf("second rebalance %+v %v", rb, err)
	}
	recs := e.history(t, "ann")
	if n := count(recs, "loyalty.balance_corrected"); n != 1 {
		t.Fatalf("%d corrections recorded", n)
	}
	last := recs[len(recs)-1]
	if c := last.Data.(loyalty.BalanceCorrected); c.Old != 90 || c.New != 70 || last.Meta.Actor != "user:updater" {
		t.Errorf("correction %+v by %s", c, last.Meta.Actor)
	}
	res, err = e.svc.Earn(as(e.ctx, writer), "ann", cmdloyalty.Points{Amount: 5, Reason: "test"})
	if err != nil || res.Balance != 75 {
		t.Errorf("earn after the correction: %+v %v", res, err)
	}
}

// TestExpiryCorrectsADamagedBalanceFirst: the expiry of a due lot on a
// damaged history records the correction and the expiry in one append,
// counts only the lot, and leaves a rebalance nothing to hand back.
func TestExpiryCorrectsADamagedBalanceFirst(t *testing.T) {
	t.Parallel()
	e := newMemEnv(t, cmdloyalty.Options{})
	later := time.Now().Add(time.Hour)
	lot, err := e.svc.Earn(as(e.ctx, writer), "ann", cmdloyalty.Points{Amount: 100, Reason: "test", ExpiresAt: &later})
	if err != nil {
		t.Fatal(err)
	}
	// An earlier version recorded a wrong running balance: 10 points, 50
	// recorded (appended behind the service's back).
	if _, err := e.store.Append(e.ctx, loyalty.AccountStream("ann"), 2, event.Event{Data: loyalty.PointsEarned{
		Account: "ann", App: "app1", Transaction: "imported", Amount: 10, Balance: 50, IdempotencyKey: "imported"}}); err != nil {
		t.Fatal(err)
	}
	if res, err := e.svc.Redeem(as(e.ctx, ann), "ann", cmdloyalty.Points{Amount: 50, Reason: "test"}); err != nil || res.Balance != 0 {
		t.Fatalf("redeem %+v %v", res, err)
	}
	n, err := e.svc.ExpireDue(as(e.ctx, admin), "ann", later.Add(time.Hour))
	if err != nil || n != 1 {
		t.Fatalf("expire: %d lots, %v; want 1", n, err)
	}
	recs := e.history(t, "ann")
	c, x := recs[len(recs)-2], recs[len(recs)-1]
	if d, ok := c.Data.(loyalty.BalanceCorrected); !ok || d.Old != 0 || d.New != 60 {
		t.Errorf("before the expiry %+v, want the correction 0 to 60", c.Data)
	}
	if d, ok := x.Data.(loyalty.PointsExpired); !ok || d.Lot != lot.Transaction || d.Amount != 50 || d.Balance != 10 {
		t.Errorf("last %+v, want the expiry of the lot's 50 points, balance 10", x.Data)
	}
	if c.Position.TxID != x.Position.TxID || c.Meta.Actor != "user:root" || x.Meta.Actor != "user:root" {
		t.Errorf("correction %+v and expiry %+v: want one append by the admin", c.Meta, x.Meta)
	}
	rb, err := e.svc.Rebalance(as(e.ctx, updater), "ann")
	if err != nil || rb.Corrected || rb.Old != 10 || rb.New != 10 {
		t.Errorf("rebalance after the expiry %+v %v, want nothing to correct at 10", rb, err)
	}
}

func TestRedeemExpiresDueLotsFirst(t *testing.T) {
	t.Parallel()
	e := newMemEnv(t, cmdloyalty.Options{})
	w := as(e.ctx, writer)
	// 1.5 s ahead: the earn must still be in time on a loaded machine.
	soon := time.Now().Add(1500 * time.Millisecond)
	if _, err := e.svc.Earn(w, "ann", cmdloyalty.Points{Amount: 10, Reason: "test", ExpiresAt: &soon}); err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Earn(w, "ann", cmdloyalty.Points{Amount: 5, Reason: "test"}); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(soon) + 50*time.Millisecond)
	_, err := e.svc.Redeem(as(e.ctx, ann), "ann", cmdloyalty.Points{Amount: 6, Reason: "test"})
	wantKind(t, err, fault.Conflict)
	if fe := err.(*fault.Error); fe.Extra["balance"] != int64(5) {
		t.Errorf("balance after the expiry %v", fe.Extra["balance"])
	}
	res, err := e.svc.Redeem(as(e.ctx, ann), "ann", cmdloyalty.Points{Amount: 5, Reason: "test"})
	if err != nil || res.Balance != 0 {
		t.Fatalf("redeem %+v %v", res, err)
	}
	recs := e.history(t, "ann")
	n := len(recs)
	if recs[n-2].Type != "loyalty.points_expired" || recs[n-1].Type != "loyalty.points_redeemed" || recs[n-2].Position.TxID != recs[n-1].Position.TxID {
		t.Errorf("last events %s, %s: want the expiry and the redemption in one append", recs[n-2].Type, recs[n-1].Type)
	}
}

// readCounter is an event store counting the account events that
// commands read.
type readCounter struct {
	commands.EventStore
	read atomic.Int64
}

func (c *readCounter) ReadStream(ctx context.Context, stream string, after int64) ([]event.Recorded, error) {
	recs, err := c.EventStore.ReadStream(ctx, stream, after)
	if strings.HasPrefix(stream, "loyalty-") {
		c.read.Add(int64(len(recs)))
	}
	return recs, err
}

func TestCacheReadsOnlyNewerEvents(t *testing.T) {
	t.Parallel()
	e := newMemEnv(t, cmdloyalty.Options{})
	for _, c := range []struct {
		entries      int
		account      string
		wantLast     int64 // events the 11th command reads
		wantAfterOne int64 // events read after another process appended one transaction
	}{
		{0, "ann", 0, 1},
		{-1, "bob", 11, 13},
	} {
		rc := &readCounter{EventStore: e.store}
		svc := cmdloyalty.NewService(rc, ids.Generator{}, e.authz, e.wait, cmdloyalty.Options{CacheEntries: c.entries})
		ctx := as(e.ctx, writer)
		for range 10 {
			if _, err := svc.Earn(ctx, c.account, cmdloyalty.Points{Amount: 1, Reason: "test"}); err != nil {
				t.Fatal(err)
			}
		}
		before := rc.read.Load()
		if _, err := svc.Earn(ctx, c.account, cmdloyalty.Points{Amount: 1, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
		if n := rc.read.Load() - before; n != c.wantLast {
			t.Errorf("cache entries %d: the 11th transaction read %d events, want %d", c.entries, n, c.wantLast)
		}
		// Another process appends: the next command reads just that.
		if _, err := e.service(cmdloyalty.Options{}).Earn(ctx, c.account, cmdloyalty.Points{Amount: 1, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
		before = rc.read.Load()
		res, err := svc.Redeem(ctx, c.account, cmdloyalty.Points{Amount: 12, Reason: "test"})
		if err != nil || res.Balance != 0 {
			t.Fatalf("redeem all: %+v %v", res, err)
		}
		if n := rc.read.Load() - before; n != c.wantAfterOne {
			t.Errorf("cache entries %d: after another process's append, read %d events, want %d", c.entries, n, c.wantAfterOne)
		}
	}
}

// TestCacheKeepsToItsBudget: the cached states' footprints stay within
// CacheBytes; the least recently used account goes first and folds its
// stream again, and an account whose state outgrows the whole budget is
// not kept at all.
func TestCacheKeepsToItsBudget(t *testing.T) {
	t.Parallel()
	e := newMemEnv(t, cmdloyalty.Options{})
	rc := &readCounter{EventStore: e.store}
	const budget = 10_000 // two accounts of ten transactions (about 4 kB each), not three
	svc := cmdloyalty.NewService(rc, ids.Generator{}, e.authz, e.wait, cmdloyalty.Options{CacheBytes: budget})
	ctx := as(e.ctx, admin)
	keys := 0
	earn := func(account string, n int) (read int64) {
		t.Helper()
		before := rc.read.Load()
		for range n {
			keys++
			if res, err := svc.Earn(ctx, account, cmdloyalty.Points{Amount: 1, Reason: "test", IdempotencyKey: fmt.Sprint("k", keys)}); err != nil || res.Replayed {
				t.Fatal(res, err)
			}
		}
		return rc.read.Load() - before
	}
	kept := func(want int) {
		t.Helper()
		bytes, n := svc.CacheFootprint()
		if n != want || bytes > budget || (n > 0) != (bytes > 0) {
			t.Fatalf("cache holds %d accounts in %d bytes, want %d accounts within %d bytes", n, bytes, want, budget)
		}
	}
	earn("ann", 10)
	earn("bob", 10)
	kept(2)
	earn("cid", 10) // ann, the least recently used, goes
	kept(2)
	if n := earn("bob", 1); n != 0 {
		t.Errorf("bob, cached, read %d events", n)
	}
	if n := earn("ann", 1); n != 11 {
		t.Errorf("ann, evicted, read %d events, want her whole stream (11)", n)
	}
	if n := earn("bob", 1); n != 0 { // cid went for ann
		t.Errorf("bob, cached, read %d events", n)
	}
	kept(2)
	// ann outgrows the budget: she is no longer kept, and the others
	// made room for her while she fitted.
	earn("ann", 25)
	kept(0)
	if n := earn("ann", 1); n != 37 {
		t.Errorf("ann, too large to keep, read %d events, want her whole stream (37)", n)
	}
}

// TestSnapshotsShortenColdLoads: without a cache, a command on an account
// reads its snapshot and only the events after it; the account decides
// as if folded from its first event (a replayed key, a key reused for
// another request, the balance), in this process and in another one.
func TestSnapshotsShortenColdLoads(t *testing.T) {
	t.Parallel()
	e := newEnv(t, cmdloyalty.Options{})
	snaps := postgres.NewLoyaltySnapshots(e.pool)
	rc := &readCounter{EventStore: e.store}
	opts := cmdloyalty.Options{CacheEntries: -1, Snapshots: snaps, SnapshotEvery: 10}
	svc := cmdloyalty.NewService(rc, ids.Generator{}, e.authz, e.wait, opts)
	ctx := as(e.ctx, writer)
	first, err := svc.Earn(ctx, "ann", cmdloyalty.Points{Amount: 5, Reason: "test", IdempotencyKey: "k0"})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 24 {
		if _, err := svc.Earn(ctx, "ann", cmdloyalty.Points{Amount: 5, Reason: "test", IdempotencyKey: fmt.Sprint("k", i+1)}); err != nil {
			t.Fatal(err)
		}
	}
	svc.StopSnapshots()
	// 26 events (the opening and 25 earns); the last snapshot is at 20 or past it.
	snap, ok, err := snaps.LoadSnapshot(e.ctx, "ann")
	if !ok || err != nil || snap.Version < 20 || snap.State.Recorded != 5*(snap.Version-1) || snap.State.Txs != int(snap.Version)-1 {
		t.Fatalf("snapshot %+v, %v, %v", snap, ok, err)
	}
	before := rc.read.Load()
	res, err := svc.Earn(ctx, "ann", cmdloyalty.Points{Amount: 5, Reason: "test", IdempotencyKey: "k0"})
	if err != nil || !res.Replayed || res.Transaction != first.Transaction || res.Balance != 125 {
		t.Fatalf("replay of the first key after snapshots: %+v, %v", res, err)
	}
	if n, want := rc.read.Load()-before, 26-snap.Version; n != want {
		t.Errorf("a cold command read %d events after the snapshot at %d, want %d", n, snap.Version, want)
	}
	if _, err := svc.Earn(ctx, "ann", cmdloyalty.Points{Amount: 6, Reason: "test", IdempotencyKey: "k1"}); !fault.Is(err, fault.Conflict) {
		t.Fatalf("a key of before the snapshot reused for another request: %v, want a conflict", err)
	}
	// Another process, with snapshots and no cache, decides the same.
	other := e.service(cmdloyalty.Options{CacheEntries: -1, Snapshots: snaps, SnapshotEvery: 10})
	if _, err := other.Redeem(ctx, "ann", cmdloyalty.Points{Amount: 126, Reason: "test"}); !fault.Is(err, fault.Conflict) {
		t.Fatalf("redeem more than the balance: %v, want a conflict", err)
	}
	res, err = other.Redeem(ctx, "ann", cmdloyalty.Points{Amount: 125, Reason: "test"})
	if err != nil || res.Balance != 0 {
		t.Fatalf("redeem the balance: %+v, %v", res, err)
	}
	// Folded from the first event, the account agrees.
	rb, err := e.service(cmdloyalty.Options{CacheEntries: -1}).Rebalance(as(e.ctx, updater), "ann")
	if err != nil || rb.Old != 0 || rb.New != 0 || rb.Corrected {
		t.Fatalf("rebalance from the whole stream: %+v, %v", rb, err)
	}
}

// recordingSnapshots keeps every snapshot a service saves, and fails every
// third save.
type recordingSnapshots struct {
	cmdloyalty.Snapshots
	mu     sync.Mutex
	saves  int
	saved  []cmdloyalty.Snapshot
	failed int
}

func (r *recordingSnapshots) SaveSnapshot(ctx context.Context, s cmdloyalty.Snapshot) error {
	r.mu.Lock()
	r.saves++
	fail := r.saves%3 == 0
	if fail {
		r.failed++
	} else {
		r.saved = append(r.saved, s)
	}
	r.mu.Unlock()
	if fail {
		return errors.New("the test fails this save")
	}
	return r.Snapshots.SaveSnapshot(ctx, s)
}

// TestSnapshotsAreTheFold: two processes, one with the account-state cache
// and one without, take turns on one account with every kind of command
// (earns with and without expiry, redemptions, adjustments, stamps, card
// redemptions, expiries, replays), snapshotting every three events, with
// a third of the saves failing. Every snapshot saved is the fold of the
// stream up to its version, as it was when taken (the account it was
// taken of went on), and the account ends as folded from its first event.
func TestSnapshotsAreTheFold(t *testing.T) {
	t.Parallel()
	e := newEnv(t, cmdloyalty.Options{})
	rec := &recordingSnapshots{Snapshots: postgres.NewLoyaltySnapshots(e.pool)}
	svcs := []*cmdloyalty.Service{
		e.service(cmdloyalty.Options{Snapshots: rec, SnapshotEvery: 3}),
		e.service(cmdloyalty.Options{CacheEntries: -1, Snapshots: rec, SnapshotEvery: 3}),
	}
	ctx := as(e.ctx, writer)
	card, _, err := e.svc.DefineCard(ctx, "app1", cmdloyalty.CardDefinition{Name: "Coffee", Reward: "Coffee", StampsNeeded: 2})
	if err != nil {
		t.Fatal(err)
	}
	soon := time.Now().Add(time.Hour).Truncate(time.Second).UTC()
	var completed []string
	for i := range 60 {
		svc := svcs[i%2]
		var err error
		switch i % 6 {
		case 0:
			_, err = svc.Earn(ctx, "ann", cmdloyalty.Points{Amount: 20, Reason: "test", IdempotencyKey: fmt.Sprint("e", i), ExpiresAt: &soon})
		case 1:
			_, err = svc.Earn(ctx, "ann", cmdloyalty.Points{Amount: 10, Reason: "test", IdempotencyKey: fmt.Sprint("e", i-1), ExpiresAt: &soon}) // key reused
			if !fault.Is(err, fault.Conflict) {
				t.Fatalf("command %d: a key reused for another request: %v, want a conflict", i, err)
			}
			_, err = svc.Earn(ctx, "ann", cmdloyalty.Points{Amount: 20, Reason: "test", IdempotencyKey: fmt.Sprint("e", i-1), ExpiresAt: &soon}) // replay
		case 2:
			_, err = svc.Redeem(ctx, "ann", cmdloyalty.Points{Amount: 15, Reason: "test"})
		case 3:
			_, err = svc.Adjust(as(e.ctx, updater), "ann", cmdloyalty.Points{Amount: -2, Reason: "test"})
		case 4:
			var res cmdloyalty.StampsResult
			res, err = svc.AddStamps(ctx, "ann", cmdloyalty.Stamps{Card: card, Count: 1 + (i/6)%3, IdempotencyKey: fmt.Sprint("s", i)})
			completed = append(completed, res.Completed...)
		case 5:
			if len(completed) > 0 {
				_, err = svc.RedeemCard(ctx, "ann", completed[0], "")
				completed = completed[1:]
			}
			if i%12 == 11 {
				_, err = svc.ExpireDue(as(e.ctx, admin), "ann", soon.Add(time.Minute))
			}
		}
		if err != nil && !fault.Is(err, fault.Conflict) { // a redemption may find too few points
			t.Fatalf("command %d: %v", i, err)
		}
	}
	for _, svc := range svcs {
		svc.StopSnapshots()
	}
	recs, err := e.store.ReadStream(e.ctx, loyalty.AccountStream("ann"), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(rec.saved) < 5 || rec.failed == 0 {
		t.Fatalf("%d snapshots saved and %d saves failed over %d events: too few to tell", len(rec.saved), rec.failed, len(recs))
	}
	for _, s := range rec.saved {
		a := loyalty.NewAccount("ann", "app1")
		for _, r := range recs[:s.Version] {
			a.Apply(r.Data)
		}
		if want := a.Snapshot(); !reflect.DeepEqual(s.State, want) {
			t.Fatalf("the snapshot at version %d is\n%+v\nthe fold of the stream up to it is\n%+v", s.Version, s.State, want)
		}
		if s.Last != recs[s.Version-1].Position {
			t.Fatalf("the snapshot at version %d names position %v, the event there is at %v", s.Version, s.Last, recs[s.Version-1].Position)
		}
	}
	rb, err := e.service(cmdloyalty.Options{CacheEntries: -1}).Rebalance(as(e.ctx, updater), "ann")
	if err != nil || rb.Corrected {
		t.Fatalf("rebalance from the whole stream: %+v, %v", rb, err)
	}
	for i, svc := range svcs {
		if rb2, err := svc.Rebalance(as(e.ctx, updater), "ann"); err != nil || rb2 != rb {
			t.Fatalf("process %d: rebalance %+v, %v; from the whole stream %+v", i, rb2, err, rb)
		}
	}
}

// TestDamagedSnapshot: a snapshot that does not decode is passed over (the
// account is folded from its first event), and the next save replaces it.
func TestDamagedSnapshot(t *testing.T) {
	t.Parallel()
	e := newEnv(t, cmdloyalty.Options{})
	snaps := postgres.NewLoyaltySnapshots(e.pool)
	svc := e.service(cmdloyalty.Options{CacheEntries: -1, Snapshots: snaps, SnapshotEvery: 2})
	ctx := as(e.ctx, writer)
	for range 3 {
		if _, err := svc.Earn(ctx, "ann", cmdloyalty.Points{Amount: 1, Reason: "test"}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := e.pool.Exec(e.ctx, `UPDATE loyalty_snapshots SET state = '\x00ff'::bytea WHERE account = 'ann'`); err != nil {
		t.Fatal(err)
	}
	res, err := svc.Earn(ctx, "ann", cmdloyalty.Points{Amount: 1, Reason: "test"})
	if err != nil || res.Balance != 4 {
		t.Fatalf("earn over a damaged snapshot: %+v, %v", res, err)
	}
	svc.StopSnapshots()
	// The earn folded the four events before it, and saved them.
	if s, ok, err := snaps.LoadSnapshot(e.ctx, "ann"); !ok || err != nil || s.Version != 4 || s.State.Recorded != 3 {
		t.Fatalf("after the earn, the snapshot: %+v, %v, %v", s, ok, err)
	}
}
