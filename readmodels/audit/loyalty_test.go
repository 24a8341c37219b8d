package audit_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/loyalty"
	"github.com/halocms/halocms/domain/rights"
	projappuser "github.com/halocms/halocms/projections/appuser"
	projloyalty "github.com/halocms/halocms/projections/loyalty"
	"github.com/halocms/halocms/projections/loyalty/loyaltytest"
	projrights "github.com/halocms/halocms/projections/rights"
	rmaudit "github.com/halocms/halocms/readmodels/audit"
	rmloyalty "github.com/halocms/halocms/readmodels/loyalty"
	rmrights "github.com/halocms/halocms/readmodels/rights"
)

// loyaltyWorld is an event store holding identified users, rights and a
// loyalty history, with the projections caught up.
type loyaltyWorld struct {
	ctx     context.Context
	pool    *pgxpool.Pool
	store   *postgres.EventStore
	rt      *projection.Runtime
	auditor *rmaudit.Auditor
	sim     *loyaltytest.Sim
	last    event.Position
	// Phase ends: the loyalty stream's length and the account's replayed
	// and recorded balances after each phase.
	phases []phase
}

type phase struct {
	events        int
	sum, recorded int64
}

func (w *loyaltyWorld) append(t *testing.T, stream string, evs ...event.Event) {
	t.Helper()
	res, err := w.store.Append(w.ctx, stream, event.AnyVersion, evs...)
	if err != nil {
		t.Fatal(err)
	}
	w.last = res.Last
}

// flush appends what the simulation recorded since the last flush.
func (w *loyaltyWorld) flush(t *testing.T) {
	t.Helper()
	for _, ap := range w.sim.Log {
		w.append(t, ap.Stream, ap.Wrapped()...)
	}
	w.sim.Log = nil
}

func (w *loyaltyWorld) endPhase(t *testing.T, account string) {
	t.Helper()
	w.flush(t)
	recs, err := w.store.ReadStream(w.ctx, loyalty.AccountStream(account), 0)
	if err != nil {
		t.Fatal(err)
	}
	a := w.sim.Accounts[account]
	w.phases = append(w.phases, phase{events: len(recs), sum: a.Sum(), recorded: a.Balance})
	time.Sleep(2 * time.Millisecond) // phases apart in recorded time
}

func newLoyaltyWorld(t *testing.T) *loyaltyWorld {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	pool := pgtest.Pool(t)
	store := postgres.NewEventStore(pool, eventcodec.Default())
	t.Cleanup(store.Close)
	rt := projection.NewRuntime(pool, store, nil, nil, projection.Options{},
		projrights.Projector{}, projappuser.Projector{}, projloyalty.Projector{})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rt.Run(rctx) }()
	t.Cleanup(func() { stop(); <-done })
	w := &loyaltyWorld{ctx: ctx, pool: pool, store: store, rt: rt, auditor: rmaudit.New(store, rmrights.NewAuthorizer(pool), rmloyalty.New(pool)),
		sim: loyaltytest.New(time.Now())}

	for _, g := range []rights.Granted{
		{UserID: "manager", AppID: "a", ScopeKind: "app", Permissions: []string{"manage"}},
		{UserID: "writer", AppID: "a", ScopeKind: "app", Permissions: []string{"read", "write", "update", "delete"}},
		{UserID: "other", AppID: "b", ScopeKind: "app", Permissions: []string{"manage"}},
	} {
		w.append(t, rights.Stream(g.UserID), event.Event{Data: g})
	}
	for _, id := range []string{"alice", "bruno", "carla"} {
		w.append(t, appuser.IdentifiedStream(id), event.Event{Data: appuser.IdentifiedRegistered{IdentifiedID: id, App: "a",
			Email: id + "@example.com", Profile: appuser.UserProfile{Name: id}}})
	}

	s := w.sim
	s.ClientIP = "198.51.100.7"
	soon := s.Now.Add(-time.Hour) // already due: the next debit expires it first
	card := s.DefineCard("a", "Coffee", 3, "free coffee")
	s.Earn("alice", "a", 100, nil)
	s.Earn("alice", "a", 50, &soon)
	s.AddStamps("alice", "a", card, 4)
	w.endPhase(t, "alice")

	s.Actor = "user:writer"
	s.Redeem("alice", 30) // expires the 50 first, then takes 30 of the 100
	s.Adjust("alice", -20, nil)
	s.Earn("alice", "a", 40, nil)
	s.Damage("alice", 10, 7) // recorded 7 too many
	w.endPhase(t, "alice")

	s.Actor = "user:admin"
	if !s.Rebalance("alice") {
		t.Fatal("the damaged history needs a correction")
	}
	s.Earn("alice", "a", 5, nil)
	s.RedeemCard("alice", s.Accounts["alice"].Cards[0].ID)
	w.endPhase(t, "alice")

	// carla's history holds a correction that does not add up (a bug of
	// an earlier version, say): the replay must not trust it.
	w.append(t, loyalty.AccountStream("carla"),
		event.Event{Data: loyalty.AccountOpened{Account: "carla", App: "a"}},
		event.Event{Data: loyalty.PointsEarned{Account: "carla", App: "a", Transaction: "t1", Amount: 10, Balance: 10, IdempotencyKey: "t1"}},
		event.Event{Data: loyalty.BalanceCorrected{Account: "carla", App: "a", Old: 10, New: 25}})

	if !rt.WaitForBound(ctx, time.Minute, w.last, "rights", "appusers", "loyalty") {
		t.Fatal("the projections did not catch up")
	}
	return w
}

