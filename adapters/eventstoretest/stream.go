package eventstoretest

import (
	"errors"
	"fmt"
	"reflect"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"

	"github.com/halocms/halocms/domain/event"
)

func testAppendAndRead(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	stream := event.StreamID("article", "a1")
	meta := func(actor string) event.Metadata {
		return event.Metadata{EventID: newID(), Actor: actor, App: "app-7", CorrelationID: newID(),
			CausationID: newID(), ClientIP: "203.0.113.9"}
	}
	in := []event.Event{
		{Type: "eventstoretest.created", Data: testCreated{Name: "first", N: 1}, Meta: meta("user-1")},
		{Data: testRenamed{Name: "second", Previous: "first"}, Meta: meta("system")},
		{Data: testCreated{Name: "third", N: 3}, Meta: event.Metadata{Actor: "user-2"}}, // id generated
	}
	before := time.Now()
	res, err := s.Append(ctx, stream, event.NoStream, in...)
	if err != nil {
		t.Fatalf("Append: %v", err)
	}
	after := time.Now()
	if res.Version != 3 || res.Duplicate || res.Last.IsZero() {
		t.Fatalf("AppendResult = %+v, want version 3, not duplicate, non-zero position", res)
	}
	recs, err := s.ReadStream(ctx, stream, 0)
	if err != nil {
		t.Fatalf("ReadStream: %v", err)
	}
	if len(recs) != len(in) {
		t.Fatalf("ReadStream returned %d events, want %d", len(recs), len(in))
	}
	wantTypes := []string{"eventstoretest.created", "eventstoretest.renamed", "eventstoretest.created"}
	wantSchema := []int{1, 2, 1}
	var prev event.Position
	for i, r := range recs {
		if r.StreamID != stream || r.StreamVersion != int64(i+1) {
			t.Errorf("event %d: stream %s@%d, want %s@%d", i, r.StreamID, r.StreamVersion, stream, i+1)
		}
		if r.Type != wantTypes[i] || r.SchemaVersion != wantSchema[i] {
			t.Errorf("event %d: type %s v%d, want %s v%d", i, r.Type, r.SchemaVersion, wantTypes[i], wantSchema[i])
		}
		if !reflect.DeepEqual(r.Data, in[i].Data) {
			t.Errorf("event %d: data %#v, want %#v", i, r.Data, in[i].Data)
		}
		if i < 2 && r.Meta != in[i].Meta {
			t.Errorf("event %d: metadata %+v, want %+v", i, r.Meta, in[i].Meta)
		}
		if r.RecordedAt.IsZero() || r.RecordedAt.Before(before.Add(-time.Minute)) || r.RecordedAt.After(after.Add(time.Minute)) {
			t.Errorf("event %d: recorded at %v, want around %v", i, r.RecordedAt, before)
		}
		if !prev.Less(r.Position) {
			t.Errorf("event %d: position %v not after %v", i, r.Position, prev)
		}
		prev = r.Position
	}
	if recs[2].Position != res.Last {
		t.Errorf("AppendResult.Last = %v, last event at %v", res.Last, recs[2].Position)
	}
	// A generated event id is a UUIDv7; the rest of the metadata is kept.
	gen := recs[2].Meta
	if u, err := uuid.Parse(gen.EventID); err != nil || u.Version() != 7 {
		t.Errorf("generated event id %q is not a UUIDv7 (%v)", gen.EventID, err)
	}
	if gen.Actor != "user-2" || gen.App != "" || gen.ClientIP != "" {
		t.Errorf("metadata of third event = %+v", gen)
	}

	// Reading after a version.
	tail, err := s.ReadStream(ctx, stream, 1)
	if err != nil {
		t.Fatalf("ReadStream after 1: %v", err)
	}
	if got := streamsOf(tail); !reflect.DeepEqual(got, []string{stream + "@2", stream + "@3"}) {
		t.Errorf("ReadStream after 1 = %v", got)
	}
	if none, err := s.ReadStream(ctx, stream, 3); err != nil || len(none) != 0 {
		t.Errorf("ReadStream after 3 = %d events, %v; want none", len(none), err)
	}
	if none, err := s.ReadStream(ctx, "article-missing", 0); err != nil || len(none) != 0 {
		t.Errorf("ReadStream of a missing stream = %d events, %v; want none, no error", len(none), err)
	}
	requireVersion(t, s, stream, 3)
	requireVersion(t, s, "article-missing", 0)

	// The log holds the same events, decoded the same way.
	waitVisible(t, s, res.Last)
	all := readAll(t, s, event.Position{}, 2)
	if !reflect.DeepEqual(all, recs) {
		t.Errorf("ReadAll = %+v\nReadStream = %+v", all, recs)
	}
	head, err := s.Head(ctx)
	if err != nil || head != res.Last {
		t.Errorf("Head = %v, %v; want %v", head, err, res.Last)
	}
}

