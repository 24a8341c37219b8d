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

// The one statement for new streams takes guards in the same round trip:
// it goes through with a guard that holds and declines a stale one (the
// careful path then tells why). The suite covers whole calls.
func TestAppendSetGuards(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	if _, err := s.Append(ctx, "guarded", event.NoStream, probes(1)[0], probes(2)[0]); err != nil {
		t.Fatal(err)
	}
	guard := func(v int64) event.StreamAppend { return event.StreamAppend{Stream: "guarded", ExpectedVersion: v} }
	fresh := func(stream string) event.StreamAppend {
		return event.StreamAppend{Stream: stream, ExpectedVersion: event.NoStream, Events: probes(7)}
	}
	if _, ok, err := s.AppendSet(ctx, fresh("set-a"), fresh("set-b"), guard(2)); err != nil || !ok {
		t.Errorf("one statement with a guard that holds: ok %v, err %v", ok, err)
	}
	if _, ok, err := s.AppendSet(ctx, fresh("set-c"), fresh("set-d"), guard(1)); err != nil || ok {
		t.Errorf("one statement with a stale guard: ok %v, err %v, want declined", ok, err)
	}
}

// A held stream holds back no reader of the log (the suite checks that
// they see what commits meanwhile): readers see only below the oldest
// transaction id still open, and the holder takes none until it appends.
func TestAppendHeldTakesNoTransactionID(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	if _, err := s.Append(ctx, "module", event.NoStream, probes(1)...); err != nil {
		t.Fatal(err)
	}
	_, err := s.AppendHeld(ctx, "module", 1, func(ctx context.Context) ([]event.StreamAppend, error) {
		var holders, withXID int
		if err := pool.QueryRow(ctx, `SELECT count(*), count(a.backend_xid) FROM pg_locks l JOIN pg_stat_activity a USING (pid)
			WHERE l.locktype = 'advisory' AND l.mode = 'ExclusiveLock' AND l.granted AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())`).
			Scan(&holders, &withXID); err != nil {
			return nil, err
		}
		if holders != 1 || withXID != 0 {
			t.Errorf("%d holders of the stream's lock, %d of them with a transaction id; want 1 without", holders, withXID)
		}
		return []event.StreamAppend{{Stream: "module", ExpectedVersion: 1, Events: probes(3)}}, nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

// AppendHeld waits for the transactions that took a guard before it, so
// that their writes are visible to the decision, and a guard that comes
// while it waits fails (no stream of guards holds it off).
func TestAppendHeldWaitsForGuardsBefore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	if _, err := s.Append(ctx, "module", event.NoStream, probes(1)[0], probes(2)[0]); err != nil {
		t.Fatal(err)
	}
	guard := func(v int64) event.StreamAppend { return event.StreamAppend{Stream: "module", ExpectedVersion: v} }
	guarded := func(stream string, v int64) []event.StreamAppend {
		return []event.StreamAppend{{Stream: stream, ExpectedVersion: event.NoStream, Events: probes(2)}, guard(v)}
	}

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
