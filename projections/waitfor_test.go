package projections

import (
	"context"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/domain/event"
)

// TestWatcherAdvance: a batch committed in this process wakes its waiters
// at once, without the checkpoint table (which has no row for the
// projection here, as if the refreshes had all read it before the
// commit); an older position does not; and no refresh takes a checkpoint
// back.
func TestWatcherAdvance(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	w := newCPWatcher(pool)
	pos := event.Position{TxID: 10, Pos: 5}
	done := make(chan bool, 1)
	go func() { done <- w.wait(ctx, pos, []string{"p"}, time.Now().Add(time.Minute)) }()
	notYet := func(what string) {
		t.Helper()
		select {
		case ok := <-done:
			t.Fatalf("%s: the wait ended (%v)", what, ok)
		case <-time.After(100 * time.Millisecond): // twenty refreshes
		}
	}
	notYet("no checkpoint")
	w.advance("p", event.Position{TxID: 10, Pos: 4})
	notYet("a checkpoint before the position")
	w.advance("p", pos)
	select {
	case ok := <-done:
		if !ok {
			t.Fatal("the wait ended unreached")
		}
	case <-time.After(5 * time.Second):
		t.Fatal("a local batch at the position did not end the wait")
	}
	if _, err := pool.Exec(ctx, `INSERT INTO projection_checkpoints (name, tx_id, position) VALUES ('p', '10', 2)`); err != nil {
		t.Fatal(err)
	}
	w.refresh()
	w.mu.Lock()
	got := w.pos["p"]
	w.mu.Unlock()
	if got != pos {
		t.Errorf("after a refresh that read an older checkpoint: %s, want %s", got, pos)
	}
}