func testInvalidAppends(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	type unregistered struct{ X int }
	cases := map[string]func() error{
		"no events": func() error { _, err := s.Append(ctx, "bad-1", event.NoStream); return err },
		"empty stream": func() error {
			_, err := s.Append(ctx, "", event.NoStream, created("x", 1))
			return err
		},
		"unregistered type": func() error {
			_, err := s.Append(ctx, "bad-1", event.NoStream, event.Event{Data: unregistered{1}})
			return err
		},
		"type name mismatch": func() error {
			_, err := s.Append(ctx, "bad-1", event.NoStream, event.Event{Type: "eventstoretest.renamed", Data: testCreated{}})
			return err
		},
		"malformed event id": func() error {
			_, err := s.Append(ctx, "bad-1", event.NoStream, event.Event{Data: testCreated{}, Meta: event.Metadata{EventID: "not-a-uuid"}})
			return err
		},
		"invalid expected version": func() error { _, err := s.Append(ctx, "bad-1", -2, created("x", 1)); return err },
		"valid event after invalid one": func() error {
			_, err := s.Append(ctx, "bad-1", event.NoStream, created("ok", 1), event.Event{Data: unregistered{2}})
			return err
		},
	}
	for name, f := range cases {
		if err := f(); err == nil {
			t.Errorf("%s: no error", name)
		} else if errors.Is(err, event.ErrVersionConflict) {
			t.Errorf("%s: reported as a version conflict: %v", name, err)
		}
	}
	requireVersion(t, s, "bad-1", 0)
	if recs, err := s.ReadStream(ctx, "bad-1", 0); err != nil || len(recs) != 0 {
		t.Errorf("rejected appends wrote %d events (%v)", len(recs), err)
	}
}

