package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
)

// streamEvents counts the events of one stream.
func (ts *testServer) streamEvents(stream string) int {
	ts.t.Helper()
	var n int
	if err := ts.app.pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE stream_id = $1`, stream).Scan(&n); err != nil {
		ts.t.Fatal(err)
	}
	return n
}

// damage appends a PointsEarned straight to the account's stream whose
// recorded balance is off by skew: a history as a bug of an earlier
// version (or a bad import) could have left it.
func (ts *testServer) damage(account, app string, amount, recorded int64) {
	ts.t.Helper()
	ctx := access.WithActor(context.Background(), access.SystemActor)
	id := ids.Generator{}.NewID()
	evs := commands.WithApp(commands.Wrap(ctx, loyalty.PointsEarned{Account: account, App: app, Transaction: id, Amount: amount,
		Balance: recorded, Reason: "import", IdempotencyKey: id}), app)
	if _, err := ts.app.store.Append(ctx, loyalty.AccountStream(account), event.AnyVersion, evs...); err != nil {
		ts.t.Fatalf("appending a damaged event: %v", err)
	}
}

func (ts *testServer) rebalance(token, user string) rebalancedView {
	ts.t.Helper()
	var v rebalancedView
	ts.mustJSON(ts.post(loyaltyRebalancePath, token, map[string]any{"user": user}), http.StatusOK, &v)
	return v
}

func loyaltyAuditURL(user string, from, to int64) string {
	q := url.Values{"user": {user}}
	if from != 0 {
		q.Set("from", strconv.FormatInt(from, 10))
	}
	if to != 0 {
		q.Set("to", strconv.FormatInt(to, 10))
	}
	return loyaltyAuditPath + "?" + q.Encode()
}

// loyaltyAuditScenario: ann earns 100 and redeems 30 (healthy), then a
// damaged event records 100 after an earn of 10 (the sum says 80).
type loyaltyAuditScenario struct {
	app       appView
	ann       member
	redeemAt  int64 // between the earn and the redemption
	damagedAt int64 // before the damaged event
}

func runLoyaltyAuditScenario(t *testing.T, ts *testServer) loyaltyAuditScenario {
	t.Helper()
	sc := loyaltyAuditScenario{app: ts.createApp("Audited")}
	sc.ann = ts.newMember(ts.appToken(sc.app), "ann@example.com", "Ann", "Archer")
	ts.mustPoints(ts.admin, sc.ann.ID, "earn", map[string]any{"amount": 100, "reason": "welcome"})
	time.Sleep(5 * time.Millisecond)
	sc.redeemAt = time.Now().UnixMilli()
	time.Sleep(5 * time.Millisecond)
	ts.mustPoints(ts.admin, sc.ann.ID, "redeem", map[string]any{"amount": 30, "reason": "coffee"})
	time.Sleep(5 * time.Millisecond)
	sc.damagedAt = time.Now().UnixMilli()
	return sc
}

// TestLoyaltyRebalance: a healthy history needs no correction and
// records nothing; a damaged one gets one correction, then none; the
// audit replays both, and its final balance is the read model's.
func TestLoyaltyRebalance(t *testing.T) {
	t.Parallel()
	ts := startLoyaltyServer(t)
	sc := runLoyaltyAuditScenario(t, ts)
	ann, stream := sc.ann, loyalty.AccountStream(sc.ann.ID)

	// Healthy: nothing recorded.
	n := ts.streamEvents(stream)
	if rb := ts.rebalance(ts.admin, ann.ID); rb.Corrected || rb.PreviousBalance != 70 || rb.Balance != 70 || rb.User != ann.ID {
		t.Errorf("healthy rebalance: %+v", rb)
	}
	if m := ts.streamEvents(stream); m != n {
		t.Errorf("a healthy rebalance appended %d events", m-n)
	}

	// Damaged: an earn of 10 that recorded 100 instead of 80.
	ts.damage(ann.ID, sc.app.ID, 10, 100)
	u := ts.waitLoyaltyUser(t, ann.ID, 10*time.Second, func(u loyaltyUserView) bool { return u.TransactionCount == 3 })
	if u.Balance != 100 {
		t.Fatalf("the read model follows the recorded balance: %+v", u)
	}
	rep := ts.auditLoyalty(ts.admin, ann.ID, 0, 0)
	if rep.Balance != 80 || rep.RecordedBalance != 100 || rep.Consistent {
		t.Errorf("audit of the damaged history: balance %d recorded %d consistent %v", rep.Balance, rep.RecordedBalance, rep.Consistent)
	}
	if m := rep.ReadModel; m == nil || m.Balance != 100 || !m.CaughtUp || m.Matches || m.LastVersion != 4 || m.AppliedVersion != 4 {
		t.Errorf("audit of the damaged history: read model %+v, want 100 (recorded), caught up at version 4, not matching 80", m)
	}

	rb := ts.rebalance(ts.admin, ann.ID)
	if !rb.Corrected || rb.PreviousBalance != 100 || rb.Balance != 80 {
		t.Fatalf("rebalance of the damaged history: %+v", rb)
	}
	u = ts.loyaltyUser(ts.admin, ann.ID)
	if u.Balance != 80 {
		t.Errorf("after the correction: balance %d, want 80", u.Balance)
	}
	corr := u.Transactions[0]
	if corr.Type != "correction" || corr.Amount != 0 || corr.Balance != 80 || corr.PreviousBalance == nil || *corr.PreviousBalance != 100 ||
		corr.CreatedBy != "user:"+ts.adminID {
		t.Errorf("the correction: %+v", corr)
	}
	// Once corrected, there is nothing more to correct; new transactions
	// continue from the corrected balance.
	n = ts.streamEvents(stream)
	if rb := ts.rebalance(ts.admin, ann.ID); rb.Corrected || rb.PreviousBalance != 80 || rb.Balance != 80 {
		t.Errorf("second rebalance: %+v", rb)
	}
	if m := ts.streamEvents(stream); m != n {
		t.Errorf("the second rebalance appended %d events", m-n)
	}
	if e := ts.mustPoints(ts.admin, ann.ID, "earn", map[string]any{"amount": 5, "reason": "test"}); e.Balance != 85 {
		t.Errorf("earn after the correction: balance %d, want 85", e.Balance)
	}
	expectHaloError(t, ts.post(loyaltyRebalancePath, ts.admin, map[string]any{"user": "identified-nosuchuser"}), http.StatusNotFound)

	// The audit: every event with the running balance, who, when, where.
	rep = ts.auditLoyalty(ts.admin, ann.ID, 0, 0)
	if rep.User != ann.ID || rep.App != sc.app.ID || !rep.Consistent || rep.Balance != 85 || rep.RecordedBalance != 85 || rep.OpeningBalance != 0 {
		t.Errorf("audit: %+v", rep)
	}
	if u := ts.loyaltyUser(ts.admin, ann.ID); rep.Balance != u.Balance {
		t.Errorf("the audit's final balance %d differs from the read model's %d", rep.Balance, u.Balance)
	}
	if m := rep.ReadModel; m == nil || m.Balance != 85 || !m.CaughtUp || !m.Matches || m.AppliedVersion != m.LastVersion || m.LastVersion != 6 {
		t.Errorf("audit after the writes: read model %+v, want 85, caught up at version 6, matching", m)
	}
	var kinds []string
	for _, e := range rep.Entries {
		kinds = append(kinds, e.Type)
	}
	if strings.Join(kinds, ",") != "opened,earn,redeem,earn,correction,earn" {
		t.Fatalf("audit entries: %v", kinds)
	}
	for i, w := range []struct {
		amount, balance, recorded int64
		by                        string
	}{{0, 0, 0, ""}, {100, 100, 100, "user:" + ts.adminID}, {-30, 70, 70, "user:" + ts.adminID}, {10, 80, 100, "system"},
		{0, 80, 80, "user:" + ts.adminID}, {5, 85, 85, "user:" + ts.adminID}} {
		e := rep.Entries[i]
		if e.Amount != w.amount || e.Balance != w.balance || e.RecordedBalance != w.recorded || (w.by != "" && e.CreatedBy != w.by) ||
			e.CreatedAt == 0 || e.EventID == "" || e.Position == 0 {
			t.Errorf("entry %d (%s): %+v, want amount %d balance %d recorded %d by %s", i, e.Type, e, w.amount, w.balance, w.recorded, w.by)
		}
		if w.by == "user:"+ts.adminID && e.ClientIP != "127.0.0.1" {
			t.Errorf("entry %d (%s): from %q, want 127.0.0.1", i, e.Type, e.ClientIP)
		}
	}
	// A window: up to before the redemption; from the redemption on.
	early := ts.auditLoyalty(ts.admin, ann.ID, 0, sc.redeemAt)
	if early.Balance != 100 || len(early.Entries) != 2 {
		t.Errorf("audit to %d: balance %d, %d entries", sc.redeemAt, early.Balance, len(early.Entries))
	}
	late := ts.auditLoyalty(ts.admin, ann.ID, sc.redeemAt, 0)
	if late.OpeningBalance != 100 || late.Balance != 85 || len(late.Entries) != 4 || late.Entries[0].Type != "redeem" {
		t.Errorf("audit from %d: opening %d balance %d entries %d", sc.redeemAt, late.OpeningBalance, late.Balance, len(late.Entries))
	}
	// An entry's own createdAt (milliseconds; the log keeps microseconds)
	// as to, or as from and to, includes it.
	for i, e := range rep.Entries {
		upTo := ts.auditLoyalty(ts.admin, ann.ID, 0, e.CreatedAt)
		if !hasAuditEntry(upTo, e.EventID) {
			t.Errorf("audit to entry %d's createdAt %d leaves it out (%d entries)", i, e.CreatedAt, len(upTo.Entries))
		}
		at := ts.auditLoyalty(ts.admin, ann.ID, e.CreatedAt, e.CreatedAt)
		if !hasAuditEntry(at, e.EventID) {
			t.Errorf("audit from and to entry %d's createdAt %d leaves it out (%d entries)", i, e.CreatedAt, len(at.Entries))
		}
	}
	if early.ReadModel != nil || late.ReadModel == nil || late.ReadModel.Balance != 85 {
		t.Errorf("a window up to a past moment leaves the read model out: %+v; one from a moment keeps it: %+v", early.ReadModel, late.ReadModel)
	}
	expectHaloError(t, ts.get(loyaltyAuditURL("identified-nosuchuser", 0, 0), ts.admin), http.StatusNotFound)
	expectStatus(t, ts.get(loyaltyAuditPath+"/?user="+ann.ID, ts.admin), http.StatusOK)

	// A read model that drifted from the log (changed behind the
	// projection's back) is reported as not matching.
	if _, err := ts.app.pool.Exec(context.Background(), `UPDATE loyalty_accounts SET balance = 90 WHERE id = $1`, ann.ID); err != nil {
		t.Fatal(err)
	}
	rep = ts.auditLoyalty(ts.admin, ann.ID, 0, 0)
	if m := rep.ReadModel; m == nil || m.Balance != 90 || !m.CaughtUp || m.Matches || rep.Balance != 85 || !rep.Consistent {
		t.Errorf("audit of a drifted read model: %+v (balance %d, consistent %v), want 90, caught up, not matching 85", m, rep.Balance, rep.Consistent)
	}
}

func hasAuditEntry(rep loyaltyAuditView, eventID string) bool {
	for _, e := range rep.Entries {
		if e.EventID == eventID {
			return true
		}
	}
	return false
}

func (ts *testServer) auditLoyalty(token, user string, from, to int64) loyaltyAuditView {
	ts.t.Helper()
	var rep loyaltyAuditView
	ts.mustJSON(ts.get(loyaltyAuditURL(user, from, to), token), http.StatusOK, &rep)
	return rep
}

// TestLoyaltyAuditCLI runs `cms audit loyalty` against the server's
// database: one line per event with the running balance, who, when and
// from where; the last line is the final balance, the read model's. It
// sets the environment, so it cannot run in parallel.
func TestLoyaltyAuditCLI(t *testing.T) {
	ts := startLoyaltyServer(t)
	sc := runLoyaltyAuditScenario(t, ts)
	ann := sc.ann
	ts.damage(ann.ID, sc.app.ID, 10, 100)
	ts.waitLoyaltyUser(t, ann.ID, 10*time.Second, func(u loyaltyUserView) bool { return u.TransactionCount == 3 })
	ts.rebalance(ts.admin, ann.ID)
	balance := ts.loyaltyUser(ts.admin, ann.ID).Balance
	t.Setenv("DATABASE_URL", ts.dbURL)
	t.Setenv("CMS_LOG_LEVEL", "error")

	out, err := captureStdout(t, func() error { return run([]string{"audit", "loyalty", "--user", ann.ID}) })
	if err != nil {
		t.Fatalf("cms audit loyalty: %v\n%s", err, out)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	last := lines[len(lines)-1]
	if !strings.HasPrefix(last, "Final balance: "+strconv.FormatInt(balance, 10)+" ") || !strings.Contains(last, "consistent") {
		t.Errorf("last line %q: want the final balance %d", last, balance)
	}
	if want := "; read model " + strconv.FormatInt(balance, 10) + ", caught up, matches"; !strings.HasSuffix(last, want) {
		t.Errorf("last line %q: want it to end with %q", last, want)
	}
	var rows []string
	for _, l := range lines {
		if f := strings.Fields(l); len(f) > 1 && (f[1] == "earn" || f[1] == "redeem" || f[1] == "correction") {
			rows = append(rows, l)
		}
	}
	if len(rows) != 4 {
		t.Fatalf("want 4 transaction lines (earn, redeem, earn, correction), got %d:\n%s", len(rows), out)
	}
	for i, want := range []struct{ amount, balance string }{{"100", "100"}, {"-30", "70"}, {"10", "80"}, {"0", "80"}} {
		f := strings.Fields(rows[i])
		if len(f) < 8 || f[3] != want.amount || f[4] != want.balance {
			t.Errorf("line %q: want amount %s, running balance %s", rows[i], want.amount, want.balance)
		}
	}
	if !strings.Contains(rows[0], "user:"+ts.adminID) || !strings.Contains(rows[0], "127.0.0.1") {
		t.Errorf("line %q: want by user:%s from 127.0.0.1", rows[0], ts.adminID)
	}

	// --from and --json.
	from := time.UnixMilli(sc.redeemAt).UTC().Format(time.RFC3339Nano)
	out, err = captureStdout(t, func() error {
		return run([]string{"audit", "loyalty", "--user", ann.ID, "--from", from, "--json"})
	})
	if err != nil {
		t.Fatalf("cms audit loyalty --json: %v\n%s", err, out)
	}
	var rep struct {
		Opening    int64
		Balance    int64
		Recorded   int64
		Consistent bool
		Entries    []struct{ Type string }
	}
	if err := json.NewDecoder(bytes.NewReader([]byte(out))).Decode(&rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if rep.Opening != 100 || rep.Balance != balance || rep.Recorded != balance || !rep.Consistent || len(rep.Entries) != 3 {
		t.Errorf("--from --json: %+v", rep)
	}

	// Refused flags.
	if _, err := captureStdout(t, func() error { return run([]string{"audit", "loyalty"}) }); err == nil {
		t.Errorf("audit loyalty without --user succeeded")
	}
	if _, err := captureStdout(t, func() error { return run([]string{"audit", "loyalty", "--user", ann.ID, "--to", "noon"}) }); err == nil {
		t.Errorf("audit loyalty with a bad --to succeeded")
	}
	if _, err := captureStdout(t, func() error { return run([]string{"audit", "loyalty", "--user", "identified-nosuchuser"}) }); err == nil {
		t.Errorf("audit loyalty of an unknown user succeeded")
	}
}
