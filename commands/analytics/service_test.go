package analytics_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	cmdanalytics "github.com/halocms/halocms/commands/analytics"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/analytics"
	"github.com/halocms/halocms/domain/fault"
)

// Sixteen reporters at once, on a real event store: every report is
// appended at the first attempt (no version conflict can happen), a
// device's reports of a day share one stream and keep their order, and an
// app token's reports spread over the app's streams of the day.
func TestRecordConcurrently(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool := pgtest.Pool(t)
	store := postgres.NewEventStore(pool, eventcodec.Default())
	t.Cleanup(store.Close)
	svc := cmdanalytics.NewService(store, ids.Generator{})
	rep, err := analytics.NewReport("1", "3,3", map[string]any{"k": "v"})
	if err != nil {
		t.Fatal(err)
	}
	const clients, each = 16, 20
	var wg sync.WaitGroup
	errs := make(chan error, clients*each)
	for c := 0; c < clients; c++ {
		actor := access.Actor{Kind: access.App, ID: "app1", App: "app1", ClientIP: "10.0.0.1"}
		if c%2 == 0 {
			actor = access.Actor{Kind: access.Identified, ID: fmt.Sprint("u", c%4), App: "app1"}
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			ctx := access.WithActor(ctx, actor)
			for i := 0; i < each; i++ {
				ev, err := svc.Record(ctx, rep)
				if err == nil && (ev.App != "app1" || ev.Device != cmdanalytics.DeviceOf(actor) || ev.Type != 1 || ev.Coord != "3,3") {
					err = fmt.Errorf("recorded %+v as %+v", ev, actor)
				}
				if err != nil {
					errs <- err
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	// Straight from the table: ReadAll shows only what every open
	// transaction of the server (other databases' included) lets it.
	rows, err := pool.Query(ctx, `SELECT stream_id, stream_version, event_type, data->>'Device', metadata->>'app' FROM events`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	streamsOf := map[string]map[string]bool{} // device → streams
	versions := map[string][]int64{}
	n := 0
	for rows.Next() {
		var stream, typ, device, app string
		var version int64
		if err := rows.Scan(&stream, &version, &typ, &device, &app); err != nil {
			t.Fatal(err)
		}
		n++
		if typ != "analytics.event_recorded" || !strings.HasPrefix(stream, "analytics-app1-") || app != "app1" {
			t.Errorf("%s in %s, app %q", typ, stream, app)
		}
		if streamsOf[device] == nil {
			streamsOf[device] = map[string]bool{}
		}
		streamsOf[device][stream] = true
		versions[stream] = append(versions[stream], version)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	if n != clients*each {
		t.Errorf("%d events, want %d", n, clients*each)
	}
	for d, ss := range streamsOf {
		if d != "" && len(ss) != 1 {
			t.Errorf("device %s in %d streams", d, len(ss))
		}
	}
	if len(streamsOf[""]) < 8 {
		t.Errorf("an app token's %d reports in %d streams only", clients/2*each, len(streamsOf[""]))
	}
	for s, vs := range versions {
		seen := map[int64]bool{}
		for _, v := range vs {
			seen[v] = true
		}
		for v := int64(1); v <= int64(len(vs)); v++ {
			if !seen[v] {
				t.Errorf("stream %s: versions %v, want 1 to %d", s, vs, len(vs))
				break
			}
		}
	}
}

// Only an app's token or an app user's reports: anyone else is refused,
// and nothing is appended.
func TestRecordRefused(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	store := postgres.NewEventStore(pool, eventcodec.Default())
	t.Cleanup(store.Close)
	svc := cmdanalytics.NewService(store, ids.Generator{})
	rep, _ := analytics.NewReport("2", "", nil)
	for _, c := range []struct {
		actor access.Actor
		kind  fault.Kind
	}{
		{access.Actor{}, fault.Unauthenticated},
		{access.Actor{Kind: access.User, ID: "u1", Admin: true}, fault.Forbidden},
		{access.SystemActor, fault.Forbidden},
	} {
		if _, err := svc.Record(access.WithActor(ctx, c.actor), rep); !fault.Is(err, c.kind) {
			t.Errorf("%s: %v, want %s", c.actor.Label(), err, c.kind)
		}
	}
	if _, err := svc.Record(access.WithActor(ctx, access.Actor{Kind: access.App, ID: "a", App: "a"}), analytics.Report{}); !fault.Is(err, fault.Invalid) {
		t.Errorf("a report without a type: %v", err)
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&n); err != nil || n != 0 {
		t.Errorf("refused reports appended: %d (%v)", n, err)
	}
}
