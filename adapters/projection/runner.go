package projection

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/halocms/halocms/adapters/postgres"
	cmswm "github.com/halocms/halocms/adapters/watermill"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// Runner states reported by Health.
const (
	StateStarting = "starting"
	StateRunning  = "running"
	StateBackoff  = "backoff" // the last batch failed; retrying soon
	// StateNeedsRebuild: the projector declares tables its current version
	// lacks, or another Layout; it waits for `cms projections rebuild`.
	StateNeedsRebuild = "needs_rebuild"
	StateStopped      = "stopped"
)

// runner runs one projection live.
type runner struct {
	rt   *Runtime
	p    projections.Projector
	name string
	wake *postgres.Broadcast // relevant notifications; see notifiesFor
	// parks fires when an event is parked or parked events are replayed
	// (in any process): a runner in back-off tries again at once.
	parks *postgres.Broadcast

	backoff atomic.Pointer[cmswm.Backoff] // of the current subscription
	// readUpTo is when its last batch's last event was recorded (Unix
	// nanoseconds; see rests).
	readUpTo atomic.Int64

	mu           sync.Mutex
	state        string
	since        time.Time
	lastActivity time.Time
	lastBatch    time.Time
	lastErr      error
	lastErrAt    time.Time
	failures     int
	failingEvent *event.Position // of lastErr, when locate found it
	// recorded is set while projection_failures holds this runner's
	// failure (deleted after the next batch that commits).
	recorded atomic.Bool

	// batchMu is held while a message is handled and while a batch's
	// outcome is recorded: watermill's query loop and the message loop
	// never touch the batch transaction or the fields below at once.
	batchMu       sync.Mutex
	stopCtx       context.Context // ends when the runner stops: bounds Apply
	buf           []event.Recorded
	pending       int
	pendingStart  time.Time
	pendingSchema string
	pendingLast   event.Position // the batch's last event: its checkpoint
	pendingChange *announcement  // what the batch changed, if its projector announces it
	failed        *failedBatch   // the batch whose Apply failed, for locate
	failedFrom    event.Position // the first event of the last batch that failed

	upMu      sync.Mutex // guards the two below (see upkeep)
	upRunning bool
	upNext    string // the schema of an upkeep asked for while one runs
}

func (r *runner) setState(s string) {
	r.mu.Lock()
	if r.state != s {
		r.state, r.since = s, time.Now()
	}
	r.mu.Unlock()
}

// starved reports whether the runner was woken for events and found none
// readable yet.
func (r *runner) starved() bool {
	b := r.backoff.Load()
	return b != nil && b.Starved()
}

func (r *runner) touch() {
	r.mu.Lock()
	r.lastActivity = time.Now()
	r.mu.Unlock()
}

func (r *runner) run(ctx context.Context) {
	defer r.setState(StateStopped)
	retryMin, retryMax := r.rt.opts.RetryMin, r.rt.opts.RetryMax
	if retryMin <= 0 {
		retryMin = time.Second
	}
	if retryMax <= 0 {
		retryMax = 30 * time.Second
	}
	wait := time.Duration(0)
	for ctx.Err() == nil {
		// Taken before the check, so that a rebuild that switches after
		// it still wakes the wait below.
		woken := r.rt.wake.C()
		parked := r.parks.C()
		if why, err := r.rt.outdatedVersion(ctx, r.p); err == nil && why != "" {
			// Paused until a rebuild (from any process) provides a version
			// that can take the projector's writes.
			r.mu.Lock()
			r.lastErr, r.lastErrAt = fmt.Errorf("%s: run `cms projections rebuild %s`", why, r.name), time.Now()
			r.mu.Unlock()
			r.setState(StateNeedsRebuild)
			select {
			case <-ctx.Done():
				return
			case <-woken: // new events, or a local rebuild switched
			case <-time.After(5 * time.Second):
			}
			continue
		}
		r.mu.Lock()
		before := r.lastBatch
		r.mu.Unlock()
		err := r.subscribe(ctx)
		if ctx.Err() != nil {
			return
		}
		var failingEvent *event.Position
		if f := r.failed; f != nil {
			r.failed = nil
			if first := f.events[0].Position; r.failedFrom == first {
				// The same batch failed again (not a failure of the
				// moment), and its transaction ended: find the event it
				// fails on.
				err = r.rt.explain(ctx, r.p, f.schema, f.events, err, "live")
			} else {
				r.failedFrom = first
			}
		}
		var ef *EventFailure
		if errors.As(err, &ef) {
			failingEvent = &ef.Position
		}
		r.mu.Lock()
		r.failures++
		r.lastErr, r.lastErrAt, r.failingEvent = err, time.Now(), failingEvent
		progressed := r.lastBatch.After(before)
		failures := r.failures
		r.mu.Unlock()
		r.rt.recordFailure(ctx, r, err, failingEvent, failures)
		if progressed {
			wait = 0 // batches went through before this failure: not a streak
		}
		if r.rt.opts.OnError != nil {
			r.rt.opts.OnError(r.name, err)
		}
		if wait == 0 {
			wait = retryMin
		} else if wait *= 2; wait > retryMax {
			wait = retryMax
		}
		r.rt.log.Error("projection batch failed, rolled back; retrying", "projection", r.name, "err", err, "retry_in", wait)
		r.setState(StateBackoff)
		select {
		case <-ctx.Done():
			return
		case <-parked: // the failing event may be parked now
		case <-time.After(wait):
		}
	}
}

