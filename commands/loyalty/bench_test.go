package loyalty_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/commands"
	cmdloyalty "github.com/halocms/halocms/commands/loyalty"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
	rmrights "github.com/halocms/halocms/readmodels/rights"
)

// noWait answers read-your-writes at once: the benchmark measures the
// command (load, decide, append), not the projection behind it.
type noWait struct{}

func (noWait) WaitFor(context.Context, event.Position, ...string) bool { return true }

// BenchmarkEarnLongHistory: Earn on an account that holds 1,000
// transactions already, with the account-state cache (each command reads
// only the events since the cached version), without it but with
// snapshots (each command restores the account's last snapshot and folds
// the events after it: at most DefaultSnapshotEvery), and with neither
// (each command folds the whole stream).
//
//	go test -run '^$' -bench EarnLongHistory ./commands/loyalty
func BenchmarkEarnLongHistory(b *testing.B) {
	for _, c := range []struct {
		name    string
		entries int
		snaps   bool
	}{{"cache", 0, false}, {"snapshots", -1, true}, {"neither", -1, false}} {
		b.Run(c.name, func(b *testing.B) {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
			defer cancel()
			pool := pgtest.Pool(b)
			store := postgres.NewEventStore(pool, eventcodec.Default())
			defer store.Close()
			if _, err := store.Append(ctx, appuser.IdentifiedStream("ann"), event.NoStream, event.Event{
				Data: appuser.IdentifiedRegistered{IdentifiedID: "ann", App: "app1", Email: "ann@example.com", Network: "halo"}}); err != nil {
				b.Fatal(err)
			}
			// 1,000 prior transactions, decided by the domain, appended at once.
			a := loyalty.NewAccount("ann", "app1")
			var evs []any
			gen := ids.Generator{}
			for i := range 1000 {
				var d loyalty.Decision
				var err error
				if i%4 == 3 {
					d, err = a.Redeem(loyalty.Points{Amount: 5, Reason: "shop"}, time.Now(), gen.NewID)
				} else {
					d, err = a.Earn(loyalty.Points{Amount: 10, Reason: fmt.Sprintf("order %d", i)}, time.Now(), gen.NewID)
				}
				if err != nil {
					b.Fatal(err)
				}
				for _, e := range d.Events {
					a.Apply(e)
				}
				evs = append(evs, d.Events...)
			}
			if _, err := store.Append(ctx, loyalty.AccountStream("ann"), event.NoStream, commands.Wrap(ctx, evs...)...); err != nil {
				b.Fatal(err)
			}
			opts := cmdloyalty.Options{CacheEntries: c.entries}
			if c.snaps {
				opts.Snapshots = postgres.NewLoyaltySnapshots(pool)
			}
			svc := cmdloyalty.NewService(store, gen, rmrights.NewAuthorizer(pool), noWait{}, opts)
			actx := as(ctx, admin)
			if _, err := svc.Earn(actx, "ann", cmdloyalty.Points{Amount: 1, Reason: "test"}); err != nil { // warm up
				b.Fatal(err)
			}
			start := time.Now()
			for b.Loop() {
				if _, err := svc.Earn(actx, "ann", cmdloyalty.Points{Amount: 1, Reason: "bench"}); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "commands/s")
		})
	}
}
