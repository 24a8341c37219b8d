package memstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/eventstoretest"
	"github.com/halocms/halocms/adapters/memstore"
	"github.com/halocms/halocms/domain/event"
)

var _ eventstoretest.Store = (*memstore.Store)(nil)

func newHarness(t *testing.T, reg *eventcodec.Registry) eventstoretest.Harness {
	s := memstore.New(reg)
	return eventstoretest.Harness{
		Store:  s,
		Reopen: func(r *eventcodec.Registry) eventstoretest.Store { return s.WithCodec(r) },
		BeginHeld: func(ctx context.Context, stream string, expected int64, events ...event.Event) (eventstoretest.Held, error) {
			res, commit, rollback, err := s.Begin(ctx, stream, expected, events...)
			return eventstoretest.Held{Result: res, Commit: commit, Rollback: rollback}, err
		},
		// What the PostgreSQL store refuses, so that a test passes here
		// only where it would pass there.
		Rejected: map[string]any{
			"a number numeric cannot hold":              map[string]any{"n": json.Number("1e1000000")},
			"a NUL character in a string":               "a\u0000b",
			"a NUL character in a key":                  map[string]any{"a\u0000b": 1},
			"a number with too many digits after point": json.Number("1.0e-16383"),
		},
	}
}

func TestEventStoreContract(t *testing.T) {
	eventstoretest.Run(t, newHarness)
}

// The numbers numeric holds and those it refuses, as PostgreSQL 15 reads
// them as jsonb.
func TestNumericRange(t *testing.T) {
	for n, holds := range map[string]bool{
		"0": true, "-0": true, "1E5": true, "1e+131071": true, "1.5e131071": true, "0.5e131072": true,
		"0.0001e131075": true, "99999e131067": true, "0e1000000": true, "0e1073741822": true,
		"1e-16383": true, "0e-16383": true, "0.0e-16382": true, "-0.0e-16382": true,
		"1e131072": false, "-1e131072": false, "123456789e131064": false, "1e1000000": false, "1e-1000000": false,
		"1e-16384": false, "0e-16384": false, "0.0e-16383": false, "1.0e-16383": false, "100e-16385": false,
		"0e1073741823": false, "0e-1073741822": false, "0e99999999999": false, "0e99999999999999999999": false,
	} {
		if got := memstore.Numeric(n); got != holds {
			t.Errorf("numeric(%s) = %v, want %v", n, got, holds)
		}
	}
}

type probe struct{ N int }

func (probe) EventType() string { return "memstore.probe" }

// An append to a stream that an open transaction writes waits for it to
// end, and then meets what it wrote.
func TestAppendWaitsForOpenTransaction(t *testing.T) {
	ctx := context.Background()
	reg := eventcodec.NewRegistry()
	reg.Register(probe{}, 1)
	s := memstore.New(reg)
	_, commit, _, err := s.Begin(ctx, "open-1", event.NoStream, event.Event{Data: probe{1}})
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := s.Append(ctx, "open-1", event.NoStream, event.Event{Data: probe{2}})
		done <- err
	}()
	select {
	case err := <-done:
		t.Fatalf("the append did not wait for the open transaction: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	if err := commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, event.ErrVersionConflict) {
		t.Fatalf("the append after the commit: %v, want a version conflict", err)
	}
	if err := commit(); err == nil {
		t.Error("a second commit: no error")
	}
	// A cancelled wait gives up.
	_, _, rollback, err := s.Begin(ctx, "open-2", event.NoStream, event.Event{Data: probe{1}})
	if err != nil {
		t.Fatal(err)
	}
	defer rollback() //nolint:errcheck
	cctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	if _, err := s.Append(cctx, "open-2", event.AnyVersion, event.Event{Data: probe{2}}); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("an append waiting past its deadline: %v", err)
	}
}
