package projection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// RebuildOptions tune Rebuild.
type RebuildOptions struct {
	// BatchSize is the number of events per read and per Apply
	// (Options.RebuildBatchSize, else DefaultRebuildBatchSize, if 0).
	BatchSize int
	// Progress, if set, is called after every batch with the events
	// applied so far and the expected total (the log's size when the
	// rebuild started, raised as the log grows).
	Progress func(done, total int64)
	// Verify compares the new version with the old one before switching:
	// inside the switch transaction the old version is brought to the same
	// position, and every table must then be equal in both (EXCEPT ALL
	// both ways; tables need comparable column types, e.g. jsonb not
	// json; a projector may name columns that a rebuild does not
	// reproduce, see Compared). A difference aborts the switch: the old version keeps serving,
	// the new schema is kept for inspection (the next rebuild drops it) and
	// Rebuild returns an error wrapping ErrRebuildMismatch. The comparison
	// runs while the live checkpoint is locked: live batches of this
	// projection wait for it.
	Verify bool
	// LockTimeout bounds the wait for the live checkpoint row and the views
	// when switching (30s if 0).
	LockTimeout time.Duration
	// DropTimeout is the lock_timeout for dropping the old version's schema
	// after the switch (5s if 0); failing to drop it is only logged.
	DropTimeout time.Duration
}

// RebuildResult tells what a rebuild did.
type RebuildResult struct {
	Projection string
	OldVersion int
	Version    int // the version now serving
	// Events is the number of events replayed; Position the new version's
	// checkpoint at the switch.
	Events   int64
	Position event.Position
	Took     time.Duration
	// Verified is true when Verify compared the versions and found them
	// equal.
	Verified bool
	// OldDropped is false if the old schema could not be dropped (readers
	// held locks on it); the next rebuild drops it.
	OldDropped bool
}

var (
	// ErrRebuildRunning: another rebuild of the same projection is running.
	ErrRebuildRunning = errors.New("a rebuild of this projection is already running")
	// ErrRebuildMismatch: Verify found the versions different.
	ErrRebuildMismatch = errors.New("rebuilt tables differ from the live ones")
	// ErrUnknownProjection: no projector of that name is registered.
	ErrUnknownProjection = errors.New("unknown projection")
)

// Rebuild replays the whole log into a new version of projection name
// while the current version keeps serving and its live runners keep
// running (in this process or others), then switches atomically: in one
// transaction, with the live checkpoint row locked (waiting for a live
// batch in progress to commit), it applies the last events, points the
// checkpoint at the new version and position and re-creates the public
// views over the new tables. Live runners continue into the new version
// with their next batch. The old version's schema is dropped afterwards.
//
// The replay reads big batches and applies each with one Apply call plus a
// private checkpoint row ("name@rebuild", shown by Status) in one
// transaction. Rebuild can run in a process that does not run the
// projections (`cms projections rebuild` beside `cms serve`); two rebuilds
// of the same projection exclude each other (ErrRebuildRunning). A failed
// rebuild drops its schema; a killed one leaves it, and the next rebuild
// drops it and starts again.
//
// All processes should run the same projector code: live runners write
// into the new version with their own Apply.
//
// Rebuild is RebuildWith with default options and a progress callback (nil
// for none).
func (rt *Runtime) Rebuild(ctx context.Context, name string, progress func(done, total int64)) error {
	_, err := rt.RebuildWith(ctx, name, RebuildOptions{Progress: progress})
	return err
}