func as(ctx context.Context, a access.Actor) context.Context { return access.WithActor(ctx, a) }

var admin = access.Actor{Kind: access.User, ID: "admin", Admin: true}

func TestLoyaltyReplaysTheAccount(t *testing.T) {
	t.Parallel()
	w := newLoyaltyWorld(t)
	rep, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	final := w.phases[2]
	if rep.User != "alice" || rep.App != "a" || len(rep.Entries) != final.events || rep.Opening != 0 {
		t.Fatalf("report %s/%s with %d entries (opening %d), want alice/a with %d", rep.User, rep.App, len(rep.Entries), rep.Opening, final.events)
	}
	if rep.Balance != final.sum || rep.Recorded != final.recorded || !rep.Consistent {
		t.Errorf("balance %d recorded %d consistent %v, want %d = %d after the correction", rep.Balance, rep.Recorded, rep.Consistent, final.sum, final.recorded)
	}
	var types []string
	var running int64
	for i, e := range rep.Entries {
		types = append(types, e.Type)
		running += e.Amount
		if e.Balance != running {
			t.Errorf("entry %d (%s): running balance %d, want %d", i, e.Type, e.Balance, running)
		}
		if e.EventID == "" || e.RecordedAt.IsZero() || e.Position.IsZero() || e.ClientIP != "198.51.100.7" || e.Correlation == "" {
			t.Errorf("entry %d lacks its event id, time, position, client IP or correlation: %+v", i, e)
		}
		if i > 0 && e.Position.Less(rep.Entries[i-1].Position) {
			t.Errorf("entry %d is out of log order", i)
		}
	}
	want := []string{"opened", "earn", "earn", "stamps", "card_completed", "stamps", "expire", "redeem", "adjust", "earn", "earn",
		"correction", "earn", "card_redeemed"}
	if len(types) != len(want) {
		t.Fatalf("entry types %v, want %v", types, want)
	}
	for i := range want {
		if types[i] != want[i] {
			t.Fatalf("entry types %v, want %v", types, want)
		}
	}
	byType := func(typ string) []rmaudit.LoyaltyEntry {
		var out []rmaudit.LoyaltyEntry
		for _, e := range rep.Entries {
			if e.Type == typ {
				out = append(out, e)
			}
		}
		return out
	}
	if exp := byType("expire")[0]; exp.Amount != -50 || exp.Lot == "" || exp.Recorded != 100 || exp.By != "user:writer" {
		t.Errorf("expiry %+v: want -50 of the expiring lot, recorded 100, by the redeemer", exp)
	}
	if red := byType("redeem")[0]; red.Amount != -30 || red.Recorded != 70 || red.IdempotencyKey == "" || red.Reason != "reward" {
		t.Errorf("redemption %+v", red)
	}
	// The damaged earn recorded 7 more than its amount: from there on
	// the recorded balance is off until the correction sets it right.
	damaged := byType("earn")[3]
	if damaged.Recorded != damaged.Balance+7 {
		t.Errorf("damaged earn: recorded %d, replayed %d; want 7 apart", damaged.Recorded, damaged.Balance)
	}
	corr := byType("correction")[0]
	if corr.Amount != 0 || corr.Balance != damaged.Balance || corr.Recorded != corr.Balance || corr.By != "user:admin" {
		t.Errorf("correction %+v: want amount 0, the replayed balance kept and recorded set to it", corr)
	}
	if st := byType("stamps"); st[0].Stamps != 3 || st[1].Stamps != 1 || st[0].UserCard == st[1].UserCard || st[0].Card == "" {
		t.Errorf("stamps %+v: want 3 on the first card, 1 on a second", st)
	}
	if first := rep.Entries[1]; first.By != "user:cms" || first.Transaction == "" || first.Reference == "" {
		t.Errorf("first earn %+v", first)
	}

	carla, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "carla"})
	if err != nil {
		t.Fatal(err)
	}
	if c := carla.Entries[2]; carla.Balance != 10 || carla.Recorded != 25 || carla.Consistent || c.Balance != 10 || c.Recorded != 25 {
		t.Errorf("a correction that does not add up: balance %d, recorded %d, consistent %v, entry %+v; want 10, 25, false",
			carla.Balance, carla.Recorded, carla.Consistent, c)
	}

	// The final balance equals the read model's, and the report says so.
	v, err := rmloyalty.New(w.pool).Account(w.ctx, "alice")
	if err != nil {
		t.Fatal(err)
	}
	if v.Balance != rep.Recorded || v.Balance != rep.Balance {
		t.Errorf("read model balance %d, audit %d/%d", v.Balance, rep.Balance, rep.Recorded)
	}
	last := rep.Entries[len(rep.Entries)-2] // the last earn (a card redemption follows)
	if m := rep.ReadModel; m == nil || m.Balance != v.Balance || !m.CaughtUp || !m.Matches || m.Applied != m.Last ||
		m.Last != int64(len(rep.Entries)-1) || last.Type != "earn" {
		t.Errorf("read model check %+v, want balance %d, caught up at the last earn (version %d), matching", m, v.Balance, len(rep.Entries)-1)
	}
	// carla's read model keeps the correction's balance: not the replay's.
	if m := carla.ReadModel; m == nil || m.Balance != 25 || !m.CaughtUp || m.Matches {
		t.Errorf("carla's read model check %+v, want 25, caught up, not matching the replayed 10", m)
	}
	// bruno has no account yet: nothing to catch up with, and 0 matches 0.
	bruno, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "bruno"})
	if err != nil {
		t.Fatal(err)
	}
	if m := bruno.ReadModel; m == nil || *m != (rmaudit.LoyaltyReadModelCheck{CaughtUp: true, Matches: true}) {
		t.Errorf("bruno's read model check %+v, want 0 at version 0, caught up and matching", m)
	}
	// With a to, the read model (which is now) is left out.
	if to, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "alice", To: time.Now()}); err != nil || to.ReadModel != nil {
		t.Errorf("with to: read model check %+v, %v; want none", to.ReadModel, err)
	}
}

