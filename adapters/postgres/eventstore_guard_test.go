package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/event"
)

// probes is one probe event carrying n.
func probes(n int) []event.Event { return []event.Event{{Data: probe{n}}} }

// requireGuardConflict checks that err is a version conflict on stream.
func requireGuardConflict(t *testing.T, what string, err error, stream string) {
	t.Helper()
	var ce *event.ConflictError
	if !errors.As(err, &ce) || ce.StreamID != stream {
		t.Errorf("%s: err = %v, want a version conflict on %s", what, err, stream)
	}
}

// A guard (an append without events) lets the call through only while its
// stream is at the version it expects, on every path of AppendMulti: the
// one statement for new streams, the pipelined batch, and the careful
// path a failed guard falls back to. A failed call writes nothing, and a
// retried call is a duplicate even when its guard no longer holds.
func TestAppendGuards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	if _, err := s.Append(ctx, "guarded", event.NoStream, probes(1)[0], probes(2)[0]); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "other", event.NoStream, probes(1)...); err != nil {
		t.Fatal(err)
	}
	guard := func(v int64) event.StreamAppend { return event.StreamAppend{Stream: "guarded", ExpectedVersion: v} }
	fresh := func(stream string) event.StreamAppend {
		return event.StreamAppend{Stream: stream, ExpectedVersion: event.NoStream, Events: probes(7)}
	}

	// The one statement for new streams.
	if _, ok, err := s.AppendSet(ctx, fresh("set-a"), fresh("set-b"), guard(2)); err != nil || !ok {
		t.Errorf("one statement with a guard that holds: ok %v, err %v", ok, err)
	}
	if _, ok, err := s.AppendSet(ctx, fresh("set-c"), fresh("set-d"), guard(1)); err != nil || ok {
		t.Errorf("one statement with a stale guard: ok %v, err %v, want declined", ok, err)
	}
	// Whole calls: new streams and an existing one at its version (one
	// statement), any version (pipelined), one stream.
	for name, writes := range map[string][]event.StreamAppend{
		"new streams":        {fresh("new-a"), fresh("new-b")},
		"existing stream":    {{Stream: "other", ExpectedVersion: 1, Events: probes(8)}},
		"any version":        {{Stream: "any", ExpectedVersion: event.AnyVersion, Events: probes(8)}, fresh("new-d")},
		"one new stream":     {fresh("new-c")},
		"the guard repeated": {fresh("new-e"), guard(2)},
	} {
		before := eventCount(t, pool)
		_, err := s.AppendMulti(ctx, append(writes, guard(1))...)
		requireGuardConflict(t, name+", stale guard", err, "guarded")
		if n := eventCount(t, pool); n != before {
			t.Errorf("%s: a call whose guard failed wrote %d events", name, n-before)
		}
		if _, err := s.AppendMulti(ctx, append(writes, guard(2))...); err != nil {
			t.Errorf("%s, guard that holds: %v", name, err)
		}
	}
	if v, err := s.StreamVersion(ctx, nil, "guarded"); err != nil || v != 2 {
		t.Errorf("guarded at version %d (%v): a guard wrote to its stream", v, err)
	}

	// A retry whose events are stored is a duplicate, whatever its guard.
	retry := event.StreamAppend{Stream: "retried", ExpectedVersion: event.NoStream,
		Events: []event.Event{{Data: probe{9}, Meta: event.Metadata{EventID: "0190a0b0-0000-7000-8000-0000000000d1"}}}}
	if _, err := s.AppendMulti(ctx, retry, guard(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "guarded", 2, probes(3)...); err != nil {
		t.Fatal(err)
	}
	if res, err := s.AppendMulti(ctx, retry, guard(2)); err != nil || !res.Duplicate {
		t.Errorf("a retried call with a guard now stale: %+v, %v, want a duplicate", res, err)
	}

	for name, bad := range map[string][]event.StreamAppend{
		"guards only":                         {guard(3)},
		"a guard at no version":               {fresh("bad-a"), {Stream: "guarded", ExpectedVersion: event.NoStream}},
		"a guard on no stream":                {fresh("bad-b"), {ExpectedVersion: 1}},
		"a guard on a stream the call writes": {{Stream: "guarded", ExpectedVersion: 3, Events: probes(4)}, guard(3)},
	} {
		if _, err := s.AppendMulti(ctx, bad...); err == nil || errors.Is(err, event.ErrVersionConflict) {
			t.Errorf("%s: err = %v, want a refusal", name, err)
		}
	}
}

