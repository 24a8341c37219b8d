package projection_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/domain/event"
)

// poisoned appends one itemPoisoned event to stream and returns its
// position.
func (e *env) poisoned(t *testing.T, stream string) event.Position {
	t.Helper()
	res, err := e.store.Append(context.Background(), stream, event.AnyVersion, event.Event{Data: itemPoisoned{ID: stream}})
	if err != nil {
		t.Fatal(err)
	}
	return res.Last
}

// refusing is a counter that fails on itemPoisoned events until fixed.
func refusing(name string, fixed *atomic.Bool) *counter {
	return &counter{name: name, refuse: func(e event.Recorded) error {
		if e.Type == "test.item_poisoned" && !fixed.Load() {
			return errors.New("index row requires 12056 bytes, maximum size is 8191")
		}
		return nil
	}}
}

// eventually polls cond for up to 20 s.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func statusOf(t *testing.T, rt *projection.Runtime, name string) projection.Status {
	t.Helper()
	sts, err := rt.FullStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range sts {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no status of %s", name)
	return projection.Status{}
}

func countEvents(t *testing.T, e *env, typ, stream string) int {
	t.Helper()
	var n int
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM events WHERE event_type = $1 AND stream_id = $2`, typ, stream).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// A projector that fails on one event wedges its projection; the failing
// event is named (health, readiness, status). Parked from another
// process, the runners of two serving processes go on past it without a
// restart (one of them woken by the parking), report it, and
// applies the events after it; a replay with the projector still broken
// changes nothing; once fixed, the replay applies it and clears the park.
// The parking and the replay are events of the log.
func TestParkUnwedgesAndReplayApplies(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var fixed atomic.Bool
	c := refusing("wedge", &fixed)
	e.appendEvents(t, "pre", 5, 60)
	bad := e.poisoned(t, "bad-1")
	e.appendEvents(t, "post", 5, 40)
	// A second serving process, which retries only after a minute: it
	// fails first, then only the parking's notification wakes it.
	e3 := openEnv(t, e.url)
	slow := e3.start(t, func(o *projection.Options) { o.LiveBatchSize = 16; o.RetryMin, o.RetryMax = time.Minute, time.Minute },
		refusing("wedge", &fixed))
	eventually(t, "the slow process fails", func() bool {
		h := slow.rt.Health()
		return len(h) == 1 && h[0].State == projection.StateBackoff
	})
	r := e.start(t, func(o *projection.Options) { o.LiveBatchSize = 16 }, c)

	eventually(t, "the runner names the failing event", func() bool {
		h := r.rt.Health()
		return len(h) == 1 && h[0].FailingEvent != nil && *h[0].FailingEvent == bad
	})
	if err := r.rt.Ready(); err == nil || !strings.Contains(err.Error(), bad.String()) || !strings.Contains(err.Error(), "cms projections park wedge") {
		t.Errorf("Ready while wedged: %v; want the event %s and the park command named", err, bad)
	}
	// Another process (the CLI) sees the failure and parks the event.
	e2 := openEnv(t, e.url)
	cli := projection.NewRuntime(e2.pool, e2.store, nil, testLogger(), projection.Options{}, refusing("wedge", &fixed))
	st := statusOf(t, cli, "wedge")
	if st.Failure == nil || st.Failure.Event == nil || *st.Failure.Event != bad || !strings.Contains(st.Failure.Error, "12056") {
		t.Fatalf("status while wedged: failure %+v, want the event %s and the error", st.Failure, bad)
	}
	if !st.Checkpoint.Less(bad) {
		t.Fatalf("checkpoint %s is past the failing event %s", st.Checkpoint, bad)
	}
	p, err := cli.Park(context.Background(), projection.ParkRequest{Projection: "wedge", Event: bad.String(), By: "alice", Reason: "appId too long; fix in 1.2"})
	if err != nil {
		t.Fatalf("park: %v", err)
	}
	if p.EventType != "test.item_poisoned" || p.StreamID != "bad-1" || !strings.Contains(p.Error, "12056") {
		t.Errorf("parked %+v", p)
	}

	caughtUp(t, e, r.rt, "wedge")
	// The runner clears its failure when its next batch's query returns,
	// a moment after the commit that caughtUp sees.
	eventually(t, "ready after the park", func() bool { return r.rt.Ready() == nil })
	eventually(t, "the slow process, woken by the parking, is ready", func() bool { return slow.rt.Ready() == nil })
	e.appendEvents(t, "later", 3, 30)
	caughtUp(t, e, r.rt, "wedge")
	var applied, badRows int64
	if err := e.pool.QueryRow(context.Background(), `SELECT (SELECT sum(n) FROM public.wedge_types), (SELECT count(*) FROM public.wedge_streams WHERE stream_id = 'bad-1')`).Scan(&applied, &badRows); err != nil {
		t.Fatal(err)
	}
	var total int64
	if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM events`).Scan(&total); err != nil {
		t.Fatal(err)
	}
	if applied != total-1 || badRows != 0 {
		t.Errorf("applied %d of %d events (stream bad-1: %d rows); want all but the parked one", applied, total, badRows)
	}
	st = statusOf(t, cli, "wedge")
	if len(st.Parked) != 1 || st.Parked[0].Position != bad || st.Parked[0].By != "alice" || st.Failure != nil {
		t.Errorf("status after the park: parked %+v, failure %+v", st.Parked, st.Failure)
	}
	// A read model's horizon stays before the parked event, which a replay
	// applies later with its own stamp (content syncs see it then).
	var badAt time.Time
	if err := e.pool.QueryRow(context.Background(), `SELECT recorded_at FROM events WHERE global_position = $1`, bad.Pos).Scan(&badAt); err != nil {
		t.Fatal(err)
	}
	if h, err := cli.Horizon(context.Background(), "wedge"); err != nil || h.After(badAt) {
		t.Errorf("horizon %s (%v) while %s, recorded at %s, is parked", h, err, bad, badAt)
	}
	summary, err := cli.ParkedSummary(context.Background())
	if err != nil || len(summary["wedge"]) != 1 || summary["wedge"][0] != bad.String() {
		t.Errorf("parked summary %v (%v)", summary, err)
	}

	// Still broken: the replay fails, naming the event, and changes nothing.
	_, err = cli.Replay(context.Background(), "wedge", "alice", "try")
	var ef *projection.EventFailure
	if !errors.As(err, &ef) || ef.Position != bad {
		t.Fatalf("replay with the broken projector: %v; want a failure naming %s", err, bad)
	}
	if ps, _ := cli.ListParked(context.Background(), "wedge"); len(ps) != 1 {
		t.Errorf("after the failed replay: %d parked, want 1", len(ps))
	}

	fixed.Store(true)
	res, err := cli.Replay(context.Background(), "wedge", "bob", "fixed in 1.2")
	if err != nil {
		t.Fatalf("replay: %v", err)
	}
	if len(res.Applied) != 1 || res.Applied[0].Position != bad || len(res.Released) != 0 {
		t.Errorf("replay result %+v", res)
	}
	caughtUp(t, e, r.rt, "wedge")
	assertExact(t, e.pool, c, nil) // every event applied exactly once
	if h, err := cli.Horizon(context.Background(), "wedge"); err != nil || !h.After(badAt) {
		t.Errorf("horizon %s (%v) after the replay, want past %s", h, err, badAt)
	}
	if ps, _ := cli.ListParked(context.Background(), "wedge"); len(ps) != 0 {
		t.Errorf("after the replay: %d parked, want none", len(ps))
	}
	if n := countEvents(t, e, "operations.event_parked", "projection-wedge"); n != 1 {
		t.Errorf("%d parking events in the log, want 1", n)
	}
	if n := countEvents(t, e, "operations.parked_events_replayed", "projection-wedge"); n != 1 {
		t.Errorf("%d replay events in the log, want 1", n)
	}
	var by, reason string
	if err := e.pool.QueryRow(context.Background(), `SELECT data->>'By', data->>'Reason' FROM events WHERE event_type = 'operations.event_parked'`).Scan(&by, &reason); err != nil || by != "alice" || reason != "appId too long; fix in 1.2" {
		t.Errorf("parking event: by %q reason %q (%v)", by, reason, err)
	}
}

