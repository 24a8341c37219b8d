package main

import (
	"net/http"
	"testing"
	"time"
)

// TestLoyaltyViewsInMemory: `cms serve` keeps account views in memory,
// yet a user reads their own writes at once on the server that took them,
// and every other server drops what it kept once it hears of the change
// (well before the views' ttl). A definition's change reaches every view.
func TestLoyaltyViewsInMemory(t *testing.T) {
	t.Parallel()
	ts := startLoyaltyServer(t, withConfig(func(c *Config) { c.Loyalty.ViewCacheTTL = time.Hour }))
	other := ts.another(t)
	app := ts.createApp("Views")
	ann := ts.newMember(ts.appToken(app), "ann@example.com", "Ann", "Archer")
	self := func(s *testServer) loyaltyUserView {
		t.Helper()
		return s.with(t).loyaltyUser(ann.Token, "self")
	}
	// other's view, kept in memory: served again without a read.
	if u := self(other); u.Balance != 0 {
		t.Fatalf("a new member's balance: %d", u.Balance)
	}
	hits := other.app.loyaltyRead.ViewCache().Hits
	self(other)
	if got := other.app.loyaltyRead.ViewCache().Hits; got != hits+1 {
		t.Fatalf("the second read of a view: %d hits, want %d", got, hits+1)
	}

	// Read-your-writes on the server that took the write, whose view was
	// kept in memory just before each one, whichever server applied the
	// batch; and on the other once the write's answer came.
	var balance int64
	for i := range 20 {
		self(ts)
		balance += int64(1 + i)
		ts.with(t).mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 1 + i, "reason": "visit"})
		if u := self(ts); u.Balance != balance {
			t.Fatalf("earn %d: self answers a balance of %d, want %d", i, u.Balance, balance)
		}
	}
	// The other server hears of it.
	deadline := time.Now().Add(5 * time.Second)
	for self(other).Balance != balance {
		if time.Now().After(deadline) {
			t.Fatalf("the other server still answers %d, want %d", self(other).Balance, balance)
		}
		time.Sleep(10 * time.Millisecond)
	}

	// A definition renamed: every view holding one of its cards.
	card := ts.defineCard(ts.admin, map[string]any{"app": app.ID, "name": "Coffee", "stampsNeeded": 3, "reward": "A coffee"})
	ts.with(t).mustJSON(ts.post(userPath(ann.ID, "/stamps"), ts.admin, map[string]any{"card": card.ID, "stamps": 1}), http.StatusCreated, &struct{}{})
	for _, s := range []*testServer{ts, other} {
		deadline := time.Now().Add(5 * time.Second)
		for u := self(s); len(u.StampCards) != 1; u = self(s) {
			if time.Now().After(deadline) {
				t.Fatalf("the stamp card does not show: %+v", u.StampCards)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	edit := map[string]any{"id": card.ID, "appId": card.AppID, "name": "Coffee card", "description": "", "stampsNeeded": 3,
		"reward": "A coffee", "retired": false, "createdAt": card.CreatedAt, "updatedAt": card.UpdatedAt}
	ts.with(t).mustJSON(ts.put(stampCardPath+"/"+card.ID, ts.admin, edit), http.StatusOK, &stampCardView{})
	if u := self(ts); u.StampCards[0].Name != "Coffee card" {
		t.Fatalf("after the rename, this server's view: %+v", u.StampCards)
	}
	deadline = time.Now().Add(5 * time.Second)
	for u := self(other); u.StampCards[0].Name != "Coffee card"; u = self(other) {
		if time.Now().After(deadline) {
			t.Fatalf("after the rename, the other server's view: %+v", u.StampCards)
		}
		time.Sleep(10 * time.Millisecond)
	}
}
