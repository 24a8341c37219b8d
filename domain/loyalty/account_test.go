package loyalty_test

import (
	"fmt"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/loyalty"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func at(d time.Duration) *time.Time { t := t0.Add(d); return &t }

// ids returns a newID that counts: tx1, tx2, ...
func ids() func() string {
	n := 0
	return func() string { n++; return fmt.Sprintf("tx%d", n) }
}

// acct is a test account with its id generator.
type acct struct {
	*loyalty.Account
	newID func() string
}

func newAcct() acct { return acct{loyalty.NewAccount("u1", "app1"), ids()} }

// ok returns a function that fails the test on an error, or applies the
// decision's events and returns the decision: a.ok(t)(a.Earn(...)).
func (a acct) ok(t *testing.T) func(loyalty.Decision, error) loyalty.Decision {
	return func(d loyalty.Decision, err error) loyalty.Decision {
		t.Helper()
		if err != nil {
			t.Fatalf("decision failed: %v", err)
		}
		for _, e := range d.Events {
			a.Apply(e)
		}
		return d
	}
}

func (a acct) earn(t *testing.T, amount int64, expires *time.Time) string {
	t.Helper()
	d := a.ok(t)(a.Earn(loyalty.Points{Amount: amount, Reason: "test", ExpiresAt: expires}, t0, a.newID))
	return d.Transaction
}

func wantFault(t *testing.T, err error, kind fault.Kind, extra map[string]any) *fault.Error {
	t.Helper()
	if !fault.Is(err, kind) {
		t.Fatalf("error %v (kind %v), want kind %v", err, fault.KindOf(err), kind)
	}
	fe := err.(*fault.Error)
	for k, v := range extra {
		if !reflect.DeepEqual(fe.Extra[k], v) {
			t.Errorf("extra %s = %#v, want %#v (all: %v)", k, fe.Extra[k], v, fe.Extra)
		}
	}
	return fe
}

func types(evs []any) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.(interface{ EventType() string }).EventType())
	}
	return out
}

func lotIDs(ls []loyalty.Lot) string {
	var s []string
	for _, l := range ls {
		s = append(s, fmt.Sprintf("%s:%d", l.ID, l.Points))
	}
	return strings.Join(s, " ")
}

func TestFirstTransactionOpensTheAccount(t *testing.T) {
	a := newAcct()
	d := a.ok(t)(a.Earn(loyalty.Points{Amount: 10, Reason: "welcome"}, t0, a.newID))
	if got := types(d.Events); !reflect.DeepEqual(got, []string{"loyalty.account_opened", "loyalty.points_earned"}) {
		t.Fatalf("events %v", got)
	}
	if d.Events[0] != (loyalty.AccountOpened{Account: "u1", App: "app1"}) {
		t.Errorf("opening %+v", d.Events[0])
	}
	e := d.Events[1].(loyalty.PointsEarned)
	if e.Transaction != "tx1" || e.IdempotencyKey != "tx1" || e.Balance != 10 || e.Account != "u1" || e.App != "app1" {
		t.Errorf("earned %+v (the key defaults to the transaction id)", e)
	}
	if !a.Opened() || a.Balance() != 10 || a.Sum() != 10 || a.Transactions() != 1 {
		t.Errorf("state: opened %v balance %d sum %d txs %d", a.Opened(), a.Balance(), a.Sum(), a.Transactions())
	}
	d = a.ok(t)(a.Earn(loyalty.Points{Amount: 5, Reason: "test"}, t0, a.newID))
	if got := types(d.Events); !reflect.DeepEqual(got, []string{"loyalty.points_earned"}) {
		t.Errorf("second transaction: events %v, want no second opening", got)
	}
	// A zero Account cannot decide: it does not know whose it is.
	var zero loyalty.Account
	if _, err := zero.Earn(loyalty.Points{Amount: 1, Reason: "test"}, t0, ids()); err == nil || fault.KindOf(err) != fault.Internal {
		t.Errorf("zero account: %v", err)
	}
}

