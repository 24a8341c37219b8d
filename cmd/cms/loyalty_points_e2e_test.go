package main

import (
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"testing"
	"time"
)

// TestLoyaltyPoints: earn, redeem and adjust over the real router;
// idempotent replays; the insufficient-points refusal; the user, self and
// the transactions with their pagination.
func TestLoyaltyPoints(t *testing.T) {
	t.Parallel()
	ts := startLoyaltyServer(t)
	app := ts.createApp("Loyal")
	appTok := ts.appToken(app)
	ann := ts.newMember(appTok, "ann@example.com", "Ann", "Archer")
	by := "user:" + ts.adminID

	// Every identified user is a loyalty user, with nothing yet.
	u := ts.loyaltyUser(ts.admin, ann.ID)
	if u.ID != ann.ID || u.AppID != ann.AppNumber || u.Email != ann.Email || u.Name != "Ann" || u.Surname != "Archer" ||
		u.Balance != 0 || u.TransactionCount != 0 || u.UpdatedAt != nil || u.NextExpiry != nil || u.CreatedAt == 0 ||
		u.Transactions == nil || len(u.Transactions) != 0 || u.StampCards == nil {
		t.Fatalf("a new loyalty user: %+v", u)
	}

	// Earn, with a key, a reason and a reference.
	before := time.Now().UnixMilli()
	e := ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 100, "reason": "welcome", "reference": "ref-1", "idempotencyKey": "k1"})
	tx := e.Transaction
	if e.Balance != 100 || tx.Type != "earn" || tx.Amount != 100 || tx.Balance != 100 || tx.Reason != "welcome" ||
		tx.Reference != "ref-1" || tx.IdempotencyKey != "k1" || tx.CreatedBy != by || tx.ExpiresAt != nil ||
		tx.CreatedAt < before-1000 || tx.CreatedAt > time.Now().UnixMilli()+1000 {
		t.Fatalf("earn: %+v", e)
	}

	// The same request again: 200, Idempotent-Replayed, the original
	// transaction, nothing recorded.
	r := ts.points(ts.admin, ann.ID, "earn", map[string]any{"amount": 100, "reason": "welcome", "reference": "ref-1", "idempotencyKey": "k1"})
	var replay pointsView
	ts.mustJSON(r, http.StatusOK, &replay)
	if r.Header.Get("Idempotent-Replayed") != "true" || replay.Transaction.ID != tx.ID || replay.Balance != 100 ||
		replay.Transaction.Amount != 100 {
		t.Errorf("replay: %s %+v", r.Header.Get("Idempotent-Replayed"), replay)
	}
	// The key in the Idempotency-Key header is the same key.
	r = ts.do(request{method: http.MethodPost, path: userPath(ann.ID, "/earn"), token: ts.admin, header: http.Header{"Idempotency-Key": {"k1"}},
		body: map[string]any{"amount": 100, "reason": "welcome", "reference": "ref-1"}})
	if expectStatus(t, r, http.StatusOK) && r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay by header: no Idempotent-Replayed")
	}
	// The same key for another request: 409 naming the key and the
	// original transaction.
	msg, extra := haloErrorOf(t, ts.points(ts.admin, ann.ID, "earn", map[string]any{"amount": 101, "reason": "welcome", "reference": "ref-1", "idempotencyKey": "k1"}), http.StatusConflict)
	if extra["idempotencyKey"] != "k1" || extra["transaction"] != tx.ID {
		t.Errorf("key reuse: %q %v", msg, extra)
	}
	// A key is the account's across kinds: redeeming with it is another request.
	expectHaloError(t, ts.points(ts.admin, ann.ID, "redeem", map[string]any{"amount": 100, "reason": "test", "idempotencyKey": "k1"}), http.StatusConflict)
	if p := ts.transactions(ts.admin, ann.ID, nil); p.Pagination.TotalItems != 1 {
		t.Fatalf("after replays and refusals: %d transactions, want 1", p.Pagination.TotalItems)
	}

	// Without a key nothing is deduplicated; the key is the transaction id.
	a := ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 50, "reason": "test"})
	b := ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 50, "reason": "test"})
	if a.Transaction.ID == b.Transaction.ID || a.Transaction.IdempotencyKey != a.Transaction.ID || b.Balance != 200 {
		t.Errorf("two earns without a key: %+v, %+v", a, b)
	}
	// The header alone.
	h := ts.do(request{method: http.MethodPost, path: userPath(ann.ID, "/earn"), token: ts.admin, header: http.Header{"Idempotency-Key": {"hdr-1"}},
		body: map[string]any{"amount": 10, "reason": "test"}})
	var hv pointsView
	ts.mustJSON(h, http.StatusCreated, &hv)
	if hv.Transaction.IdempotencyKey != "hdr-1" || hv.Balance != 210 {
		t.Errorf("earn keyed by header: %+v", hv)
	}

	// Redeem: a debit, negative on the wire.
	rd := ts.mustPoints(ts.admin, ann.ID, "redeem", map[string]any{"amount": 30, "reason": "coffee", "idempotencyKey": "r1"})
	if rd.Balance != 180 || rd.Transaction.Type != "redeem" || rd.Transaction.Amount != -30 || rd.Transaction.Balance != 180 {
		t.Errorf("redeem: %+v", rd)
	}
	// More than the balance: 409 with the balance and what was asked.
	msg, extra = haloErrorOf(t, ts.points(ts.admin, ann.ID, "redeem", map[string]any{"amount": 181, "reason": "test"}), http.StatusConflict)
	if msg != "insufficient points" || num(extra["balance"]) != 180 || num(extra["requested"]) != 181 {
		t.Errorf("overdraw: %q %v", msg, extra)
	}

	// Adjust, both ways; below zero is refused like a redemption.
	ad := ts.mustPoints(ts.admin, ann.ID, "adjust", map[string]any{"amount": -20, "reason": "double credit", "reference": "ticket-9"})
	if ad.Balance != 160 || ad.Transaction.Type != "adjust" || ad.Transaction.Amount != -20 {
		t.Errorf("adjust -20: %+v", ad)
	}
	if ad := ts.mustPoints(ts.admin, ann.ID, "adjust", map[string]any{"amount": 5, "reason": "test"}); ad.Balance != 165 || ad.Transaction.Amount != 5 {
		t.Errorf("adjust +5: %+v", ad)
	}
	expectHaloError(t, ts.points(ts.admin, ann.ID, "adjust", map[string]any{"amount": -166, "reason": "test"}), http.StatusConflict)

	// The user: figures and the newest transactions first.
	u = ts.loyaltyUser(ts.admin, ann.ID)
	if u.Balance != 165 || u.Earned != 210 || u.Redeemed != 30 || u.Adjusted != -15 || u.Expired != 0 || u.TransactionCount != 7 ||
		u.UpdatedAt == nil || len(u.Transactions) != 7 || u.Transactions[0].Amount != 5 || u.Transactions[6].ID != tx.ID {
		t.Fatalf("user after 7 transactions: %+v", u)
	}

	// Self: the identified user's own token reads and redeems.
	var self loyaltyUserView
	ts.mustJSON(ts.get(loyaltySelfPath, ann.Token), http.StatusOK, &self)
	if self.ID != ann.ID || self.Balance != 165 || len(self.Transactions) != 7 {
		t.Errorf("self: %+v", self)
	}
	ts.mustJSON(ts.get(loyaltySelfPath+"/", ann.Token), http.StatusOK, &self)
	own := ts.mustPoints(ann.Token, "self", "redeem", map[string]any{"amount": 15, "reason": "tea"})
	if own.User != ann.ID || own.Balance != 150 || own.Transaction.CreatedBy != "identified:"+ann.ID {
		t.Errorf("self redeem: %+v", own)
	}
	if own := ts.mustPoints(ann.Token, ann.ID, "redeem", map[string]any{"amount": 10, "reason": "test"}); own.Balance != 140 {
		t.Errorf("redeem naming one's own id: %+v", own)
	}
	var selfTx txPageView
	ts.mustJSON(ts.get(loyaltySelfPath+"/transactions", ann.Token), http.StatusOK, &selfTx)
	if selfTx.Pagination.TotalItems != 9 || len(selfTx.Items) != 9 || selfTx.Items[0].Amount != -10 {
		t.Errorf("self transactions: %+v", selfTx.Pagination)
	}

	// Pagination of the transactions: 12 in all, 5 a page, newest first.
	for i := range 3 {
		ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 1 + i, "reason": "test"})
	}
	var pages []txView
	for page := 1; page <= 3; page++ {
		p := ts.transactions(ts.admin, ann.ID, url.Values{"page": {strconv.Itoa(page)}, "limit": {"5"}})
		if p.Pagination.TotalItems != 12 || p.Pagination.TotalPages != 3 || p.Pagination.Page != page || p.Pagination.Limit != 5 {
			t.Fatalf("page %d: %+v", page, p.Pagination)
		}
		if want := []int{5, 5, 2}[page-1]; len(p.Items) != want {
			t.Fatalf("page %d: %d items, want %d", page, len(p.Items), want)
		}
		pages = append(pages, p.Items...)
	}
	if ids := txIDs(pages); len(ids) != 12 || pages[0].Amount != 3 || pages[11].ID != tx.ID {
		t.Errorf("pages: %v", ids)
	}
	seen := map[string]bool{}
	for i, p := range pages {
		if seen[p.ID] {
			t.Errorf("transaction %s on two pages", p.ID)
		}
		seen[p.ID] = true
		// Newest first: each balance is the next older one's plus its amount.
		if i+1 < len(pages) && p.Balance != pages[i+1].Balance+p.Amount {
			t.Errorf("transaction %d: balance %d, the older %d, amount %d", i, p.Balance, pages[i+1].Balance, p.Amount)
		}
	}
	if p := ts.transactions(ts.admin, ann.ID, url.Values{"page": {"4"}, "limit": {"5"}}); len(p.Items) != 0 || p.Pagination.TotalItems != 12 {
		t.Errorf("past the last page: %+v", p)
	}

	// Unknown users: 404, and nothing recorded.
	n := ts.loyaltyEvents()
	expectHaloError(t, ts.get(userPath("identified-nosuchuser", ""), ts.admin), http.StatusNotFound)
	expectHaloError(t, ts.points(ts.admin, "identified-nosuchuser", "earn", map[string]any{"amount": 5, "reason": "test"}), http.StatusNotFound)
	if m := ts.loyaltyEvents(); m != n {
		t.Errorf("an earn for an unknown user appended %d events", m-n)
	}
}

