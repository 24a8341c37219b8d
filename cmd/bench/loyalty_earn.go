package main

// The loyalty phase's earns over HTTP: one earn, and a fixed number of
// them by concurrent clients.

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

type loyaltyTxView struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Amount int64  `json:"amount"`
}

type loyaltyUserView struct {
	ID               string `json:"id"`
	Balance          int64  `json:"balance"`
	Earned           int64  `json:"earned"`
	Redeemed         int64  `json:"redeemed"`
	TransactionCount int64  `json:"transactionCount"`
}

// earn posts one earn with a key of its own and adds it to acc's sums
// once the server accepted it (201).
func (b *loyaltyBench) earn(ctx context.Context, acc *loyaltyAccount, amount int64) error {
	ctx, cancel := context.WithTimeout(ctx, loyaltyRequestLimit)
	defer cancel()
	key := fmt.Sprintf("bench-%s-%d", b.run, b.keys.Add(1))
	var out struct {
		Balance     int64         `json:"balance"`
		Transaction loyaltyTxView `json:"transaction"`
	}
	err := b.api.call(ctx, http.MethodPost, "/api/loyalty/user/"+acc.id+"/earn", b.admin,
		map[string]any{"amount": amount, "reason": "bench earn", "idempotencyKey": key}, http.StatusCreated, &out)
	if err != nil {
		return err
	}
	if out.Transaction.Amount != amount || out.Transaction.ID == "" || out.Balance < amount {
		return fmt.Errorf("earn %d on %s: answer balance %d, transaction %+v", amount, acc.id, out.Balance, out.Transaction)
	}
	acc.earn(amount)
	return nil
}

// measureEarns makes -loyalty-earns earns on random accounts by
// loyaltyClients clients and reports their rate and latency.
func (b *loyaltyBench) measureEarns(ctx context.Context, srv *cmsServer, pool *pgxpool.Pool, res *results) error {
	progressf("loyalty: %d earns over HTTP by %d clients; %d other active sessions on the server", b.cfg.loyaltyEarns, loyaltyClients, otherSessions(ctx, pool))
	cpu0 := srv.cpuSeconds()
	st, err := runFixed(ctx, loyaltyClients, b.cfg.loyaltyEarns, func(ctx context.Context, r *rand.Rand) error {
		return b.earn(ctx, b.accounts[r.IntN(len(b.accounts))], 1+r.Int64N(100))
	})
	if err != nil {
		return fmt.Errorf("earn: %w", err)
	}
	res.add(figure{name: "loyalty earn over HTTP, commands/s", value: st.rate(), unit: "commands/s",
		detail: fmt.Sprintf("%d POST .../earn (201 each, own idempotencyKey, random accounts) by %d clients in %.1fs; latency p50 %s, p99 %s, max %s; server CPU %.2f cores",
			st.ops, loyaltyClients, st.elapsed.Seconds(), ms2(st.pct(0.5)), ms2(st.pct(0.99)), ms2(st.pct(1)),
			(srv.cpuSeconds()-cpu0)/st.elapsed.Seconds())})
	res.add(figure{name: "loyalty earn p99 ms", value: ms(st.pct(0.99)), unit: "ms", decimals: 1,
		detail: fmt.Sprintf("p50 %s", ms2(st.pct(0.5)))})
	return nil
}

// runFixed makes n calls of f by clients concurrent clients (each with
// its own random source) and times each; the first error stops them all.
func runFixed(ctx context.Context, clients, n int, f func(ctx context.Context, r *rand.Rand) error) (appendStats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		lats     = make([][]time.Duration, clients)
	)
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 0xea2))
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				t0 := time.Now()
				if err := f(ctx, r); err != nil {
					mu.Lock()
					if firstErr == nil && ctx.Err() == nil {
						firstErr = fmt.Errorf("client %d: %w", c, err)
					}
					mu.Unlock()
					cancel()
					return
				}
				lats[c] = append(lats[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return appendStats{}, firstErr
	}
	if err := ctx.Err(); err != nil {
		return appendStats{}, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	return appendStats{writers: clients, ops: int64(len(all)), elapsed: elapsed, latencies: all}, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