func TestLotsConsumptionOrder(t *testing.T) {
	a := newAcct()
	plain1 := a.earn(t, 10, nil)
	late := a.earn(t, 10, at(72*time.Hour))
	soon := a.earn(t, 10, at(24*time.Hour))
	plain2 := a.earn(t, 10, nil)
	soonToo := a.earn(t, 10, at(24*time.Hour)) // same expiry as soon: earn order
	want := fmt.Sprintf("%s:10 %s:10 %s:10 %s:10 %s:10", soon, soonToo, late, plain1, plain2)
	if got := lotIDs(a.Lots()); got != want {
		t.Fatalf("lots %s, want %s", got, want)
	}
	if next, ok := a.NextExpiry(); !ok || !next.Equal(*at(24 * time.Hour)) {
		t.Errorf("next expiry %v %v", next, ok)
	}

	for _, c := range []struct {
		amount   int64
		uses     []loyalty.LotUse
		lotsLeft string
		balance  int64
	}{
		{5, []loyalty.LotUse{{Lot: soon, Amount: 5}}, fmt.Sprintf("%s:5 %s:10 %s:10 %s:10 %s:10", soon, soonToo, late, plain1, plain2), 45},
		{20, []loyalty.LotUse{{Lot: soon, Amount: 5}, {Lot: soonToo, Amount: 10}, {Lot: late, Amount: 5}},
			fmt.Sprintf("%s:5 %s:10 %s:10", late, plain1, plain2), 25},
		{15, []loyalty.LotUse{{Lot: late, Amount: 5}, {Lot: plain1, Amount: 10}}, fmt.Sprintf("%s:10", plain2), 10},
		{10, []loyalty.LotUse{{Lot: plain2, Amount: 10}}, "", 0},
	} {
		d := a.ok(t)(a.Redeem(loyalty.Points{Amount: c.amount, Reason: "shop"}, t0, a.newID))
		r := d.Events[len(d.Events)-1].(loyalty.PointsRedeemed)
		if !reflect.DeepEqual(r.Lots, c.uses) || r.Balance != c.balance || r.Amount != c.amount {
			t.Errorf("redeem %d: %+v, want lots %+v balance %d", c.amount, r, c.uses, c.balance)
		}
		if got := lotIDs(a.Lots()); got != c.lotsLeft {
			t.Errorf("after redeeming %d: lots %q, want %q", c.amount, got, c.lotsLeft)
		}
	}
	if _, ok := a.NextExpiry(); ok {
		t.Error("no lot left, yet a next expiry")
	}
}

func TestInsufficientPoints(t *testing.T) {
	a := newAcct()
	_, err := a.Redeem(loyalty.Points{Amount: 1, Reason: "test"}, t0, a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"balance": int64(0), "requested": int64(1)})
	a.earn(t, 100, nil)
	_, err = a.Redeem(loyalty.Points{Amount: 101, Reason: "test"}, t0, a.newID)
	fe := wantFault(t, err, fault.Conflict, map[string]any{"balance": int64(100), "requested": int64(101)})
	if fe.Message != loyalty.MsgInsufficient {
		t.Errorf("message %q", fe.Message)
	}
	_, err = a.Adjust(loyalty.Points{Amount: -101, Reason: "test"}, t0, a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"balance": int64(100), "requested": int64(101)})
	d := a.ok(t)(a.Redeem(loyalty.Points{Amount: 100, Reason: "test"}, t0, a.newID))
	if a.Balance() != 0 || len(a.Lots()) != 0 || d.Transaction == "" {
		t.Errorf("redeeming everything: balance %d lots %v", a.Balance(), a.Lots())
	}
}

func TestAdjust(t *testing.T) {
	a := newAcct()
	up := a.ok(t)(a.Adjust(loyalty.Points{Amount: 30, Reason: "goodwill", ExpiresAt: at(time.Hour)}, t0, a.newID))
	e := up.Events[1].(loyalty.PointsAdjusted)
	if e.Amount != 30 || e.Balance != 30 || e.ExpiresAt == nil || len(e.Lots) != 0 {
		t.Fatalf("adjust up %+v", e)
	}
	if got := lotIDs(a.Lots()); got != up.Transaction+":30" {
		t.Errorf("a positive adjustment forms a lot: %s", got)
	}
	down := a.ok(t)(a.Adjust(loyalty.Points{Amount: -12, Reason: "error"}, t0, a.newID))
	e = down.Events[0].(loyalty.PointsAdjusted)
	if e.Amount != -12 || e.Balance != 18 || !reflect.DeepEqual(e.Lots, []loyalty.LotUse{{Lot: up.Transaction, Amount: 12}}) {
		t.Errorf("adjust down %+v", e)
	}
	if a.Balance() != 18 || a.Sum() != 18 || a.Transactions() != 2 {
		t.Errorf("balance %d sum %d txs %d", a.Balance(), a.Sum(), a.Transactions())
	}
}

