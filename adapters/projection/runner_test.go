package projection_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// A batch that fails half-way (after part of its writes) is rolled back
// entirely and retried: nothing lost, nothing applied twice.
func TestFailureMidBatchIsRolledBackAndRetried(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	var calls, failures atomic.Int32
	c := &counter{name: "flaky"}
	c.mid = func(ctx context.Context, schema string, n int) error {
		if calls.Add(1)%3 == 2 {
			failures.Add(1)
			return errors.New("injected failure")
		}
		return nil
	}
	e.appendEvents(t, "s", 11, 600)
	var onErr atomic.Int32
	r := e.start(t, func(o *projection.Options) {
		o.LiveBatchSize = 50
		o.OnError = func(string, error) { onErr.Add(1) }
	}, c)
	e.appendConcurrently(t, 3, 100)
	caughtUp(t, e, r.rt, "flaky")
	assertExact(t, e.pool, c, nil)
	if failures.Load() == 0 || onErr.Load() == 0 {
		t.Errorf("no failure injected (%d) or reported (%d)", failures.Load(), onErr.Load())
	}
}

// Cancelling the runtime in the middle of a batch (its first half written)
// leaves exactly the committed prefix; a new runtime finishes the job.
func TestCancelMidBatchThenRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.appendEvents(t, "s", 17, 1000)
	e.waitReadable(t) // so that the first batches are full
	var calls atomic.Int32
	midBatch := make(chan struct{})
	c := &counter{name: "crashy"}
	c.mid = func(ctx context.Context, schema string, n int) error {
		if calls.Add(1) == 4 {
			close(midBatch)
			<-ctx.Done() // the "crash": the context ends in the middle of the batch
			return ctx.Err()
		}
		return nil
	}
	r := e.start(t, func(o *projection.Options) { o.LiveBatchSize = 100 }, c)
	<-midBatch
	r.stop()

	_, cp := e.checkpoint(t, "crashy")
	if cp.IsZero() || !cp.Less(e.lastCommitted(t)) {
		t.Fatalf("checkpoint %s: want between the start and the head", cp)
	}
	assertExact(t, e.pool, c, &cp) // exactly the committed batches, no half batch
	var applied int64
	if err := e.pool.QueryRow(context.Background(), `SELECT sum(n) FROM public.crashy_types`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if applied != 300 {
		t.Errorf("%d events applied before the crash, want 3 batches of 100", applied)
	}

	c2 := &counter{name: "crashy"}
	r2 := e.start(t, nil, c2)
	e.appendEvents(t, "after", 5, 50)
	caughtUp(t, e, r2.rt, "crashy")
	assertExact(t, e.pool, c2, nil)
	if got := c2.applied.Load(); got != 1050-300 {
		t.Errorf("restarted runtime applied %d events, want %d", got, 1050-300)
	}
}

