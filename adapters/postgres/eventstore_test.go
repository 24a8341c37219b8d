package postgres_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/eventstoretest"
	"github.com/halocms/halocms/adapters/postgres"
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
		// What jsonb refuses as a data exception (class 22).
		Rejected: map[string]any{
			"a number jsonb overflows (22003)":        map[string]any{"n": json.Number("1e1000000")},
			"a NUL character in a string (22P05)":     "a\u0000b",
			"a NUL character in a key (22P05)":        map[string]any{"a\u0000b": 1},
			"too many digits after the point (22003)": json.Number("1.0e-16383"),
		},
	}
}

// TestEventStoreContract runs the port's suite. Its multi-stream appends
// and guards take every path of AppendMulti: the one statement for new
// streams and streams at their version, the pipelined batch (any version,
// one stream twice), and the careful path a failed statement falls back
// to (conflicts, retries).
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

// An event is stamped by the statement that appends it, not when its
// transaction began (a transaction that decided for a while would commit
// events stamped in the past, which syncs rely on not happening); the
// events of one append share their stamp.
func TestEventsStampedByTheirAppend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	var began time.Time
	if err := tx.QueryRow(ctx, `SELECT now()`).Scan(&began); err != nil {
		t.Fatal(err)
	}
	const decided = 100 * time.Millisecond
	time.Sleep(decided)
	if _, err := s.AppendTx(ctx, tx, "stamp-1", event.NoStream, event.Event{Data: probe{1}}, event.Event{Data: probe{2}}); err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	recs, err := s.ReadStream(ctx, "stamp-1", 0)
	if err != nil || len(recs) != 2 {
		t.Fatalf("read back: %d events, %v", len(recs), err)
	}
	if at := recs[0].RecordedAt; at.Before(began.Add(decided)) {
		t.Errorf("stamped %s, %s after its transaction began: want the append's time, at least %s after", at, at.Sub(began), decided)
	}
	if !recs[1].RecordedAt.Equal(recs[0].RecordedAt) {
		t.Errorf("one append, two stamps: %s and %s", recs[0].RecordedAt, recs[1].RecordedAt)
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
	// A multi-stream append counts its events once, its retry not at all.
	written.Store(0)
	appends := []event.StreamAppend{
		{Stream: "retry-a", ExpectedVersion: event.NoStream, Events: []event.Event{
			{Data: probe{1}, Meta: event.Metadata{EventID: "0190a0b0-0000-7000-8000-0000000000d1"}},
			{Data: probe{2}, Meta: event.Metadata{EventID: "0190a0b0-0000-7000-8000-0000000000d2"}}}},
		{Stream: "retry-b", ExpectedVersion: event.NoStream, Events: []event.Event{
			{Data: probe{3}, Meta: event.Metadata{EventID: "0190a0b0-0000-7000-8000-0000000000d3"}}}},
	}
	for range 2 {
		if _, err := s.AppendMulti(ctx, appends...); err != nil {
			t.Fatal(err)
		}
	}
	if n := eventCount(t, pool); n != 5 || written.Load() != 3 {
		t.Fatalf("%d events stored, OnAppend counted %d for the multi-stream append and its retry; want 5 and 3", n, written.Load())
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

	// Wait until the listener hears a notification of our own, then until
	// it has been quiet for 200ms: its start and our pings wake it too.
	deadline := time.Now().Add(10 * time.Second)
	for ready := false; !ready; {
		c := l.C()
		if _, err := pool.Exec(ctx, `SELECT pg_notify($1, 'ping')`, postgres.NotifyChannel); err != nil {
			t.Fatal(err)
		}
		select {
		case <-c:
			ready = l.Listening()
		case <-time.After(500 * time.Millisecond):
		}
		if !ready && time.Now().After(deadline) {
			t.Fatal("listener never started listening")
		}
	}
	for quiet := false; !quiet; {
		c := l.C()
		select {
		case <-c:
		case <-time.After(200 * time.Millisecond):
			quiet = true
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

// A notification sent before the LISTEN took hold is never heard, so a
// waiter that looked before then must be woken when the listener starts
// listening, or it would sleep through what was notified meanwhile.
func TestListenerWakesWhenItStartsListening(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	pool := pgtest.Pool(t)
	// A channel of its own: nobody notifies it.
	l := postgres.NewListener(pool, fmt.Sprintf("listen_start_%d", time.Now().UnixNano()), nil)
	c, w := l.C(), l.Watch(func(string) bool { return false }).C()
	stopped := make(chan struct{})
	go func() { l.Run(ctx); close(stopped) }()
	defer func() { cancel(); <-stopped }()
	for name, ch := range map[string]<-chan struct{}{"C": c, "a watch": w} {
		select {
		case <-ch:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s not woken 10s after Run started (listening: %v)", name, l.Listening())
		}
	}
	if !l.Listening() {
		t.Error("woken before the listener listens")
	}
}

// streamEvents reads a stream's events as (version, N) pairs.
func streamEvents(t *testing.T, s *postgres.EventStore, stream string) [][2]int64 {
	t.Helper()
	recs, err := s.ReadStream(context.Background(), stream, 0)
	if err != nil {
		t.Fatal(err)
	}
	out := [][2]int64{}
	for _, r := range recs {
		out = append(out, [2]int64{r.StreamVersion, int64(r.Data.(probe).N)})
	}
	return out
}

func eventCount(t *testing.T, pool *pgxpool.Pool) int {
	t.Helper()
	var n int
	if err := pool.QueryRow(context.Background(), `SELECT count(*) FROM events`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// BenchmarkAppendMulti appends chunks of 500 new streams of one event, as
// a content batch import does.
//
//	go test ./adapters/postgres -run XXX -bench AppendMulti -benchtime 20x
func BenchmarkAppendMulti(b *testing.B) {
	ctx := context.Background()
	pool := pgtest.Pool(b)
	s := postgres.NewEventStore(pool, probeRegistry())
	defer s.Close()
	n := 0
	b.ResetTimer()
	for range b.N {
		appends := make([]event.StreamAppend, 500)
		for i := range appends {
			n++
			appends[i] = event.StreamAppend{Stream: fmt.Sprintf("bench-%d", n), ExpectedVersion: event.NoStream,
				Events: []event.Event{{Data: probe{n}}}}
		}
		if _, err := s.AppendMulti(ctx, appends...); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N*500)/b.Elapsed().Seconds(), "streams/s")
}

// The one-statement path itself: it writes distinct new and exact-version
// streams, and declines (writing nothing) whatever it cannot write cleanly,
// leaving it to the careful path.
func TestAppendSet(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	if _, err := s.Append(ctx, "set-old", event.NoStream, event.Event{Data: probe{1}}); err != nil {
		t.Fatal(err)
	}
	res, ok, err := s.AppendSet(ctx,
		event.StreamAppend{Stream: "set-a", ExpectedVersion: event.NoStream, Events: []event.Event{{Data: probe{10}}, {Data: probe{11}}}},
		event.StreamAppend{Stream: "set-old", ExpectedVersion: 1, Events: []event.Event{{Data: probe{2}}}},
	)
	if err != nil || !ok || res.Version != 2 || res.Last.IsZero() {
		t.Fatalf("AppendSet of a new and an exact-version stream: %+v, ok %v, %v", res, ok, err)
	}
	if got, want := streamEvents(t, s, "set-old"), [][2]int64{{1, 1}, {2, 2}}; !reflect.DeepEqual(got, want) {
		t.Errorf("stream set-old: %v, want %v", got, want)
	}
	if got, want := streamEvents(t, s, "set-a"), [][2]int64{{1, 10}, {2, 11}}; !reflect.DeepEqual(got, want) {
		t.Errorf("stream set-a: %v, want %v", got, want)
	}
	before := eventCount(t, pool)
	one := func(stream string, expected int64) event.StreamAppend {
		return event.StreamAppend{Stream: stream, ExpectedVersion: expected, Events: []event.Event{{Data: probe{99}}}}
	}
	for name, appends := range map[string][]event.StreamAppend{
		"existing stream as new": {one("set-new-1", event.NoStream), one("set-a", event.NoStream)},
		"stale version":          {one("set-new-2", event.NoStream), one("set-old", 1)},
		"version ahead":          {one("set-new-3", event.NoStream), one("set-old", 7)},
		"same stream twice":      {one("set-new-4", event.NoStream), one("set-new-4", 1)},
		"any version":            {one("set-new-5", event.NoStream), one("set-old", event.AnyVersion)},
		"no events":              {one("set-new-6", event.NoStream), {Stream: "set-new-7"}},
	} {
		if res, ok, err := s.AppendSet(ctx, appends...); ok || err != nil {
			t.Errorf("%s: AppendSet took it (%+v, %v), want it declined", name, res, err)
		}
	}
	if n := eventCount(t, pool); n != before {
		t.Errorf("%d events after declined appends, want %d", n, before)
	}
}

// DecodeMetadata reads what json.Unmarshal reads, whatever the input: its
// fast path for the usual flat object must never disagree.
func FuzzDecodeMetadata(f *testing.F) {
	for _, seed := range []string{
		`{"app": "a1", "actor": "admin", "eventId": "0190a0b0-0000-7000-8000-000000000001", "clientIp": "127.0.0.1", "causationId": "c", "correlationId": "k"}`,
		`{"eventId":"e","actor":"Zoë"}`,
		`{"eventId": "e", "actor": "a\"b"}`,
		`{"eventId": "e", "actor": "a\u00e9"}`,
		`{"EventID": "e"}`,
		`{"eventId": "e", "extra": "x"}`,
		`{"eventId": "e", "extra": {"nested": [1, 2]}}`,
		`{"eventId": null}`,
		`{"eventId": 5}`,
		`{"eventId": "a", "eventId": "b"}`,
		`{}`,
		` { } `,
		`{"eventId": "e",}`,
		`{"eventId": "e"} x`,
		`{"eventId": "e"`,
		`[]`,
		``,
		"{\"actor\": \"a\tb\"}",
		"{\"actor\": \"\xff\"}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		type meta struct {
			EventID       string `json:"eventId"`
			Actor         string `json:"actor"`
			App           string `json:"app"`
			CorrelationID string `json:"correlationId"`
			CausationID   string `json:"causationId"`
			ClientIP      string `json:"clientIp"`
		}
		var want meta
		wantErr := json.Unmarshal(raw, &want)
		got, err := postgres.DecodeMetadata(raw)
		if (err != nil) != (wantErr != nil) {
			t.Fatalf("DecodeMetadata(%q) error %v, json.Unmarshal error %v", raw, err, wantErr)
		}
		if err == nil && meta(got) != want {
			t.Fatalf("DecodeMetadata(%q) = %+v, json.Unmarshal reads %+v", raw, got, want)
		}
	})
}

// BenchmarkDecodeMetadata decodes metadata as the database prints it.
func BenchmarkDecodeMetadata(b *testing.B) {
	raw := []byte(`{"app": "6b0176f556864433b810cc46", "actor": "admin", "eventId": "0190a0b0-0000-7000-8000-000000000001", "clientIp": "127.0.0.1", "correlationId": "0190a0b0-0000-7000-8000-000000000002"}`)
	for range b.N {
		if _, err := postgres.DecodeMetadata(raw); err != nil {
			b.Fatal(err)
		}
	}
}

// TestNotificationsNameTypes: a NOTIFY announces the types appended, and a
// watch hears only the payloads it accepts.
func TestNotificationsNameTypes(t *testing.T) {
	t.Parallel()
	ctx, s, l := notifying(t)
	mine, payloads := heard(l, func(p string) bool { return slices.Contains(postgres.NotifiedTypes(p), probe{}.EventType()) })
	others := l.Watch(func(p string) bool { return slices.Contains(postgres.NotifiedTypes(p), "other.thing") })

	mineC, othersC := mine.C(), others.C()
	if _, err := s.Append(ctx, "typed-1", event.NoStream, event.Event{Data: probe{1}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-mineC:
	case <-time.After(5 * time.Second):
		t.Fatalf("the watch for %s never fired; payloads %q", probe{}.EventType(), payloads())
	}
	select {
	case <-othersC:
		t.Fatal("a watch for other types fired")
	default:
	}
	if got := postgres.NotifiedTypes(""); got != nil {
		t.Errorf("an empty payload announces %q, want nil (any type)", got)
	}
}

// TestNotificationsNeverAnnounceAnyTypeForTypedAppends: concurrent appends
// of known types are announced by their types only. An append's signal
// that finds its types already sent (by a NOTIFY that took them between
// the append adding them and signalling) sends nothing, not an empty
// payload, which would wake every projection as "any type".
func TestNotificationsNeverAnnounceAnyTypeForTypedAppends(t *testing.T) {
	t.Parallel()
	ctx, s, l := notifying(t)
	_, payloads := heard(l, func(string) bool { return false })

	const writers, appends = 4, 20
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range appends {
				// A batch of many streams, as a content batch appends.
				set := make([]event.StreamAppend, 50)
				for j := range set {
					set[j] = event.StreamAppend{Stream: fmt.Sprintf("typed-%d-%d-%d", w, i, j), ExpectedVersion: event.NoStream,
						Events: []event.Event{{Data: probe{j}}}}
				}
				if _, err := s.AppendMulti(ctx, set...); err != nil {
					t.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	time.Sleep(200 * time.Millisecond) // the last NOTIFYs arrive
	got := payloads()
	if len(got) == 0 {
		t.Fatal("no notification heard")
	}
	for _, p := range got {
		if want := (probe{}).EventType(); p != want {
			t.Fatalf("payloads %q: want only %q", got, want)
		}
	}
}

// TestNoNotifyWithoutTypes: a signal that finds no types to announce (they
// went out with an earlier NOTIFY) sends nothing; the next append's types
// are announced as usual.
func TestNoNotifyWithoutTypes(t *testing.T) {
	t.Parallel()
	ctx, s, l := notifying(t)
	typed, payloads := heard(l, func(p string) bool { return p != "" })
	s.Signal()
	time.Sleep(300 * time.Millisecond)
	if got := payloads(); len(got) != 0 {
		t.Fatalf("a signal with no types sent %q", got)
	}
	c := typed.C()
	if _, err := s.Append(ctx, "typed-after", event.NoStream, event.Event{Data: probe{1}}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-c:
	case <-time.After(5 * time.Second):
		t.Fatalf("the append was not announced; payloads %q", payloads())
	}
	if got, want := payloads(), []string{(probe{}).EventType()}; !slices.Equal(got, want) {
		t.Fatalf("payloads %q, want %q", got, want)
	}
}

// notifying opens a store and a listener on its channel, for as long as
// the test runs.
func notifying(t *testing.T) (context.Context, *postgres.EventStore, *postgres.Listener) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	return ctx, s, listening(t, ctx, pool, postgres.NotifyChannel)
}

// heard watches l with accept and records every payload it sees.
func heard(l *postgres.Listener, accept func(string) bool) (*postgres.Broadcast, func() []string) {
	var mu sync.Mutex
	var payloads []string
	w := l.Watch(func(p string) bool {
		mu.Lock()
		payloads = append(payloads, p)
		mu.Unlock()
		return accept(p)
	})
	return w, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(payloads)
	}
}