// TestLoyaltyCorrectionBeforeExpiry: the expiry of a due lot on a
// damaged history appends a correction and then the expiry; the report
// shows both, and the replayed, recorded and read model balances agree.
func TestLoyaltyCorrectionBeforeExpiry(t *testing.T) {
	t.Parallel()
	w := newLoyaltyWorld(t)
	w.append(t, appuser.IdentifiedStream("dora"), event.Event{Data: appuser.IdentifiedRegistered{IdentifiedID: "dora", App: "a",
		Email: "dora@example.com", Profile: appuser.UserProfile{Name: "dora"}}})
	s := w.sim
	due := s.Now.Add(time.Hour)
	s.Earn("dora", "a", 100, &due)
	s.Damage("dora", 10, -60) // an earn of 10 that recorded 50
	s.Redeem("dora", 50)      // 50 of the expiring lot: recorded 0, replayed 60
	s.Now = due
	if s.ExpireDue("dora") != 1 {
		t.Fatal("the lot is not due")
	}
	w.flush(t)
	if !w.rt.WaitForBound(w.ctx, time.Minute, w.last, "appusers", "loyalty") {
		t.Fatal("the projections did not catch up")
	}
	rep, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "dora"})
	if err != nil {
		t.Fatal(err)
	}
	n := len(rep.Entries)
	if n < 2 {
		t.Fatalf("%d entries", n)
	}
	corr, exp := rep.Entries[n-2], rep.Entries[n-1]
	if corr.Type != "correction" || corr.Amount != 0 || corr.Balance != 60 || corr.Recorded != 60 {
		t.Errorf("before the expiry %+v, want the correction to the replayed 60", corr)
	}
	if exp.Type != "expire" || exp.Amount != -50 || exp.Balance != 10 || exp.Recorded != 10 || exp.Lot == "" {
		t.Errorf("last %+v, want the expiry of 50, balance 10", exp)
	}
	if corr.Position.TxID != exp.Position.TxID {
		t.Errorf("correction at %v, expiry at %v: want one append", corr.Position, exp.Position)
	}
	if rep.Balance != 10 || rep.Recorded != 10 || !rep.Consistent {
		t.Errorf("balance %d recorded %d consistent %v, want 10, 10, consistent", rep.Balance, rep.Recorded, rep.Consistent)
	}
	if m := rep.ReadModel; m == nil || m.Balance != 10 || !m.CaughtUp || !m.Matches {
		t.Errorf("read model check %+v, want 10, caught up and matching", m)
	}
}