// AppendHeld holds its stream while it decides: an append guarded on the
// stream fails meanwhile, other appends commit and readers of the log see
// them (the hold holds back no reader), and what the decision returns is
// written in the same transaction. It waits for the transactions that
// took a guard before it, so that their writes are visible to the
// decision, and a guard that comes while it waits fails (no stream of
// guards holds it off). A stale version is a conflict before the decision
// runs; a decision's error is returned as it is, and nothing is written.
func TestAppendHeld(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	if _, err := s.Append(ctx, "module", event.NoStream, probes(1)...); err != nil {
		t.Fatal(err)
	}
	guard := func(v int64) event.StreamAppend { return event.StreamAppend{Stream: "module", ExpectedVersion: v} }
	guarded := func(stream string, v int64) []event.StreamAppend {
		return []event.StreamAppend{{Stream: stream, ExpectedVersion: event.NoStream, Events: probes(2)}, guard(v)}
	}

	res, err := s.AppendHeld(ctx, "module", 1, func(ctx context.Context) ([]event.StreamAppend, error) {
		_, err := s.AppendMulti(ctx, guarded("item-during", 1)...)
		requireGuardConflict(t, "an append guarded on the held stream", err, "module")
		if _, err := s.Append(ctx, "elsewhere", event.NoStream, probes(3)...); err != nil {
			return nil, err
		}
		// Readers of the log see only below the oldest transaction id
		// still open: the holder has none.
		var holders, withXID int
		if err := pool.QueryRow(ctx, `SELECT count(*), count(a.backend_xid) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
			WHERE l.locktype = 'advisory' AND l.mode = 'ExclusiveLock' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`).
			Scan(&holders, &withXID); err != nil {
			return nil, err
		}
		if holders != 1 || withXID != 0 {
			t.Errorf("%d holders of the stream's lock, %d of them with a transaction id; want 1 without", holders, withXID)
		}
		return []event.StreamAppend{{Stream: "module", ExpectedVersion: 1, Events: probes(3)},
			{Stream: "reservation", ExpectedVersion: event.NoStream, Events: probes(4)}}, nil
	})
	if err != nil || res.Version != 1 {
		t.Fatalf("AppendHeld: %+v, %v", res, err)
	}
	for stream, want := range map[string]int64{"module": 2, "reservation": 1, "item-during": 0, "elsewhere": 1} {
		if v, err := s.StreamVersion(ctx, nil, stream); err != nil || v != want {
			t.Errorf("%s at version %d (%v), want %d", stream, v, err, want)
		}
	}

	// A guard taken before: AppendHeld waits for its transaction, and a
	// guard that comes meanwhile fails.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck // committed below
	if err := s.GuardTx(ctx, tx, guard(2)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, `INSERT INTO streams (stream_id, version) VALUES ('item-before', 1)`); err != nil {
		t.Fatal(err)
	}
	decided := make(chan int64, 1)
	done := make(chan error, 1)
	go func() {
		_, err := s.AppendHeld(ctx, "module", 2, func(ctx context.Context) ([]event.StreamAppend, error) {
			v, err := s.StreamVersion(ctx, nil, "item-before") // through another connection
			decided <- v
			return []event.StreamAppend{{Stream: "module", ExpectedVersion: 2, Events: probes(5)}}, err
		})
		done <- err
	}()
	waiting := false
	for range 100 { // until AppendHeld waits for the guard's lock
		var n int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if waiting = n > 0; waiting {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if !waiting {
		t.Fatal("AppendHeld does not wait for the guard taken before it")
	}
	select {
	case <-decided:
		t.Fatal("AppendHeld decided while a guard taken before it was held")
	default:
	}
	_, err = s.AppendMulti(ctx, guarded("item-while-waiting", 2)...)
	requireGuardConflict(t, "a guard while AppendHeld waits", err, "module")
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if v := <-decided; v != 1 {
		t.Errorf("the decision saw item-before at version %d, want the guarded transaction's 1", v)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}

	called := false
	_, err = s.AppendHeld(ctx, "module", 2, func(context.Context) ([]event.StreamAppend, error) {
		called = true
		return nil, nil
	})
	requireGuardConflict(t, "AppendHeld at a stale version", err, "module")
	if _, err := s.AppendHeld(ctx, "nothing", 0, func(context.Context) ([]event.StreamAppend, error) {
		called = true
		return nil, nil
	}); err == nil {
		t.Error("AppendHeld of a stream at version 0: no error")
	}
	if called {
		t.Error("AppendHeld decided where it could not hold")
	}
	refused := errors.New("refused")
	before := eventCount(t, pool)
	_, err = s.AppendHeld(ctx, "module", 3, func(ctx context.Context) ([]event.StreamAppend, error) {
		return []event.StreamAppend{{Stream: "module", ExpectedVersion: 3, Events: probes(6)}}, refused
	})
	if err != refused { //nolint:errorlint // returned as it is
		t.Errorf("a decision's error came back as %v", err)
	}
	if n := eventCount(t, pool); n != before {
		t.Errorf("a refused decision wrote %d events", n-before)
	}
}

// Holds never take the whole pool: many at once, each deciding through
// other connections of the pool (as a module change reads a read model),
// all go through instead of each keeping a connection the others' decisions
// wait for.
func TestAppendHeldLeavesConnections(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool := pgtest.Pool(t) // 8 connections
	s := openStore(t, pool, probeRegistry())
	const holds = 3 * 8
	for i := range holds {
		if _, err := s.Append(ctx, fmt.Sprintf("held-%d", i), event.NoStream, event.Event{Data: probe{i}}); err != nil {
			t.Fatal(err)
		}
	}
	errs := make(chan error, holds)
	for i := range holds {
		go func() {
			stream := fmt.Sprintf("held-%d", i)
			_, err := s.AppendHeld(ctx, stream, 1, func(ctx context.Context) ([]event.StreamAppend, error) {
				for range 3 {
					if _, err := s.StreamVersion(ctx, nil, stream); err != nil {
						return nil, err
					}
					time.Sleep(5 * time.Millisecond)
				}
				return []event.StreamAppend{{Stream: stream, ExpectedVersion: 1, Events: []event.Event{{Data: probe{i}}}}}, nil
			})
			errs <- err
		}()
	}
	for range holds {
		if err := <-errs; err != nil {
			t.Errorf("a hold among %d at once: %v", holds, err)
		}
	}
}
