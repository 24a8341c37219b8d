package loyalty_test

import (
	"reflect"
	"strconv"
	"strings"
	"testing"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/loyalty"
)

func defineCard(t *testing.T, id, app string, needed int) loyalty.Card {
	t.Helper()
	evs, err := loyalty.DefineCard(loyalty.Card{}, id, app, loyalty.CardSpec{Name: " Coffee ", Reward: "A free coffee", StampsNeeded: needed})
	if err != nil {
		t.Fatal(err)
	}
	return foldCard(loyalty.Card{}, evs)
}

func foldCard(c loyalty.Card, evs []any) loyalty.Card {
	for _, e := range evs {
		c = c.Apply(e)
	}
	return c
}

// stampLog returns each StampsAdded of evs as "usercard:+n=total/needed" and
// each completion as "usercard done".
func stampLog(evs []any) []string {
	var out []string
	for _, e := range evs {
		switch e := e.(type) {
		case loyalty.StampsAdded:
			out = append(out, e.UserCard+":+"+itoa(e.Stamps)+"="+itoa(e.Total)+"/"+itoa(e.Needed))
		case loyalty.CardCompleted:
			out = append(out, e.UserCard+" done")
		}
	}
	return out
}

func itoa(n int) string { return strconv.Itoa(n) }

func TestStampsOverflowIntoNewCards(t *testing.T) {
	card := defineCard(t, "c1", "app1", 3)
	if card.Name != "Coffee" || card.StampsNeeded != 3 || !card.Exists() {
		t.Fatalf("card %+v", card)
	}
	a := newAcct()
	d := a.ok(t)(a.AddStamps(card, loyalty.Stamps{Count: 7, Reason: "visit", IdempotencyKey: "s1"}, a.newID))
	// tx1 is the transaction, tx2..tx4 the cards.
	want := []string{"tx2:+3=3/3", "tx2 done", "tx3:+3=3/3", "tx3 done", "tx4:+1=1/3"}
	if got := stampLog(d.Events[1:]); !reflect.DeepEqual(got, want) {
		t.Fatalf("stamps %v, want %v", got, want)
	}
	if _, ok := d.Events[0].(loyalty.AccountOpened); !ok {
		t.Errorf("stamps opened the account with %T", d.Events[0])
	}
	if d.Transaction != "tx1" || !reflect.DeepEqual(d.UserCards, []string{"tx2", "tx3", "tx4"}) || !reflect.DeepEqual(d.Completed, []string{"tx2", "tx3"}) {
		t.Errorf("decision %+v", d)
	}
	for _, e := range d.Events[1:] {
		if s, ok := e.(loyalty.StampsAdded); ok && (s.Transaction != "tx1" || s.IdempotencyKey != "s1" || s.Reward != "A free coffee" || s.Card != "c1") {
			t.Errorf("stamps event %+v", s)
		}
	}
	if open, ok := a.OpenCard("c1"); !ok || open.ID != "tx4" || open.Stamps != 1 {
		t.Errorf("open card %+v %v", open, ok)
	}
	if a.Balance() != 0 || a.Transactions() != 0 {
		t.Errorf("stamps moved points: balance %d txs %d", a.Balance(), a.Transactions())
	}

	// The definition changes: the started card keeps 3 and its reward; the
	// next card needs 2.
	evs, err := card.Change(loyalty.CardSpec{Name: "Coffee", Reward: "Two coffees", StampsNeeded: 2})
	if err != nil {
		t.Fatal(err)
	}
	card = foldCard(card, evs)
	d = a.ok(t)(a.AddStamps(card, loyalty.Stamps{Count: 4}, a.newID))
	want = []string{"tx4:+2=3/3", "tx4 done", "tx6:+2=2/2", "tx6 done"}
	if got := stampLog(d.Events); !reflect.DeepEqual(got, want) {
		t.Fatalf("after the change: %v, want %v", got, want)
	}
	if uc, _ := a.UserCard("tx4"); uc.Reward != "A free coffee" || uc.Needed != 3 || !uc.Completed {
		t.Errorf("old card %+v", uc)
	}
	if uc, _ := a.UserCard("tx6"); uc.Reward != "Two coffees" || uc.Needed != 2 {
		t.Errorf("new card %+v", uc)
	}
	if _, ok := a.OpenCard("c1"); ok {
		t.Error("every card is completed, yet one is open")
	}

	// Replay returns the original cards; a different count is a conflict.
	r, err := a.AddStamps(card, loyalty.Stamps{Count: 7, Reason: "visit", IdempotencyKey: "s1"}, a.newID)
	if err != nil || !r.Replayed || r.Transaction != "tx1" || len(r.Events) != 0 ||
		!reflect.DeepEqual(r.UserCards, []string{"tx2", "tx3", "tx4"}) || !reflect.DeepEqual(r.Completed, []string{"tx2", "tx3"}) {
		t.Errorf("replay %+v %v", r, err)
	}
	_, err = a.AddStamps(card, loyalty.Stamps{Count: 6, Reason: "visit", IdempotencyKey: "s1"}, a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"idempotencyKey": "s1", "transaction": "tx1"})
	other := defineCard(t, "c2", "app1", 5)
	_, err = a.AddStamps(other, loyalty.Stamps{Count: 7, Reason: "visit", IdempotencyKey: "s1"}, a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"transaction": "tx1"})
}