// TestLoyaltyReadModelDrift: a read model that differs from the log is
// reported: a balance changed behind the projection's back does not
// match; a read model that misses the last transaction has not caught up.
func TestLoyaltyReadModelDrift(t *testing.T) {
	t.Parallel()
	w := newLoyaltyWorld(t)
	if _, err := w.pool.Exec(w.ctx, `UPDATE loyalty_accounts SET balance = balance + 3 WHERE id = 'alice'`); err != nil {
		t.Fatal(err)
	}
	rep, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if m := rep.ReadModel; m == nil || m.Balance != rep.Balance+3 || !m.CaughtUp || m.Matches || !rep.Consistent {
		t.Errorf("drifted balance: read model check %+v (replayed %d, consistent %v); want %d, caught up, not matching",
			m, rep.Balance, rep.Consistent, rep.Balance+3)
	}
	if _, err := w.pool.Exec(w.ctx, `UPDATE loyalty_accounts SET balance = balance - 3 WHERE id = 'alice';
		DELETE FROM loyalty_transactions WHERE (account, version) = (SELECT account, max(version) FROM loyalty_transactions
			WHERE account = (SELECT number FROM loyalty_accounts WHERE id = 'alice') GROUP BY account)`); err != nil {
		t.Fatal(err)
	}
	rep, err = w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	if m := rep.ReadModel; m == nil || m.CaughtUp || m.Matches || m.Applied >= m.Last {
		t.Errorf("a missing transaction: read model check %+v; want behind, not matching", m)
	}
}

func TestLoyaltyWindow(t *testing.T) {
	t.Parallel()
	w := newLoyaltyWorld(t)
	all, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	p1, p2 := w.phases[0], w.phases[1]
	from, to := all.Entries[p1.events].RecordedAt, all.Entries[p2.events-1].RecordedAt
	rep, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "alice", From: from, To: to})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Entries) != p2.events-p1.events || rep.Entries[0].EventID != all.Entries[p1.events].EventID {
		t.Fatalf("window holds %d entries from %s, want %d from %s", len(rep.Entries), rep.Entries[0].Type, p2.events-p1.events,
			all.Entries[p1.events].Type)
	}
	if rep.Opening != p1.sum || rep.Balance != p2.sum || rep.Recorded != p2.recorded || rep.Consistent {
		t.Errorf("window: opening %d, balance %d, recorded %d, consistent %v; want %d, %d, %d, false (damaged)",
			rep.Opening, rep.Balance, rep.Recorded, rep.Consistent, p1.sum, p2.sum, p2.recorded)
	}
	if rep.Entries[0].Balance != rep.Opening+rep.Entries[0].Amount {
		t.Errorf("the window's first entry %+v does not continue the opening %d", rep.Entries[0], rep.Opening)
	}
	// Up to the end of the first phase only.
	rep, err = w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "alice", To: all.Entries[p1.events-1].RecordedAt})
	if err != nil || len(rep.Entries) != p1.events || rep.Balance != p1.sum || !rep.Consistent {
		t.Errorf("first phase: %d entries, balance %d, consistent %v, %v; want %d, %d, true", len(rep.Entries), rep.Balance, rep.Consistent, err,
			p1.events, p1.sum)
	}
	if _, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "alice", From: to, To: from}); fault.KindOf(err) != fault.Invalid {
		t.Errorf("to before from: %v, want invalid", err)
	}
}

