package projections

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"regexp"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres"
	cmswm "github.com/halocms/halocms/adapters/watermill"
	"github.com/halocms/halocms/domain/event"
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
	projs    []Projector
	byName   map[string]Projector
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
func New(pool *pgxpool.Pool, store *postgres.EventStore, listener *postgres.Listener, logger *slog.Logger, projectors ...Projector) *Runtime {
	return NewRuntime(pool, store, listener, logger, Options{}, projectors...)
}

// NewRuntime returns a runtime for projectors. listener is the
// LISTEN/NOTIFY listener on postgres.NotifyChannel that the caller runs; if
// nil, Start runs one of its own. Projector names must be lower-case
// identifiers of at most 40 characters, unique, and their table names
// unique across all projectors (each gets a view in the public schema):
// NewRuntime panics otherwise.
func NewRuntime(pool *pgxpool.Pool, store *postgres.EventStore, listener *postgres.Listener, logger *slog.Logger, opts Options, projectors ...Projector) *Runtime {
	if pool == nil || store == nil {
		panic("projections.NewRuntime: nil pool or store")
	}
	if logger == nil {
		logger = slog.Default()
	}
	rt := &Runtime{
		pool: pool, store: store, listener: listener, log: logger, opts: opts,
		byName: map[string]Projector{}, runners: map[string]*runner{},
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
			panic(fmt.Sprintf("projections.NewRuntime: invalid projection name %q (want %s)", name, nameRe))
		}
		if _, dup := rt.byName[name]; dup {
			panic("projections.NewRuntime: projection registered twice: " + name)
		}
		if len(p.Tables()) == 0 {
			panic("projections.NewRuntime: projection " + name + " has no tables")
		}
		for _, t := range p.Tables() {
			if !tableRe.MatchString(t) {
				panic(fmt.Sprintf("projections.NewRuntime: projection %s: invalid table name %q", name, t))
			}
			if other, dup := tables[t]; dup {
				panic(fmt.Sprintf("projections.NewRuntime: table %s declared by both %s and %s", t, other, name))
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

// SchemaName is the PostgreSQL schema holding version of projection name.
func SchemaName(name string, version int) string {
	return fmt.Sprintf("proj_%s_v%d", name, version)
}

func rebuildRow(name string) string { return name + "@rebuild" }

func ident(parts ...string) string { return pgx.Identifier(parts).Sanitize() }

// lockKey is the advisory lock key for one purpose on one projection.
func lockKey(purpose, name string) string { return "cms.projection." + purpose + ":" + name }

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
			wake: rt.listener.Watch(notifiesFor(p))}
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

// ensure creates the checkpoint row, the schema of the current version
// with its tables, and the public views, if missing. Concurrent callers
// (several processes starting) serialise on an advisory lock.
func (rt *Runtime) ensure(ctx context.Context, p Projector) error {
	name := p.Name()
	rewound := false
	err := pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, lockKey("ensure", name)); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO projection_checkpoints (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`, name); err != nil {
			return err
		}
		var version int
		var atStart bool
		if err := tx.QueryRow(ctx, `SELECT version, tx_id = '0' AND position = 0 FROM projection_checkpoints WHERE name = $1`,
			name).Scan(&version, &atStart); err != nil {
			return err
		}
		schema := SchemaName(name, version)
		var exists bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)`, schema).Scan(&exists); err != nil {
			return err
		}
		if !exists {
			if err := createVersion(ctx, tx, p, schema); err != nil {
				return err
			}
			if !atStart {
				// The tables were lost (dropped by hand?): fresh ones must
				// replay the log from its start.
				rt.log.Warn("projection schema was missing: re-created empty, replaying the log from the start",
					"projection", name, "schema", schema)
				if err := writeCheckpoint(ctx, tx, name, event.Position{}); err != nil {
					return err
				}
				if err := announce(ctx, tx, announcement{Change: Change{Projection: name, All: true}}); err != nil {
					return err
				}
				rewound = true
			} else {
				rt.log.Info("projection created", "projection", name, "version", version, "schema", schema)
			}
		}
		for _, t := range p.Tables() {
			var inSchema, view bool
			if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL, to_regclass($2) IS NOT NULL`,
				ident(schema, t), ident("public", t)).Scan(&inSchema, &view); err != nil {
				return err
			}
			if inSchema && !view {
				if _, err := tx.Exec(ctx, `CREATE VIEW `+ident("public", t)+` AS SELECT * FROM `+ident(schema, t)); err != nil {
					return err
				}
			}
		}
		if why, err := outdated(ctx, tx, p, schema); err != nil {
			return err
		} else if why != "" {
			// Not an error: the rebuild that fixes it must be able to run.
			rt.log.Warn("projection tables outdated (the projector's tables changed): the projection stays paused until rebuilt",
				"projection", name, "version", version, "reason", why, "fix", "cms projections rebuild "+name)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("projection %s: %w", name, err)
	}
	if rewound {
		rt.watcher.forget(name)
		rt.changedHere(announcement{Change: Change{Projection: name, All: true}})
	}
	return nil
}

// changedHere hands what a transaction of this process announced to
// Options.OnChange once it ended, committed or not (it may have committed
// all the same, on a connection lost while committing; telling of a change
// that did not happen only costs a reader a read), without waiting to
// hear it. The waiters are told when it is heard.
func (rt *Runtime) changedHere(a announcement) {
	if rt.opts.OnChange != nil && (a.All || len(a.Keys) > 0) {
		rt.opts.OnChange(a.Change)
	}
}

// outdatedVersion tells why the version readers and live runners use
// cannot take the projector's writes ("" when it can): see outdated.
func (rt *Runtime) outdatedVersion(ctx context.Context, p Projector) (string, error) {
	var version int
	if err := rt.pool.QueryRow(ctx, `SELECT version FROM projection_checkpoints WHERE name = $1`, p.Name()).Scan(&version); err != nil {
		return "", err
	}
	return outdated(ctx, rt.pool, p, SchemaName(p.Name(), version))
}

// outdated tells why the tables in schema cannot take the projector's
// writes, "" when they can: some of its tables are missing, or they were
// made for another Layout.
func outdated(ctx context.Context, db DB, p Projector, schema string) (string, error) {
	var missing []string
	for _, t := range p.Tables() {
		var ok bool
		if err := db.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, ident(schema, t)).Scan(&ok); err != nil {
			return "", err
		}
		if !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		return fmt.Sprintf("tables %v missing", missing), nil
	}
	want := layout(p)
	var got string
	if err := db.QueryRow(ctx, `SELECT coalesce(obj_description(oid, 'pg_namespace'), '') FROM pg_namespace WHERE nspname = $1`,
		schema).Scan(&got); err != nil {
		return "", err
	}
	if got != want {
		return fmt.Sprintf("tables of layout %q, the projector writes layout %q", got, want), nil
	}
	return "", nil
}

// layout is p's Layout, "" when it has none.
func layout(p Projector) string {
	if l, ok := p.(Layouter); ok {
		return l.Layout()
	}
	return ""
}

func createVersion(ctx context.Context, tx pgx.Tx, p Projector, schema string) error {
	if _, err := tx.Exec(ctx, `CREATE SCHEMA `+ident(schema)); err != nil {
		return err
	}
	if err := p.Create(ctx, tx, schema); err != nil {
		return fmt.Errorf("create tables in %s: %w", schema, err)
	}
	if l := layout(p); l != "" {
		// COMMENT takes no parameters: the layout goes as a literal.
		if _, err := tx.Exec(ctx, `COMMENT ON SCHEMA `+ident(schema)+` IS '`+strings.ReplaceAll(l, "'", "''")+`'`); err != nil {
			return fmt.Errorf("record the layout of %s: %w", schema, err)
		}
	}
	return nil
}

