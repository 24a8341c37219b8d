package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/eventstoretest"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/event"
)

// pgStore adapts *postgres.EventStore to the suite's Store.
type pgStore struct{ *postgres.EventStore }

func (s pgStore) StreamVersion(ctx context.Context, stream string) (int64, error) {
	return s.EventStore.StreamVersion(ctx, nil, stream)
}

func openStore(t *testing.T, pool *pgxpool.Pool, reg *eventcodec.Registry) *postgres.EventStore {
	s := postgres.NewEventStore(pool, reg)
	t.Cleanup(s.Close)
	return s
}

func newHarness(t *testing.T, reg *eventcodec.Registry) eventstoretest.Harness {
	pool := pgtest.Pool(t)
	store := openStore(t, pool, reg)
	return eventstoretest.Harness{
		Store:  pgStore{store},
		Reopen: func(r *eventcodec.Registry) eventstoretest.Store { return pgStore{openStore(t, pool, r)} },
		BeginHeld: func(ctx context.Context, stream string, expected int64, events ...event.Event) (eventstoretest.Held, error) {
			tx, err := pool.Begin(ctx)
			if err != nil {
				return eventstoretest.Held{}, err
			}
			res, err := store.AppendTx(ctx, tx, stream, expected, events...)
			if err != nil {
				_ = tx.Rollback(ctx)
				return eventstoretest.Held{}, err
			}
			return eventstoretest.Held{
				Result:   res,
				Commit:   func() error { return tx.Commit(context.Background()) },
				Rollback: func() error { return tx.Rollback(context.Background()) },
			}, nil
		},
	}
}

func TestEventStoreContract(t *testing.T) {
	eventstoretest.Run(t, newHarness)
}

type probe struct{ N int }

func (probe) EventType() string { return "pgtest.probe" }

func probeRegistry() *eventcodec.Registry {
	r := eventcodec.NewRegistry()
	r.Register(probe{}, 1)
	return r
}