func TestExpiry(t *testing.T) {
	a := newAcct()
	first := a.earn(t, 10, at(time.Hour))
	second := a.earn(t, 20, at(2*time.Hour))
	a.earn(t, 5, nil)
	a.ok(t)(a.Redeem(loyalty.Points{Amount: 4, Reason: "test"}, t0, a.newID)) // 6 left in first

	if d := a.ExpireDue(t0.Add(time.Hour-time.Millisecond), a.newID); len(d.Events) != 0 || d.Expired != 0 {
		t.Fatalf("nothing is due before the expiry: %+v", d)
	}
	d := a.ExpireDue(t0.Add(time.Hour), a.newID) // due at the very instant
	if len(d.Events) != 1 || d.Expired != 1 {
		t.Fatalf("expire at the expiry: %+v", d)
	}
	e := d.Events[0].(loyalty.PointsExpired)
	if e.Lot != first || e.Amount != 6 || e.Balance != 25 || !e.ExpiresAt.Equal(*at(time.Hour)) || e.Transaction == "" {
		t.Errorf("expired %+v", e)
	}

	// A debit after both expiries: the expiries come first, in the same
	// decision, and the debit only sees what is left.
	later := t0.Add(3 * time.Hour)
	_, err := a.Redeem(loyalty.Points{Amount: 6, Reason: "test"}, later, a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"balance": int64(5), "requested": int64(6)})
	d = a.ok(t)(a.Redeem(loyalty.Points{Amount: 5, Reason: "test"}, later, a.newID))
	if got := types(d.Events); !reflect.DeepEqual(got, []string{"loyalty.points_expired", "loyalty.points_expired", "loyalty.points_redeemed"}) {
		t.Fatalf("events %v", got)
	}
	if d.Expired != 2 || d.Events[1].(loyalty.PointsExpired).Lot != second || d.Events[1].(loyalty.PointsExpired).Amount != 20 {
		t.Errorf("expiries %+v", d.Events[:2])
	}
	if r := d.Events[2].(loyalty.PointsRedeemed); r.Balance != 0 || len(r.Lots) != 1 || r.Lots[0].Amount != 5 {
		t.Errorf("redeemed %+v", r)
	}
	if a.Balance() != 0 || a.Sum() != 0 || len(a.Lots()) != 0 {
		t.Errorf("balance %d sum %d lots %v", a.Balance(), a.Sum(), a.Lots())
	}
	// An earn does not expire anything (only debits must).
	b := newAcct()
	b.earn(t, 10, at(time.Hour))
	if d := b.ok(t)(b.Earn(loyalty.Points{Amount: 1, Reason: "test"}, later, b.newID)); len(d.Events) != 1 {
		t.Errorf("earn events %v", types(d.Events))
	}
}

