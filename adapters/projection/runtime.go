package projection

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// Defaults of the Options.
const (
	DefaultWaitTimeout      = 2 * time.Second
	DefaultLiveBatchSize    = 1000
	DefaultRebuildBatchSize = 5000
	DefaultApplyTimeout     = time.Minute
)

// Options tune a Runtime; the zero value is the defaults.
type Options struct {
	// WaitTimeout bounds WaitFor (DefaultWaitTimeout if 0).
	WaitTimeout time.Duration
	// LiveBatchSize is the number of events a live runner reads and applies
	// per transaction (DefaultLiveBatchSize if 0). A runner that is far
	// behind catches up at this batch size.
	LiveBatchSize int
	// RebuildBatchSize is Rebuild's default batch size
	// (DefaultRebuildBatchSize if 0).
	RebuildBatchSize int
	// IdleWait bounds how long an idle runner waits for a notification
	// before it looks at the log again (watermill.DefaultIdleWait if 0).
	IdleWait time.Duration
	// ApplyTimeout bounds one live batch's Apply (DefaultApplyTimeout if 0).
	ApplyTimeout time.Duration
	// RetryMin and RetryMax bound the back-off of a runner whose batch
	// failed (1s and 30s if 0).
	RetryMin, RetryMax time.Duration

	// OnBatch, if set, is called after a live batch committed (metrics).
	OnBatch func(projection string, events int, took time.Duration)
	// OnError, if set, is called when a live batch or query failed and was
	// rolled back (metrics, alerting).
	OnError func(projection string, err error)
	// OnChange, if set, is called with what each batch of an Announcer's
	// projection changed, whichever process applied it: by this process's
	// runner once the batch's transaction ended (committed or not), and as
	// the runtime hears it on ChangesChannel (every batch is announced
	// there, in its own transaction); with a change of all when a
	// projection's tables are replaced (a rebuild's switch, a replay of the
	// log into tables that were lost) and when announcements may have gone
	// unheard. A read-your-writes wait (WaitFor) on an Announcer's
	// projection is over only once the runtime heard the batch (see
	// Hearing). Calls come from one goroutine at a time but several
	// goroutines in all; OnChange must be quick.
	OnChange func(Change)
}

// Runtime feeds the event log, in log order, to projectors.
//
// Live, each projector has its own watermill subscriber over the events
// table (adapters/watermill) whose consumer group is the projection's
// checkpoint row. A batch of events is read, applied set-wise with one
// Apply call and the checkpoint is advanced, all in the subscriber's
// transaction: a crash or cancellation anywhere rolls the whole batch back,
// and the checkpoint row is locked for the batch (FOR UPDATE SKIP LOCKED),
// so two runners of the same projection (two processes) never both apply.
type Runtime struct {
	pool     *pgxpool.Pool
	store    *postgres.EventStore
	listener *postgres.Listener
	log      *slog.Logger
	projs    []projections.Projector
	byName   map[string]projections.Projector
	opts     Options

	wake    postgres.Broadcast // any new events, or a local switch
	watcher *cpWatcher
	changes *postgres.Listener // on ChangesChannel, with Options.OnChange
	synced  atomic.Bool        // changes has read the checkpoints since it listens
	// stopHearing ends with Start's context (set before changes runs).
	stopHearing <-chan struct{}
	growth      growth // when the projections' tables are due for ANALYZE

	mu      sync.Mutex
	started bool
	runners map[string]*runner
	wg      sync.WaitGroup
}

var (
	nameRe  = regexp.MustCompile(`^[a-z][a-z0-9_]{0,39}$`)
	tableRe = regexp.MustCompile(`^[a-z][a-z0-9_]{0,62}$`)
)

// New is NewRuntime with default options.
func New(pool *pgxpool.Pool, store *postgres.EventStore, listener *postgres.Listener, logger *slog.Logger, projectors ...projections.Projector) *Runtime {
	return NewRuntime(pool, store, listener, logger, Options{}, projectors...)
}