// A process killed with SIGKILL in the middle of a batch loses nothing and
// applies nothing twice.
func TestKillMidBatchThenRestart(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.appendEvents(t, "s", 9, 1000)
	e.waitReadable(t) // so that the first batches are full

	cmd := exec.Command(os.Args[0], "-test.run=^TestKilledRunnerHelper$", "-test.v")
	cmd.Env = append(os.Environ(), "CMS_KILL_HELPER_URL="+e.url)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(out)
	found := make(chan bool, 1)
	go func() {
		ok := false
		for sc.Scan() {
			if strings.Contains(sc.Text(), "MID-BATCH") {
				ok = true
				break
			}
		}
		found <- ok
		_, _ = io.Copy(io.Discard, out)
	}()
	select {
	case ok := <-found:
		if !ok {
			_ = cmd.Wait()
			t.Fatal("helper ended without reaching the middle of a batch")
		}
	case <-time.After(30 * time.Second):
		_ = cmd.Process.Kill()
		t.Fatal("helper did not reach the middle of a batch")
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	_, cp := e.checkpoint(t, "killed")
	assertExact(t, e.pool, &counter{name: "killed"}, &cp)
	var applied int64
	if err := e.pool.QueryRow(context.Background(), `SELECT coalesce(sum(n), 0) FROM public.killed_types`).Scan(&applied); err != nil {
		t.Fatal(err)
	}
	if applied != 200 {
		t.Errorf("%d events applied before the kill, want 2 batches of 100", applied)
	}

	c := &counter{name: "killed"}
	r := e.start(t, nil, c)
	caughtUp(t, e, r.rt, "killed")
	assertExact(t, e.pool, c, nil)
	if got := c.applied.Load(); got != 800 {
		t.Errorf("restarted runtime applied %d events, want 800", got)
	}
}

// TestKilledRunnerHelper is the process TestKillMidBatchThenRestart kills.
func TestKilledRunnerHelper(t *testing.T) {
	url := os.Getenv("CMS_KILL_HELPER_URL")
	if url == "" {
		t.Skip("helper process only")
	}
	e := openEnv(t, url)
	var calls atomic.Int32
	c := &counter{name: "killed"}
	c.mid = func(ctx context.Context, schema string, n int) error {
		if calls.Add(1) == 3 {
			fmt.Println("MID-BATCH")
			time.Sleep(time.Minute)
		}
		return nil
	}
	e.start(t, func(o *projection.Options) { o.LiveBatchSize = 100 }, c)
	time.Sleep(time.Minute)
}

// Events whose notification came before the runner listened, and that an
// open transaction hides from its first query, are still picked up soon
// after that transaction ends, though the runner's idle wait is an hour:
// the fruitless query finds them waiting past the checkpoint, and the
// runner polls fast.
func TestRunnerFindsEventsHiddenBeforeItListened(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	// The runtime's listener listens already, so that its start wakes no
	// runner: only the events' notification could, and it is gone.
	l := postgres.NewListener(e.pool, postgres.NotifyChannel, testLogger())
	lctx, lcancel := context.WithCancel(ctx)
	defer lcancel()
	go l.Run(lctx)
	for deadline := time.Now().Add(10 * time.Second); !l.Listening(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("listener never listened")
		}
	}
	// An open transaction with an id hides every later commit from readers.
	hider, err := e.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer hider.Rollback(ctx) //nolint:errcheck
	if _, err := hider.Exec(ctx, `SELECT pg_current_xact_id()`); err != nil {
		t.Fatal(err)
	}
	pos := e.appendEvents(t, "hidden", 2, 5)
	time.Sleep(100 * time.Millisecond) // their notification has come and gone

	c := &counter{name: "hidden"}
	rt := projection.NewRuntime(e.pool, e.store, l, testLogger(),
		projection.Options{IdleWait: time.Hour, RetryMin: 20 * time.Millisecond, RetryMax: 200 * time.Millisecond}, c)
	rctx, cancel := context.WithCancel(ctx)
	defer func() { cancel(); rt.Wait() }()
	if err := rt.Start(rctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(300 * time.Millisecond) // the runner's first query finds nothing
	if n := c.applied.Load(); n != 0 {
		t.Fatalf("applied %d events hidden by an open transaction", n)
	}
	if err := hider.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if !rt.WaitForBound(ctx, 20*time.Second, pos, "hidden") {
		t.Fatalf("the hidden events were not applied within 20s of the transaction's end (runner %+v)", rt.Health()[0])
	}
	t.Logf("applied %s after the hiding transaction ended", time.Since(start).Round(time.Millisecond))
	assertExact(t, e.pool, c, nil)
}

// lazyCounter is an Unhurried counter: woken by item creations only.
type lazyCounter struct {
	*counter
	batches atomic.Int64
}

func (l *lazyCounter) Wakes(eventType string) bool { return eventType == "test.item_created" }

func (l *lazyCounter) Apply(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	l.batches.Add(1)
	return l.counter.Apply(ctx, db, schema, events)
}

// An Unhurried projector's runner leaves the events it is not woken for
// to its idle polls, even while they keep coming: it does not read again
// at once after each batch (a batch transaction every few milliseconds).
// They are applied at those polls.
func TestUnhurriedRunnerWaitsForItsIdlePoll(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx := context.Background()
	c := &lazyCounter{counter: &counter{name: "lazy"}}
	const idle = 300 * time.Millisecond
	r := e.start(t, func(o *projection.Options) { o.IdleWait = idle }, c)
	start := time.Now()
	var (
		mu   sync.Mutex
		last event.Position
		wg   sync.WaitGroup
	)
	for w := range 4 { // a steady stream: an append every millisecond or so
		wg.Go(func() {
			for time.Since(start) < 1500*time.Millisecond {
				res, err := e.store.Append(ctx, event.StreamID("lazy", fmt.Sprint(w)), event.AnyVersion,
					event.Event{Data: itemBumped{ID: fmt.Sprint(w), By: 1}})
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if last.Less(res.Last) {
					last = res.Last
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	took := time.Since(start)
	// Each idle poll's batch may be followed by one more, of what came
	// while it ran.
	if n, most := c.batches.Load(), 2*int64(took/idle)+2; n > most {
		t.Errorf("%d batches in %v while events it is not woken for kept coming, want at most %d (its idle polls)",
			n, took.Round(time.Millisecond), most)
	}
	if !r.rt.WaitForBound(ctx, 10*time.Second, last, "lazy") {
		t.Fatalf("the events were not applied at the idle poll (runner %+v)", r.rt.Health()[0])
	}
	assertExact(t, e.pool, c.counter, nil)
}