// TestExpiryNeverBelowZero: on a damaged history (the recorded balance
// differs from what the transactions add up to) the expiry of a due lot
// first corrects the balance, as a rebalance would, then expires the
// lot's whole remainder from the corrected balance: a later rebalance has
// nothing to hand back. The lots can still hold more than the balance; an
// expiry takes at most the balance, and a lot with nothing left to take
// still expires (it does not come due again).
func TestExpiryNeverBelowZero(t *testing.T) {
	a := newAcct()
	lot := a.earn(t, 100, at(time.Hour))
	// A damaged earn: 10 points, but a recorded balance of 50 (not 110).
	a.Apply(loyalty.PointsEarned{Account: "u1", App: "app1", Transaction: "damaged", Amount: 10, Balance: 50, IdempotencyKey: "damaged"})
	a.ok(t)(a.Redeem(loyalty.Points{Amount: 50, Reason: "test"}, t0, a.newID)) // from the expiring lot: 50 of it left
	if a.Balance() != 0 || a.Sum() != 60 || lotIDs(a.Lots()) != lot+":50 damaged:10" {
		t.Fatalf("before the expiry: balance %d sum %d, lots %s", a.Balance(), a.Sum(), lotIDs(a.Lots()))
	}
	d := a.ok(t)(a.ExpireDue(t0.Add(time.Hour), a.newID), nil)
	if got := types(d.Events); !reflect.DeepEqual(got, []string{"loyalty.balance_corrected", "loyalty.points_expired"}) || d.Expired != 1 {
		t.Fatalf("expire: events %v, expired %d; want the correction, then the expiry of one lot", got, d.Expired)
	}
	if c := d.Events[0].(loyalty.BalanceCorrected); c != (loyalty.BalanceCorrected{Account: "u1", App: "app1", Old: 0, New: 60}) {
		t.Errorf("corrected %+v, want 0 to 60", c)
	}
	if e := d.Events[1].(loyalty.PointsExpired); e.Lot != lot || e.Amount != 50 || e.Balance != 10 {
		t.Errorf("expired %+v, want the lot's 50 points and balance 10", e)
	}
	if a.Balance() != 10 || a.Sum() != 10 || lotIDs(a.Lots()) != "damaged:10" {
		t.Errorf("after the expiry: balance %d sum %d, lots %s; want 10 (110 earned - 50 redeemed - 50 expired) and the lot gone",
			a.Balance(), a.Sum(), lotIDs(a.Lots()))
	}
	if d := a.Rebalance(); len(d.Events) != 0 {
		t.Errorf("a rebalance after the expiry decides %+v, want nothing", d.Events)
	}
	if d := a.ExpireDue(t0.Add(2*time.Hour), a.newID); len(d.Events) != 0 {
		t.Errorf("the expired lot came due again: %v", types(d.Events))
	}

	// The lot holds more than the corrected balance: its expiry takes what
	// the balance holds, down to 0.
	b := newAcct()
	lot = b.earn(t, 100, at(time.Hour))
	b.Apply(loyalty.PointsRedeemed{Account: "u1", App: "app1", Transaction: "damaged", Amount: 30, Balance: 40, IdempotencyKey: "damaged"})
	d = b.ok(t)(b.ExpireDue(t0.Add(time.Hour), b.newID), nil)
	if got := types(d.Events); !reflect.DeepEqual(got, []string{"loyalty.balance_corrected", "loyalty.points_expired"}) || d.Expired != 1 {
		t.Fatalf("expire: events %v, expired %d", got, d.Expired)
	}
	if c := d.Events[0].(loyalty.BalanceCorrected); c.Old != 40 || c.New != 70 {
		t.Errorf("corrected %+v, want 40 to 70", c)
	}
	if e := d.Events[1].(loyalty.PointsExpired); e.Lot != lot || e.Amount != 70 || e.Balance != 0 {
		t.Errorf("expired %+v, want 70 of the lot (what the corrected balance held), balance 0", e)
	}
	if d := b.Rebalance(); len(d.Events) != 0 || b.Balance() != 0 {
		t.Errorf("rebalance after the expiry %+v, balance %d", d.Events, b.Balance())
	}
	// Recorded and summed balances agree at 0 while the lot still holds
	// points (a redemption that named no lot): no correction, an expiry of
	// nothing.
	z := newAcct()
	lot = z.earn(t, 100, at(time.Hour))
	z.Apply(loyalty.PointsRedeemed{Account: "u1", App: "app1", Transaction: "damaged", Amount: 100, Balance: 0, IdempotencyKey: "damaged"})
	d = z.ok(t)(z.ExpireDue(t0.Add(time.Hour), z.newID), nil)
	if e, ok := d.Events[0].(loyalty.PointsExpired); len(d.Events) != 1 || !ok || e.Lot != lot || e.Amount != 0 || e.Balance != 0 || d.Expired != 1 {
		t.Errorf("expire %+v, want the lot's expiry of 0 points alone", d.Events)
	}
	// A debit sees the same, in one decision: the correction, the expiry,
	// then the debit from what is left.
	c := newAcct()
	lot = c.earn(t, 100, at(time.Hour))
	c.earn(t, 5, nil)
	c.Apply(loyalty.PointsRedeemed{Account: "u1", App: "app1", Transaction: "damaged", Amount: 30, Balance: 40, IdempotencyKey: "damaged",
		Lots: []loyalty.LotUse{{Lot: lot, Amount: 30}}}) // 70 left in the lot, 75 in all, 40 recorded
	_, err := c.Redeem(loyalty.Points{Amount: 6, Reason: "test"}, t0.Add(time.Hour), c.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"balance": int64(5), "requested": int64(6)})
	d = c.ok(t)(c.Redeem(loyalty.Points{Amount: 5, Reason: "test"}, t0.Add(time.Hour), c.newID))
	want := []string{"loyalty.balance_corrected", "loyalty.points_expired", "loyalty.points_redeemed"}
	if got := types(d.Events); !reflect.DeepEqual(got, want) || d.Expired != 1 {
		t.Fatalf("redeem: events %v, expired %d; want %v and one lot expired", got, d.Expired, want)
	}
	if cr := d.Events[0].(loyalty.BalanceCorrected); cr.Old != 40 || cr.New != 75 {
		t.Errorf("corrected %+v, want 40 to 75", cr)
	}
	if e := d.Events[1].(loyalty.PointsExpired); e.Lot != lot || e.Amount != 70 || e.Balance != 5 {
		t.Errorf("expired %+v, want 70, balance 5", e)
	}
	if r := d.Events[2].(loyalty.PointsRedeemed); r.Balance != 0 {
		t.Errorf("redeemed %+v, want balance 0", r)
	}
	if d := c.Rebalance(); len(d.Events) != 0 || c.Balance() != 0 || c.Sum() != 0 {
		t.Errorf("rebalance after the redeem %+v, balance %d sum %d", d.Events, c.Balance(), c.Sum())
	}
}

