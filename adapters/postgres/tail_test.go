package postgres_test

import (
	"context"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/event"
)

type otherProbe struct{ N int }

func (otherProbe) EventType() string { return "other.probe" }

// ReadTail reads the events of a type prefix among the last n, and the
// head to follow on from: what ReadAll returns after it is what was
// appended after.
func TestReadTail(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	reg := eventcodec.NewRegistry()
	reg.Register(probe{}, 1)
	reg.Register(otherProbe{}, 1)
	s := openStore(t, pgtest.Pool(t), reg)
	evs, head, err := s.ReadTail(ctx, "pgtest.", 3)
	if err != nil || len(evs) != 0 || !head.IsZero() {
		t.Fatalf("empty log: %v %v %v", evs, head, err)
	}
	for i := 1; i <= 6; i++ {
		var data any = probe{i}
		if i%2 == 0 {
			data = otherProbe{i}
		}
		if _, err := s.Append(ctx, "tail-1", event.AnyVersion, event.Event{Data: data}); err != nil {
			t.Fatal(err)
		}
	}
	all := readVisible(t, s, event.Position{}, 6)
	// The last 4 are 3 (probe), 4, 5 (probe), 6.
	evs, head, err = s.ReadTail(ctx, "pgtest.", 4)
	if err != nil {
		t.Fatal(err)
	}
	if head != all[5].Position || len(evs) != 2 || evs[0].Position != all[2].Position || evs[1].Position != all[4].Position {
		t.Fatalf("tail of 4: head %v, events %+v; the log: %+v", head, evs, all)
	}
	if d, err := s.Decode(evs[1]); err != nil || d.Data != (probe{5}) {
		t.Errorf("decoded %+v, %v", d, err)
	}
	if evs, _, _ := s.ReadTail(ctx, "pgtest.", 100); len(evs) != 3 {
		t.Errorf("a tail longer than the log: %d events, want 3", len(evs))
	}
	if _, err := s.Append(ctx, "tail-1", event.AnyVersion, event.Event{Data: probe{7}}); err != nil {
		t.Fatal(err)
	}
	if after := readVisible(t, s, head, 1); after[0].Data != (probe{7}) {
		t.Errorf("after the head: %+v", after)
	}
}

// readVisible reads the log after p until it holds n events: log readers
// see a commit only once older transactions (of any test, on any
// database of the server) have ended.
func readVisible(t *testing.T, s *postgres.EventStore, after event.Position, n int) []event.Recorded {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		recs, err := s.ReadAll(context.Background(), after, 100)
		if err != nil {
			t.Fatalf("ReadAll: %v", err)
		}
		if len(recs) >= n {
			if len(recs) != n {
				t.Fatalf("ReadAll: %d events, want %d", len(recs), n)
			}
			return recs
		}
		if time.Now().After(deadline) {
			t.Fatalf("ReadAll: %d events after 30s, want %d", len(recs), n)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
