package main

import (
	"encoding/json"
	"fmt"
	"net/http"
	"sync"
	"testing"
	"time"
)

// TestLoyaltyConcurrentRedeems: 32 clients redeem from one account at
// once, more than it holds. The account is never overdrawn, every
// accepted redemption is in the transaction list, the balance is the
// start minus what was accepted, and no request is refused while the
// points were there (no spurious conflicts).
func TestLoyaltyConcurrentRedeems(t *testing.T) {
	t.Parallel()
	ts := startLoyaltyServer(t)
	app := ts.createApp("Rush")
	ann := ts.newMember(ts.appToken(app), "ann@example.com", "Ann", "Archer")
	// 500 points in lots: some expiring (later), some not.
	far := time.Now().Add(24 * time.Hour).UnixMilli()
	for i := range 5 {
		body := map[string]any{"amount": 100, "reason": "test"}
		if i%2 == 0 {
			body["expiresAt"] = far + int64(i)
		}
		ts.mustPoints(ts.admin, ann.ID, "earn", body)
	}
	const (
		start   = 500
		clients = 32
		each    = 4
		amount  = 5 // 32 × 4 × 5 = 640 points asked for
	)
	type outcome struct {
		status int
		tx     string
		msg    string
		extra  map[string]any
	}
	results := make([][]outcome, clients)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Half the clients are the CMS, half the user themself.
			token, user := ts.admin, ann.ID
			if c%2 == 1 {
				token, user = ann.Token, "self"
			}
			for i := range each {
				r := ts.do(request{method: http.MethodPost, path: userPath(user, "/redeem"), token: token,
					body: map[string]any{"amount": amount, "reason": "test", "idempotencyKey": fmt.Sprintf("c%d-%d", c, i)}})
				o := outcome{status: r.Status}
				switch r.Status {
				case http.StatusCreated:
					var v pointsView
					if json.Unmarshal(r.Body, &v) == nil {
						o.tx = v.Transaction.ID
					}
				default:
					var e haloErr
					if json.Unmarshal(r.Body, &e) == nil && e.Error != nil {
						o.msg, o.extra = e.Error.Message, e.Error.Extra
					}
				}
				results[c] = append(results[c], o)
			}
		}()
	}
	wg.Wait()

	accepted := map[string]bool{}
	refused := 0
	for c, rs := range results {
		for i, o := range rs {
			switch {
			case o.status == http.StatusCreated && o.tx != "":
				if accepted[o.tx] {
					t.Errorf("client %d request %d: transaction %s answered twice", c, i, o.tx)
				}
				accepted[o.tx] = true
			case o.status == http.StatusConflict && o.msg == "insufficient points":
				refused++
				if b := num(o.extra["balance"]); b >= amount {
					t.Errorf("client %d request %d: refused with %v points left (a spurious conflict)", c, i, b)
				}
			default:
				t.Errorf("client %d request %d: %d %q %v", c, i, o.status, o.msg, o.extra)
			}
		}
	}
	if len(accepted)+refused != clients*each {
		t.Fatalf("%d accepted + %d refused != %d requests", len(accepted), refused, clients*each)
	}
	if len(accepted) != start/amount {
		t.Errorf("%d redemptions accepted, want %d (all the points, and not one more)", len(accepted), start/amount)
	}

	u := ts.loyaltyUser(ts.admin, ann.ID)
	if u.Balance != start-int64(len(accepted))*amount || u.Balance < 0 || u.Redeemed != int64(len(accepted))*amount {
		t.Errorf("balance %d, redeemed %d after %d accepted redemptions of %d from %d", u.Balance, u.Redeemed, len(accepted), amount, start)
	}
	listed := map[string]bool{}
	for _, tx := range ts.allTransactions(ann.ID) {
		if tx.Type == "redeem" {
			listed[tx.ID] = true
			if tx.Balance < 0 {
				t.Errorf("transaction %s left the balance at %d", tx.ID, tx.Balance)
			}
		}
	}
	for id := range accepted {
		if !listed[id] {
			t.Errorf("accepted redemption %s is not in the transaction list", id)
		}
	}
	if len(listed) != len(accepted) {
		t.Errorf("%d redemptions listed, %d accepted", len(listed), len(accepted))
	}
	if rep := ts.auditLoyalty(ts.admin, ann.ID, 0, 0); !rep.Consistent || rep.Balance != u.Balance {
		t.Errorf("audit after the rush: balance %d consistent %v, read model %d", rep.Balance, rep.Consistent, u.Balance)
	}
}

// With CMS_READ_CONCURRENCY 1 the loyalty account reads run one at a
// time: many at once all wait their turn and each gets its own account,
// whether the user reads themself or a CMS user reads an account or its
// transactions.
func TestLoyaltyReadsWaitInLine(t *testing.T) {
	t.Parallel()
	ts := startLoyaltyServer(t, withConfig(func(c *Config) { c.ReadConcurrency = 1 }))
	app := ts.createApp("Queue")
	appTok := ts.appToken(app)
	ann := ts.newMember(appTok, "ann@example.com", "Ann", "Archer")
	bob := ts.newMember(appTok, "bob@example.com", "Bob", "Baker")
	ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 30, "reason": "test"})
	ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 12, "reason": "test"})
	ts.mustPoints(ts.admin, bob.ID, "earn", map[string]any{"amount": 7, "reason": "test"})
	atOnce(t, 24, func(i int) error {
		m, want := ann, int64(42)
		if i%2 == 1 {
			m, want = bob, 7
		}
		if i%3 == 2 { // the account's transactions
			r := ts.do(request{method: http.MethodGet, path: userPath(m.ID, "/transactions"), token: ts.admin})
			var p txPageView
			var sum int64
			if err := json.Unmarshal(r.Body, &p); err == nil {
				for _, tx := range p.Items {
					sum += tx.Amount
				}
			}
			if r.Status != http.StatusOK || sum != want {
				return fmt.Errorf("transactions %d of %s: status %d, amounts summing to %d, want %d", i, m.ID, r.Status, sum, want)
			}
			return nil
		}
		token, path := m.Token, loyaltySelfPath // the user themself, or a CMS user
		if i%3 == 1 {
			token, path = ts.admin, userPath(m.ID, "")
		}
		r := ts.do(request{method: http.MethodGet, path: path, token: token})
		var u loyaltyUserView
		if err := json.Unmarshal(r.Body, &u); err != nil || r.Status != http.StatusOK || u.ID != m.ID || u.Balance != want {
			return fmt.Errorf("read %d (%s): status %d, id %s, balance %d, want %s with %d (%v)", i, path, r.Status, u.ID, u.Balance, m.ID, want, err)
		}
		return nil
	})
}
