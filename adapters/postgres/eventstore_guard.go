package postgres

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/halocms/halocms/domain/event"
)

// Guards and holds are ordered by a transaction-level advisory lock per
// stream (holdClass, hashtext(stream_id)): AppendHeld takes it exclusive,
// a guard shared. An advisory lock assigns no transaction id, so a held
// stream holds back no reader of the log (they read below
// pg_snapshot_xmin) while its decision waits for a read model; and
// PostgreSQL queues lock requests fairly, so a guard fails while a hold is
// waiting for the guards before it (no stream is held off for ever by a
// stream of guards). A guard tries its lock (it never waits, so it never
// holds a connection while a decision runs: it fails with a version
// conflict and its caller decides again), then, in a statement of its own
// (a snapshot taken after the lock), checks the stream's version. A
// guarded stream changes only through AppendHeld (see event.StreamAppend),
// which waits for the guards taken before it, so the stream is still at
// that version when the guard's transaction commits. The guard locks no
// row: a row lock FOR SHARE wrote the row and made a multixact at each
// guard, about a tenth of an item create's PostgreSQL time.
const (
	holdClass = 7265003 // the first key of the advisory locks of AppendHeld and guards
	// guardLocksSQL takes the shared locks ($2: holdClass) of the guards'
	// streams ($1), returning those it could not take (held, or a hold is
	// waiting).
	guardLocksSQL = `SELECT coalesce(array_agg(g) FILTER (WHERE NOT pg_try_advisory_xact_lock_shared($2::int, hashtext(g))), '{}')
	FROM unnest($1::text[]) AS g`
	// guardsSQL counts the guards of $1 (streams) and $2 (versions) that
	// hold.
	guardsSQL = `SELECT count(*) FROM streams s
	JOIN unnest($1::text[], $2::bigint[]) AS g (stream_id, version) ON s.stream_id = g.stream_id AND s.version = g.version`
	// lockNotAvailable is the SQLSTATE of a lock still taken when
	// lock_timeout runs out (AppendHeld's).
	lockNotAvailable = "55P03"
	// holdWait bounds how long AppendHeld waits for its lock: for the
	// guarded appends in flight, and for another hold of the stream.
	holdWait = "5s"
	// holdShare: at most one connection of the pool in holdShare is held
	// by AppendHeld at once, so that decisions and the projections they
	// wait for always find connections (holds beyond wait their turn).
	holdShare = 4
)

// readCommitted is the isolation of the transactions that take guards and
// holds: a guard's version check must see what committed before its lock
// was granted (a statement's own snapshot), whatever the database's
// default isolation.
var readCommitted = pgx.TxOptions{IsoLevel: pgx.ReadCommitted}

// splitGuards separates the guards of appends from the appends that write.
func splitGuards(appends []event.StreamAppend) (writes, guards []event.StreamAppend) {
	for _, a := range appends {
		if len(a.Events) == 0 {
			guards = append(guards, a)
		} else {
			writes = append(writes, a)
		}
	}
	return writes, guards
}

// splitAppends separates appends into the writes and the guards, and
// refuses a call with no write, or a guard on no stream, with no version
// to expect or on a stream the same call writes to.
func splitAppends(appends []event.StreamAppend) (writes, guards []event.StreamAppend, err error) {
	writes, guards = splitGuards(appends)
	if len(writes) == 0 {
		return nil, nil, errors.New("append: no events")
	}
	return writes, guards, checkGuards(writes, guards)
}

// checkGuards refuses guards on no stream, with no version to expect, or
// on a stream the same call writes to.
func checkGuards(writes, guards []event.StreamAppend) error {
	for _, g := range guards {
		if g.Stream == "" || g.ExpectedVersion <= 0 {
			return fmt.Errorf("append: a guard needs a stream and an expected version above 0 (got %q at %d)", g.Stream, g.ExpectedVersion)
		}
		for _, w := range writes {
			if w.Stream == g.Stream {
				return fmt.Errorf("append: a guard on %s, which the same call writes to", g.Stream)
			}
		}
	}
	return nil
}

// queueGuards queues the two statements that take guards (guardLocksSQL,
// then guardsSQL).
func queueGuards(b *pgx.Batch, guards []event.StreamAppend) {
	streams, versions := make([]string, len(guards)), make([]int64, len(guards))
	for i, g := range guards {
		streams[i], versions[i] = g.Stream, g.ExpectedVersion
	}
	b.Queue(guardLocksSQL, streams, holdClass)
	b.Queue(guardsSQL, streams, versions)
}

// guardsHeld reads the results of queueGuards' statements: whether every
// guard holds (false on any error: the careful path tells why), and a
// conflict when a guard's stream is held (the call fails at once: the
// careful path would write before it checks the guards).
func guardsHeld(br pgx.BatchResults, guards []event.StreamAppend) (bool, error) {
	var taken []string
	if err := br.QueryRow().Scan(&taken); err != nil {
		return false, nil
	}
	for _, g := range guards {
		if slices.Contains(taken, g.Stream) {
			return false, &event.ConflictError{StreamID: g.Stream, Expected: g.ExpectedVersion, Actual: g.ExpectedVersion}
		}
	}
	var n int
	return br.QueryRow().Scan(&n) == nil && n == len(guards), nil
}