// TestExpiryOfAHealthyAccountCorrectsNothing: where the recorded balance
// is what the transactions add up to, an expiry (alone or ahead of a
// debit) records no correction.
func TestExpiryOfAHealthyAccountCorrectsNothing(t *testing.T) {
	a := newAcct()
	a.earn(t, 100, at(time.Hour))
	a.earn(t, 20, at(2*time.Hour))
	a.earn(t, 5, nil)
	a.ok(t)(a.Redeem(loyalty.Points{Amount: 30, Reason: "test"}, t0, a.newID))
	d := a.ok(t)(a.ExpireDue(t0.Add(time.Hour), a.newID), nil)
	if got := types(d.Events); !reflect.DeepEqual(got, []string{"loyalty.points_expired"}) || d.Expired != 1 {
		t.Fatalf("expire: events %v, expired %d; want one expiry and no correction", got, d.Expired)
	}
	d = a.ok(t)(a.Redeem(loyalty.Points{Amount: 5, Reason: "test"}, t0.Add(2*time.Hour), a.newID))
	if got := types(d.Events); !reflect.DeepEqual(got, []string{"loyalty.points_expired", "loyalty.points_redeemed"}) || d.Expired != 1 {
		t.Fatalf("redeem: events %v, expired %d; want the expiry and the redemption, no correction", got, d.Expired)
	}
	if d := a.Rebalance(); len(d.Events) != 0 || a.Balance() != 0 || a.Sum() != 0 {
		t.Errorf("rebalance %+v, balance %d sum %d", d.Events, a.Balance(), a.Sum())
	}
}

func TestIdempotency(t *testing.T) {
	a := newAcct()
	p := loyalty.Points{Amount: 10, Reason: "order", Reference: "o-1", IdempotencyKey: "k1", ExpiresAt: at(time.Hour)}
	d := a.ok(t)(a.Earn(p, t0, a.newID))
	orig := d.Transaction

	// The same request: nothing recorded, the original transaction (even
	// when its expiry has passed since: the retry is the same request, and
	// the time given again with another location or sub-millisecond
	// digits is the same instant on the wire).
	same := p
	exp := at(time.Hour + 300*time.Microsecond).In(time.FixedZone("x", 3600))
	same.ExpiresAt = &exp
	for _, now := range []time.Time{t0, t0.Add(2 * time.Hour)} {
		r, err := a.Earn(same, now, a.newID)
		if err != nil || !r.Replayed || r.Transaction != orig || len(r.Events) != 0 {
			t.Fatalf("replay at %v: %+v %v", now, r, err)
		}
	}
	// Any difference is another request.
	for name, q := range map[string]loyalty.Points{
		"amount":    {Amount: 11, Reason: "order", Reference: "o-1", IdempotencyKey: "k1", ExpiresAt: at(time.Hour)},
		"reason":    {Amount: 10, Reason: "other", Reference: "o-1", IdempotencyKey: "k1", ExpiresAt: at(time.Hour)},
		"reference": {Amount: 10, Reason: "order", Reference: "o-2", IdempotencyKey: "k1", ExpiresAt: at(time.Hour)},
		"expiry":    {Amount: 10, Reason: "order", Reference: "o-1", IdempotencyKey: "k1", ExpiresAt: at(2 * time.Hour)},
		"no expiry": {Amount: 10, Reason: "order", Reference: "o-1", IdempotencyKey: "k1"},
	} {
		_, err := a.Earn(q, t0, a.newID)
		fe := wantFault(t, err, fault.Conflict, map[string]any{"idempotencyKey": "k1", "transaction": orig})
		if fe.Message != loyalty.MsgKeyReused {
			t.Errorf("%s: message %q", name, fe.Message)
		}
	}
	// Other kinds with the same key, and the same amount.
	_, err := a.Redeem(loyalty.Points{Amount: 10, Reason: "order", Reference: "o-1", IdempotencyKey: "k1"}, t0, a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"transaction": orig})
	_, err = a.Adjust(p, t0, a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"transaction": orig})
	_, err = a.RedeemCard("card", "k1", a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"transaction": orig})

	// A redeem replay does not expire or debit again, even after a lot is due.
	r := loyalty.Points{Amount: 3, Reason: "test", IdempotencyKey: "k2"}
	rd := a.ok(t)(a.Redeem(r, t0, a.newID))
	again, err := a.Redeem(r, t0.Add(2*time.Hour), a.newID)
	if err != nil || !again.Replayed || again.Transaction != rd.Transaction || len(again.Events) != 0 {
		t.Fatalf("redeem replay %+v %v", again, err)
	}
	// Keys survive a rebuild of the state from the events.
	b := loyalty.NewAccount("u1", "app1")
	for _, e := range append(d.Events, rd.Events...) {
		b.Apply(e)
	}
	if tx, ok := b.Transaction("k2"); !ok || tx != rd.Transaction {
		t.Errorf("folded key k2: %q %v", tx, ok)
	}
	if _, err := b.Redeem(r, t0, ids()); err != nil {
		t.Errorf("replay on the folded state: %v", err)
	}
	// Without a key nothing is deduplicated.
	x := a.ok(t)(a.Earn(loyalty.Points{Amount: 1, Reason: "test"}, t0, a.newID))
	y := a.ok(t)(a.Earn(loyalty.Points{Amount: 1, Reason: "test"}, t0, a.newID))
	if x.Transaction == y.Transaction || x.Replayed || y.Replayed {
		t.Errorf("keyless earns: %+v %+v", x, y)
	}
}

