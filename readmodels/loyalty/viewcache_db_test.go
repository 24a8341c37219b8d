package loyalty_test

import (
	"reflect"
	"sync/atomic"
	"testing"
	"time"

	projloyalty "github.com/halocms/halocms/projections/loyalty"
	"github.com/halocms/halocms/projections/loyalty/loyaltytest"
	rmloyalty "github.com/halocms/halocms/readmodels/loyalty"
)

// TestCachedViews: a store that keeps account views answers as the tables
// do as long as it is told of every change the way the runtime tells it
// (the loyalty projector's Changed of each batch), and from memory in
// between: a change it is not told of stays unseen.
func TestCachedViews(t *testing.T) {
	t.Parallel()
	w := newWorld(t, 600)
	var heard atomic.Bool
	heard.Store(true)
	cached := rmloyalty.New(w.pool)
	cached.CacheViews(100, time.Hour, heard.Load)

	same := func(when string) {
		t.Helper()
		for _, p := range w.people {
			got, err := cached.Account(w.ctx, p.id)
			if err != nil {
				t.Fatalf("%s: %s: %v", when, p.id, err)
			}
			want, err := w.store.Account(w.ctx, p.id)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("%s: %s\n got %+v\nwant %+v", when, p.id, got, want)
			}
		}
	}
	// changed projects f's events and tells the cache what the projector
	// says they changed.
	changed := func(f func(s *loyaltytest.Sim)) {
		t.Helper()
		from := len(w.log)
		w.more(t, f)
		keys, all := projloyalty.Projector{}.Changed(w.log[from:])
		if all {
			cached.ForgetAll()
		} else {
			cached.Forget(keys...)
		}
	}

	same("first read")
	same("from memory")
	if st := cached.ViewCache(); st.Hits != uint64(len(w.people)) || st.Views != len(w.people) {
		t.Fatalf("after reading every account twice: %+v, want %d hits and views", st, len(w.people))
	}

	// An account with a stamp card of a definition still in use.
	var who, app, card string
	for _, p := range w.people {
		v, _ := w.store.Account(w.ctx, p.id)
		for _, c := range v.Cards {
			if !w.sim.Cards[c.Card].Retired && who == "" {
				who, app, card = p.id, p.app, c.Card
			}
		}
	}
	if who == "" {
		t.Fatal("the history left no card of a live definition")
	}
	before, _ := cached.Account(w.ctx, who)

	w.more(t, func(s *loyaltytest.Sim) { s.Earn(who, app, 5, nil) })
	if v, _ := cached.Account(w.ctx, who); v.Balance != before.Balance {
		t.Fatalf("a change nobody announced shows at once (%d → %d): the view was not served from memory", before.Balance, v.Balance)
	}
	cached.Forget(who)
	same("after the unannounced earn was forgotten")

	changed(func(s *loyaltytest.Sim) {
		s.Earn(who, app, 7, nil)
		s.AddStamps(who, app, card, 1)
	})
	same("after an earn and a stamp")

	changed(func(s *loyaltytest.Sim) { s.ChangeCard(card, "Renamed card", w.sim.Cards[card].Needed) })
	same("after a card definition changed")
	if v, _ := cached.Account(w.ctx, who); !hasCardNamed(v, "Renamed card") {
		t.Fatalf("%s's cards after the rename: %+v", who, v.Cards)
	}

	// Not heard: every read goes to the tables, and keeps nothing.
	heard.Store(false)
	w.more(t, func(s *loyaltytest.Sim) { s.Earn(who, app, 11, nil) })
	same("while changes are not heard")
	heard.Store(true)
	cached.ForgetAll() // as the listener does when it listens again
	same("heard again")
}

func hasCardNamed(v rmloyalty.AccountView, name string) bool {
	for _, c := range v.Cards {
		if c.Name == name {
			return true
		}
	}
	return false
}