func TestEventsAreImmutable(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	if _, err := s.Append(ctx, "imm-1", event.NoStream, event.Event{Data: probe{1}}, event.Event{Data: probe{2}}); err != nil {
		t.Fatal(err)
	}
	for _, stmt := range []string{
		`UPDATE events SET data = '{"N": 99}'`,
		`UPDATE events SET stream_version = stream_version + 10 WHERE stream_version = 1`,
		`DELETE FROM events`,
		`DELETE FROM events WHERE stream_version = 2`,
		`TRUNCATE events`,
	} {
		_, err := pool.Exec(ctx, stmt)
		if err == nil || !strings.Contains(err.Error(), "immutable") {
			t.Errorf("%s: err = %v, want the immutability trigger to refuse it", stmt, err)
		}
	}
	recs, err := s.ReadStream(ctx, "imm-1", 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Data != (probe{1}) || recs[1].Data != (probe{2}) {
		t.Fatalf("events after refused changes: %+v", recs)
	}
}

// A conflict inside a caller's transaction must not abort it: the append
// is guarded by a savepoint.
func TestAppendTxConflictKeepsTransaction(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	first := event.Event{Data: probe{1}, Meta: event.Metadata{EventID: "0190a0b0-0000-7000-8000-000000000001"}}
	if _, err := s.Append(ctx, "tx-1", event.NoStream, first); err != nil {
		t.Fatal(err)
	}
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	_, err = s.AppendTx(ctx, tx, "tx-1", event.NoStream, event.Event{Data: probe{2}})
	var ce *event.ConflictError
	if !errors.As(err, &ce) || ce.Actual != 1 {
		t.Fatalf("conflicting AppendTx: %v, want a conflict at version 1", err)
	}
	// A failed statement (unique violation on the event id) is rolled back too.
	if _, err := s.AppendTx(ctx, tx, "tx-2", event.NoStream, first); err == nil {
		t.Fatal("AppendTx reusing an event id in another stream: no error")
	}
	res, err := s.AppendTx(ctx, tx, "tx-1", 1, event.Event{Data: probe{2}})
	if err != nil || res.Version != 2 {
		t.Fatalf("AppendTx after the conflicts: %+v, %v", res, err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("commit: %v", err)
	}
	if v, err := s.StreamVersion(ctx, nil, "tx-1"); err != nil || v != 2 {
		t.Fatalf("stream version after commit = %d, %v; want 2", v, err)
	}
	if v, err := s.StreamVersion(ctx, nil, "tx-2"); err != nil || v != 0 {
		t.Fatalf("stream tx-2 version = %d, %v; want 0 (its append failed)", v, err)
	}
}

func TestOnAppendCountsWrittenEvents(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	var calls, written atomic.Int64
	s.OnAppend = func(n int) { calls.Add(1); written.Add(int64(n)) }
	evs := []event.Event{
		{Data: probe{1}, Meta: event.Metadata{EventID: "0190a0b0-0000-7000-8000-0000000000a1"}},
		{Data: probe{2}, Meta: event.Metadata{EventID: "0190a0b0-0000-7000-8000-0000000000a2"}},
	}
	if _, err := s.Append(ctx, "m-1", event.NoStream, evs...); err != nil {
		t.Fatal(err)
	}
	if res, err := s.Append(ctx, "m-1", event.NoStream, evs...); err != nil || !res.Duplicate {
		t.Fatalf("retry: %+v, %v", res, err)
	}
	if _, err := s.Append(ctx, "m-1", event.NoStream, event.Event{Data: probe{3}}); err == nil {
		t.Fatal("conflicting append: no error")
	}
	if calls.Load() != 1 || written.Load() != 2 {
		t.Fatalf("OnAppend called %d times for %d events, want once for 2 (retries and failures write nothing)", calls.Load(), written.Load())
	}
}

func TestReadAllRawDecodesLikeReadAll(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	res, err := s.Append(ctx, "raw-1", event.NoStream, event.Event{Data: probe{1}}, event.Event{Data: probe{2}})
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		h, err := s.Head(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !h.Less(res.Last) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("append at %v not visible (head %v)", res.Last, h)
		}
		time.Sleep(5 * time.Millisecond)
	}
	raw, err := s.ReadAllRaw(ctx, nil, event.Position{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	decoded, err := s.ReadAll(ctx, event.Position{}, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(raw) != 2 || len(decoded) != 2 {
		t.Fatalf("ReadAllRaw %d events, ReadAll %d, want 2", len(raw), len(decoded))
	}
	for i := range raw {
		if _, ok := raw[i].Data.(json.RawMessage); !ok {
			t.Fatalf("ReadAllRaw data is %T, want json.RawMessage", raw[i].Data)
		}
		d, err := s.Decode(raw[i])
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(d, decoded[i]) {
			t.Errorf("Decode(raw) = %+v, ReadAll = %+v", d, decoded[i])
		}
	}
}

func TestListenerWakesOnAppend(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	l := postgres.NewListener(pool, postgres.NotifyChannel, nil)
	stopped := make(chan struct{})
	go func() { l.Run(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()

	// Wait until the listener hears a notification of our own.
	deadline := time.Now().Add(10 * time.Second)
	for ready := false; !ready; {
		c := l.C()
		if _, err := pool.Exec(ctx, `SELECT pg_notify($1, 'ping')`, postgres.NotifyChannel); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c:
			ready = true
		case <-time.After(500 * time.Millisecond):
			if time.Now().After(deadline) {
				t.Fatal("listener never started listening")
			}
		}
	}

	const timeout = 20 * time.Second
	started := make(chan struct{})
	woke := make(chan time.Duration, 1)
	go func() {
		close(started)
		begin := time.Now()
		l.Wait(ctx, timeout)
		woke <- time.Since(begin)
	}()
	<-started
	select {
	case d := <-woke:
		t.Fatalf("Wait returned after %v without any append", d)
	case <-time.After(200 * time.Millisecond):
	}
	appended := time.Now()
	if _, err := s.Append(ctx, "wake-1", event.NoStream, event.Event{Data: probe{1}}); err != nil {
		t.Fatal(err)
	}
	select {
	case d := <-woke:
		t.Logf("waiter woke %v after the append (waited %v)", time.Since(appended), d)
	case <-time.After(5 * time.Second):
		t.Fatalf("Wait still blocked 5s after an append (timeout %v)", timeout)
	}
}
