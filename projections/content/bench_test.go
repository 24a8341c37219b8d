package content_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/content"
	"github.com/halocms/halocms/domain/event"
	projcontent "github.com/halocms/halocms/projections/content"
)

// BenchmarkApplyCreated measures the projector on what a batch import
// produces: batches of 1,000 ItemCreated events of a module with ten
// fields, into tables that already hold the previous batches.
//
//	go test ./projections/content -run XXX -bench ApplyCreated -benchtime 20x
func BenchmarkApplyCreated(b *testing.B) { benchApplyCreated(b, 1000) }

// BenchmarkApplySmallBatches measures what single creates over HTTP
// produce: batches of one and of eight items, each in its own
// transaction, so that the per-batch work (statements, round trips,
// commit) shows.
//
//	go test ./projections/content -run XXX -bench ApplySmallBatches -benchtime 2000x
func BenchmarkApplySmallBatches(b *testing.B) {
	for _, size := range []int{1, 8} {
		b.Run(fmt.Sprintf("items=%d", size), func(b *testing.B) { benchApplyCreated(b, size) })
	}
}

func benchApplyCreated(b *testing.B, size int) {
	ctx := context.Background()
	pool := pgtest.Pool(b)
	if err := (projcontent.Projector{}).Create(ctx, pool, "public"); err != nil {
		b.Fatal(err)
	}
	types := []string{"001", "001", "002", "006", "008", "012", "002", "009", "003", "001"}
	names := []string{"title", "category", "price", "releaseDate", "active", "body", "stock", "color", "url", "brand"}
	var fields []content.Field
	for i, t := range types {
		fields = append(fields, content.Field{ID: fmt.Sprintf("f%d", i), Name: names[i], Type: "000000000000000000000" + t})
	}
	var pos int64
	rec := func(data any) event.Recorded {
		pos++
		return event.Recorded{Position: event.Position{TxID: uint64(pos), Pos: pos}, Type: data.(interface{ EventType() string }).EventType(),
			Data: data, RecordedAt: time.Now()}
	}
	apply := func(evs []event.Recorded) {
		tx, err := pool.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := (projcontent.Projector{}).Apply(ctx, tx, "public", evs); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	apply([]event.Recorded{rec(content.ModuleCreated{ModuleID: "m1", App: "a1", Name: "Products", Fields: fields})})
	n := 0
	b.ResetTimer()
	for range b.N {
		evs := make([]event.Recorded, size)
		for i := range evs {
			n++
			evs[i] = rec(content.ItemCreated{ItemID: fmt.Sprintf("%024x", n), App: "a1", Module: "m1", Name: fmt.Sprintf("Product %d", n),
				Values: map[string]any{"title": fmt.Sprintf("Product %d road bike", n), "category": fmt.Sprintf("cat-%02d", n%20),
					"price": json.Number(fmt.Sprintf("%d.%02d", n%100000, n%100)), "releaseDate": json.Number("1600000000000"),
					"active": n%2 == 0, "body": "Lorem ipsum dolor sit amet, consectetur adipiscing elit, sed do eiusmod tempor incididunt ut labore et dolore magna aliqua. Ut enim ad minim veniam, quis nostrud exercitation ullamco laboris nisi ut aliquip ex ea commodo consequat. Duis aute irure dolor in reprehenderit in voluptate velit esse.",
					"stock": json.Number(fmt.Sprint(n % 1000)), "color": "#aabbcc", "url": fmt.Sprintf("https://example.com/p/%d", n), "brand": fmt.Sprintf("brand-%d", n%50)},
				PublishedAt: time.Now().Add(-time.Hour)})
			evs[i].StreamVersion = 1 // a new item's stream
		}
		apply(evs)
	}
	b.ReportMetric(float64(b.N*size)/b.Elapsed().Seconds(), "items/s")
}
