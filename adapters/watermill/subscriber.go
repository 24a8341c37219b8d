package watermill

import (
	"context"
	"database/sql"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	wm "github.com/ThreeDotsLabs/watermill"
	wmsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
)

// DefaultIdleWait is how long an idle subscriber waits for a notification
// before it queries again anyway.
const DefaultIdleWait = 500 * time.Millisecond

// Backoff is a watermill-sql BackoffManager for one subscription. When a
// query found nothing it waits for a wake-up (LISTEN/NOTIFY on
// postgres.NotifyChannel, through postgres.Listener.C) for at most Idle,
// then lets the subscriber query again at once: consumers wake on new
// events instead of polling. Query errors back off exponentially.
//
// The wake-up channel is taken before each query, so a notification that
// arrives while the query runs is not missed.
type Backoff struct {
	ctx  context.Context
	wake func() <-chan struct{}
	next <-chan struct{}

	// Idle bounds the wait for a notification (DefaultIdleWait if 0).
	Idle time.Duration
	// MinRetry and MaxRetry bound the exponential back-off after query
	// errors (100ms and 5s if 0).
	MinRetry, MaxRetry time.Duration
	// FastPoll is the first re-poll delay after a wake-up that found
	// nothing readable (10ms if 0); it doubles up to MaxFastPoll (1s if
	// 0) and goes on at that pace until the subscriber reads something,
	// unless it reaches Idle first: with a long Idle, a subscriber woken
	// for events that an open transaction hides still looks at least
	// once a second, instead of waiting longer and longer.
	FastPoll, MaxFastPoll time.Duration
	// OnQuery, if set, is called after every query transaction ended
	// (committed or rolled back) with the subscriber's outcome.
	OnQuery func(noMsg bool, err error)
	// Pending, if set, is asked after a query that found nothing while
	// the subscriber was not woken: does the log hold events for it past
	// its checkpoint (committed, so the query found nothing because an
	// open transaction hides them)? If so, the subscriber polls fast as
	// after a wake-up instead of waiting for a notification: the one that
	// announced those events may have come before the subscriber took its
	// wake-up channel, or have been merged with an earlier one. Events
	// committed after the check notify the channel taken before the query.
	Pending func(ctx context.Context) bool
	// Rest, if set, is asked after a query that found events, when no
	// wake-up came while it ran: true makes the subscriber wait for a
	// wake-up, or Idle, before it queries again, as after a query that
	// found none, instead of querying again at once.
	Rest func() bool

	retry   time.Duration
	hot     bool // woken, or events wait that it cannot read yet: poll fast
	step    time.Duration
	starved atomic.Bool // woken by a notification, nothing found since
}

// Starved reports whether the subscriber was woken and has found nothing
// since: the new events may be hidden by a transaction still open, and
// the end of any transaction is worth a look.
func (b *Backoff) Starved() bool { return b.starved.Load() }

var _ wmsql.BackoffManager = (*Backoff)(nil)

// NewBackoff returns a back-off manager that stops waiting when ctx ends.
// wake returns a channel closed at the next notification (for example
// (*postgres.Listener).C); nil means plain polling every Idle.
func NewBackoff(ctx context.Context, wake func() <-chan struct{}) *Backoff {
	b := &Backoff{ctx: ctx, wake: wake}
	b.arm()
	return b
}

func (b *Backoff) arm() {
	if b.wake != nil {
		b.next = b.wake()
	}
}

// fired reports whether the wake-up channel taken before the query has
// fired since.
func (b *Backoff) fired() bool {
	select {
	case <-b.next: // nil (no wake source) never fires
		return true
	default:
		return false
	}
}

// carry takes the wake-up channel for the next query, which counts as
// woken (it polls fast if it finds nothing) when woken is set.
func (b *Backoff) carry(woken bool) {
	if woken {
		b.heat()
	}
	b.arm()
}

// heat makes the subscriber poll fast until it reads something: it was
// woken, or events it cannot read yet are waiting.
func (b *Backoff) heat() {
	if !b.hot {
		b.hot, b.step = true, 0
	}
	b.starved.Store(true)
}