// NewRuntime returns a runtime for projectors. listener is the
// LISTEN/NOTIFY listener on postgres.NotifyChannel that the caller runs; if
// nil, Start runs one of its own. Projector names must be lower-case
// identifiers of at most 40 characters, unique, and their table names
// unique across all projectors (each gets a view in the public schema):
// NewRuntime panics otherwise.
func NewRuntime(pool *pgxpool.Pool, store *postgres.EventStore, listener *postgres.Listener, logger *slog.Logger, opts Options, projectors ...projections.Projector) *Runtime {
	if pool == nil || store == nil {
		panic("projection.NewRuntime: nil pool or store")
	}
	if logger == nil {
		logger = slog.Default()
	}
	rt := &Runtime{
		pool: pool, store: store, listener: listener, log: logger, opts: opts,
		byName: map[string]projections.Projector{}, runners: map[string]*runner{},
	}
	rt.watcher = newCPWatcher(pool)
	if opts.OnChange != nil {
		rt.changes = rt.hearing()
		rt.watcher.hearing, rt.watcher.missed = rt.Hearing, rt.missed
	}
	tables := map[string]string{}
	for _, p := range projectors {
		name := p.Name()
		if !nameRe.MatchString(name) {
			panic(fmt.Sprintf("projection.NewRuntime: invalid projection name %q (want %s)", name, nameRe))
		}
		if _, dup := rt.byName[name]; dup {
			panic("projection.NewRuntime: projection registered twice: " + name)
		}
		if len(p.Tables()) == 0 {
			panic("projection.NewRuntime: projection " + name + " has no tables")
		}
		for _, t := range p.Tables() {
			if !tableRe.MatchString(t) {
				panic(fmt.Sprintf("projection.NewRuntime: projection %s: invalid table name %q", name, t))
			}
			if other, dup := tables[t]; dup {
				panic(fmt.Sprintf("projection.NewRuntime: table %s declared by both %s and %s", t, other, name))
			}
			tables[t] = name
		}
		rt.byName[name] = p
		rt.projs = append(rt.projs, p)
		rt.watcher.gated[name] = announcing(p)
	}
	return rt
}

// Names returns the projection names, in registration order.
func (rt *Runtime) Names() []string {
	out := make([]string, len(rt.projs))
	for i, p := range rt.projs {
		out[i] = p.Name()
	}
	return out
}

// Setup makes sure every projection has its checkpoint row, its tables
// (version 1 the first time) and its public views, so that readers can
// query them. It is idempotent and safe to run from several processes at
// once; Start runs it too.
func (rt *Runtime) Setup(ctx context.Context) error {
	for _, p := range rt.projs {
		if err := rt.ensure(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// Run is Start then Wait: it runs the projections until ctx ends and
// returns nil then, or Start's error.
func (rt *Runtime) Run(ctx context.Context) error {
	if err := rt.Start(ctx); err != nil {
		return err
	}
	rt.Wait()
	return nil
}

// Start runs Setup, then starts one runner per projection and returns.
// Runners stop when ctx ends; Wait waits for them.
func (rt *Runtime) Start(ctx context.Context) error {
	rt.mu.Lock()
	if rt.started {
		rt.mu.Unlock()
		return errors.New("projections: runtime already started")
	}
	rt.started = true
	rt.mu.Unlock()

	if err := rt.Setup(ctx); err != nil {
		return err
	}
	if rt.listener == nil {
		rt.listener = postgres.NewListener(rt.pool, postgres.NotifyChannel, rt.log)
		rt.listener.Own(rt.store)
		rt.wg.Add(1)
		go func() { defer rt.wg.Done(); rt.listener.Run(ctx) }()
	}
	if rt.changes != nil {
		rt.stopHearing = ctx.Done()
		rt.wg.Add(1)
		go func() { defer rt.wg.Done(); rt.changes.Run(ctx) }()
	}
	// Forward notifications of new events to the runners' wake-up channel,
	// which local batch commits also trigger.
	rt.wg.Add(1)
	go func() {
		defer rt.wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-rt.listener.C():
				rt.wake.Fire()
			}
		}
	}()
	rt.mu.Lock()
	for _, p := range rt.projs {
		r := &runner{rt: rt, p: p, name: p.Name(), state: StateStarting, since: time.Now(),
			wake: rt.listener.Watch(notifiesFor(p)), parks: rt.listener.Watch(notifiesParks)}
		rt.runners[r.name] = r
		rt.wg.Add(1)
		go func() { defer rt.wg.Done(); r.run(ctx) }()
	}
	rt.mu.Unlock()
	return nil
}

// Wait blocks until every goroutine Start started has ended (after the end
// of Start's context).
func (rt *Runtime) Wait() { rt.wg.Wait() }

// fireAll wakes every runner (a switch: each may have something to do).
func (rt *Runtime) fireAll() {
	rt.wake.Fire()
	rt.mu.Lock()
	defer rt.mu.Unlock()
	for _, r := range rt.runners {
		r.wake.Fire()
	}
}

// batchDone follows a batch of n events up to last that the runner of
// projection name committed.
func (rt *Runtime) batchDone(name string, n int, took time.Duration, last event.Position) {
	rt.watcher.advance(name, last)
	// A batch's transaction hides the events appended while it ran from
	// the other runners (they read below the oldest running transaction):
	// wake those that were woken for events and found none.
	rt.mu.Lock()
	for _, r := range rt.runners {
		if r.name != name && r.starved() {
			r.wake.Fire()
		}
	}
	rt.mu.Unlock()
	if rt.opts.OnBatch != nil {
		rt.opts.OnBatch(name, n, took)
	}
}

func (rt *Runtime) liveBatch() int {
	if rt.opts.LiveBatchSize > 0 {
		return rt.opts.LiveBatchSize
	}
	return DefaultLiveBatchSize
}