// TestLoyaltyExpiry: a lot expires at its date with no request (the
// expirer of `cms serve`), soonest-expiring lots are spent first, and a
// debit never spends points whose date passed even when the expirer has
// not run yet.
func TestLoyaltyExpiry(t *testing.T) {
	t.Parallel()
	t.Run("on time, without a request", func(t *testing.T) {
		t.Parallel()
		ts := startLoyaltyServer(t, withConfig(func(c *Config) { c.Loyalty.ExpiryPoll = 100 * time.Millisecond }))
		app := ts.createApp("Expiring")
		ann := ts.newMember(ts.appToken(app), "ann@example.com", "Ann", "Archer")

		// 12 s ahead: the five commands and four reads below must be done
		// before it, on a loaded machine too (5 s was once too little
		// with the whole suite running on a contended host).
		soon := time.Now().Add(12 * time.Second).UnixMilli()
		later := time.Now().Add(time.Hour).UnixMilli()
		lotA := ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 100, "reason": "test", "expiresAt": soon})
		if lotA.Transaction.ExpiresAt == nil || *lotA.Transaction.ExpiresAt != soon {
			t.Fatalf("earn with expiry: %+v", lotA.Transaction)
		}
		ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 50, "reason": "test"})
		ts.mustPoints(ts.admin, ann.ID, "adjust", map[string]any{"amount": 30, "reason": "test", "expiresAt": later})
		u := ts.loyaltyUser(ts.admin, ann.ID)
		if u.NextExpiry == nil || u.NextExpiry.Points != 100 || u.NextExpiry.ExpiresAt != soon {
			t.Fatalf("next expiry: %+v", u.NextExpiry)
		}
		// The redemption takes the soonest-expiring lot first: 80 of
		// lot A remain to expire.
		ts.mustPoints(ts.admin, ann.ID, "redeem", map[string]any{"amount": 20, "reason": "test"})
		if u := ts.loyaltyUser(ts.admin, ann.ID); u.NextExpiry == nil || u.NextExpiry.Points != 80 {
			t.Fatalf("next expiry after redeeming 20: %+v", u.NextExpiry)
		}

		u = ts.waitLoyaltyUser(t, ann.ID, 25*time.Second, func(u loyaltyUserView) bool { return u.Expired != 0 })
		if time.Now().UnixMilli() < soon {
			t.Errorf("points expired before their date")
		}
		if u.Expired != 80 || u.Balance != 80 || u.NextExpiry == nil || u.NextExpiry.Points != 30 || u.NextExpiry.ExpiresAt != later {
			t.Fatalf("after the expiry: %+v", u)
		}
		exp := u.Transactions[0]
		if exp.Type != "expire" || exp.Amount != -80 || exp.Balance != 80 || exp.CreatedBy != "system" {
			t.Errorf("the expiry transaction: %+v", exp)
		}
		// Expired once: nothing more happens.
		time.Sleep(500 * time.Millisecond)
		if again := ts.loyaltyUser(ts.admin, ann.ID); again.Expired != 80 || again.TransactionCount != u.TransactionCount {
			t.Errorf("expired twice: %+v", again)
		}
	})
	t.Run("never spent after the date", func(t *testing.T) {
		t.Parallel()
		// The expirer looks once an hour here: the debit itself must
		// expire the lot first.
		ts := startLoyaltyServer(t, withConfig(func(c *Config) { c.Loyalty.ExpiryPoll = time.Hour }))
		app := ts.createApp("Expiring")
		ann := ts.newMember(ts.appToken(app), "ann@example.com", "Ann", "Archer")
		// 5 s ahead: the earn must still be in time on a loaded machine.
		soon := time.Now().Add(5 * time.Second).UnixMilli()
		ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 100, "reason": "test", "expiresAt": soon})
		ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 10, "reason": "test"})
		time.Sleep(time.Until(time.UnixMilli(soon)) + 200*time.Millisecond)

		msg, extra := haloErrorOf(t, ts.points(ts.admin, ann.ID, "redeem", map[string]any{"amount": 50, "reason": "test"}), http.StatusConflict)
		if msg != "insufficient points" || num(extra["balance"]) != 10 || num(extra["requested"]) != 50 {
			t.Errorf("redeeming expired points: %q %v", msg, extra)
		}
		rd := ts.mustPoints(ts.admin, ann.ID, "redeem", map[string]any{"amount": 10, "reason": "test"})
		if rd.Balance != 0 {
			t.Errorf("redeem after the expiry: %+v", rd)
		}
		u := ts.loyaltyUser(ts.admin, ann.ID)
		if u.Expired != 100 || u.Balance != 0 || u.Redeemed != 10 {
			t.Errorf("user: %+v", u)
		}
		kinds := []string{}
		for _, tx := range u.Transactions {
			kinds = append(kinds, tx.Type)
		}
		if !slices.Equal(kinds, []string{"redeem", "expire", "earn", "earn"}) {
			t.Errorf("transactions, newest first: %v", kinds)
		}
	})
}