// A rebuild that fails on an event names it and points at park; a rebuild
// leaves parked events out as the live runners do (Verify holds), and they
// stay parked for the replay.
func TestRebuildNamesFailingEventAndSkipsParked(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var fixed atomic.Bool
	c := refusing("rb", &fixed)
	e.appendEvents(t, "pre", 5, 100)
	bad := e.poisoned(t, "bad-2")
	e.appendEvents(t, "post", 5, 100)
	rt := projection.NewRuntime(e.pool, e.store, nil, testLogger(), projection.Options{}, c)
	ctx := context.Background()
	e.waitReadable(t) // so that the rebuild reads the whole log
	_, err := rt.RebuildWith(ctx, "rb", projection.RebuildOptions{BatchSize: 32, Verify: true})
	var ef *projection.EventFailure
	if !errors.As(err, &ef) || ef.Position != bad || !strings.Contains(ef.Error(), "cms projections park rb --event "+bad.String()) {
		t.Fatalf("rebuild over a failing event: %v; want a failure naming %s and the park command", err, bad)
	}
	if _, err := rt.Park(ctx, projection.ParkRequest{Projection: "rb", Event: bad.String(), By: "ops", Reason: "r"}); err != nil {
		t.Fatal(err)
	}
	// The live version applies the log (without the parked event) first.
	r := e.start(t, nil, refusing("rb", &fixed))
	caughtUp(t, e, r.rt, "rb")
	res, err := rt.RebuildWith(ctx, "rb", projection.RebuildOptions{BatchSize: 32, Verify: true})
	if err != nil || !res.Verified {
		t.Fatalf("rebuild with the event parked: %+v, %v", res, err)
	}
	if ps, _ := rt.ListParked(ctx, "rb"); len(ps) != 1 || ps[0].Position != bad {
		t.Errorf("after the rebuild: parked %+v, want %s still", ps, bad)
	}
	fixed.Store(true)
	if _, err := rt.Replay(ctx, "rb", "ops", "fixed"); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, e, r.rt, "rb")
	assertExact(t, e.pool, c, nil)
}