// decode turns the raw data of rec into the domain event.
func (rt *Runtime) decode(rec event.Recorded) (event.Recorded, error) {
	d, err := rt.store.Decode(rec)
	if err != nil {
		return rec, fmt.Errorf("event %s (%s at %s): %w", rec.Type, rec.StreamID, rec.Position, err)
	}
	return d, nil
}

// decodeFor decodes rec for p: not at all when p declares (Selective) that
// it does not use events of rec's type (the last of a batch, or a type the
// codec does not know: see skipFor); Apply then sees the raw data, which
// it ignores like any event it does not use.
func (rt *Runtime) decodeFor(p Projector, rec event.Recorded) (event.Recorded, error) {
	if s, ok := p.(Selective); ok && !s.Handles(rec.Type) {
		return rec, nil
	}
	return rt.decode(rec)
}

// skipFor lists the known event types p declares (Selective) it does not
// use: its subscriber leaves their events out of its batches (but for a
// batch's last, which the checkpoint advances to; see EventsSchema.Skip).
func (rt *Runtime) skipFor(p Projector) []string {
	s, ok := p.(Selective)
	if !ok {
		return nil
	}
	var skip []string
	for _, t := range rt.store.Types() {
		if !s.Handles(t) {
			skip = append(skip, t)
		}
	}
	return skip
}

