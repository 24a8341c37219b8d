package appuser_test

import (
	"context"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/push"
	projappuser "github.com/halocms/halocms/projections/appuser"
	rmappuser "github.com/halocms/halocms/readmodels/appuser"
)

// BenchmarkDevicesSegment walks a tag segment of 100k app users (one
// device each) among 150k of the app and reports devices per second: one
// tag (partial) and two tags that must both match (total).
//
//	go test ./readmodels/appuser -run '^$' -bench DevicesSegment -benchtime 3x
func BenchmarkDevicesSegment(b *testing.B) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	pool := pgtest.Pool(b)
	if err := (projappuser.Projector{}).Create(ctx, pool, "public"); err != nil {
		b.Fatal(err)
	}
	// Rows as the projector writes them, made in bulk: 150k app users of
	// app a (two in three with the segment's tag), 50k of app b with it.
	if _, err := pool.Exec(ctx, `
INSERT INTO appusers (id, app, alias, created_at, updated_at)
SELECT lpad(to_hex(i), 24, '0'), CASE WHEN i <= 150000 THEN 'a' ELSE 'b' END, 'anonymous-' || i, 0, 0
FROM generate_series(1, 200000) i;
INSERT INTO appuser_devices (app_user_id, token, app, alias, platform)
SELECT id, md5(id) || md5(alias) || md5(id || alias), app, alias, 'android' FROM appusers;
INSERT INTO appuser_tags (app_user_id, app, tag_id, name, value)
SELECT id, app, md5(id || 'p'), 'Platform Name', CASE WHEN i % 3 = 0 AND app = 'a' THEN 'ios' ELSE 'android' END
FROM (SELECT id, app, row_number() OVER (ORDER BY id) i FROM appusers) x;
INSERT INTO appuser_tags (app_user_id, app, tag_id, name, value)
SELECT id, app, md5(id || 'v'), 'Application Version', '2.0.' || (length(id) % 7) FROM appusers;
ANALYZE appusers, appuser_devices, appuser_tags;`); err != nil {
		b.Fatal(err)
	}
	s := rmappuser.New(pool)
	for _, c := range []struct {
		name   string
		target push.Target
	}{
		{"partial", push.Target{Tags: []push.TagFilter{{Name: "platform name", Value: "android"}}, TagMode: push.Partial}},
		{"total", push.Target{Tags: []push.TagFilter{{Name: "Platform Name", Value: "android"}, {Name: "application version"}}, TagMode: push.Total}},
	} {
		b.Run(c.name, func(b *testing.B) {
			total := 0
			start := time.Now()
			for range b.N {
				n := 0
				if err := s.Devices(ctx, "a", c.target, push.DeviceKey{}, func(push.Device) error { n++; return nil }); err != nil {
					b.Fatal(err)
				}
				if n != 100000 {
					b.Fatalf("walked %d devices, want 100000", n)
				}
				total += n
			}
			b.ReportMetric(float64(total)/time.Since(start).Seconds(), "devices/s")
		})
	}
}