// Park refuses what cannot be parked, with a message that says why.
func TestParkRefuses(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var fixed atomic.Bool
	e.appendEvents(t, "a", 3, 10)
	r := e.start(t, nil, refusing("picky", &fixed))
	caughtUp(t, e, r.rt, "picky")
	applied := e.lastCommitted(t)
	ahead := e.poisoned(t, "bad-3")
	ctx := context.Background()
	for _, c := range []struct {
		name string
		req  projection.ParkRequest
		want string
	}{
		{"unknown projection", projection.ParkRequest{Projection: "nope", Event: ahead.String(), By: "x", Reason: "y"}, "unknown projection"},
		{"no reason", projection.ParkRequest{Projection: "picky", Event: ahead.String(), By: "x", Reason: " "}, "reason is required"},
		{"no one", projection.ParkRequest{Projection: "picky", Event: ahead.String(), Reason: "y"}, "who parks is required"},
		{"long reason", projection.ParkRequest{Projection: "picky", Event: ahead.String(), By: "x", Reason: strings.Repeat("y", 1001)}, "at most 1000"},
		{"bad reference", projection.ParkRequest{Projection: "picky", Event: "12:34", By: "x", Reason: "y"}, "position (TX/POS"},
		{"no such event", projection.ParkRequest{Projection: "picky", Event: "1/999999", By: "x", Reason: "y"}, "no such event"},
		{"no such id", projection.ParkRequest{Projection: "picky", Event: "0190c1a0-0000-7000-8000-000000000000", By: "x", Reason: "y"}, "no such event"},
		{"already applied", projection.ParkRequest{Projection: "picky", Event: applied.String(), By: "x", Reason: "y"}, "already applied"},
	} {
		if _, err := r.rt.Park(ctx, c.req); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	var id string
	if err := e.pool.QueryRow(ctx, `SELECT event_id::text FROM events WHERE global_position = $1`, ahead.Pos).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if p, err := r.rt.Park(ctx, projection.ParkRequest{Projection: "picky", Event: id, By: "x", Reason: "y"}); err != nil || p.Position != ahead {
		t.Fatalf("park by id: %+v, %v; want %s parked", p, err, ahead)
	}
	if _, err := r.rt.Park(ctx, projection.ParkRequest{Projection: "picky", Event: ahead.String(), By: "x", Reason: "y"}); err == nil || !strings.Contains(err.Error(), "parked already") {
		t.Errorf("parking twice: %v", err)
	}
	if n := countEvents(t, e, "operations.event_parked", "projection-picky"); n != 1 {
		t.Errorf("%d parking events, want 1 (refusals record nothing)", n)
	}
}

// An event that cannot be decoded (stored data its type's decoder refuses)
// wedges the live runner, which names it; parked, the runner goes on and
// a rebuild leaves it out without decoding it; a replay fails on it,
// naming it, and keeps it parked.
func TestParkUndecodableEvent(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	e.appendEvents(t, "pre", 3, 20)
	var txID, pos int64
	if err := e.pool.QueryRow(ctx, `INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
		VALUES ('odd-1', 1, gen_random_uuid(), 'test.item_bumped', 1, '{"ID": "odd-1", "By": "not a number"}', '{}')
		RETURNING transaction_id::text::bigint, global_position`).Scan(&txID, &pos); err != nil {
		t.Fatal(err)
	}
	odd := event.Position{TxID: uint64(txID), Pos: pos}
	e.appendEvents(t, "post", 3, 20)
	c := &counter{name: "undec"}
	r := e.start(t, nil, c)
	eventually(t, "the runner names the undecodable event", func() bool {
		h := r.rt.Health()
		return len(h) == 1 && h[0].FailingEvent != nil && *h[0].FailingEvent == odd
	})
	if _, err := r.rt.Park(ctx, projection.ParkRequest{Projection: "undec", Event: odd.String(), By: "ops", Reason: "bad data"}); err != nil {
		t.Fatal(err)
	}
	caughtUp(t, e, r.rt, "undec")
	// The runner clears its failure when its next batch's query returns,
	// a moment after the commit that caughtUp sees.
	eventually(t, "ready after the park", func() bool { return r.rt.Ready() == nil })
	e.waitReadable(t)
	if res, err := r.rt.RebuildWith(ctx, "undec", projection.RebuildOptions{BatchSize: 8, Verify: true}); err != nil || !res.Verified {
		t.Errorf("rebuild with the undecodable event parked: %+v, %v", res, err)
	}
	_, err := r.rt.Replay(ctx, "undec", "ops", "try")
	var ef *projection.EventFailure
	if err == nil || !strings.Contains(err.Error(), odd.String()) {
		t.Errorf("replay of an undecodable event: %v (%v), want a failure naming %s", err, errors.As(err, &ef), odd)
	}
	if ps, _ := r.rt.ListParked(ctx, "undec"); len(ps) != 1 {
		t.Errorf("after the failed replay: %d parked, want 1", len(ps))
	}
}
