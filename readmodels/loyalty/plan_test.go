package loyalty

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	projappuser "github.com/halocms/halocms/projections/appuser"
	projloyalty "github.com/halocms/halocms/projections/loyalty"
)

// bulk fills the tables as the projectors lay them out: accounts identified
// users of app "a" (id "u<n>"), each with perAccount transactions, a lot
// with an expiry for every fifth one and a stamp card.
func bulk(tb testing.TB, accounts, perAccount int) *pgxpool.Pool {
	tb.Helper()
	ctx := context.Background()
	pool := pgtest.Pool(tb)
	if err := (projappuser.Projector{}).Create(ctx, pool, "public"); err != nil {
		tb.Fatal(err)
	}
	if err := (projloyalty.Projector{}).Create(ctx, pool, "public"); err != nil {
		tb.Fatal(err)
	}
	for _, sql := range []string{
		`INSERT INTO appuser_identified (id, app, email, name, created_at)
		 SELECT 'u' || g, 'a', 'u' || g || '@example.com', 'User ' || g, 1700000000000 + g FROM generate_series(1, $1) g`,
		`INSERT INTO loyalty_accounts (id, number, app, balance, earned, redeemed, expired, adjusted, transactions, active_cards, updated_at)
		 SELECT 'u' || g, g, 'a', 100 * $2, 100 * $2, 0, 0, 0, $2, 1, now() FROM generate_series(1, $1) g`,
		`INSERT INTO loyalty_transactions (account, version, id, kind, amount, balance, reason, reference, idempotency_key,
			created_by, created_at)
		 SELECT a, v + 1, lpad(to_hex(a * 100000 + v), 24, '0'), 'earn', 100, 100 * v, 'purchase', 'receipt', lpad(to_hex(a * 100000 + v), 24, '0'),
			'user:0123456789abcdef01234567', now()
		 FROM generate_series(1, $1) a, generate_series(1, $2) v`,
		`INSERT INTO loyalty_lots (account, lot, remaining, expires_at)
		 SELECT a, lpad(to_hex(a * 100000 + v), 24, '0'), 100, now() + (a + v) * interval '1 hour'
		 FROM generate_series(1, $1) a, generate_series(1, $2, 5) v`,
		`INSERT INTO loyalty_cards (id, app, name, description, stamps_needed, reward, retired, created_at, updated_at)
		 VALUES ('c1', 'a', 'Coffee', '', 10, 'coffee', false, now(), now())`,
		`INSERT INTO loyalty_user_cards (id, account, card, app, reward, stamps, needed, created_at, updated_at)
		 SELECT 'uc' || g, 'u' || g, 'c1', 'a', 'coffee', g % 10, 10, now(), now() FROM generate_series(1, $1) g`,
	} {
		args := []any{accounts, perAccount}
		if !strings.Contains(sql, "$2") {
			args = args[:1]
		}
		if !strings.Contains(sql, "$1") {
			args = nil
		}
		if _, err := pool.Exec(ctx, sql, args...); err != nil {
			tb.Fatal(err)
		}
	}
	for _, t := range []string{"appuser_identified", "loyalty_accounts", "loyalty_transactions", "loyalty_lots", "loyalty_user_cards"} {
		if _, err := pool.Exec(ctx, `VACUUM ANALYZE `+t); err != nil {
			tb.Fatal(err)
		}
	}
	return pool
}

// TestAccountIsIndexLookups checks the plans of the account view's
// queries on 1,000 accounts of 100 transactions: index scans only, the
// recent transactions a backward range that stops after 10 rows, the
// soonest expiry from the account's lots (see nextExpiry).
func TestAccountIsIndexLookups(t *testing.T) {
	t.Parallel()
	pool := bulk(t, 1_000, 100)
	ctx := context.Background()
	for name, q := range map[string]string{"account": accountQuery, "recent": recentQuery, "cards": cardsQuery} {
		rows, err := pool.Query(ctx, "EXPLAIN "+q, "u777")
		if err != nil {
			t.Fatal(err)
		}
		var plan []string
		for rows.Next() {
			var l string
			if err := rows.Scan(&l); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, l)
		}
		rows.Close()
		p := strings.Join(plan, "\n")
		if strings.Contains(p, "Seq Scan") || strings.Contains(p, "Bitmap Heap Scan on loyalty_transactions") {
			t.Errorf("%s query scans a table:\n%s", name, p)
		}
		if name == "account" && strings.Contains(p, "expires_at IS NOT NULL") {
			t.Errorf("the soonest expiry walks the lots' date index (min() as ORDER BY expires_at LIMIT 1):\n%s", p)
		}
		if name == "recent" && (!strings.Contains(p, "Index Scan Backward using loyalty_transactions_pkey") || strings.Contains(p, "Sort")) {
			t.Errorf("recent transactions should be a backward index range without a sort:\n%s", p)
		}
	}
	s := New(pool)
	v, err := s.Account(ctx, "u777")
	if err != nil {
		t.Fatal(err)
	}
	if len(v.Recent) != 10 || v.Recent[0].Balance != 100*100 || v.NextExpiry == nil || len(v.Cards) != 1 {
		t.Errorf("account view %+v", v)
	}
}

// BenchmarkAccount measures the account view (what `self` answers) of
// random accounts among 10,000 with 100 transactions each (1M
// transactions), one caller at a time.
//
//	go test ./readmodels/loyalty -run '^$' -bench Account -benchtime 5000x
func BenchmarkAccount(b *testing.B) {
	pool := bulk(b, 10_000, 100)
	s := New(pool)
	ctx := context.Background()
	var worst time.Duration
	b.ResetTimer()
	for i := range b.N {
		start := time.Now()
		if _, err := s.Account(ctx, fmt.Sprint("u", 1+(i*7919)%10_000)); err != nil {
			b.Fatal(err)
		}
		worst = max(worst, time.Since(start))
	}
	b.ReportMetric(float64(worst.Microseconds()), "max-µs")
}