// decodeAll decodes a batch's events for p in place, on up to GOMAXPROCS
// goroutines: a runner is a serial stage (a batch import waits for the
// content projection), and decoding is most of its own work.
func (rt *Runtime) decodeAll(p Projector, recs []event.Recorded) error {
	const minPerWorker = 100
	workers := max(1, min(runtime.GOMAXPROCS(0), len(recs)/minPerWorker))
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(recs)/workers, (w+1)*len(recs)/workers
		wg.Go(func() {
			for i := lo; i < hi; i++ {
				d, err := rt.decodeFor(p, recs[i])
				if err != nil {
					errs[w] = err
					return
				}
				recs[i] = d
			}
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}

// notifiesFor returns which NotifyChannel payloads wake p's runner: those
// announcing an event type it handles, and those announcing any type.
// The others' events wait for its next idle poll (Options.IdleWait): no
// one waits for p to apply them, since every write waits only for the
// projections it depends on, and p would only skip them.
func notifiesFor(p Projector) func(payload string) bool {
	s, ok := p.(Selective)
	if !ok {
		return func(string) bool { return true }
	}
	return func(payload string) bool {
		types := postgres.NotifiedTypes(payload)
		if types == nil {
			return true
		}
		for _, t := range types {
			if s.Handles(t) {
				return true
			}
		}
		return false
	}
}

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
	p    Projector
	name string
	wake *postgres.Broadcast // relevant notifications; see notifiesFor

	backoff atomic.Pointer[cmswm.Backoff] // of the current subscription

	mu           sync.Mutex
	state        string
	since        time.Time
	lastActivity time.Time
	lastBatch    time.Time
	lastErr      error
	lastErrAt    time.Time
	failures     int

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
		r.mu.Lock()
		r.failures++
		r.lastErr, r.lastErrAt = err, time.Now()
		progressed := r.lastBatch.After(before)
		r.mu.Unlock()
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
		case <-time.After(wait):
		}
	}
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

// eventsWaiting reports whether the log holds events of the projector's types
// past its checkpoint, readable or not (see cmswm.Backoff.Pending); true
// if it cannot tell.
func (r *runner) eventsWaiting(ctx context.Context) bool {
	_, ok, err := r.rt.firstPending(ctx, r.p)
	return err != nil || ok
}

