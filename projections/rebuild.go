package projections

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
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
	start := time.Now()
	res := RebuildResult{Projection: name}
	if err := rt.ensure(ctx, p); err != nil {
		return res, err
	}

	// One rebuild per projection at a time: a session advisory lock on a
	// connection held for the whole rebuild.
	conn, err := rt.pool.Acquire(ctx)
	if err != nil {
		return res, err
	}
	defer conn.Release()
	var locked bool
	if err := conn.QueryRow(ctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, lockKey("rebuild", name)).Scan(&locked); err != nil {
		return res, err
	}
	if !locked {
		return res, fmt.Errorf("projection %s: %w", name, ErrRebuildRunning)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, lockKey("rebuild", name)) //nolint:errcheck

	var oldV int
	if err := rt.pool.QueryRow(ctx, `SELECT version FROM projection_checkpoints WHERE name = $1`, name).Scan(&oldV); err != nil {
		return res, err
	}
	newV := oldV + 1
	res.OldVersion = oldV
	oldSchema, newSchema := SchemaName(name, oldV), SchemaName(name, newV)
	rt.dropStale(ctx, name, oldV, opts.DropTimeout)

	// A fresh, empty new version and the private checkpoint.
	err = pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+ident(newSchema)+` CASCADE`); err != nil {
			return err
		}
		if err := createVersion(ctx, tx, p, newSchema); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `INSERT INTO projection_checkpoints (name, version) VALUES ($1, $2)
			ON CONFLICT (name) DO UPDATE SET version = $2, tx_id = '0', position = 0, updated_at = now()`, rebuildRow(name), newV)
		return err
	})
	if err != nil {
		return res, fmt.Errorf("projection %s: prepare v%d: %w", name, newV, err)
	}
	keepNew := false // after a Verify mismatch, for inspection
	cleanup := func() {
		c, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30*time.Second)
		defer cancel()
		_, _ = rt.pool.Exec(c, `DELETE FROM projection_checkpoints WHERE name = $1`, rebuildRow(name))
		var live int
		if err := rt.pool.QueryRow(c, `SELECT version FROM projection_checkpoints WHERE name = $1`, name).Scan(&live); err != nil || live == newV {
			return // unknown, or the switch did commit: the new version is live
		}
		if !keepNew {
			rt.dropSchema(c, newSchema, opts.DropTimeout)
		}
	}
	rt.log.Info("projection rebuild started", "projection", name, "version", newV, "schema", newSchema)

	var total int64
	if err := rt.pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())`).Scan(&total); err != nil {
		cleanup()
		return res, err
	}
	batch := opts.BatchSize
	if batch <= 0 {
		batch = rt.opts.RebuildBatchSize
	}
	if batch <= 0 {
		batch = DefaultRebuildBatchSize
	}
	var done int64
	progress := func() {
		if done > total {
			total = done
		}
		if opts.Progress != nil {
			opts.Progress(done, total)
		}
	}
	progress()

	// Replay: a reader goroutine fetches the next batch while the current
	// one is applied.
	var pos event.Position
	readCtx, stopReading := context.WithCancel(ctx)
	type batchOrErr struct {
		events []event.Recorded
		err    error
	}
	batches := make(chan batchOrErr, 2)
	defer func() {
		stopReading()
		for range batches { // wait for the reader to end
		}
	}()
	go func() {
		defer close(batches)
		var after event.Position
		for {
			evs, err := rt.readLog(readCtx, nil, p, after, batch)
			select {
			case batches <- batchOrErr{evs, err}:
			case <-readCtx.Done():
				return
			}
			if err != nil || len(evs) < batch {
				return // near the head: the switch transaction does the rest
			}
			after = evs[len(evs)-1].Position
		}
	}()
	for b := range batches {
		if b.err != nil {
			cleanup()
			return res, fmt.Errorf("projection %s rebuild: %w", name, b.err)
		}
		if len(b.events) == 0 {
			continue
		}
		last := b.events[len(b.events)-1].Position
		err := pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
			if err := p.Apply(ctx, tx, newSchema, b.events); err != nil {
				return fmt.Errorf("apply %d events up to %s: %w", len(b.events), last, err)
			}
			return writeCheckpoint(ctx, tx, rebuildRow(name), last)
		})
		if err == nil && rt.growth.add(newSchema, len(b.events)) {
			err = rt.growth.analyzeDue(ctx, rt.pool, p, newSchema)
		}
		if err != nil {
			cleanup()
			return res, fmt.Errorf("projection %s rebuild: %w", name, err)
		}
		pos = last
		done += int64(len(b.events))
		progress()
	}

	// Fresh statistics for the live runners, which plan their statements
	// on the new tables after the switch (see growth).
	if err := rt.growth.analyze(ctx, rt.pool, p, newSchema); err != nil {
		cleanup()
		return res, fmt.Errorf("projection %s rebuild: %w", name, err)
	}

	// The switch.
	lockTimeout := opts.LockTimeout
	if lockTimeout <= 0 {
		lockTimeout = 30 * time.Second
	}
	err = pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, lockTimeout.Milliseconds())); err != nil {
			return err
		}
		var liveV int
		var liveTx, livePos int64
		if err := tx.QueryRow(ctx, `SELECT version, tx_id::text::bigint, position FROM projection_checkpoints WHERE name = $1 FOR UPDATE`,
			name).Scan(&liveV, &liveTx, &livePos); err != nil {
			return fmt.Errorf("lock live checkpoint: %w", err)
		}
		if liveV != oldV {
			return fmt.Errorf("live version changed from %d to %d during the rebuild", oldV, liveV)
		}
		live := event.Position{TxID: uint64(liveTx), Pos: livePos}
		// The tail, up to the head: the live runners are paused meanwhile.
		for {
			evs, err := rt.readLog(ctx, tx, p, pos, batch)
			if err != nil {
				return err
			}
			if len(evs) > 0 {
				if err := p.Apply(ctx, tx, newSchema, evs); err != nil {
					return fmt.Errorf("apply tail: %w", err)
				}
				pos = evs[len(evs)-1].Position
				done += int64(len(evs))
				progress()
			}
			if len(evs) < batch {
				break
			}
		}
		if pos.Less(live) {
			// Cannot happen: the live version only applied readable events.
			return fmt.Errorf("rebuild at %s is behind the live checkpoint %s", pos, live)
		}
		if opts.Verify {
			if err := rt.verify(ctx, tx, p, oldSchema, newSchema, live, pos, batch); err != nil {
				keepNew = errors.Is(err, ErrRebuildMismatch)
				return err
			}
			res.Verified = true
		}
		if err := writeCheckpoint(ctx, tx, name, pos); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE projection_checkpoints SET version = $2 WHERE name = $1`, name, newV); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `DELETE FROM projection_checkpoints WHERE name = $1`, rebuildRow(name)); err != nil {
			return err
		}
		if err := announce(ctx, tx, announcement{Change: Change{Projection: name, All: true}, at: pos}); err != nil {
			return err
		}
		return switchViews(ctx, tx, p.Tables(), newSchema)
	})
	if err != nil {
		cleanup()
		return res, fmt.Errorf("projection %s: switch to v%d: %w", name, newV, err)
	}
	res.Version, res.Events, res.Position = newV, done, pos
	rt.changedHere(announcement{Change: Change{Projection: name, All: true}, at: pos})
	rt.watcher.kick()
	rt.fireAll()
	total = done
	progress()
	rt.log.Info("projection rebuilt and switched", "projection", name, "version", newV, "events", done,
		"took", time.Since(start).Round(time.Millisecond))

	res.OldDropped = rt.dropSchema(ctx, oldSchema, opts.DropTimeout)
	res.Took = time.Since(start)
	return res, nil
}

