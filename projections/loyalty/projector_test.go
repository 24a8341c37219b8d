package loyalty_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
	projloyalty "github.com/halocms/halocms/projections/loyalty"
	"github.com/halocms/halocms/projections/loyalty/loyaltytest"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func setup(t *testing.T) (context.Context, *pgxpool.Pool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	t.Cleanup(cancel)
	pool := pgtest.Pool(t)
	if err := (projloyalty.Projector{}).Create(ctx, pool, "public"); err != nil {
		t.Fatalf("create tables: %v", err)
	}
	return ctx, pool
}

func apply(t *testing.T, ctx context.Context, pool *pgxpool.Pool, evs ...event.Recorded) {
	t.Helper()
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		return (projloyalty.Projector{}).Apply(ctx, tx, "public", evs)
	})
	if err != nil {
		t.Fatalf("apply %d events: %v", len(evs), err)
	}
}

// applyIn applies evs to fresh tables in batches of the given sizes.
func applyIn(t *testing.T, evs []event.Recorded, batches []int) (context.Context, *pgxpool.Pool) {
	t.Helper()
	ctx, pool := setup(t)
	for _, n := range batches {
		apply(t, ctx, pool, evs[:n]...)
		evs = evs[n:]
	}
	return ctx, pool
}

var dumps = []string{
	`SELECT row_to_json(x)::text FROM loyalty_accounts x ORDER BY id`,
	`SELECT row_to_json(x)::text FROM loyalty_transactions x ORDER BY account, version`,
	`SELECT row_to_json(x)::text FROM loyalty_lots x ORDER BY account, lot`,
	`SELECT row_to_json(x)::text FROM loyalty_cards x ORDER BY id`,
	`SELECT row_to_json(x)::text FROM loyalty_user_cards x ORDER BY id`,
}

func dump(t *testing.T, ctx context.Context, db *pgxpool.Pool) [][]string {
	t.Helper()
	out := make([][]string, len(dumps))
	for i, q := range dumps {
		out[i] = pgtest.Strings(t, db, q)
	}
	return out
}

func randomSim(seed uint64, accounts, steps int) *loyaltytest.Sim {
	s := loyaltytest.New(t0)
	s.Random(rand.New(rand.NewPCG(seed, 99)), accounts, steps)
	return s
}

// One batch or many small ones, the tables end up the same.
func TestOneBatchEqualsManySmallOnes(t *testing.T) {
	t.Parallel()
	log := randomSim(7, 25, 1500).Recorded()
	rng := rand.New(rand.NewPCG(1, 2))
	ctx, one := setup(t)
	apply(t, ctx, one, log...)
	_, many := setup(t)
	for rest := log; len(rest) > 0; {
		n := min(1+rng.IntN(40), len(rest))
		apply(t, ctx, many, rest[:n]...)
		rest = rest[n:]
	}
	a, b := dump(t, ctx, one), dump(t, ctx, many)
	for i := range dumps {
		if !slices.Equal(a[i], b[i]) {
			t.Errorf("%s: one batch and many differ (%d vs %d rows)", dumps[i], len(a[i]), len(b[i]))
			for j := range min(len(a[i]), len(b[i])) {
				if a[i][j] != b[i][j] {
					t.Errorf("first difference:\n one %s\nmany %s", a[i][j], b[i][j])
					break
				}
			}
		}
		if len(a[i]) == 0 {
			t.Errorf("%s: no rows; the log should exercise every table", dumps[i])
		}
	}
}

