package analytics_test

import (
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/analytics"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/push"
	projanalytics "github.com/halocms/halocms/projections/analytics"
)

// reports are a day and a half of reports of two apps: devices that
// report several times, reports without a device, and an event of
// another context in between.
func reports() []event.Recorded {
	day := time.Date(2026, 11, 28, 22, 0, 0, 0, time.UTC)
	var out []event.Recorded
	for i := 0; i < 60; i++ {
		app := []string{"a1", "a2"}[i%2]
		device := ""
		if i%3 != 0 {
			device = fmt.Sprintf("identified:u%d", i%5)
		}
		at := day.Add(time.Duration(i) * 5 * time.Minute) // crosses midnight at i = 24
		out = append(out, event.Recorded{Type: "analytics.event_recorded",
			Data: analytics.Recorded{App: app, Device: device, Type: 1 + i%4, At: at, Extra: map[string]any{}}})
		if i == 30 {
			out = append(out, event.Recorded{Type: "push.cancelled", Data: push.Cancelled{ScheduleID: "s", App: app}})
		}
	}
	return out
}

// applyIn projects evs into fresh tables in batches of size n and
// returns their rows.
func applyIn(t *testing.T, evs []event.Recorded, n int) string {
	t.Helper()
	pool := pgtest.Project(t, projanalytics.Projector{}, evs, n)
	return pgtest.Lines(t, pool,
		`SELECT app || ' ' || day || ' ' || type || ' ' || events FROM analytics_daily_counts ORDER BY app, day, type`,
		`SELECT app || ' ' || day || ' ' || device FROM analytics_daily_devices ORDER BY app, day, device`)
}

// The counts per app, day and type sum every report; a device counts once
// a day; reports without a device count as events only; the tables are the
// same whatever the batches.
func TestProjectorCountsAndDevices(t *testing.T) {
	evs := reports()
	whole := applyIn(t, evs, len(evs))
	for _, n := range []int{1, 7} {
		if got := applyIn(t, evs, n); got != whole {
			t.Errorf("in batches of %d:\n%s\nin one:\n%s", n, got, whole)
		}
	}
	if want := expected(evs); whole != want {
		t.Errorf("tables:\n%s\nwant:\n%s", whole, want)
	}
	if !strings.Contains(whole, "a1 2026-11-29 ") || strings.Contains(whole, "a1 2026-11-28 \n") {
		t.Errorf("want both days, and no empty device:\n%s", whole)
	}
}

// expected is what the tables must hold, worked out from the reports.
func expected(evs []event.Recorded) string {
	counts := map[string]int{}
	devices := map[string]bool{}
	for _, r := range evs {
		e, ok := r.Data.(analytics.Recorded)
		if !ok {
			continue
		}
		day := e.At.Format(time.DateOnly)
		counts[fmt.Sprintf("%s %s %d", e.App, day, e.Type)]++
		if e.Device != "" {
			devices[e.App+" "+day+" "+e.Device] = true
		}
	}
	var c, d []string
	for k, n := range counts {
		c = append(c, fmt.Sprintf("%s %d", k, n))
	}
	for k := range devices {
		d = append(d, k)
	}
	slices.Sort(c)
	slices.Sort(d)
	return strings.Join(c, "\n") + "\n" + strings.Join(d, "\n") + "\n"
}