// verify brings the old version from its checkpoint live to pos (what its
// live runner would have done next) and compares every table.
func (rt *Runtime) verify(ctx context.Context, tx pgx.Tx, p Projector, oldSchema, newSchema string, live, pos event.Position, batch int) error {
	for after := live; after.Less(pos); {
		evs, err := rt.readLog(ctx, tx, p, after, batch)
		if err != nil {
			return err
		}
		n := 0
		for n < len(evs) && !pos.Less(evs[n].Position) {
			n++
		}
		if n == 0 {
			return fmt.Errorf("verify: log ends at %s before %s", after, pos)
		}
		if err := p.Apply(ctx, tx, oldSchema, evs[:n]); err != nil {
			return fmt.Errorf("verify: apply to the old version: %w", err)
		}
		after = evs[n-1].Position
	}
	var diffs []string
	var compared map[string][]string
	if c, ok := p.(Compared); ok {
		compared = c.ComparedColumns()
	}
	for _, t := range p.Tables() {
		cols := "*"
		if cs := compared[t]; len(cs) > 0 {
			quoted := make([]string, len(cs))
			for i, c := range cs {
				quoted[i] = ident(c)
			}
			cols = strings.Join(quoted, ", ")
		}
		o, n := "SELECT "+cols+" FROM "+ident(oldSchema, t), "SELECT "+cols+" FROM "+ident(newSchema, t)
		var onlyOld, onlyNew int64
		if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM (`+o+` EXCEPT ALL `+n+`) d),
			(SELECT count(*) FROM (`+n+` EXCEPT ALL `+o+`) d)`).Scan(&onlyOld, &onlyNew); err != nil {
			return fmt.Errorf("verify %s: %w", t, err)
		}
		if onlyOld != 0 || onlyNew != 0 {
			diffs = append(diffs, fmt.Sprintf("%s: %d rows only in the live version, %d only in the rebuilt one", t, onlyOld, onlyNew))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w at %s: %s", ErrRebuildMismatch, pos, strings.Join(diffs, "; "))
	}
	return nil
}

// switchViews points the public views at schema. CREATE OR REPLACE keeps
// views that other views depend on; if the columns changed it cannot, and
// the view is dropped and created again.
func switchViews(ctx context.Context, tx pgx.Tx, tables []string, schema string) error {
	for _, t := range tables {
		view, src := ident("public", t), ident(schema, t)
		if _, err := tx.Exec(ctx, `SAVEPOINT cms_view`); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `CREATE OR REPLACE VIEW `+view+` AS SELECT * FROM `+src); err != nil {
			if _, err := tx.Exec(ctx, `ROLLBACK TO SAVEPOINT cms_view`); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `DROP VIEW IF EXISTS `+view); err != nil {
				return fmt.Errorf("replace view %s: %w", t, err)
			}
			if _, err := tx.Exec(ctx, `CREATE VIEW `+view+` AS SELECT * FROM `+src); err != nil {
				return fmt.Errorf("create view %s: %w", t, err)
			}
		}
		if _, err := tx.Exec(ctx, `RELEASE SAVEPOINT cms_view`); err != nil {
			return err
		}
	}
	return nil
}

// dropSchema drops a projection version's schema, giving up (with a
// warning) if it cannot get the locks in time.
func (rt *Runtime) dropSchema(ctx context.Context, schema string, timeout time.Duration) bool {
	if timeout <= 0 {
		timeout = 5 * time.Second
	}
	err := pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, timeout.Milliseconds())); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `DROP SCHEMA IF EXISTS `+ident(schema)+` CASCADE`)
		return err
	})
	if err != nil {
		rt.log.Warn("could not drop old projection schema; the next rebuild will", "schema", schema, "err", err)
		return false
	}
	return true
}

// dropStale drops schemas of versions older than current left by earlier
// rebuilds.
func (rt *Runtime) dropStale(ctx context.Context, name string, current int, timeout time.Duration) {
	re := regexp.MustCompile(`^proj_` + regexp.QuoteMeta(name) + `_v([0-9]+)$`)
	rows, err := rt.pool.Query(ctx, `SELECT nspname FROM pg_namespace WHERE starts_with(nspname, $1)`, "proj_"+name+"_v")
	if err != nil {
		return
	}
	var stale []string
	for rows.Next() {
		var s string
		if rows.Scan(&s) != nil {
			continue
		}
		if m := re.FindStringSubmatch(s); m != nil {
			if v, err := strconv.Atoi(m[1]); err == nil && v < current {
				stale = append(stale, s)
			}
		}
	}
	rows.Close()
	for _, s := range stale {
		rt.dropSchema(ctx, s, timeout)
	}
}