// want lists what the tables should hold after the simulation, as the
// rows of check's queries.
func want(s *loyaltytest.Sim, withTimes bool) (accounts, lots, cards, defs []string) {
	ms := func(at time.Time) string {
		if !withTimes {
			return "-"
		}
		return fmt.Sprint(at.UnixMilli())
	}
	for _, a := range s.Accounts {
		accounts = append(accounts, fmt.Sprintf("%s|%s|%d|%d|%d|%d|%d|%d|%d|%s", a.ID, a.App, a.Balance, a.Earned, a.Redeemed,
			a.Expired, a.Adjusted, a.Transactions, a.ActiveCards(), ms(a.UpdatedAt)))
		for _, l := range a.Lots {
			if l.ExpiresAt != nil {
				lots = append(lots, fmt.Sprintf("%s|%s|%d|%d", a.ID, l.ID, l.Remaining, l.ExpiresAt.UnixMilli()))
			}
		}
		for _, c := range a.Cards {
			cards = append(cards, fmt.Sprintf("%s|%s|%s|%s|%d/%d|%v|%v", c.ID, a.ID, c.Card, c.Reward, c.Stamps, c.Needed, c.Completed, c.Redeemed))
		}
	}
	for _, c := range s.Cards {
		defs = append(defs, fmt.Sprintf("%s|%s|%s|%s|%d|%s|%v", c.ID, c.App, c.Name, c.Description, c.Needed, c.Reward, c.Retired))
	}
	for _, x := range [][]string{accounts, lots, cards, defs} {
		sort.Strings(x)
	}
	return accounts, lots, cards, defs
}

func check(t *testing.T, ctx context.Context, db *pgxpool.Pool, s *loyaltytest.Sim, withTimes bool, when string) {
	t.Helper()
	ms := `(extract(epoch FROM updated_at) * 1000)::bigint::text`
	if !withTimes {
		ms = `'-'`
	}
	accounts, lots, cards, defs := want(s, withTimes)
	got := pgtest.Strings(t, db, `SELECT concat_ws('|', id, app, balance, earned, redeemed, expired, adjusted, transactions, active_cards, `+ms+`)
		FROM loyalty_accounts ORDER BY 1`)
	if !slices.Equal(got, accounts) {
		t.Errorf("%s: accounts\n got %v\nwant %v", when, got, accounts)
	}
	got = pgtest.Strings(t, db, `SELECT concat_ws('|', a.id, l.lot, l.remaining, (extract(epoch FROM l.expires_at) * 1000)::bigint)
		FROM loyalty_lots l JOIN loyalty_accounts a ON a.number = l.account ORDER BY 1`)
	if !slices.Equal(got, lots) {
		t.Errorf("%s: lots\n got %v\nwant %v", when, got, lots)
	}
	got = pgtest.Strings(t, db, `SELECT concat_ws('|', id, account, card, reward, stamps || '/' || needed, (completed_at IS NOT NULL)::text, (redeemed_at IS NOT NULL)::text)
		FROM loyalty_user_cards ORDER BY 1`)
	if !slices.Equal(got, cards) {
		t.Errorf("%s: user cards\n got %v\nwant %v", when, got, cards)
	}
	got = pgtest.Strings(t, db, `SELECT concat_ws('|', id, app, name, description, stamps_needed, reward, retired::text) FROM loyalty_cards ORDER BY 1`)
	if !slices.Equal(got, defs) {
		t.Errorf("%s: card definitions\n got %v\nwant %v", when, got, defs)
	}
	// Every account's transactions: as many as counted, the newest one's
	// balance is the account's, and the amounts add up to the sum of the
	// history (corrections have amount 0).
	got = pgtest.Strings(t, db, `SELECT concat_ws('|', a.id, count(t.*), sum(t.amount),
			(SELECT balance FROM loyalty_transactions l WHERE l.account = a.number ORDER BY version DESC LIMIT 1))
		FROM loyalty_accounts a JOIN loyalty_transactions t ON t.account = a.number GROUP BY a.id, a.number ORDER BY 1`)
	var txs []string
	for _, a := range s.Accounts {
		if a.Transactions > 0 {
			txs = append(txs, fmt.Sprintf("%s|%d|%d|%d", a.ID, a.Transactions, a.Sum(), a.Balance))
		}
	}
	sort.Strings(txs)
	if !slices.Equal(got, txs) {
		t.Errorf("%s: transactions per account\n got %v\nwant %v", when, got, txs)
	}
}