// TestLoyaltyWindowAtWirePrecision: moments come from the wire in
// milliseconds (an entry's createdAt), the log records microseconds; an
// entry's own createdAt as to or from includes it.
func TestLoyaltyWindowAtWirePrecision(t *testing.T) {
	t.Parallel()
	w := newLoyaltyWorld(t)
	all, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	tested := 0
	for i, e := range all.Entries {
		ms := e.RecordedAt.Truncate(time.Millisecond)
		if ms.Equal(e.RecordedAt) {
			continue // on a millisecond exactly: it says nothing
		}
		tested++
		// The entries recorded in the same millisecond as e.
		last := i
		for last+1 < len(all.Entries) && all.Entries[last+1].RecordedAt.Truncate(time.Millisecond).Equal(ms) {
			last++
		}
		first := i
		for first > 0 && all.Entries[first-1].RecordedAt.Truncate(time.Millisecond).Equal(ms) {
			first--
		}
		rep, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "alice", To: time.UnixMilli(ms.UnixMilli())})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Entries) != last+1 {
			t.Errorf("to = entry %d's createdAt %d: %d entries, want %d (up to and with it)", i, ms.UnixMilli(), len(rep.Entries), last+1)
		}
		rep, err = w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "alice", From: time.UnixMilli(ms.UnixMilli()),
			To: time.UnixMilli(ms.UnixMilli())})
		if err != nil {
			t.Fatal(err)
		}
		if len(rep.Entries) != last-first+1 || rep.Entries[i-first].EventID != e.EventID {
			t.Errorf("from = to = entry %d's createdAt: %d entries, want %d with it", i, len(rep.Entries), last-first+1)
		}
	}
	if tested == 0 {
		t.Skip("every entry was recorded on a millisecond exactly")
	}
}

func TestLoyaltyRights(t *testing.T) {
	t.Parallel()
	w := newLoyaltyWorld(t)
	q := rmaudit.LoyaltyQuery{User: "alice"}
	for name, c := range map[string]struct {
		actor access.Actor
		q     rmaudit.LoyaltyQuery
		ok    bool
		want  fault.Kind
	}{
		"admin":                  {actor: admin, q: q, ok: true},
		"system":                 {actor: access.SystemActor, q: q, ok: true},
		"manage on the app":      {actor: access.Actor{Kind: access.User, ID: "manager"}, q: q, ok: true},
		"every right but manage": {actor: access.Actor{Kind: access.User, ID: "writer"}, want: fault.Forbidden, q: q},
		"manage on another app":  {actor: access.Actor{Kind: access.User, ID: "other"}, want: fault.Forbidden, q: q},
		"the user themself":      {actor: access.Actor{Kind: access.Identified, ID: "alice", App: "a"}, want: fault.Forbidden, q: q},
		"the app's token":        {actor: access.Actor{Kind: access.App, ID: "a"}, want: fault.Forbidden, q: q},
		"anonymous":              {want: fault.Unauthenticated, q: q},
		"unknown user":           {actor: admin, want: fault.NotFound, q: rmaudit.LoyaltyQuery{User: "nobody"}},
		"no user":                {actor: admin, want: fault.Invalid},
		// Who holds manage on no app learns nothing: not whether the user
		// exists, not what is wrong with the query.
		"no rights, unknown user":   {actor: access.Actor{Kind: access.User, ID: "writer"}, want: fault.Forbidden, q: rmaudit.LoyaltyQuery{User: "nobody"}},
		"no rights, no user":        {actor: access.Actor{Kind: access.User, ID: "writer"}, want: fault.Forbidden},
		"no rights, to before from": {actor: access.Actor{Kind: access.User, ID: "nobody"}, want: fault.Forbidden, q: rmaudit.LoyaltyQuery{User: "alice", From: time.Now(), To: time.Now().Add(-time.Hour)}},
		"app token, unknown user":   {actor: access.Actor{Kind: access.App, ID: "a"}, want: fault.Forbidden, q: rmaudit.LoyaltyQuery{User: "nobody"}},
		"identified, unknown user":  {actor: access.Actor{Kind: access.Identified, ID: "alice", App: "a"}, want: fault.Forbidden, q: rmaudit.LoyaltyQuery{User: "nobody"}},
		// Who holds manage on another app may get to know the user is
		// not there: the app is the account's, and there is no account.
		"manage elsewhere, unknown user": {actor: access.Actor{Kind: access.User, ID: "other"}, want: fault.NotFound, q: rmaudit.LoyaltyQuery{User: "nobody"}},
		"user without loyalty events":    {actor: access.Actor{Kind: access.User, ID: "manager"}, q: rmaudit.LoyaltyQuery{User: "bruno"}, ok: true},
	} {
		rep, err := w.auditor.Loyalty(as(w.ctx, c.actor), c.q)
		if c.ok {
			if err != nil || rep.App != "a" || rep.Entries == nil {
				t.Errorf("%s: %+v, %v; want a report", name, rep, err)
			}
			continue
		}
		if err == nil || fault.KindOf(err) != c.want {
			t.Errorf("%s: %v, want %s", name, err, c.want)
		}
	}
	rep, err := w.auditor.Loyalty(as(w.ctx, admin), rmaudit.LoyaltyQuery{User: "bruno"})
	if err != nil || len(rep.Entries) != 0 || rep.Balance != 0 || !rep.Consistent {
		t.Errorf("bruno: %+v, %v; want an empty, consistent history", rep, err)
	}
}