// RebuildWith is Rebuild with options, and reports what it did.
func (rt *Runtime) RebuildWith(ctx context.Context, name string, opts RebuildOptions) (RebuildResult, error) {
	p, ok := rt.byName[name]
	if !ok {
		return RebuildResult{}, fmt.Errorf("%w: %q", ErrUnknownProjection, name)
	}
	r := &rebuild{rt: rt, p: p, name: name, opts: opts, start: time.Now(), batch: rt.rebuildBatch(opts)}
	r.res.Projection = name
	if err := rt.ensure(ctx, p); err != nil {
		return r.res, err
	}
	unlock, err := rt.lockRebuild(ctx, name)
	if err != nil {
		return r.res, err
	}
	defer unlock()
	if err := r.prepare(ctx); err != nil {
		return r.res, err
	}
	if err := r.countLog(ctx); err != nil {
		return r.res, r.abandon(ctx, err)
	}
	if err := r.replay(ctx); err != nil {
		return r.res, r.abandon(ctx, fmt.Errorf("projection %s rebuild: %w", name, err))
	}
	// Fresh statistics for the live runners, which plan their statements
	// on the new tables after the switch (see growth).
	if err := rt.growth.analyze(ctx, rt.pool, p, r.newSchema); err != nil {
		return r.res, r.abandon(ctx, fmt.Errorf("projection %s rebuild: %w", name, err))
	}
	if err := r.switchReads(ctx); err != nil {
		if r.failedTail != nil {
			// The switch rolled back: find the event of the tail it failed on.
			err = rt.explain(ctx, p, r.newSchema, r.failedTail, err, "rebuild")
		}
		return r.res, r.abandon(ctx, fmt.Errorf("projection %s: switch to v%d: %w", name, r.newV, err))
	}
	r.switched()
	r.res.OldDropped = rt.dropSchema(ctx, r.oldSchema, opts.DropTimeout)
	r.res.Took = time.Since(r.start)
	return r.res, nil
}

// rebuild is one run of RebuildWith: its steps are its methods.
type rebuild struct {
	rt    *Runtime
	p     projections.Projector
	name  string
	opts  RebuildOptions
	start time.Time
	batch int // events per read and per Apply

	oldV, newV           int
	oldSchema, newSchema string

	pos         event.Position   // the new version's checkpoint
	skipped     []event.Position // the parked events it left out
	failedTail  []event.Recorded // the switch's tail, when Apply failed on it
	done, total int64            // events applied, and expected (see RebuildOptions.Progress)
	keepNew     bool             // after a Verify mismatch, for inspection
	res         RebuildResult
}

// rebuildBatch is the batch size of a rebuild with opts.
func (rt *Runtime) rebuildBatch(opts RebuildOptions) int {
	switch {
	case opts.BatchSize > 0:
		return opts.BatchSize
	case rt.opts.RebuildBatchSize > 0:
		return rt.opts.RebuildBatchSize
	}
	return DefaultRebuildBatchSize
}

// lockRebuild makes sure no other rebuild of projection name runs, in any
// process, until the returned unlock is called: it takes a session
// advisory lock on a connection held for the whole rebuild.
func (rt *Runtime) lockRebuild(ctx context.Context, name string) (unlock func(), err error) {
	conn, err := rt.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, lockKey("rebuild", name)).Scan(&locked); err != nil {
		conn.Release()
		return nil, err
	}
	if !locked {
		conn.Release()
		return nil, fmt.Errorf("projection %s: %w", name, ErrRebuildRunning)
	}
	return func() {
		conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, lockKey("rebuild", name)) //nolint:errcheck
		conn.Release()
	}, nil
}

// prepare makes a fresh, empty new version next to the live one, and the
// rebuild's private checkpoint row, dropping what earlier rebuilds left.
func (r *rebuild) prepare(ctx context.Context) error {
	rt := r.rt
	if err := rt.pool.QueryRow(ctx, `SELECT version FROM projection_checkpoints WHERE name = $1`, r.name).Scan(&r.oldV); err != nil {
		return err
	}
	r.newV = r.oldV + 1
	r.res.OldVersion = r.oldV
	r.oldSchema, r.newSchema = SchemaName(r.name, r.oldV), SchemaName(r.name, r.newV)
	rt.dropStale(ctx, r.name, r.oldV, r.opts.DropTimeout)
	err := pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+ident(r.newSchema)+` CASCADE`); err != nil {
			return err
		}
		if err := createVersion(ctx, tx, r.p, r.newSchema); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO projection_checkpoints (name, version) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET version = $2, tx_id = '0', position = 0, updated_at = now()`, rebuildRow(r.name), r.newV)
		return err
	})
	if err != nil {
		return fmt.Errorf("projection %s: prepare v%d: %w", r.name, r.newV, err)
	}
	rt.log.Info("projection rebuild started", "projection", r.name, "version", r.newV, "schema", r.newSchema)
	return nil
}

// abandon undoes what a failed rebuild prepared, unless its switch did
// commit (on a connection lost while committing, say), and returns err.
// It drops the new version, but after a Verify mismatch, which keeps it
// for inspection (the next rebuild drops it).
func (r *rebuild) abandon(ctx context.Context, err error) error {
	c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
	defer cancel()
	_, _ = r.rt.pool.Exec(c, `DELETE FROM projection_checkpoints WHERE name = $1`, rebuildRow(r.name))
	var live int
	if r.rt.pool.QueryRow(c, `SELECT version FROM projection_checkpoints WHERE name = $1`, r.name).Scan(&live) != nil || live == r.newV {
		return err // unknown, or the switch did commit: the new version is live
	}
	if !r.keepNew {
		r.rt.dropSchema(c, r.newSchema, r.opts.DropTimeout)
	}
	return err
}

// countLog takes the log's readable size as the expected total, and
// reports the start.
func (r *rebuild) countLog(ctx context.Context) error {
	if err := r.rt.pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())`).Scan(&r.total); err != nil {
		return err
	}
	r.progress()
	return nil
}

