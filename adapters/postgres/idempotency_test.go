package postgres_test

import (
	"context"
	"crypto/sha256"
	"sync"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
)

// The store's contract: one reservation per key among concurrent ones;
// in flight until completed; the answer replayed to the same body, a
// mismatch for another; keys scoped by caller and route; a released key
// free again; expired keys and lapsed leases free and cleaned up.
func TestIdempotencyKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := postgres.NewIdempotencyKeys(pool, time.Hour, time.Hour)
	ha, hb := sha256.Sum256([]byte("a")), sha256.Sum256([]byte("b"))

	var wg sync.WaitGroup
	var mu sync.Mutex
	got := map[postgres.IdempotencyState]int{}
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st, _, err := s.Reserve(ctx, "user:u1", "POST /x", "k1", ha[:])
			if err != nil {
				t.Error(err)
			}
			mu.Lock()
			got[st]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	if got[postgres.KeyReserved] != 1 || got[postgres.KeyInFlight] != 7 {
		t.Fatalf("concurrent reservations: %v, want one reserved, seven in flight", got)
	}
	want := postgres.IdempotencyAnswer{Status: 201, Header: map[string][]string{"Location": {"/x/1"}}, Body: []byte(`{"id":1}`)}
	if err := s.Complete(ctx, "user:u1", "POST /x", "k1", want); err != nil {
		t.Fatal(err)
	}
	st, a, err := s.Reserve(ctx, "user:u1", "POST /x", "k1", ha[:])
	if err != nil || st != postgres.KeyAnswered || a.Status != 201 || a.Header["Location"][0] != "/x/1" || string(a.Body) != `{"id":1}` {
		t.Fatalf("replay: %v %+v %v", st, a, err)
	}
	if st, _, _ := s.Reserve(ctx, "user:u1", "POST /x", "k1", hb[:]); st != postgres.KeyMismatch {
		t.Fatalf("another body: %v, want a mismatch", st)
	}
	for _, o := range [][2]string{{"user:u2", "POST /x"}, {"user:u1", "POST /y"}} {
		if st, _, _ := s.Reserve(ctx, o[0], o[1], "k1", hb[:]); st != postgres.KeyReserved {
			t.Fatalf("%v: %v, want the key free there", o, st)
		}
	}
	if err := s.Release(ctx, "user:u2", "POST /x", "k1"); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := s.Reserve(ctx, "user:u2", "POST /x", "k1", ha[:]); st != postgres.KeyReserved {
		t.Fatalf("after release: %v, want reserved", st)
	}
	// Release never forgets an answer.
	if err := s.Release(ctx, "user:u1", "POST /x", "k1"); err != nil {
		t.Fatal(err)
	}
	if st, _, _ := s.Reserve(ctx, "user:u1", "POST /x", "k1", ha[:]); st != postgres.KeyAnswered {
		t.Fatalf("release of an answered key: %v, want the answer kept", st)
	}

	short := postgres.NewIdempotencyKeys(pool, 50*time.Millisecond, 20*time.Millisecond)
	if st, _, _ := short.Reserve(ctx, "user:u3", "POST /x", "k", ha[:]); st != postgres.KeyReserved {
		t.Fatal(st)
	}
	time.Sleep(30 * time.Millisecond)
	if st, _, _ := short.Reserve(ctx, "user:u3", "POST /x", "k", ha[:]); st != postgres.KeyReserved {
		t.Fatalf("lapsed lease: %v, want the key taken over", st)
	}
	_ = short.Complete(ctx, "user:u3", "POST /x", "k", want)
	time.Sleep(60 * time.Millisecond)
	if st, _, _ := short.Reserve(ctx, "user:u3", "POST /x", "k", hb[:]); st != postgres.KeyReserved {
		t.Fatalf("expired key: %v, want it free", st)
	}
	time.Sleep(60 * time.Millisecond)
	if n, err := s.Cleanup(ctx); err != nil || n != 1 {
		t.Fatalf("cleanup: %d %v, want the one expired key deleted", n, err)
	}
}