func TestTablesFollowTheHistory(t *testing.T) {
	t.Parallel()
	s := randomSim(3, 20, 1200)
	ctx, pool := setup(t)
	evs := s.Recorded()
	for rest := evs; len(rest) > 0; {
		n := min(97, len(rest))
		apply(t, ctx, pool, rest[:n]...)
		rest = rest[n:]
	}
	check(t, ctx, pool, s, true, "applied")

	// The kinds and signs of the transactions, and a correction's
	// previous balance.
	got := pgtest.Strings(t, pool, `SELECT DISTINCT kind || ':' || sign(amount) || ':' || (previous_balance IS NOT NULL) FROM loyalty_transactions ORDER BY 1`)
	wantKinds := []string{"adjust:-1:false", "adjust:1:false", "correction:0:true", "earn:1:false", "expire:-1:false", "redeem:-1:false"}
	if !slices.Equal(got, wantKinds) {
		t.Errorf("transaction kinds %v, want %v", got, wantKinds)
	}
	got = pgtest.Strings(t, pool, `SELECT DISTINCT created_by FROM loyalty_transactions`)
	if !slices.Equal(got, []string{"user:cms"}) {
		t.Errorf("created_by %v, want the actor of the events' metadata", got)
	}
}

// TestExpiryOfNothing: when the lots hold more points than the balance
// (a redemption that named none of them), a due lot can find nothing left
// in the balance; its expiry has amount 0, and the lot is gone all the
// same (it does not come due again).
func TestExpiryOfNothing(t *testing.T) {
	t.Parallel()
	s := loyaltytest.New(t0)
	due := t0.Add(time.Hour)
	lot := s.Earn("u1", "app1", 100, &due)
	s.DamageLots("u1", 100) // balance 0, the lot untouched
	s.Now = due
	if s.ExpireDue("u1") != 1 {
		t.Fatal("the lot is not due")
	}
	evs := s.Recorded()
	if e, ok := evs[len(evs)-1].Data.(loyalty.PointsExpired); !ok || e.Lot != lot || e.Amount != 0 || e.Balance != 0 {
		t.Fatalf("the last event %+v, want the lot's expiry of 0 points", evs[len(evs)-1].Data)
	}
	if _, ok := evs[len(evs)-2].Data.(loyalty.BalanceCorrected); ok {
		t.Fatal("a correction where the balances agree")
	}
	for _, batches := range [][]int{{len(evs)}, {len(evs) - 1, 1}} {
		ctx, pool := applyIn(t, evs, batches)
		check(t, ctx, pool, s, true, fmt.Sprintf("batches %v", batches))
		got := pgtest.Strings(t, pool, `SELECT concat_ws('|', kind, amount, balance) FROM loyalty_transactions ORDER BY version DESC LIMIT 1`)
		if !slices.Equal(got, []string{"expire|0|0"}) {
			t.Errorf("batches %v: the expiry's transaction %v, want expire|0|0", batches, got)
		}
	}
}

// TestCorrectionBeforeExpiry: on a damaged balance the expiry of a due
// lot is preceded by a correction in the same append; whether the two
// land in one batch or in two, the tables hold the correction, then the
// expiry of the lot's whole remainder from the corrected balance.
func TestCorrectionBeforeExpiry(t *testing.T) {
	t.Parallel()
	s := loyaltytest.New(t0)
	due := t0.Add(time.Hour)
	lot := s.Earn("u1", "app1", 100, &due)
	s.Damage("u1", 10, -60) // an earn of 10 that recorded 50
	s.Redeem("u1", 50)      // 50 of the expiring lot, balance 0 (the sum: 60)
	s.Now = due
	if s.ExpireDue("u1") != 1 {
		t.Fatal("the lot is not due")
	}
	evs := s.Recorded()
	n := len(evs)
	if c, ok := evs[n-2].Data.(loyalty.BalanceCorrected); !ok || c.Old != 0 || c.New != 60 {
		t.Fatalf("the event before the expiry %+v, want the correction 0 to 60", evs[n-2].Data)
	}
	if e, ok := evs[n-1].Data.(loyalty.PointsExpired); !ok || e.Lot != lot || e.Amount != 50 || e.Balance != 10 {
		t.Fatalf("the last event %+v, want the lot's expiry of 50 points, balance 10", evs[n-1].Data)
	}
	for _, batches := range [][]int{{n}, {n - 2, 2}, {n - 1, 1}, {n - 2, 1, 1}} {
		ctx, pool := applyIn(t, evs, batches)
		check(t, ctx, pool, s, true, fmt.Sprintf("batches %v", batches))
		got := pgtest.Strings(t, pool, `SELECT concat_ws('|', kind, amount, balance, previous_balance) FROM loyalty_transactions ORDER BY version DESC LIMIT 2`)
		if want := []string{"expire|-50|10", "correction|0|60|0"}; !slices.Equal(got, want) {
			t.Errorf("batches %v: the last transactions %v, want %v", batches, got, want)
		}
		got = pgtest.Strings(t, pool, `SELECT concat_ws('|', balance, expired) FROM loyalty_accounts`)
		if !slices.Equal(got, []string{"10|50"}) {
			t.Errorf("batches %v: the account's balance|expired %v, want 10|50", batches, got)
		}
	}
}