func TestValidation(t *testing.T) {
	long := func(n int) string { return strings.Repeat("x", n) }
	for _, c := range []struct {
		name  string
		kind  string
		p     loyalty.Points
		field string
	}{
		{"zero earn", "earn", loyalty.Points{Amount: 0, Reason: "test"}, "amount"},
		{"negative earn", "earn", loyalty.Points{Amount: -5, Reason: "test"}, "amount"},
		{"huge earn", "earn", loyalty.Points{Amount: loyalty.MaxAmount + 1, Reason: "test"}, "amount"},
		{"zero redeem", "redeem", loyalty.Points{Amount: 0, Reason: "test"}, "amount"},
		{"huge redeem", "redeem", loyalty.Points{Amount: loyalty.MaxAmount + 1, Reason: "test"}, "amount"},
		{"zero adjust", "adjust", loyalty.Points{Amount: 0, Reason: "test"}, "amount"},
		{"huge adjust", "adjust", loyalty.Points{Amount: -loyalty.MaxAmount - 1, Reason: "test"}, "amount"},
		{"past expiry", "earn", loyalty.Points{Amount: 1, Reason: "test", ExpiresAt: at(-time.Second)}, "expiresAt"},
		{"expiry now", "earn", loyalty.Points{Amount: 1, Reason: "test", ExpiresAt: at(0)}, "expiresAt"},
		{"redeem expiry", "redeem", loyalty.Points{Amount: 1, Reason: "test", ExpiresAt: at(time.Hour)}, "expiresAt"},
		{"negative adjust expiry", "adjust", loyalty.Points{Amount: -1, Reason: "test", ExpiresAt: at(time.Hour)}, "expiresAt"},
		{"earn without reason", "earn", loyalty.Points{Amount: 1}, "reason"},
		{"redeem without reason", "redeem", loyalty.Points{Amount: 1}, "reason"},
		{"adjust up without reason", "adjust", loyalty.Points{Amount: 1}, "reason"},
		{"adjust down without reason", "adjust", loyalty.Points{Amount: -1}, "reason"},
		{"blank reason", "earn", loyalty.Points{Amount: 1, Reason: " \t\n\u00a0"}, "reason"},
		{"blank reason, redeem", "redeem", loyalty.Points{Amount: 1, Reason: "   "}, "reason"},
		{"blank reason, adjust", "adjust", loyalty.Points{Amount: -1, Reason: "\t"}, "reason"},
		{"long reason", "earn", loyalty.Points{Amount: 1, Reason: long(loyalty.MaxReason + 1)}, "reason"},
		{"long reference", "redeem", loyalty.Points{Amount: 1, Reason: "test", Reference: long(loyalty.MaxReference + 1)}, "reference"},
		{"long key", "adjust", loyalty.Points{Amount: 1, Reason: "test", IdempotencyKey: long(loyalty.MaxKey + 1)}, "idempotencyKey"},
		{"bad utf-8", "earn", loyalty.Points{Amount: 1, Reason: "a\xffb"}, "reason"},
		{"NUL", "earn", loyalty.Points{Amount: 1, Reason: "test", Reference: "a\x00b"}, "reference"},
	} {
		t.Run(c.name, func(t *testing.T) {
			a := newAcct()
			a.earn(t, 10, nil)
			var err error
			switch c.kind {
			case "earn":
				_, err = a.Earn(c.p, t0, a.newID)
			case "redeem":
				_, err = a.Redeem(c.p, t0, a.newID)
			case "adjust":
				_, err = a.Adjust(c.p, t0, a.newID)
			}
			wantFault(t, err, fault.Invalid, map[string]any{"field": c.field})
		})
	}
	// The limits themselves are accepted.
	a := newAcct()
	a.ok(t)(a.Earn(loyalty.Points{Amount: loyalty.MaxAmount, Reason: long(loyalty.MaxReason),
		Reference: long(loyalty.MaxReference), IdempotencyKey: long(loyalty.MaxKey)}, t0, a.newID))
	a.ok(t)(a.Adjust(loyalty.Points{Amount: -loyalty.MaxAmount, Reason: "test"}, t0, a.newID))
	// The balance limit (a history near it, folded from events).
	a = newAcct()
	a.Apply(loyalty.AccountOpened{Account: "u1", App: "app1"})
	a.Apply(loyalty.PointsEarned{Account: "u1", App: "app1", Transaction: "big", Amount: loyalty.MaxBalance - 10,
		Balance: loyalty.MaxBalance - 10, IdempotencyKey: "big"})
	a.ok(t)(a.Earn(loyalty.Points{Amount: 10, Reason: "test"}, t0, a.newID))
	_, err := a.Earn(loyalty.Points{Amount: 1, Reason: "test"}, t0, a.newID)
	wantFault(t, err, fault.Invalid, map[string]any{"field": "amount"})
	_, err = a.Adjust(loyalty.Points{Amount: 1, Reason: "test"}, t0, a.newID)
	wantFault(t, err, fault.Invalid, map[string]any{"field": "amount"})
	a.ok(t)(a.Adjust(loyalty.Points{Amount: -1, Reason: "test"}, t0, a.newID))
	a.ok(t)(a.Earn(loyalty.Points{Amount: 1, Reason: "test"}, t0, a.newID))
	if a.Balance() != loyalty.MaxBalance {
		t.Errorf("balance %d", a.Balance())
	}
}