// failedBatch is a batch whose Apply failed: what locate needs.
type failedBatch struct {
	schema string
	events []event.Recorded
}

// subscribe runs one watermill subscription until ctx ends or a batch
// fails. A failed batch cancels the subscription: watermill then rolls the
// batch transaction back (nothing of it, checkpoint included, commits) and
// the runner subscribes again after a back-off.
func (r *runner) subscribe(ctx context.Context) error {
	// watermill abandons a batch whose context ends while the handler is
	// still using the batch transaction, and rolls it back concurrently.
	// So the subscription's context is not ctx: it is cancelled only
	// between messages, once ctx ends. Apply itself runs under ctx, so a
	// stop interrupts it; the batch then fails and rolls back.
	r.stopCtx = ctx
	subCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	defer cancel()
	stopping := false
	go func() {
		select {
		case <-ctx.Done():
		case <-subCtx.Done():
			return
		}
		r.batchMu.Lock()
		stopping = true
		r.batchMu.Unlock()
		cancel()
	}()
	b := cmswm.NewBackoff(subCtx, r.wake.C)
	r.backoff.Store(b)
	b.Idle = r.rt.opts.IdleWait
	b.OnQuery = func(noMsg bool, err error) { r.onQuery(subCtx, noMsg, err) }
	b.Pending = r.eventsWaiting
	if _, ok := r.p.(projections.Unhurried); ok {
		b.Rest = r.rests
	}
	r.buf, r.pending = nil, 0
	sub, err := cmswm.NewSubscriber(r.rt.pool, cmswm.SubscriberConfig{
		Projection:              r.name,
		BatchSize:               r.rt.liveBatch(),
		Skip:                    r.rt.skipFor(r.p),
		HandlerWritesCheckpoint: true,
		Backoff:                 b,
		Logger:                  r.rt.log.With("projection", r.name),
	})
	if err != nil {
		return err
	}
	defer sub.Close()
	msgs, err := sub.Subscribe(subCtx, cmswm.Topic)
	if err != nil {
		return err
	}
	r.setState(StateRunning)
	r.touch()
	var failed error
	for msg := range msgs {
		r.batchMu.Lock()
		if failed != nil || stopping {
			r.batchMu.Unlock()
			continue // cancelled: drain without acknowledging
		}
		r.touch()
		if err := r.handle(msg); err != nil {
			failed = err
			cancel() // roll the batch back
		}
		r.batchMu.Unlock()
	}
	if failed == nil && ctx.Err() == nil {
		failed = errors.New("subscription ended")
	}
	return failed
}

// rests tells an Unhurried projector's runner, after a batch, to wait for
// a wake-up or its idle poll before it reads again, unless it is behind:
// the batch's last event was recorded an idle wait ago or more. Under a
// steady stream of writes it would otherwise read again at once, forever,
// a batch transaction every few milliseconds for the few events each
// finds. (The clocks are the database's and the server's: a skew makes it
// rest too little or catch up more slowly, never lose an event.)
func (r *runner) rests() bool {
	idle := r.rt.opts.IdleWait
	if idle <= 0 {
		idle = cmswm.DefaultIdleWait
	}
	return time.Since(time.Unix(0, r.readUpTo.Load())) < idle
}

// eventsWaiting reports whether the log holds events of the projector's types
// past its checkpoint, readable or not (see cmswm.Backoff.Pending); true
// if it cannot tell.
func (r *runner) eventsWaiting(ctx context.Context) bool {
	_, ok, err := r.rt.firstPending(ctx, r.p)
	return err != nil || ok
}

// notifiesFor returns which NotifyChannel payloads wake p's runner: those
// announcing an event type it handles (or, Unhurried, that it wants to be
// woken for), and those announcing any type. The others' events wait for
// its next idle poll (Options.IdleWait): no one waits for p to apply them
// at once, since every write waits only for the projections it depends
// on, and p would only skip them, or gather them into a later batch.
func notifiesFor(p projections.Projector) func(payload string) bool {
	var wakes func(string) bool
	if u, ok := p.(projections.Unhurried); ok {
		wakes = u.Wakes
	} else if s, ok := p.(projections.Selective); ok {
		wakes = s.Handles
	} else {
		return func(string) bool { return true }
	}
	return func(payload string) bool {
		types := postgres.NotifiedTypes(payload)
		if types == nil {
			return true
		}
		for _, t := range types {
			if wakes(t) {
				return true
			}
		}
		return false
	}
}