// progress reports the events applied so far, raising the expected total
// when the log grew past it.
func (r *rebuild) progress() {
	r.total = max(r.total, r.done)
	if r.opts.Progress != nil {
		r.opts.Progress(r.done, r.total)
	}
}

// replay applies the log to the new version up to near its head (the
// switch applies the rest), batch by batch, each in a transaction of its
// own with the rebuild's checkpoint. A reader goroutine fetches the next
// batch while the current one is applied.
func (r *rebuild) replay(ctx context.Context) error {
	batches, stop := r.readAhead(ctx)
	defer stop()
	for b := range batches {
		if b.err != nil {
			return b.err
		}
		if len(b.events) == 0 {
			continue
		}
		if err := r.apply(ctx, b.events, b.bad); err != nil {
			return err
		}
	}
	return nil
}

// readBatch is a batch of the log, or why it could not be read.
type readBatch struct {
	events []event.Recorded
	bad    map[event.Position]error // the events that did not decode (see readLogLenient)
	err    error
}

// readAhead reads the log from its start in batches on a goroutine of its
// own, and ends after the first short batch (near the head) or the first
// error. stop ends it early and waits for it.
func (r *rebuild) readAhead(ctx context.Context) (batches <-chan readBatch, stop func()) {
	readCtx, stopReading := context.WithCancel(ctx)
	ch := make(chan readBatch, 2)
	go func() {
		defer close(ch)
		var after event.Position
		for {
			evs, bad, err := r.rt.readLogLenient(readCtx, nil, r.p, after, r.batch)
			select {
			case ch <- readBatch{evs, bad, err}:
			case <-readCtx.Done():
				return
			}
			if err != nil || len(evs) < r.batch {
				return
			}
			after = evs[len(evs)-1].Position
		}
	}()
	return ch, func() {
		stopReading()
		for range ch { // wait for the reader to end
		}
	}
}

// apply applies a batch of the replay to the new version, with the
// rebuild's checkpoint, and runs the ANALYZE its growth makes due.
func (r *rebuild) apply(ctx context.Context, events []event.Recorded, bad map[event.Position]error) error {
	rt := r.rt
	last := events[len(events)-1].Position
	var failed []event.Recorded
	err := pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
		kept, err := r.withoutParked(ctx, tx, events, bad)
		if err != nil {
			return err
		}
		if len(kept) > 0 {
			if err := r.p.Apply(ctx, tx, r.newSchema, kept); err != nil {
				failed = kept
				return fmt.Errorf("apply %d events up to %s: %w", len(kept), last, err)
			}
		}
		return writeCheckpoint(ctx, tx, rebuildRow(r.name), last)
	})
	if failed != nil {
		// Its transaction ended: find the event it failed on.
		err = rt.explain(ctx, r.p, r.newSchema, failed, err, "rebuild")
	}
	if err == nil && rt.growth.add(r.newSchema, len(events)) {
		err = rt.growth.analyzeDue(ctx, rt.pool, r.p, r.newSchema)
	}
	if err != nil {
		return err
	}
	r.pos = last
	r.done += int64(len(events))
	r.progress()
	return nil
}