func TestStampRules(t *testing.T) {
	card := defineCard(t, "c1", "app1", 2)
	a := newAcct()
	for _, c := range []struct {
		name  string
		card  loyalty.Card
		s     loyalty.Stamps
		kind  fault.Kind
		field string
	}{
		{"zero", card, loyalty.Stamps{Count: 0}, fault.Invalid, "stamps"},
		{"too many", card, loyalty.Stamps{Count: loyalty.MaxStamps + 1}, fault.Invalid, "stamps"},
		{"long reason", card, loyalty.Stamps{Count: 1, Reason: strings.Repeat("r", loyalty.MaxReason+1)}, fault.Invalid, "reason"},
		{"unknown card", loyalty.Card{ID: "nope"}, loyalty.Stamps{Count: 1}, fault.NotFound, ""},
		{"other app's card", defineCard(t, "c9", "app2", 2), loyalty.Stamps{Count: 1}, fault.NotFound, ""},
	} {
		_, err := a.AddStamps(c.card, c.s, a.newID)
		extra := map[string]any{}
		if c.field != "" {
			extra["field"] = c.field
		}
		wantFault(t, err, c.kind, extra)
	}
	if a.Opened() {
		t.Fatal("refused stamps opened the account")
	}
	a.ok(t)(a.AddStamps(card, loyalty.Stamps{Count: loyalty.MaxStamps, IdempotencyKey: "max"}, a.newID))
	if d, _ := a.AddStamps(card, loyalty.Stamps{Count: loyalty.MaxStamps, IdempotencyKey: "max"}, a.newID); len(d.Completed) != 500 {
		t.Errorf("1000 stamps on 2-stamp cards completed %d cards, want 500", len(d.Completed))
	}

	// Redeeming cards.
	d := a.ok(t)(a.AddStamps(card, loyalty.Stamps{Count: 3}, a.newID))
	done, open := d.Completed[0], d.UserCards[1]
	_, err := a.RedeemCard(open, "", a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"stamps": 1, "needed": 2})
	_, err = a.RedeemCard("nope", "", a.newID)
	wantFault(t, err, fault.NotFound, nil)

	// Retired: no more stamps, but completed cards still redeem.
	evs, err := card.Retire()
	if err != nil || len(evs) != 1 {
		t.Fatalf("retire %v %v", evs, err)
	}
	retired := foldCard(card, evs)
	_, err = a.AddStamps(retired, loyalty.Stamps{Count: 1}, a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"card": "c1"})
	// ... except a replay of stamps recorded before the retirement.
	if r, err := a.AddStamps(retired, loyalty.Stamps{Count: loyalty.MaxStamps, IdempotencyKey: "max"}, a.newID); err != nil || !r.Replayed {
		t.Errorf("replay after retirement: %+v %v", r, err)
	}
	rd := a.ok(t)(a.RedeemCard(done, "r1", a.newID))
	want := loyalty.CardRedeemed{Account: "u1", App: "app1", Transaction: rd.Transaction, Card: "c1", UserCard: done, Reward: "A free coffee", IdempotencyKey: "r1"}
	if len(rd.Events) != 1 || rd.Events[0] != want {
		t.Fatalf("redeemed %+v, want %+v", rd.Events, want)
	}
	if uc, _ := a.UserCard(done); !uc.Redeemed {
		t.Errorf("card %+v not redeemed", uc)
	}
	if r, err := a.RedeemCard(done, "r1", a.newID); err != nil || !r.Replayed || r.Transaction != rd.Transaction {
		t.Errorf("redeem replay %+v %v", r, err)
	}
	_, err = a.RedeemCard(done, "r2", a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"stampCard": done})
	_, err = a.RedeemCard(open, "r1", a.newID)
	wantFault(t, err, fault.Conflict, map[string]any{"idempotencyKey": "r1"})
}

