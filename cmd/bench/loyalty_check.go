package main

// The loyalty phase's correctness check: sampled accounts as the server
// shows them against the bench's own sums.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/loyalty"
)

// checkSample waits until the projections have applied every event (a
// write answers after at most CMS_READ_YOUR_WRITES_TIMEOUT even when they
// lag), then checks the sampled accounts against the bench's sums; it
// returns the sample and the server's answers by account.
func (b *loyaltyBench) checkSample(ctx context.Context, store *postgres.EventStore, pool *pgxpool.Pool) ([]*loyaltyAccount, map[string][]byte, error) {
	head, err := store.Last(ctx)
	if err != nil {
		return nil, nil, err
	}
	t1 := time.Now()
	if _, err := waitProjections(ctx, pool, head); err != nil {
		return nil, nil, err
	}
	progressf("loyalty: the projections reached the log's last event %s after %s", head, time.Since(t1).Round(time.Millisecond))
	sample := b.sample()
	before, err := b.verify(ctx, pool, sample)
	if err != nil {
		return nil, nil, fmt.Errorf("before the rebuild: %w", err)
	}
	progressf("loyalty: %d sampled accounts' balances equal the bench's sums", len(sample))
	return sample, before, nil
}

// checkAfterRebuild checks the sample again after the rebuild, compares
// the answers with those of before, and puts the outcome in the header.
func (b *loyaltyBench) checkAfterRebuild(ctx context.Context, pool *pgxpool.Pool, sample []*loyaltyAccount, before map[string][]byte, res *results) error {
	after, err := b.verify(ctx, pool, sample)
	if err != nil {
		return fmt.Errorf("after the rebuild: %w", err)
	}
	same, diff := 0, ""
	for id, body := range before {
		if jsonEqual(body, after[id]) {
			same++
		} else if diff == "" {
			diff = fmt.Sprintf("; e.g. %s before %s, after %s", id, snippet(body, 300), snippet(after[id], 300))
		}
	}
	progressf("loyalty: after the rebuild the %d sampled balances still equal the bench's sums; %d of %d GET bodies equal to before%s",
		len(sample), same, len(sample), diff)
	res.header = append(res.header, fmt.Sprintf("loyalty check: %d sampled accounts (GET /api/loyalty/user/{id}): balance, earned, redeemed and transactionCount equal the bench's sums before and after the rebuild; %d of %d answers equal as JSON before and after%s",
		len(sample), same, len(sample), diff))
	return nil
}

// sample picks loyaltySample accounts (the same ones every run of a size).
func (b *loyaltyBench) sample() []*loyaltyAccount {
	r := rand.New(rand.NewPCG(42, 0x5a3b1e))
	perm := r.Perm(len(b.accounts))
	out := make([]*loyaltyAccount, 0, loyaltySample)
	for _, i := range perm[:min(loyaltySample, len(perm))] {
		out = append(out, b.accounts[i])
	}
	return out
}

// verify GETs each sampled account as admin and compares it with the
// bench's sums; it returns the answers by account.
func (b *loyaltyBench) verify(ctx context.Context, pool *pgxpool.Pool, sample []*loyaltyAccount) (map[string][]byte, error) {
	bodies := make(map[string][]byte, len(sample))
	var bad []string
	for _, acc := range sample {
		var raw []byte
		if err := b.api.call(ctx, http.MethodGet, "/api/loyalty/user/"+acc.id, b.admin, nil, http.StatusOK, &raw); err != nil {
			return nil, err
		}
		var u loyaltyUserView
		if err := json.Unmarshal(raw, &u); err != nil {
			return nil, fmt.Errorf("GET /api/loyalty/user/%s: %w (%s)", acc.id, err, snippet(raw, 300))
		}
		want := loyaltyUserView{ID: acc.id, Balance: acc.balance.Load(), Earned: acc.earned.Load(), Redeemed: acc.redeemed.Load(), TransactionCount: acc.count.Load()}
		if u != want {
			// What the log holds tells a lost write from a wrong read model.
			var logged, sum int64
			_ = pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(CASE event_type WHEN 'loyalty.points_earned' THEN (data->>'Amount')::bigint
				ELSE -(data->>'Amount')::bigint END), 0) FROM events WHERE stream_id = $1 AND event_type IN ('loyalty.points_earned', 'loyalty.points_redeemed')`,
				loyalty.AccountStream(acc.id)).Scan(&logged, &sum)
			bad = append(bad, fmt.Sprintf("%+v, want %+v (the log has %d points events adding up to %d)", u, want, logged, sum))
		}
		bodies[acc.id] = raw
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%d of %d sampled accounts differ from the bench's sums, e.g. %s", len(bad), len(sample), strings.Join(bad[:min(3, len(bad))], "; "))
	}
	return bodies, nil
}

func jsonEqual(a, b []byte) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}
