package loyalty_test

import (
	"reflect"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/loyalty"
)

// history is an account's events with lots (with and without expiry, some
// due), idempotency keys of every kind, and stamp cards (open, completed,
// redeemed).
func history(t *testing.T) []any {
	t.Helper()
	a := newAcct()
	var evs []any
	keep := func(d loyalty.Decision, err error) loyalty.Decision {
		t.Helper()
		d = a.ok(t)(d, err)
		evs = append(evs, d.Events...)
		return d
	}
	keep(a.Earn(loyalty.Points{Amount: 100, Reason: "test", IdempotencyKey: "e1", ExpiresAt: at(time.Hour)}, t0, a.newID))
	keep(a.Earn(loyalty.Points{Amount: 50, Reason: "test", IdempotencyKey: "e2"}, t0, a.newID))
	keep(a.Adjust(loyalty.Points{Amount: 20, Reason: "test", IdempotencyKey: "a1", ExpiresAt: at(2 * time.Hour)}, t0, a.newID))
	keep(a.Redeem(loyalty.Points{Amount: 30, Reason: "test", IdempotencyKey: "r1"}, t0, a.newID))
	card := defineCard(t, "c1", "app1", 3)
	d := keep(a.AddStamps(card, loyalty.Stamps{Count: 7, IdempotencyKey: "s1"}, a.newID))
	keep(a.RedeemCard(d.Completed[0], "k1", a.newID))
	return evs
}

func fold(evs []any) *loyalty.Account {
	a := loyalty.NewAccount("u1", "app1")
	for _, e := range evs {
		a.Apply(e)
	}
	return a
}

// TestDecidersLeaveTheAccountAlone: every decider, whether it decides new
// events, a replay or a refusal, leaves the folded account as it was (the
// command side caches and reuses it), and what a replay returns does not
// share memory with the account.
func TestDecidersLeaveTheAccountAlone(t *testing.T) {
	evs := history(t)
	a, want := fold(evs), fold(evs)
	if !reflect.DeepEqual(a, want) {
		t.Fatal("two folds of one history differ")
	}
	card := defineCard(t, "c1", "app1", 3)
	later := t0.Add(90 * time.Minute) // the first lot is due
	newID := ids()
	decisions := []struct {
		name   string
		decide func() (loyalty.Decision, error)
	}{
		{"earn", func() (loyalty.Decision, error) {
			return a.Earn(loyalty.Points{Amount: 5, Reason: "test", ExpiresAt: at(3 * time.Hour)}, later, newID)
		}},
		{"earn replay", func() (loyalty.Decision, error) {
			return a.Earn(loyalty.Points{Amount: 100, Reason: "test", IdempotencyKey: "e1", ExpiresAt: at(time.Hour)}, later, newID)
		}},
		{"earn key reused", func() (loyalty.Decision, error) {
			return a.Earn(loyalty.Points{Amount: 1, Reason: "test", IdempotencyKey: "e1"}, later, newID)
		}},
		{"redeem with expiry first", func() (loyalty.Decision, error) {
			return a.Redeem(loyalty.Points{Amount: 60, Reason: "test"}, later, newID)
		}},
		{"redeem too much", func() (loyalty.Decision, error) {
			return a.Redeem(loyalty.Points{Amount: 1000, Reason: "test"}, later, newID)
		}},
		{"adjust down", func() (loyalty.Decision, error) {
			return a.Adjust(loyalty.Points{Amount: -10, Reason: "test"}, later, newID)
		}},
		{"adjust up", func() (loyalty.Decision, error) {
			return a.Adjust(loyalty.Points{Amount: 10, Reason: "test"}, later, newID)
		}},
		{"expire due", func() (loyalty.Decision, error) { return a.ExpireDue(later, newID), nil }},
		{"stamps", func() (loyalty.Decision, error) { return a.AddStamps(card, loyalty.Stamps{Count: 5}, newID) }},
		{"stamps replay", func() (loyalty.Decision, error) {
			return a.AddStamps(card, loyalty.Stamps{Count: 7, IdempotencyKey: "s1"}, newID)
		}},
		{"redeem card", func() (loyalty.Decision, error) {
			d, _ := a.AddStamps(card, loyalty.Stamps{Count: 7, IdempotencyKey: "s1"}, newID)
			return a.RedeemCard(d.Completed[1], "", newID)
		}},
		{"rebalance", func() (loyalty.Decision, error) { return a.Rebalance(), nil }},
	}
	for _, c := range decisions {
		d, _ := c.decide()
		// A caller scribbling on what it got must not reach the account.
		for i := range d.UserCards {
			d.UserCards[i] = "scribbled"
		}
		for i := range d.Completed {
			d.Completed[i] = "scribbled"
		}
		if !reflect.DeepEqual(a, want) {
			t.Fatalf("%s changed the account", c.name)
		}
	}
	// The replay still answers the cards of the original request.
	d, err := a.AddStamps(card, loyalty.Stamps{Count: 7, IdempotencyKey: "s1"}, newID)
	if err != nil || !d.Replayed || len(d.UserCards) != 3 || d.UserCards[0] == "scribbled" || d.Completed[0] == "scribbled" {
		t.Errorf("stamps replay after scribbling: %+v %v", d, err)
	}
}