func TestCardDefinitions(t *testing.T) {
	long := func(n int) string { return strings.Repeat("é", n) } // characters, not bytes
	ok := loyalty.CardSpec{Name: "Coffee", Description: long(loyalty.MaxCardDescription), Reward: long(loyalty.MaxCardReward), StampsNeeded: loyalty.MaxStampsNeeded}
	if _, err := loyalty.DefineCard(loyalty.Card{}, "c1", "app1", ok); err != nil {
		t.Fatalf("limits refused: %v", err)
	}
	for _, c := range []struct {
		name  string
		s     loyalty.CardSpec
		field string
	}{
		{"no name", loyalty.CardSpec{Name: "  ", Reward: "r", StampsNeeded: 1}, "name"},
		{"long name", loyalty.CardSpec{Name: long(loyalty.MaxCardName + 1), Reward: "r", StampsNeeded: 1}, "name"},
		{"long description", loyalty.CardSpec{Name: "n", Description: long(loyalty.MaxCardDescription + 1), Reward: "r", StampsNeeded: 1}, "description"},
		{"no reward", loyalty.CardSpec{Name: "n", StampsNeeded: 1}, "reward"},
		{"long reward", loyalty.CardSpec{Name: "n", Reward: long(loyalty.MaxCardReward + 1), StampsNeeded: 1}, "reward"},
		{"zero stamps", loyalty.CardSpec{Name: "n", Reward: "r"}, "stampsNeeded"},
		{"too many stamps", loyalty.CardSpec{Name: "n", Reward: "r", StampsNeeded: loyalty.MaxStampsNeeded + 1}, "stampsNeeded"},
		{"NUL", loyalty.CardSpec{Name: "n\x00", Reward: "r", StampsNeeded: 1}, "name"},
	} {
		_, err := loyalty.DefineCard(loyalty.Card{}, "c1", "app1", c.s)
		wantFault(t, err, fault.Invalid, map[string]any{"field": c.field})
	}
	_, err := loyalty.DefineCard(loyalty.Card{}, "c1", "", ok)
	wantFault(t, err, fault.Invalid, map[string]any{"field": "app"})

	card := defineCard(t, "c1", "app1", 3)
	_, err = loyalty.DefineCard(card, "c1", "app1", ok)
	wantFault(t, err, fault.Conflict, nil)
	if evs, err := card.Change(loyalty.CardSpec{Name: "Coffee", Reward: "A free coffee", StampsNeeded: 3}); err != nil || len(evs) != 0 {
		t.Errorf("an unchanged definition records %v %v", evs, err)
	}
	evs, err := card.Change(loyalty.CardSpec{Name: "Tea", Description: "d", Reward: "Tea", StampsNeeded: 5})
	if err != nil {
		t.Fatal(err)
	}
	card = foldCard(card, evs)
	if card.Name != "Tea" || card.Description != "d" || card.StampsNeeded != 5 || card.App != "app1" {
		t.Errorf("changed %+v", card)
	}
	_, err = card.Change(loyalty.CardSpec{Name: "", Reward: "r", StampsNeeded: 1})
	wantFault(t, err, fault.Invalid, map[string]any{"field": "name"})
	evs, _ = card.Retire()
	card = foldCard(card, evs)
	if !card.Retired {
		t.Fatal("not retired")
	}
	if evs, err := card.Retire(); err != nil || len(evs) != 0 {
		t.Errorf("retiring twice: %v %v", evs, err)
	}
	_, err = card.Change(ok)
	wantFault(t, err, fault.Conflict, nil)
	_, err = loyalty.Card{}.Change(ok)
	wantFault(t, err, fault.NotFound, nil)
	_, err = loyalty.Card{}.Retire()
	wantFault(t, err, fault.NotFound, nil)
}
