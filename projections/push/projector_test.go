package push_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/push"
	projpush "github.com/halocms/halocms/projections/push"
	rmpush "github.com/halocms/halocms/readmodels/push"
)

// TestLiveAndRebuiltEqualTheDomainFold appends random schedule histories
// (scheduled, edited, dispatched in batches with pending devices, cancelled,
// deleted) and device activity with repeated reports, lets the live
// projection apply them in small batches, checks every row against the
// domain's fold and the distinct activity, then rebuilds with
// verification.
func TestLiveAndRebuiltEqualTheDomainFold(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	pool := pgtest.Pool(t)
	store := postgres.NewEventStore(pool, eventcodec.Default())
	defer store.Close()
	rt := projection.NewRuntime(pool, store, nil, nil, projection.Options{LiveBatchSize: 29}, projpush.Projector{})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rt.Run(rctx) }()
	defer func() { stop(); <-done }()

	rng := rand.New(rand.NewPCG(3, 4))
	now := time.Now()
	want := map[string]push.Schedule{}
	activity := map[string]map[string]bool{} // schedule -> "alias/action"
	var last event.Position
	appendTo := func(stream string, evs ...any) {
		t.Helper()
		wrapped := make([]event.Event, len(evs))
		for i, e := range evs {
			wrapped[i] = event.Event{Data: e}
		}
		res, err := store.Append(ctx, stream, event.AnyVersion, wrapped...)
		if err != nil {
			t.Fatal(err)
		}
		last = res.Last
	}
	must := func(evs []any, err error) []any {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return evs
	}
	for i := 0; i < 25; i++ {
		id := fmt.Sprintf("s%02d", i)
		app := fmt.Sprintf("app%d", i%3)
		spec := push.Spec{Name: fmt.Sprintf("Push %d %s", i, []string{"Sale", "News", "sale_2"}[i%3]),
			Target:       push.Target{Tags: []push.TagFilter{{Name: "lang", Value: "de"}}},
			Notification: push.Notification{Title: "T", Extra: map[string]any{"n": 12345678901234567}},
			SendOn:       now.Add(time.Duration(i) * time.Minute)}
		s := push.Schedule{}
		apply := func(evs []any) {
			appendTo(push.Stream(id), evs...)
			for _, e := range evs {
				s = s.Apply(e)
			}
		}
		apply(must(push.NewSchedule(s, id, app, spec, now)))
		if rng.IntN(2) == 0 {
			spec.Name += " (edited)"
			apply(must(s.Edit(spec, now)))
		}
		switch rng.IntN(4) {
		case 0:
			apply(must(s.Cancel()))
		case 1, 2:
			apply(must(s.StartDispatch("d", spec.SendOn)))
			for b := 0; b < 1+rng.IntN(4); b++ {
				var ds []push.Delivery
				for j := 0; j < 1+rng.IntN(30); j++ {
					o := []push.Outcome{push.Delivered, push.Delivered, push.Failed, push.InvalidToken, push.Retry}[rng.IntN(5)]
					ds = append(ds, push.Delivery{AppUserID: fmt.Sprintf("u%03d-%03d", b, j), Token: "t", Outcome: o, Attempts: 1})
				}
				apply(must(s.Record(ds)))
			}
			if len(s.Pending) > 0 { // resume: the pending devices get their final outcome
				apply(must(s.StartDispatch("d2", spec.SendOn)))
				var ds []push.Delivery
				for _, p := range s.Pending {
					p.Outcome = push.Delivered
					ds = append(ds, p)
				}
				apply(must(s.Record(ds)))
			}
			if rng.IntN(3) > 0 {
				apply(must(s.Finish()))
			}
		}
		if rng.IntN(5) == 0 && s.Status != push.StatusDispatching {
			apply(must(s.Delete()))
		}
		want[id] = s
		activity[id] = map[string]bool{}
		for j := 0; j < rng.IntN(40); j++ {
			alias := fmt.Sprintf("alias-%d", rng.IntN(8))
			action := []string{"receipt", "open", "dismiss"}[rng.IntN(3)]
			appendTo(push.ActivityStream(id), must(push.NewActivity(id, app, alias, action, "android"))...)
			activity[id][alias+"/"+action] = true
		}
	}
	if !rt.WaitForBound(ctx, time.Minute, last, "push") {
		t.Fatal("the push projection did not catch up")
	}
	check := func(when string) {
		t.Helper()
		got := rows(t, ctx, pool)
		var wantRows []string
		for id, s := range want {
			counts := map[string]int{}
			for k := range activity[id] {
				_, action, _ := strings.Cut(k, "/")
				counts[action]++
			}
			wantRows = append(wantRows, fmt.Sprintf("%s|%s|%s|%s|%d|%d/%d/%d|%d/%d/%d", id, s.App, s.Name, s.Status,
				s.SendOn.UnixMilli(), s.Sent, s.Failed, s.Invalid, counts["receipt"], counts["open"], counts["dismiss"]))
		}
		sort.Strings(wantRows)
		if !slices.Equal(got, wantRows) {
			t.Fatalf("%s projection differs from the domain fold:\n got %v\nwant %v", when, got, wantRows)
		}
	}
	check("live")

	// The read model's search: by name, case-insensitively, the LIKE
	// wildcards taken literally; deleted schedules left out.
	rm := rmpush.NewStore(pool)
	page, err := rm.Search(ctx, rmpush.Query{AllApps: true, Name: "SALE", Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range page.Items {
		if w := want[s.ID]; w.Status == push.StatusDeleted || !containsFold(s.Name, "sale") {
			t.Errorf("search SALE found %s %q (%s)", s.ID, s.Name, w.Status)
		}
	}
	if page.Total != len(page.Items) || page.Total == 0 {
		t.Fatalf("search SALE: total %d, %d items", page.Total, len(page.Items))
	}
	if n := len(under(t, ctx, rm, "e_2").Items); n == 0 {
		t.Error("search e_2 found nothing; the sale_2 schedules contain it")
	}
	// "h_1" as a pattern would match "Push 1…"; literally it is in no name.
	if p := under(t, ctx, rm, "h_1"); len(p.Items) != 0 || p.Total != 0 {
		t.Errorf("search h_1 found %d (total %d): the underscore was a wildcard", len(p.Items), p.Total)
	}
	if sc, err := rm.Schedule(ctx, "s01"); err == nil && sc.Notification.Extra["n"].(interface{ String() string }).String() != "12345678901234567" {
		t.Errorf("extra number lost precision: %v", sc.Notification.Extra["n"])
	}

	res, err := rt.RebuildWith(ctx, "push", projection.RebuildOptions{BatchSize: 17, Verify: true})
	if err != nil {
		t.Fatalf("rebuild: %v", err)
	}
	if !res.Verified || res.Version != 2 {
		t.Fatalf("rebuild result %+v: want verified, version 2", res)
	}
	check("rebuilt")
}

func under(t *testing.T, ctx context.Context, rm *rmpush.Store, name string) rmpush.Page {
	t.Helper()
	p, err := rm.Search(ctx, rmpush.Query{AllApps: true, Name: name, Page: 1, Limit: 100})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range p.Items {
		if !containsFold(s.Name, name) {
			t.Errorf("search %s found %q", name, s.Name)
		}
	}
	return p
}

func containsFold(s, sub string) bool {
	return strings.Contains(strings.ToLower(s), strings.ToLower(sub))
}

func rows(t *testing.T, ctx context.Context, pool interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) []string {
	t.Helper()
	rs, err := pool.Query(ctx, `SELECT id || '|' || app || '|' || name || '|' || status || '|' || send_on || '|' ||
		sent || '/' || failed || '/' || invalid || '|' || received || '/' || opened || '/' || dismissed FROM push_schedules`)
	if err != nil {
		t.Fatal(err)
	}
	out, err := pgx.CollectRows(rs, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	sort.Strings(out)
	return out
}

// TestOversizedAppIDDoesNotWedge: a schedule event with a 12,000-character
// app id, as servers before the 64-character bound accepted, is projected
// like any other (it used to fail every batch with "index row requires
// 12056 bytes"), live and in a rebuild, and the schedules after it too.
func TestOversizedAppIDDoesNotWedge(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := pgtest.Pool(t)
	store := postgres.NewEventStore(pool, eventcodec.Default())
	defer store.Close()
	rt := projection.NewRuntime(pool, store, nil, nil, projection.Options{}, projpush.Projector{})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- rt.Run(rctx) }()
	defer func() { stop(); <-done }()

	rng := rand.New(rand.NewPCG(5, 6))
	long := make([]byte, 12_000) // random letters: PostgreSQL cannot compress them
	for i := range long {
		long[i] = byte('a' + rng.IntN(26))
	}
	spec := push.Spec{Name: "n", Target: push.Target{Tags: []push.TagFilter{{Name: "lang"}}},
		Notification: push.Notification{Title: "T"}, SendOn: time.Now().Add(time.Hour).Truncate(time.Millisecond)}
	var last event.Position
	for _, s := range []struct{ id, app string }{{"big", string(long)}, {"after", "app1"}} {
		ev := push.Scheduled{ScheduleID: s.id, App: s.app, Name: spec.Name, Target: spec.Target,
			Notification: spec.Notification, SendOn: spec.SendOn}
		res, err := store.Append(ctx, push.Stream(s.id), event.NoStream, event.Event{Data: ev})
		if err != nil {
			t.Fatal(err)
		}
		last = res.Last
	}
	if !rt.WaitForBound(ctx, 20*time.Second, last, "push") {
		t.Fatalf("the push projection did not catch up: %v", rt.Ready())
	}
	if err := rt.Ready(); err != nil {
		t.Fatalf("not ready: %v", err)
	}
	rm := rmpush.NewStore(pool)
	for _, app := range []string{string(long), "app1"} {
		p, err := rm.Search(ctx, rmpush.Query{App: app, AllApps: true, Page: 1, Limit: 10})
		if err != nil || len(p.Items) != 1 || p.Items[0].App != app {
			t.Fatalf("search app of %d characters: %d items, %v", len(app), len(p.Items), err)
		}
	}
	if _, err := rt.RebuildWith(ctx, "push", projection.RebuildOptions{Verify: true}); err != nil {
		t.Fatalf("rebuild: %v", err)
	}
}