// TestRetiringADefinition: the open cards of a retired definition leave
// their accounts' active_cards, its completed cards stay, and cards of
// other definitions are untouched, whether the retirement comes in a
// batch of its own, with stamps of the same definition, or with
// everything.
func TestRetiringADefinition(t *testing.T) {
	t.Parallel()
	s := loyaltytest.New(t0)
	coffee := s.DefineCard("app1", "Coffee", 3, "coffee")
	bagel := s.DefineCard("app1", "Bagel", 3, "bagel")
	s.AddStamps("u1", "app1", coffee, 1) // open
	s.AddStamps("u2", "app1", coffee, 3) // completed
	s.AddStamps("u2", "app1", bagel, 1)  // open, another definition
	s.AddStamps("u3", "app1", coffee, 4) // completed, and one open
	before := len(s.Recorded())
	s.AddStamps("u4", "app1", coffee, 2) // open, in the retirement's batch
	s.RetireCard(coffee)
	evs := s.Recorded()
	n := len(evs)
	for _, batches := range [][]int{{n}, {n - 1, 1}, {before, n - before}, {before, n - before - 1, 1}} {
		ctx, pool := applyIn(t, evs, batches)
		check(t, ctx, pool, s, true, fmt.Sprintf("batches %v", batches))
		got := pgtest.Strings(t, pool, `SELECT concat_ws('|', id, active_cards) FROM loyalty_accounts ORDER BY id`)
		if want := []string{"u1|0", "u2|2", "u3|1", "u4|0"}; !slices.Equal(got, want) {
			t.Errorf("batches %v: active cards %v, want %v", batches, got, want)
		}
	}
}

// TestLiveAndRebuiltAgree appends a random history to the event store,
// lets the live projection apply it in small batches, checks the tables
// against the model, then rebuilds with verification.
func TestLiveAndRebuiltAgree(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool := pgtest.Pool(t)
	store := postgres.NewEventStore(pool, eventcodec.Default())
	defer store.Close()
	rt := projection.NewRuntime(pool, store, nil, nil, projection.Options{LiveBatchSize: 31}, projloyalty.Projector{})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rt.Run(rctx) }()
	defer func() { stop(); <-done }()

	s := randomSim(11, 15, 600)
	var last event.Position
	for _, ap := range s.Log {
		res, err := store.Append(ctx, ap.Stream, event.AnyVersion, ap.Wrapped()...)
		if err != nil {
			t.Fatal(err)
		}
		last = res.Last
	}
	if !rt.WaitForBound(ctx, time.Minute, last, "loyalty") {
		t.Fatal("the loyalty projection did not catch up")
	}
	check(t, ctx, pool, s, false, "live")
	before := dump(t, ctx, pool)

	res, err := rt.RebuildWith(ctx, "loyalty", projection.RebuildOptions{BatchSize: 113, Verify: true})
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if !res.Verified || res.Version != 2 {
		t.Fatalf("rebuild result %+v: want verified, version 2", res)
	}
	check(t, ctx, pool, s, false, "rebuilt")
	after := dump(t, ctx, pool)
	for i := range dumps {
		if !slices.Equal(before[i], after[i]) {
			t.Errorf("%s differs after the rebuild", dumps[i])
		}
	}
}