func TestRebalanceDamagedHistory(t *testing.T) {
	a := loyalty.NewAccount("u1", "app1")
	if d := a.Rebalance(); len(d.Events) != 0 {
		t.Fatalf("an account never opened rebalances to %v", d.Events)
	}
	// A damaged history: the second earn recorded a wrong running balance.
	for _, e := range []any{
		loyalty.AccountOpened{Account: "u1", App: "app1"},
		loyalty.PointsEarned{Account: "u1", App: "app1", Transaction: "e1", Amount: 50, Balance: 50, IdempotencyKey: "e1"},
		loyalty.PointsEarned{Account: "u1", App: "app1", Transaction: "e2", Amount: 30, Balance: 100, IdempotencyKey: "e2"},
		loyalty.PointsRedeemed{Account: "u1", App: "app1", Transaction: "r1", Amount: 10, Balance: 90, IdempotencyKey: "r1",
			Lots: []loyalty.LotUse{{Lot: "e1", Amount: 10}, {Lot: "gone", Amount: 3}}},
	} {
		a.Apply(e)
	}
	if a.Balance() != 90 || a.Sum() != 70 {
		t.Fatalf("recorded %d sum %d", a.Balance(), a.Sum())
	}
	// New transactions continue the recorded balance, and overdraft checks
	// use it.
	newID := ids()
	d, err := a.Earn(loyalty.Points{Amount: 5, Reason: "test"}, t0, newID)
	if err != nil || d.Events[0].(loyalty.PointsEarned).Balance != 95 {
		t.Fatalf("earn on a damaged history: %+v %v", d, err)
	}
	if _, err := a.Redeem(loyalty.Points{Amount: 85, Reason: "test"}, t0, newID); err != nil {
		t.Errorf("redeem within the recorded balance: %v", err)
	}
	d = a.Rebalance()
	want := loyalty.BalanceCorrected{Account: "u1", App: "app1", Old: 90, New: 70}
	if len(d.Events) != 1 || d.Events[0] != want {
		t.Fatalf("rebalance %+v, want %+v", d.Events, want)
	}
	a.Apply(d.Events[0])
	if a.Balance() != 70 || a.Sum() != 70 {
		t.Errorf("after the correction: recorded %d sum %d", a.Balance(), a.Sum())
	}
	if d := a.Rebalance(); len(d.Events) != 0 {
		t.Errorf("a second rebalance records %v", d.Events)
	}
	// The correction is what later transactions continue from.
	d, _ = a.Redeem(loyalty.Points{Amount: 70, Reason: "test"}, t0, newID)
	if r := d.Events[0].(loyalty.PointsRedeemed); r.Balance != 0 {
		t.Errorf("redeem after the correction: %+v", r)
	}
	// A healthy history never needs a correction.
	h := newAcct()
	h.earn(t, 10, at(time.Hour))
	h.ok(t)(h.Redeem(loyalty.Points{Amount: 3, Reason: "test"}, t0, h.newID))
	h.ok(t)(h.Adjust(loyalty.Points{Amount: -2, Reason: "test"}, t0, h.newID))
	h.ok(t)(h.ExpireDue(t0.Add(time.Hour), h.newID), nil)
	if d := h.Rebalance(); len(d.Events) != 0 || h.Balance() != 0 {
		t.Errorf("healthy: %v, balance %d", d.Events, h.Balance())
	}
}