// switchReads is the switch, in one transaction: with the live checkpoint
// locked (live batches wait), it applies the log's tail to the new
// version, verifies it if asked to, and points the live checkpoint and
// the public views at it.
func (r *rebuild) switchReads(ctx context.Context) error {
	return pgx.BeginFunc(ctx, r.rt.pool, func(tx pgx.Tx) error {
		live, err := r.lockLive(ctx, tx)
		if err != nil {
			return err
		}
		if err := r.catchUp(ctx, tx); err != nil {
			return err
		}
		if err := r.sameParked(ctx, tx); err != nil {
			return err
		}
		if r.pos.Less(live) {
			// Cannot happen: the live version only applied readable events.
			return fmt.Errorf("rebuild at %s is behind the live checkpoint %s", r.pos, live)
		}
		if r.opts.Verify {
			if err := r.rt.verify(ctx, tx, r.p, r.oldSchema, r.newSchema, live, r.pos, r.batch); err != nil {
				r.keepNew = errors.Is(err, ErrRebuildMismatch)
				return err
			}
			r.res.Verified = true
		}
		return r.pointReads(ctx, tx)
	})
}

// lockLive locks the live checkpoint row in tx, within
// RebuildOptions.LockTimeout, and returns its position; the live version
// must still be the one the rebuild started from.
func (r *rebuild) lockLive(ctx context.Context, tx pgx.Tx) (event.Position, error) {
	lockTimeout := r.opts.LockTimeout
	if lockTimeout <= 0 {
		lockTimeout = 30 * time.Second
	}
	if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, lockTimeout.Milliseconds())); err != nil {
		return event.Position{}, err
	}
	var liveV int
	var liveTx, livePos int64
	if err := tx.QueryRow(ctx, `SELECT version, tx_id::text::bigint, position FROM projection_checkpoints WHERE name = $1 FOR UPDATE`,
		r.name).Scan(&liveV, &liveTx, &livePos); err != nil {
		return event.Position{}, fmt.Errorf("lock live checkpoint: %w", err)
	}
	if liveV != r.oldV {
		return event.Position{}, fmt.Errorf("live version changed from %d to %d during the rebuild", r.oldV, liveV)
	}
	return event.Position{TxID: uint64(liveTx), Pos: livePos}, nil
}

// catchUp applies the tail of the log, up to its head, to the new
// version in tx, while the live runners wait for the lock on their
// checkpoint.
func (r *rebuild) catchUp(ctx context.Context, tx pgx.Tx) error {
	var tail []event.Recorded // applied in tx so far: what locate replays
	for {
		evs, bad, err := r.rt.readLogLenient(ctx, tx, r.p, r.pos, r.batch)
		if err != nil {
			return err
		}
		if len(evs) > 0 {
			kept, err := r.withoutParked(ctx, tx, evs, bad)
			if err != nil {
				return err
			}
			if len(kept) > 0 {
				tail = append(tail, kept...)
				if err := r.p.Apply(ctx, tx, r.newSchema, kept); err != nil {
					r.failedTail = tail
					return fmt.Errorf("apply tail: %w", err)
				}
			}
			r.pos = evs[len(evs)-1].Position
			r.done += int64(len(evs))
			r.progress()
		}
		if len(evs) < r.batch {
			return nil
		}
	}
}

// pointReads makes the new version the live one in tx: the live
// checkpoint moves to it and its position, the rebuild's row goes, the
// change of all is announced and the public views are re-created over
// the new tables.
func (r *rebuild) pointReads(ctx context.Context, tx pgx.Tx) error {
	if err := writeCheckpoint(ctx, tx, r.name, r.pos); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `UPDATE projection_checkpoints SET version = $2 WHERE name = $1`, r.name, r.newV); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, `DELETE FROM projection_checkpoints WHERE name = $1`, rebuildRow(r.name)); err != nil {
		return err
	}
	if err := announce(ctx, tx, announcement{Change: Change{Projection: r.name, All: true}, at: r.pos}); err != nil {
		return err
	}
	return switchViews(ctx, tx, r.p.Tables(), r.newSchema)
}

// switched follows the switch's commit: it records the result, tells
// this process's readers (OnChange), waiters and runners, and reports the
// final progress.
func (r *rebuild) switched() {
	rt := r.rt
	r.res.Version, r.res.Events, r.res.Position = r.newV, r.done, r.pos
	rt.changedHere(announcement{Change: Change{Projection: r.name, All: true}, at: r.pos})
	rt.watcher.kick()
	rt.fireAll()
	r.total = r.done
	r.progress()
	rt.log.Info("projection rebuilt and switched", "projection", r.name, "version", r.newV, "events", r.done,
		"took", time.Since(r.start).Round(time.Millisecond))
}