// num reads a JSON number decoded into any.
func num(v any) float64 {
	f, _ := v.(float64)
	return f
}

// TestLoyaltyReasonRequired: every points transaction has a reason. An
// earn, redeem or adjust without one (left out, empty, null or only
// spaces) is a 400 naming the field, and records nothing. Stamps and
// stamp-card redemptions keep an optional reason.
func TestLoyaltyReasonRequired(t *testing.T) {
	t.Parallel()
	ts := startLoyaltyServer(t)
	app := ts.createApp("Reasons")
	ann := ts.newMember(ts.appToken(app), "ann@example.com", "Ann", "Archer")
	ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 100, "reason": "welcome"})
	events := ts.loyaltyEvents()

	noReasons := []struct {
		name string
		body any
	}{
		{"left out", map[string]any{"amount": 5}},
		{"empty", map[string]any{"amount": 5, "reason": ""}},
		{"null", `{"amount": 5, "reason": null}`},
		{"spaces", map[string]any{"amount": 5, "reason": " \t\n "}},
		{"with everything else", map[string]any{"amount": 5, "reference": "ref", "idempotencyKey": "k-none"}},
	}
	calls := []struct{ who, token, user, kind string }{
		{"admin", ts.admin, ann.ID, "earn"},
		{"admin", ts.admin, ann.ID, "redeem"},
		{"admin", ts.admin, ann.ID, "adjust"},
		{"identified user", ann.Token, "self", "redeem"},
	}
	check := func(what string, r response) {
		t.Helper()
		_, extra := haloErrorOf(t, r, http.StatusBadRequest)
		if extra["field"] != "reason" {
			t.Errorf("%s: %s: extra %v, want the field reason", what, r, extra)
		}
	}
	for _, c := range calls {
		for _, b := range noReasons {
			check(c.who+" "+c.kind+", reason "+b.name, ts.points(c.token, c.user, c.kind, b.body))
		}
	}
	check("adjust down", ts.points(ts.admin, ann.ID, "adjust", map[string]any{"amount": -5}))
	check("earn with an expiry", ts.points(ts.admin, ann.ID, "earn", map[string]any{"amount": 5, "expiresAt": time.Now().Add(time.Hour).UnixMilli()}))

	// Nothing recorded: not an event, not a transaction, not a point.
	if n := ts.loyaltyEvents(); n != events {
		t.Errorf("refused transactions appended %d events", n-events)
	}
	if u := ts.loyaltyUser(ts.admin, ann.ID); u.Balance != 100 || u.TransactionCount != 1 {
		t.Errorf("refused transactions changed the account: balance %d, %d transactions", u.Balance, u.TransactionCount)
	}
	if txs := ts.allTransactions(ann.ID); len(txs) != 1 || txs[0].Reason != "welcome" {
		t.Errorf("%d transactions after the refusals, want the welcome earn alone", len(txs))
	}

	// With a reason, each goes through and keeps it.
	for _, c := range calls {
		p := ts.mustPoints(c.token, c.user, c.kind, map[string]any{"amount": 5, "reason": " " + c.kind + " "})
		if p.Transaction.Reason != " "+c.kind+" " {
			t.Errorf("%s %s: reason %q", c.who, c.kind, p.Transaction.Reason)
		}
	}

	// Stamps and card redemptions need none.
	card := ts.defineCard(ts.admin, map[string]any{"app": app.ID, "name": "Card", "stampsNeeded": 1, "reward": "r"})
	var st stampsView
	ts.mustJSON(ts.post(userPath(ann.ID, "/stamps"), ts.admin, map[string]any{"card": card.ID, "stamps": 1}), http.StatusCreated, &st)
	if len(st.StampCards) != 1 {
		t.Fatalf("stamps: %+v", st)
	}
	ts.mustJSON(ts.post(userPath(ann.ID, "/stampcards/"+st.StampCards[0].ID+"/redeem"), ts.admin, nil), http.StatusCreated, nil)
}
