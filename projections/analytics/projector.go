// Package analytics projects the events apps report into daily figures:
// how many events of each type an app received each (UTC) day, and which
// devices were active on it.
package analytics

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/halocms/halocms/domain/analytics"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// Projector writes analytics_daily_counts (events per app, day and type)
// and analytics_daily_devices (one row per app, day and device that
// reported on it: the day's active devices). Reports with no device (an
// app token's) count as events only.
type Projector struct{}

var _ projections.Projector = Projector{}

// Handles reports that the projector uses the analytics events only.
func (Projector) Handles(eventType string) bool { return strings.HasPrefix(eventType, "analytics.") }

func (Projector) Name() string { return "analytics" }

func (Projector) Tables() []string {
	return []string{"analytics_daily_counts", "analytics_daily_devices"}
}

func (Projector) Create(ctx context.Context, db projections.DB, schema string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
CREATE TABLE %[1]s.analytics_daily_counts (
    app    text     NOT NULL,
    day    date     NOT NULL,
    type   smallint NOT NULL,
    events bigint   NOT NULL,
    PRIMARY KEY (app, day, type)
);
CREATE TABLE %[1]s.analytics_daily_devices (
    app    text NOT NULL,
    day    date NOT NULL,
    device text NOT NULL,
    PRIMARY KEY (app, day, device)
);`, schema))
	return err
}

type countKey struct {
	app, day string
	typ      int
}

type deviceKey struct{ app, day, device string }

// Apply adds a batch's reports to the tables in two statements, whatever
// the batch's size: the counts summed per app, day and type, the devices
// inserted once each.
func (Projector) Apply(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	counts := map[countKey]int64{}
	devices := map[deviceKey]struct{}{}
	for _, r := range events {
		e, ok := r.Data.(analytics.Recorded)
		if !ok || e.App == "" {
			continue
		}
		day := analytics.Day(e.At).Format("2006-01-02")
		counts[countKey{e.App, day, e.Type}]++
		if e.Device != "" {
			devices[deviceKey{e.App, day, e.Device}] = struct{}{}
		}
	}
	if len(counts) > 0 {
		keys := make([]countKey, 0, len(counts))
		for k := range counts {
			keys = append(keys, k)
		}
		// One order for every batch: concurrent writers (a rebuild has
		// none, but two runners briefly may) lock rows alike.
		sort.Slice(keys, func(i, j int) bool {
			a, b := keys[i], keys[j]
			if a.app != b.app {
				return a.app < b.app
			}
			if a.day != b.day {
				return a.day < b.day
			}
			return a.typ < b.typ
		})
		apps, days, types, ns := make([]string, len(keys)), make([]string, len(keys)), make([]int32, len(keys)), make([]int64, len(keys))
		for i, k := range keys {
			apps[i], days[i], types[i], ns[i] = k.app, k.day, int32(k.typ), counts[k]
		}
		t := schema + ".analytics_daily_counts"
		if _, err := db.Exec(ctx, `INSERT INTO `+t+` AS c (app, day, type, events)
			SELECT * FROM unnest($1::text[], $2::date[], $3::smallint[], $4::bigint[])
			ON CONFLICT (app, day, type) DO UPDATE SET events = c.events + excluded.events`, apps, days, types, ns); err != nil {
			return fmt.Errorf("analytics counts: %w", err)
		}
	}
	if len(devices) > 0 {
		apps, days, devs := make([]string, 0, len(devices)), make([]string, 0, len(devices)), make([]string, 0, len(devices))
		for k := range devices {
			apps, days, devs = append(apps, k.app), append(days, k.day), append(devs, k.device)
		}
		if _, err := db.Exec(ctx, `INSERT INTO `+schema+`.analytics_daily_devices (app, day, device)
			SELECT * FROM unnest($1::text[], $2::date[], $3::text[]) ON CONFLICT DO NOTHING`, apps, days, devs); err != nil {
			return fmt.Errorf("analytics devices: %w", err)
		}
	}
	return nil
}
