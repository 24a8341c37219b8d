package projection

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
// commit); an older position does not; a refresh keeps the local
// advances it may have missed, and otherwise replaces the cache.
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
	// A refresh that began before an advance keeps it; one that began
	// after takes the table's word, even for an older checkpoint (a
	// projection whose tables were lost replays from the start).
	began := w.began()
	later := event.Position{TxID: 10, Pos: 9}
	w.advance("p", later)
	w.replace(began, []checkpoint{{"p", pos}})
	if got := w.cached("p"); got != later {
		t.Errorf("after a refresh that began before the advance to %s: %s", later, got)
	}
	w.replace(w.began(), []checkpoint{{"p", event.Position{}}})
	if got := w.cached("p"); got != (event.Position{}) {
		t.Errorf("after a refresh that read a checkpoint taken back to the start: %s", got)
	}
}

func (w *cpWatcher) cached(name string) event.Position {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.pos[name]
}
