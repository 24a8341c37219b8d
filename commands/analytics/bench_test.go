package analytics_test

import (
	"context"
	"runtime"
	"testing"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	cmdanalytics "github.com/halocms/halocms/commands/analytics"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/analytics"
)

// BenchmarkRecord: reports from 16 goroutines at once, each one append of
// its own (durable) transaction.
func BenchmarkRecord(b *testing.B) {
	ctx := context.Background()
	store := postgres.NewEventStore(pgtest.Pool(b), eventcodec.Default())
	b.Cleanup(store.Close)
	svc := cmdanalytics.NewService(store, ids.Generator{})
	rep, _ := analytics.NewReport("1", "3,3", map[string]any{"screen": "home"})
	actx := access.WithActor(ctx, access.Actor{Kind: access.App, ID: "app1", App: "app1", ClientIP: "10.0.0.1"})
	par := max(1, 16/runtime.GOMAXPROCS(0)) // 16 goroutines in all
	b.SetParallelism(par)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := svc.Record(actx, rep); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