// Horizon returns an instant, by the database's clock, before which every
// event that projection name will ever apply is applied already: a read
// model's answer that says "up to now" (a content sync's syncTimestamp)
// can truthfully say "up to the horizon" only. It is the earliest of
//   - the database's clock (not the caller's, which may be skewed);
//   - for every other session on the database: the start of its
//     transaction if that has written (it may hold events not committed
//     yet, stamped since), else the start of its statement if one is
//     running (it may be an append, stamped then, still waiting for a
//     lock before its first write); an idle session that has written
//     nothing will stamp what it appends later;
//   - the earliest stamp among the events of the transaction of the first
//     event past the projection's checkpoint, in the log's order, of a type
//     its projector handles (committed but not applied yet, or hidden from
//     the runners by an older transaction still open).
//
// The log orders events by their transaction ids, which a transaction
// takes at its first write, and an event is stamped by the statement that
// appends it (events.recorded_at is statement_timestamp()). A transaction
// whose first write is an append has its earliest stamp at about the time
// it took its id, so an event later in the log's order is not stamped
// before the third bound by more than moments (those between a later
// transaction's first write and its first append), unless its append
// waited for a lock before it wrote: an append at any version to a
// stream another open transaction is writing, or the creation of a stream
// another transaction is creating and then rolls back. Its stamp then
// precedes its transaction id by that wait. Content's SyncMargin covers
// moments, not such waits; content appends at exact versions, so only
// the second can happen to it. The sessions are read before, and the log
// after, in another statement (a later snapshot): a transaction that
// commits in between is still seen, as pending. Sessions that
// pg_stat_activity does not show in full (those of other roles, unless the
// role may read all statistics, and all of them with track_activities
// off) are not seen: every writer must connect as the server's role.
func (rt *Runtime) Horizon(ctx context.Context, name string) (time.Time, error) {
	p, ok := rt.byName[name]
	if !ok {
		return time.Time{}, fmt.Errorf("%w: %q", ErrUnknownProjection, name)
	}
	// One round trip, one transaction, which must be READ COMMITTED
	// whatever the database's default, so that the second statement takes
	// a snapshot of its own.
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED, READ ONLY`)
	var now time.Time
	var open, pending *time.Time
	b.Queue(openSessionsQuery).QueryRow(func(row pgx.Row) error { return row.Scan(&now, &open) })
	b.Queue(pendingStampQuery, p.Name(), rt.skipList(p)).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&pending)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // nothing pending
		}
		return err
	})
	b.Queue(`COMMIT`)
	if err := rt.pool.SendBatch(ctx, b).Close(); err != nil {
		return time.Time{}, err
	}
	for _, t := range []*time.Time{open, pending} {
		if t != nil && t.Before(now) {
			now = *t
		}
	}
	return now, nil
}

// ErrSessionsHidden: the database does not show its sessions'
// transactions (track_activities is off), so Horizon cannot see those
// still open.
var ErrSessionsHidden = errors.New("track_activities is off: a horizon cannot see the transactions still open, and a read model's answer may leave out a change that commits late")

// SessionsVisible reports ErrSessionsHidden when the sessions of the
// database, as db connects to it, do not show their transactions.
func SessionsVisible(ctx context.Context, db DB) error {
	var on bool
	if err := db.QueryRow(ctx, `SELECT current_setting('track_activities')::bool`).Scan(&on); err != nil {
		return err
	}
	if !on {
		return ErrSessionsHidden
	}
	return nil
}

// openSessionsQuery is Horizon's first statement: the database's clock,
// and the earliest stamp the other sessions on the database may yet
// commit (NULL if none).
const openSessionsQuery = `SELECT statement_timestamp(), (SELECT min(CASE WHEN a.backend_xid IS NOT NULL THEN a.xact_start
	                                  WHEN a.state = 'active' THEN a.query_start END)
	FROM pg_stat_activity a
	WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.backend_type = 'client backend')`

// pendingStampQuery is Horizon's second: the stamp of the first event (by
// position) of the transaction of projection $1's first pending event
// (see firstPendingFrom), no row if none. A transaction's events take
// their positions in the order of its statements, and so of their stamps:
// its first event carries its earliest stamp. (A min() over the
// transaction would not walk the index when a transaction holds most of
// the log.)
const pendingStampQuery = `SELECT t.recorded_at FROM events t
	WHERE t.transaction_id = (SELECT e.transaction_id ` + firstPendingFrom + `)
	ORDER BY t.transaction_id, t.global_position LIMIT 1`

func (rt *Runtime) firstPending(ctx context.Context, p Projector) (time.Time, bool, error) {
	var at time.Time
	err := rt.pool.QueryRow(ctx, firstPendingQuery, p.Name(), rt.skipList(p)).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, nil
	}
	return at, err == nil, err
}

// skipList is skipFor(p), never nil: a NULL list would make every type
// look skipped.
func (rt *Runtime) skipList(p Projector) []string {
	if skip := rt.skipFor(p); skip != nil {
		return skip
	}
	return []string{}
}

// firstPendingFrom finds the first event past projection $1's checkpoint
// of a type not in $2, in the log's order. It walks the primary key from
// the checkpoint and stops at the first such event
// (TestFirstPendingReadsTheIndex); a runner asks after every fruitless
// poll (firstPendingQuery), a sync on every call (pendingStampQuery), and
// a scan of the log would cost milliseconds per million events. (Not an
// EXISTS: PostgreSQL drops the ORDER BY and LIMIT inside one and may scan
// the whole log.)
const firstPendingFrom = `FROM events e
	WHERE (e.transaction_id, e.global_position) >
	      ((SELECT tx_id FROM projection_checkpoints WHERE name = $1), (SELECT position FROM projection_checkpoints WHERE name = $1))
	  AND e.event_type <> ALL($2::text[])
	ORDER BY e.transaction_id, e.global_position LIMIT 1`

// firstPendingQuery: when was that event recorded?
const firstPendingQuery = `SELECT e.recorded_at ` + firstPendingFrom

func (rt *Runtime) liveBatch() int {
	if rt.opts.LiveBatchSize > 0 {
		return rt.opts.LiveBatchSize
	}
	return DefaultLiveBatchSize
}

// handle buffers the messages of a batch (acknowledging them to watermill
// only lets it hand over the next one: nothing commits before the end of
// the batch) and, on the batch's last message, applies the whole batch and
// writes the checkpoint in the batch transaction. watermill's ack query
// then checks that checkpoint before committing.
func (r *runner) handle(msg *message.Message) error {
	index, size, err := cmswm.BatchPlace(msg)
	if err != nil {
		return err
	}
	if index == 1 {
		r.buf = make([]event.Recorded, 0, size) // Apply may keep the slice it got
		r.pendingStart = time.Now()
	}
	rec, err := cmswm.Recorded(msg)
	if err != nil {
		return err
	}
	r.buf = append(r.buf, rec)
	if index < size {
		msg.Ack()
		return nil
	}
	if len(r.buf) != size {
		return fmt.Errorf("incomplete batch: %d of %d events buffered", len(r.buf), size)
	}
	if err := r.rt.decodeAll(r.p, r.buf); err != nil {
		return err
	}
	version, err := cmswm.ProjectionVersion(msg)
	if err != nil {
		return err
	}
	tx, ok := cmswm.PgxTx(msg)
	if !ok {
		return errors.New("message carries no pgx transaction")
	}
	timeout := r.rt.opts.ApplyTimeout
	if timeout <= 0 {
		timeout = DefaultApplyTimeout
	}
	ctx, cancel := context.WithTimeout(r.stopCtx, timeout)
	defer cancel()
	last := r.buf[len(r.buf)-1].Position
	if err := r.p.Apply(ctx, tx, SchemaName(r.name, version), r.buf); err != nil {
		return fmt.Errorf("apply %d events up to %s to v%d: %w", len(r.buf), last, version, err)
	}
	if err := writeCheckpoint(ctx, tx, r.name, last); err != nil {
		return err
	}
	r.pendingChange = nil
	if a, ok := announcementOf(r.p, r.buf, last); ok {
		if err := announce(ctx, tx, a); err != nil {
			return err
		}
		r.pendingChange = &a
	}
	r.pending, r.pendingSchema, r.pendingLast = len(r.buf), SchemaName(r.name, version), last
	r.buf = nil
	msg.Ack()
	return nil
}

func writeCheckpoint(ctx context.Context, q DB, row string, p event.Position) error {
	tag, err := q.Exec(ctx, `UPDATE projection_checkpoints SET tx_id = $2::text::xid8, position = $3, updated_at = now() WHERE name = $1`,
		row, fmt.Sprint(p.TxID), p.Pos)
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", row, err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("checkpoint %s: row missing", row)
	}
	return nil
}

// onQuery runs after each subscriber transaction ended.
func (r *runner) onQuery(subCtx context.Context, noMsg bool, err error) {
	r.batchMu.Lock()
	n, schema, last, change := r.pending, r.pendingSchema, r.pendingLast, r.pendingChange
	r.pending, r.pendingChange = 0, nil
	var took time.Duration
	if n > 0 {
		took = time.Since(r.pendingStart)
	}
	r.batchMu.Unlock()
	r.mu.Lock()
	r.lastActivity = time.Now()
	ok := err == nil && !noMsg && n > 0
	switch {
	case err == nil:
		r.failures = 0
		if ok {
			r.lastBatch = r.lastActivity
		}
	case subCtx.Err() == nil:
		// A query or ack failed (the subscriber rolled back and backs off);
		// a cancelled subscription is counted by run instead.
		r.failures++
		r.lastErr, r.lastErrAt = err, r.lastActivity
	}
	r.mu.Unlock()
	if err != nil && subCtx.Err() == nil && r.rt.opts.OnError != nil {
		r.rt.opts.OnError(r.name, err)
	}
	if n > 0 && change != nil {
		r.rt.changedHere(*change)
	}
	if ok {
		r.rt.batchDone(r.name, n, took, last)
		if r.rt.growth.add(schema, n) {
			r.upkeep(schema)
		}
	}
}

// upkeep runs the ANALYZE due on the projector's tables in schema (see
// growth) in the background, one at a time: asked for while one runs, it
// runs once more after it.
func (r *runner) upkeep(schema string) {
	r.upMu.Lock()
	defer r.upMu.Unlock()
	if r.upRunning {
		r.upNext = schema
		return
	}
	r.upRunning = true
	ctx := r.stopCtx
	r.rt.wg.Add(1)
	go func() {
		defer r.rt.wg.Done()
		for {
			if err := r.rt.growth.analyzeDue(ctx, r.rt.pool, r.p, schema); err != nil && ctx.Err() == nil {
				r.rt.log.Warn("projection ANALYZE failed", "projection", r.name, "schema", schema, "err", err)
			}
			r.upMu.Lock()
			schema, r.upNext = r.upNext, ""
			r.upRunning = schema != "" && ctx.Err() == nil
			again := r.upRunning
			r.upMu.Unlock()
			if !again {
				return
			}
		}
	}()
}
