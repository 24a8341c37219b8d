package loyalty_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
	projloyalty "github.com/halocms/halocms/projections/loyalty"
	"github.com/halocms/halocms/projections/loyalty/loyaltytest"
)

const benchAccounts = 10_000

// BenchmarkApplyEarned measures Apply alone on batches of 5,000
// PointsEarned (a rebuild's batch) over 10,000 accounts picked at random
// for every event (the worst case for folding per account), one in five
// with an expiry, into tables that already hold the previous batches.
//
//	go test ./projections/loyalty -run '^$' -bench ApplyEarned -benchtime 200x   # 1M events
func BenchmarkApplyEarned(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.Pool(b)
	if err := (projloyalty.Projector{}).Create(ctx, pool, "public"); err != nil {
		b.Fatal(err)
	}
	var pos int64
	versions := make([]int64, benchAccounts)
	balances := make([]int64, benchAccounts)
	rec := func(account int, data any) event.Recorded {
		pos++
		versions[account]++
		return event.Recorded{Position: event.Position{TxID: uint64(pos), Pos: pos}, StreamVersion: versions[account],
			Type: data.(interface{ EventType() string }).EventType(), Data: data, RecordedAt: time.Now(),
			Meta: event.Metadata{Actor: "user:bench", EventID: fmt.Sprintf("00000000-0000-7000-8000-%012d", pos)}}
	}
	apply := func(evs []event.Recorded) {
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			return (projloyalty.Projector{}).Apply(ctx, tx, "public", evs)
		}); err != nil {
			b.Fatal(err)
		}
	}
	opened := make([]event.Recorded, benchAccounts)
	for i := range opened {
		opened[i] = rec(i, loyalty.AccountOpened{Account: fmt.Sprintf("%024x", i), App: "app"})
	}
	apply(opened)
	rng := rand.New(rand.NewPCG(1, 2))
	expiry := time.Now().AddDate(1, 0, 0)
	const size = projection.DefaultRebuildBatchSize
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		b.StopTimer()
		evs := make([]event.Recorded, size)
		for i := range evs {
			a := rng.IntN(benchAccounts)
			amount := 1 + rng.Int64N(100)
			balances[a] += amount
			e := loyalty.PointsEarned{Account: fmt.Sprintf("%024x", a), App: "app", Transaction: fmt.Sprintf("%024x", pos+1),
				Amount: amount, Balance: balances[a], Reason: "purchase", Reference: "receipt-" + strconv.FormatInt(pos, 10),
				IdempotencyKey: fmt.Sprintf("%024x", pos+1)}
			if pos%5 == 0 {
				at := expiry.Add(time.Duration(pos) * time.Second)
				e.ExpiresAt = &at
			}
			evs[i] = rec(a, e)
		}
		b.StartTimer()
		apply(evs)
	}
	b.ReportMetric(float64(b.N*size)/time.Since(start).Seconds(), "events/s")
}

// BenchmarkRebuild measures what `cms projections rebuild loyalty` does:
// Runtime.RebuildWith replaying a log read from the event store (read,
// decode, apply, checkpoint). The log holds LOYALTY_BENCH_EVENTS events
// (1,000,000 if unset) over 10,000 accounts, appended as live traffic
// would: each append one account's transaction, accounts interleaved (500
// appends per AppendMulti). About 90% are earns (one in five with an
// expiry a year ahead), 10% redemptions taking lots. Building the log
// takes a while and is not timed. LOYALTY_BENCH_BATCH sets the rebuild's
// batch size (projection.DefaultRebuildBatchSize if unset).
//
//	go test ./projections/loyalty -run '^$' -bench Rebuild -benchtime 1x -timeout 30m
func BenchmarkRebuild(b *testing.B) {
	n := 1_000_000
	if v := os.Getenv("LOYALTY_BENCH_EVENTS"); v != "" {
		var err error
		if n, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	batch := 0
	if v := os.Getenv("LOYALTY_BENCH_BATCH"); v != "" {
		var err error
		if batch, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	pool := pgtest.Pool(b)
	store := postgres.NewEventStore(pool, eventcodec.Default())
	defer store.Close()
	rt := projection.NewRuntime(pool, store, nil, nil, projection.Options{}, projloyalty.Projector{})
	if err := rt.Setup(ctx); err != nil {
		b.Fatal(err)
	}

	s := loyaltytest.New(time.Now())
	rng := rand.New(rand.NewPCG(3, 4))
	expiry := time.Now().AddDate(1, 0, 0)
	events := 0
	fill := time.Now()
	for events < n {
		var appends []event.StreamAppend
		for range 500 {
			id := fmt.Sprintf("%024x", rng.IntN(benchAccounts))
			a := s.Accounts[id]
			switch {
			case a != nil && rng.IntN(10) == 0 && a.Balance > 0:
				s.Redeem(id, 1+rng.Int64N(min(a.Balance, 300)))
			case rng.IntN(5) == 0:
				at := expiry.Add(time.Duration(rng.IntN(1e6)) * time.Second)
				s.Earn(id, "app", 1+rng.Int64N(100), &at)
			default:
				s.Earn(id, "app", 1+rng.Int64N(100), nil)
			}
		}
		for _, ap := range s.Log {
			appends = append(appends, event.StreamAppend{Stream: ap.Stream, ExpectedVersion: event.AnyVersion, Events: ap.Wrapped()})
			events += len(ap.Events)
		}
		s.Log = s.Log[:0]
		if _, err := store.AppendMulti(ctx, appends...); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("log of %d events appended in %s", events, time.Since(fill).Round(time.Second))
	if _, err := pool.Exec(ctx, `VACUUM ANALYZE events`); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	var took time.Duration
	for range b.N {
		res, err := rt.RebuildWith(ctx, "loyalty", projection.RebuildOptions{BatchSize: batch})
		if err != nil {
			b.Fatal(err)
		}
		if res.Events != int64(events) {
			b.Fatalf("rebuild replayed %d events, the log holds %d", res.Events, events)
		}
		took += res.Took
	}
	b.ReportMetric(float64(events)*float64(b.N)/took.Seconds(), "events/s")
}