// HandleError implements wmsql.BackoffManager.
func (b *Backoff) HandleError(logger wm.LoggerAdapter, noMsg bool, err error) time.Duration {
	if b.OnQuery != nil {
		b.OnQuery(noMsg, err)
	}
	if b.ctx.Err() != nil {
		return 0 // the subscriber notices the end of its context itself
	}
	// A wake-up that came while the query ran may announce events the
	// query did not see. The next query runs at once (or after a retry
	// wait) anyway, but if an open transaction hides those events from
	// it too, it must count as woken and look again soon, not wait Idle.
	woken := b.fired()
	if err != nil {
		msg := strings.ToLower(err.Error())
		if strings.Contains(msg, "deadlock") || strings.Contains(msg, "could not serialize") {
			b.carry(woken)
			return 0
		}
		minR, maxR := b.MinRetry, b.MaxRetry
		if minR <= 0 {
			minR = 100 * time.Millisecond
		}
		if maxR <= 0 {
			maxR = 5 * time.Second
		}
		if b.retry < minR {
			b.retry = minR
		} else if b.retry *= 2; b.retry > maxR {
			b.retry = maxR
		}
		logger.Error("querying events failed", err, wm.LogFields{"wait_time": b.retry})
		b.carry(woken)
		return b.retry
	}
	b.retry = 0
	if !noMsg {
		b.hot, b.step = false, 0
		b.starved.Store(false)
		if woken || b.Rest == nil || !b.Rest() {
			b.carry(woken)
			return 0
		}
		// Resting: wait below as after a query that found nothing.
	} else if !b.hot && !woken && b.Pending != nil && b.Pending(b.ctx) {
		b.heat()
	}
	idle := b.Idle
	if idle <= 0 {
		idle = DefaultIdleWait
	}
	wait := idle
	if b.hot {
		// Woken, yet nothing readable: the new events are hidden for now
		// by an older transaction still open somewhere in the cluster (it
		// holds back pg_snapshot_xmin). Look again soon, then less and
		// less often, rather than after a full idle wait.
		fast := b.FastPoll
		if fast <= 0 {
			fast = 10 * time.Millisecond
		}
		maxFast := b.MaxFastPoll
		if maxFast <= 0 {
			maxFast = time.Second
		}
		if b.step == 0 {
			b.step = fast
		} else {
			b.step = min(2*b.step, maxFast)
		}
		if b.step < idle {
			wait = b.step
		} else {
			b.hot, b.step = false, 0
		}
	}
	t := time.NewTimer(wait)
	select {
	case <-b.next: // nil (no wake source) blocks: plain timeout
		b.heat()
	case <-t.C:
	case <-b.ctx.Done():
	}
	t.Stop()
	b.arm()
	return 0
}

// SubscriberConfig configures NewSubscriber.
type SubscriberConfig struct {
	// Projection is the consumer group: the checkpoint row's name.
	Projection string
	// BatchSize is the number of events per SELECT (DefaultBatchSize if 0).
	BatchSize int
	// Skip: see EventsSchema.Skip.
	Skip []string
	// HandlerWritesCheckpoint: see CheckpointOffsets.
	HandlerWritesCheckpoint bool
	// Backoff, if nil, polls every DefaultIdleWait.
	Backoff wmsql.BackoffManager
	// AckDeadline as in watermill-sql; nil means none (0), which is safe
	// with HandlerWritesCheckpoint and leaves time limits to the handler.
	AckDeadline *time.Duration
	Logger      *slog.Logger
}

// NewSubscriber returns a watermill-sql subscriber over the events table
// for one projection. Subscribe to Topic. Cancel the Subscribe context
// before calling Close: Close alone lets watermill commit the acknowledged
// prefix of a batch (harmless with HandlerWritesCheckpoint, whose ack
// check then fails and rolls back).
func NewSubscriber(db wmsql.Conn, cfg SubscriberConfig) (*wmsql.Subscriber, error) {
	deadline := cfg.AckDeadline
	if deadline == nil {
		var zero time.Duration
		deadline = &zero
	}
	b := cfg.Backoff
	if b == nil {
		b = NewBackoff(context.Background(), nil)
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	begin := &commitWatch{Beginner: wmsql.BeginnerFromPgx(db)}
	return wmsql.NewSubscriber(begin, wmsql.SubscriberConfig{
		ConsumerGroup:  cfg.Projection,
		AckDeadline:    deadline,
		BackoffManager: commitChecked{BackoffManager: b, commits: begin},
		SchemaAdapter:  EventsSchema{BatchSize: cfg.BatchSize, Skip: cfg.Skip},
		OffsetsAdapter: CheckpointOffsets{HandlerWritesCheckpoint: cfg.HandlerWritesCheckpoint},
	}, NewLogger(log))
}

// commitWatch begins a subscriber's query transactions and remembers
// whether the last one failed to commit. watermill-sql commits a query's
// transaction in a defer and only logs a failed commit (a broken
// connection, a deferred constraint, the subscription's context ending
// between the acknowledgement and COMMIT), so the query reports success
// for a batch that was rolled back.
type commitWatch struct {
	wmsql.Beginner
	failed atomic.Pointer[error] // the last query's commit error, until taken
}

func (c *commitWatch) BeginTx(ctx context.Context, opts *sql.TxOptions) (wmsql.Tx, error) {
	c.failed.Store(nil)
	tx, err := c.Beginner.BeginTx(ctx, opts)
	if err != nil {
		return nil, err
	}
	return watchedTx{Tx: tx, c: c}, nil
}

// take returns the last query's commit error, once.
func (c *commitWatch) take() error {
	if err := c.failed.Swap(nil); err != nil {
		return *err
	}
	return nil
}

// watchedTx is a query transaction whose failed commit is remembered.
type watchedTx struct {
	wmsql.Tx
	c *commitWatch
}

func (t watchedTx) Commit() error {
	err := t.Tx.Commit()
	if err != nil {
		t.c.failed.Store(&err)
	}
	return err
}

// commitChecked hands its BackoffManager (and so Backoff.OnQuery) the
// commit error of a query that reported success: a batch that did not
// commit is a failed query, and the subscriber backs off before it reads
// the batch again.
type commitChecked struct {
	wmsql.BackoffManager
	commits *commitWatch
}

func (c commitChecked) HandleError(logger wm.LoggerAdapter, noMsg bool, err error) time.Duration {
	if cerr := c.commits.take(); err == nil && cerr != nil {
		err = fmt.Errorf("commit the query's transaction: %w", cerr)
	}
	return c.BackoffManager.HandleError(logger, noMsg, err)
}