// guardTx takes guard g in transaction tx: the stream is at
// g.ExpectedVersion and stays so until tx ends, or g fails with a
// *event.ConflictError (Actual is the version found; it may be the
// expected one when the stream was held). A failed guard leaves tx usable.
func (s *EventStore) guardTx(ctx context.Context, tx pgx.Tx, g event.StreamAppend) error {
	var locked bool
	if err := tx.QueryRow(ctx, `SELECT pg_try_advisory_xact_lock_shared($1, hashtext($2))`, holdClass, g.Stream).Scan(&locked); err != nil {
		return err
	}
	v, err := s.StreamVersion(ctx, tx, g.Stream) // a snapshot taken after the lock
	if err != nil {
		return fmt.Errorf("append, guard on %s: %w", g.Stream, err)
	}
	if !locked || v != g.ExpectedVersion { // not locked: held, or a hold is waiting
		return &event.ConflictError{StreamID: g.Stream, Expected: g.ExpectedVersion, Actual: v}
	}
	return nil
}

// appendTx writes writes in tx, each through AppendTx, then takes guards,
// unless every write is a retry whose events are stored already (dups ==
// len(writes): nothing is written, whatever the guards say). last is the
// result of the last write, its Last the highest position written.
func (s *EventStore) appendTx(ctx context.Context, tx pgx.Tx, writes, guards []event.StreamAppend) (last event.AppendResult, dups int, err error) {
	for _, a := range writes {
		r, err := s.AppendTx(ctx, tx, a.Stream, a.ExpectedVersion, a.Events...)
		if err != nil {
			return event.AppendResult{}, 0, err
		}
		if last.Last.Less(r.Last) {
			last.Last = r.Last
		}
		last.Version = r.Version
		if r.Duplicate {
			dups++
		}
	}
	if dups == len(writes) {
		return last, dups, nil
	}
	for _, g := range guards {
		if err := s.guardTx(ctx, tx, g); err != nil {
			return event.AppendResult{}, 0, err
		}
	}
	return last, dups, nil
}

// AppendHeld holds stream at version while decide runs, and appends what
// decide returns in the same transaction: all or none. Held, the stream
// takes no guard (see event.StreamAppend), so that no append guarded on it
// commits between decide's reads and the append; AppendHeld first waits
// (up to holdWait) for the transactions that took a guard before it, so
// that their writes are visible to decide, which may read through other
// connections (a read model catching up with the log: the held
// transaction has no transaction id until it appends, so it holds back no
// reader of the log). A stream not at version, or still held by another
// AppendHeld or by guards after holdWait, is a *event.ConflictError,
// before decide runs; decide's own error is returned as it is.
func (s *EventStore) AppendHeld(ctx context.Context, stream string, version int64,
	decide func(ctx context.Context) ([]event.StreamAppend, error)) (event.AppendResult, error) {
	if stream == "" || version <= 0 {
		return event.AppendResult{}, fmt.Errorf("append held: a stream and a version above 0 are needed (got %q at %d)", stream, version)
	}
	if err := s.holds.Acquire(ctx, 1); err != nil {
		return event.AppendResult{}, err
	}
	defer s.holds.Release(1)
	var appends []event.StreamAppend
	var last event.AppendResult
	var decided error // decide's own error, returned as it is
	err := pgx.BeginTxFunc(ctx, s.pool, readCommitted, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL lock_timeout = '`+holdWait+`'`); err != nil {
			return err
		}
		var v int64
		_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, hashtext($2))`, holdClass, stream)
		if err == nil {
			_, err = tx.Exec(ctx, `RESET lock_timeout`) // the bound is the lock's, not the appends'
		}
		if err == nil {
			v, err = s.StreamVersion(ctx, tx, stream) // a snapshot taken after the lock
		}
		var pgErr *pgconn.PgError
		if errors.As(err, &pgErr) && pgErr.Code == lockNotAvailable {
			return &event.ConflictError{StreamID: stream, Expected: version, Actual: version}
		}
		if err != nil {
			return err
		}
		if v != version {
			return &event.ConflictError{StreamID: stream, Expected: version, Actual: v}
		}
		if appends, decided = decide(ctx); decided != nil {
			return decided
		}
		writes, guards, err := splitAppends(appends)
		if err != nil {
			return err
		}
		var dups int
		if last, dups, err = s.appendTx(ctx, tx, writes, guards); err == nil && dups > 0 {
			err = errors.New("append: some of the decision's events are stored already")
		}
		return err
	})
	var ce *event.ConflictError
	if err != nil && (decided != nil || errors.As(err, &ce)) {
		return event.AppendResult{}, err
	}
	if err != nil {
		return event.AppendResult{}, fmt.Errorf("append held %s: %w", stream, err)
	}
	s.appended(appends)
	return last, nil
}
