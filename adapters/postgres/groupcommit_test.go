package postgres_test

import (
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/event"
)

// Appends made at the same time share transactions: 16 writers appending
// one event at a time are written in fewer groups than calls, and every
// call is written once (the contract suite checks each result).
func TestGroupCommitSharesTransactions(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := openStore(t, pool, probeRegistry())
	const writers, each = 16, 25
	var wg sync.WaitGroup
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				if _, err := s.Append(ctx, fmt.Sprintf("group-%d", w), int64(i), probes(i)...); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	groups, calls := s.GroupStats()
	if calls != writers*each || groups >= calls {
		t.Errorf("%d calls written in %d groups, want all %d calls in fewer groups", calls, groups, writers*each)
	}
	if n := eventCount(t, pool); n != writers*each {
		t.Errorf("%d events stored, want %d", n, writers*each)
	}
	t.Logf("%d calls in %d groups", calls, groups)
}

// A call that cannot join a group (a large append, any version) is
// written on its own, as before.
func TestGroupCommitLeavesLargeAppendsAlone(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t, pgtest.Pool(t), probeRegistry())
	large := make([]event.Event, 40)
	for i := range large {
		large[i] = probes(i)[0]
	}
	if _, err := s.Append(ctx, "large", event.NoStream, large...); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Append(ctx, "any", event.AnyVersion, probes(1)...); err != nil {
		t.Fatal(err)
	}
	if groups, calls := s.GroupStats(); groups != 0 || calls != 0 {
		t.Errorf("%d calls written in %d groups, want none", calls, groups)
	}
}
