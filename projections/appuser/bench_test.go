package appuser_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	projappuser "github.com/halocms/halocms/projections/appuser"
)

// BenchmarkApplyCreated measures the projector on what SDK registrations
// produce: batches of 1,000 appuser.created events, each with one push
// token and the 12 system tags and a user tag Android sends, into tables
// that already hold the previous batches.
//
//	go test ./projections/appuser -run '^$' -bench ApplyCreated -benchtime 20x
func BenchmarkApplyCreated(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.Pool(b)
	if err := (projappuser.Projector{}).Create(ctx, pool, "public"); err != nil {
		b.Fatal(err)
	}
	var pos int64
	batch := func() []event.Recorded {
		evs := make([]event.Recorded, 1000)
		for i := range evs {
			pos++
			id := fmt.Sprintf("%024x", pos)
			tags := make([]appuser.Tag, 13)
			for j := range 12 {
				tags[j] = appuser.Tag{ID: fmt.Sprintf("%s%02d", id[:22], j), Name: fmt.Sprint("System tag ", j), Value: fmt.Sprint(pos % 7), TagType: appuser.SystemTag}
			}
			tags[12] = appuser.Tag{ID: id[:22] + "99", Name: "segment", Value: fmt.Sprint(pos % 3), TagType: appuser.UserTag}
			evs[i] = event.Recorded{Position: event.Position{TxID: uint64(pos), Pos: pos}, Type: "appuser.created", RecordedAt: time.Now(),
				Data: appuser.Created{AppUserID: id, App: "app", Alias: "anonymous-" + id,
					Devices: []appuser.Device{{Platform: appuser.Android, Token: "token-" + id}}, Tags: tags}}
		}
		return evs
	}
	b.ResetTimer()
	start := time.Now()
	for range b.N {
		b.StopTimer()
		evs := batch()
		b.StartTimer()
		tx, err := pool.Begin(ctx)
		if err != nil {
			b.Fatal(err)
		}
		if err := (projappuser.Projector{}).Apply(ctx, tx, "public", evs); err != nil {
			b.Fatal(err)
		}
		if err := tx.Commit(ctx); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*1000)/time.Since(start).Seconds(), "events/s")
}