// TestFootprint checks that Account.Footprint tells, within a third, what
// accounts take on the heap: earns with keys, a fifth with an expiry,
// redemptions that close lots, stamps that fill a card and start another.
// It allocates alone (no t.Parallel) so that the heap's growth is theirs.
func TestFootprint(t *testing.T) {
	if strconv.IntSize != 64 {
		t.Skip("Footprint's constants are measured on 64-bit platforms")
	}
	const accounts = 500
	for _, txs := range []int{10, 100, 400} {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		keep := make([]*loyalty.Account, accounts)
		var estimated int64
		for i := range keep {
			a := loyalty.NewAccount(fmt.Sprintf("6b023f20e9b9a15c8058%04d", i), "6b023f20e9b9a15c80582ffd")
			a.Apply(loyalty.AccountOpened{Account: a.ID(), App: a.App()})
			tx := func(j int) string { return fmt.Sprintf("6b023f20e9b9a15c8%07d", j) }
			for j := range txs {
				switch {
				case j%10 == 9: // a redemption of the last earn's points
					a.Apply(loyalty.PointsRedeemed{Account: a.ID(), App: a.App(), Transaction: tx(j), Amount: 10,
						Balance: a.Balance() - 10, Reason: "reward", IdempotencyKey: fmt.Sprintf("redeem-%d", j),
						Lots: []loyalty.LotUse{{Lot: tx(j - 1), Amount: 10}}})
				case j%20 == 3: // stamps on one card definition, 4 of the 10 needed each time
					a.Apply(loyalty.StampsAdded{Account: a.ID(), App: a.App(), Transaction: tx(j), Card: "6b023f20e9b9a15c80580001",
						UserCard: fmt.Sprintf("card-%d", j/60), Stamps: 4, Total: 4, Needed: 10, Reward: "coffee", Reason: "visit"})
				default:
					var exp *time.Time
					if j%5 == 0 {
						exp = at(time.Duration(j) * time.Hour)
					}
					a.Apply(loyalty.PointsEarned{Account: a.ID(), App: a.App(), Transaction: tx(j), Amount: 10,
						Balance: a.Balance() + 10, Reason: "purchase", Reference: fmt.Sprintf("order-%d", j),
						IdempotencyKey: fmt.Sprintf("earn-%d-%d", i, j), ExpiresAt: exp})
				}
			}
			keep[i] = a
			estimated += a.Footprint()
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		heap := int64(after.HeapAlloc) - int64(before.HeapAlloc)
		ratio := float64(estimated) / float64(heap)
		t.Logf("%d transactions: %d bytes per account on the heap, %d estimated (%.2f)",
			txs, heap/accounts, estimated/accounts, ratio)
		if ratio < 0.75 || ratio > 1.33 {
			t.Errorf("%d transactions: Footprint estimates %d bytes per account, the heap grew by %d", txs, estimated/accounts, heap/accounts)
		}
		runtime.KeepAlive(keep)
	}
}