func testExpectedVersion(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	const st = "order-1"
	res, err := s.Append(ctx, st, event.NoStream, created("a", 1), created("b", 2))
	if err != nil || res.Version != 2 {
		t.Fatalf("first append: %+v, %v", res, err)
	}
	rejected := map[string]bool{}
	tryOn := func(stream string, expected int64) error {
		ev := created("rejected", int(expected))
		rejected[ev.Meta.EventID] = true
		_, err := s.Append(ctx, stream, expected, ev)
		return err
	}
	try := func(expected int64) error { return tryOn(st, expected) }
	requireConflict(t, try(event.NoStream), st, event.NoStream, 2)       // stream exists
	requireConflict(t, try(1), st, 1, 2)                                 // stale
	requireConflict(t, try(5), st, 5, 2)                                 // gap: beyond the head
	requireConflict(t, try(3), st, 3, 2)                                 // one beyond the head
	requireConflict(t, tryOn("order-missing", 1), "order-missing", 1, 0) // not yet created
	requireVersion(t, s, "order-missing", 0)

	// The right version appends; so does AnyVersion.
	res, err = s.Append(ctx, st, 2, created("c", 3))
	if err != nil || res.Version != 3 {
		t.Fatalf("append at 2: %+v, %v", res, err)
	}
	res, err = s.Append(ctx, st, event.AnyVersion, created("d", 4), created("e", 5))
	if err != nil || res.Version != 5 {
		t.Fatalf("append at any version: %+v, %v", res, err)
	}
	res, err = s.Append(ctx, "order-2", event.AnyVersion, created("new", 1))
	if err != nil || res.Version != 1 {
		t.Fatalf("append at any version to a new stream: %+v, %v", res, err)
	}
	// And the old version is now stale in turn.
	requireConflict(t, try(2), st, 2, 5)

	recs, err := s.ReadStream(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range recs {
		if r.StreamVersion != int64(i+1) {
			t.Errorf("event %d at version %d", i, r.StreamVersion)
		}
		if rejected[r.Meta.EventID] {
			t.Errorf("rejected event %s was written", r.Meta.EventID)
		}
		if d := r.Data.(testCreated); d.N != i+1 {
			t.Errorf("version %d holds %+v", i+1, d)
		}
	}
	if len(recs) != 5 {
		t.Fatalf("stream has %d events, want 5", len(recs))
	}
	requireVersion(t, s, st, 5)
}

func testConcurrentAppends(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	const writers, rounds, st = 32, 20, "race-1"
	winners := make([]string, rounds)
	for round := 0; round < rounds; round++ {
		expected := int64(round) // round 0: event.NoStream
		type outcome struct {
			id  string
			res event.AppendResult
			err error
		}
		out := make([]outcome, writers)
		start := make(chan struct{})
		var wg sync.WaitGroup
		for w := 0; w < writers; w++ {
			ev := created(fmt.Sprintf("r%d-w%d", round, w), round+1)
			out[w].id = ev.Meta.EventID
			wg.Add(1)
			go func() {
				defer wg.Done()
				<-start
				out[w].res, out[w].err = s.Append(ctx, st, expected, ev)
			}()
		}
		close(start)
		wg.Wait()
		wins := 0
		for _, o := range out {
			if o.err == nil {
				wins++
				winners[round] = o.id
				if o.res.Version != expected+1 || o.res.Duplicate {
					t.Errorf("round %d: winner got %+v", round, o.res)
				}
				continue
			}
			var ce *event.ConflictError
			if !errors.As(o.err, &ce) || !errors.Is(o.err, event.ErrVersionConflict) {
				t.Errorf("round %d: loser got %v, want a version conflict", round, o.err)
			} else if ce.Expected != expected || ce.Actual != expected+1 {
				t.Errorf("round %d: conflict %+v, want expected %d actual %d", round, *ce, expected, expected+1)
			}
		}
		if wins != 1 {
			t.Fatalf("round %d: %d appends won, want exactly 1", round, wins)
		}
	}
	recs, err := s.ReadStream(ctx, st, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != rounds {
		t.Fatalf("stream has %d events, want %d: %v", len(recs), rounds, streamsOf(recs))
	}
	for i, r := range recs {
		if r.StreamVersion != int64(i+1) || r.Meta.EventID != winners[i] || r.Data.(testCreated).N != i+1 {
			t.Errorf("version %d: got %s@%d id %s data %+v, want winner %s", i+1, r.StreamID, r.StreamVersion, r.Meta.EventID, r.Data, winners[i])
		}
	}
	requireVersion(t, s, st, rounds)
	waitVisible(t, s, recs[len(recs)-1].Position)
	if all := readAll(t, s, event.Position{}, 7); len(all) != rounds {
		t.Fatalf("log holds %d events, want %d", len(all), rounds)
	}
}

func testIdempotency(t *testing.T, h Harness) {
	s, ctx := h.Store, ctxFor(t)
	const st = "cart-1"
	batch := []event.Event{created("a", 1), created("b", 2)}
	first, err := s.Append(ctx, st, event.NoStream, batch...)
	if err != nil || first.Duplicate || first.Version != 2 {
		t.Fatalf("first append: %+v, %v", first, err)
	}
	waitVisible(t, s, first.Last)
	logLen := len(readAll(t, s, event.Position{}, 100))
	if logLen != 2 {
		t.Fatalf("log holds %d events after the first append, want 2", logLen)
	}
	unchanged := func(what string) {
		t.Helper()
		requireVersion(t, s, st, 2)
		if n := len(readAll(t, s, event.Position{}, 100)); n != logLen {
			t.Fatalf("%s: log holds %d events, want %d", what, n, logLen)
		}
		if recs, err := s.ReadStream(ctx, st, 0); err != nil || len(recs) != 2 {
			t.Fatalf("%s: stream holds %d events (%v), want 2", what, len(recs), err)
		}
	}
	// A retry is acknowledged whatever expected version it carries: the
	// original one, AnyVersion, or the version the stream has now.
	for _, expected := range []int64{event.NoStream, event.AnyVersion, 2} {
		res, err := s.Append(ctx, st, expected, batch...)
		if err != nil {
			t.Fatalf("retry at %d: %v", expected, err)
		}
		if !res.Duplicate || res.Version != first.Version || res.Last != first.Last {
			t.Fatalf("retry at %d: %+v, want duplicate of %+v", expected, res, first)
		}
		unchanged(fmt.Sprintf("retry at %d", expected))
	}
	// An event id may not be reused in another stream.
	if _, err := s.Append(ctx, "cart-2", event.NoStream, batch[0]); err == nil {
		t.Fatal("event id reused in another stream: no error")
	}
	requireVersion(t, s, "cart-2", 0)
	// Nor mixed with new events in a batch that is not a pure retry.
	if _, err := s.Append(ctx, st, 2, batch[1], created("c", 3)); err == nil {
		t.Fatal("batch mixing a stored and a new event id: no error")
	}
	unchanged("rejected appends")
	// The stream still moves on normally.
	if res, err := s.Append(ctx, st, 2, created("c", 3)); err != nil || res.Version != 3 || res.Duplicate {
		t.Fatalf("append after retries: %+v, %v", res, err)
	}
}
