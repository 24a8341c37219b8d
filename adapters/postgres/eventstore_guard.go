package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/halocms/halocms/domain/event"
)

// A guard (event.StreamAppend without events) locks its stream's row in
// streams FOR SHARE, at the version it expects, until the append's
// transaction ends: guards of concurrent appends do not block each other,
// an append to the stream (an UPDATE of the row) waits for them, and
// AppendHeld's FOR UPDATE too. NOWAIT: a guard that meets a held stream,
// or one being appended to, fails at once with a version conflict instead
// of holding a connection while it waits; the caller decides again.
const (
	guardSQL = `SELECT version FROM streams WHERE stream_id = $1 FOR SHARE NOWAIT`
	// guardsSQL counts the guards of $1 (streams) and $2 (versions) that
	// hold, locking their rows.
	guardsSQL = `SELECT count(*) FROM (SELECT 1 FROM streams s
	JOIN unnest($1::text[], $2::bigint[]) AS g (stream_id, version) ON s.stream_id = g.stream_id AND s.version = g.version
	FOR SHARE OF s NOWAIT) locked`
	// lockNotAvailable is the SQLSTATE of a NOWAIT lock that is taken.
	lockNotAvailable = "55P03"
)

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

// checkGuards refuses guards on no stream or with no version to expect.
func checkGuards(guards []event.StreamAppend) error {
	for _, g := range guards {
		if g.Stream == "" || g.ExpectedVersion <= 0 {
			return fmt.Errorf("append: a guard needs a stream and an expected version above 0 (got %q at %d)", g.Stream, g.ExpectedVersion)
		}
	}
	return nil
}

// guardTx takes guard g in transaction tx: the stream is at
// g.ExpectedVersion and stays so until tx ends, or g fails with a
// *event.ConflictError (Actual is the version found; it may be the
// expected one when the stream was held). A failed guard leaves tx usable.
func (s *EventStore) guardTx(ctx context.Context, tx pgx.Tx, g event.StreamAppend) error {
	if _, err := tx.Exec(ctx, "SAVEPOINT cms_guard"); err != nil {
		return err
	}
	var v int64
	err := tx.QueryRow(ctx, guardSQL, g.Stream).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		v, err = 0, nil
	}
	held := false
	if err != nil {
		if _, rbErr := tx.Exec(ctx, "ROLLBACK TO SAVEPOINT cms_guard"); rbErr != nil {
			return errors.Join(err, rbErr)
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != lockNotAvailable {
			return fmt.Errorf("append, guard on %s: %w", g.Stream, err)
		}
		held = true
		if v, err = s.StreamVersion(ctx, tx, g.Stream); err != nil {
			return err
		}
	} else if _, err := tx.Exec(ctx, "RELEASE SAVEPOINT cms_guard"); err != nil {
		return err
	}
	if held || v != g.ExpectedVersion {
		return &event.ConflictError{StreamID: g.Stream, Expected: g.ExpectedVersion, Actual: v}
	}
	return nil
}

// AppendHeld holds stream at version while decide runs, and appends what
// decide returns in the same transaction: all or none. Held, the stream
// takes no guard (see event.StreamAppend), so that no append guarded on it
// commits between decide's reads and the append; appends whose guards
// were taken before wait until AppendHeld has them (it waits for their
// transactions to end) and are visible to decide. A stream not at version
// is a *event.ConflictError, before decide runs. decide may read through
// other connections (a read model catching up with the log): the held
// transaction has written nothing, so it holds back no reader of the log.
func (s *EventStore) AppendHeld(ctx context.Context, stream string, version int64,
	decide func(ctx context.Context) ([]event.StreamAppend, error)) (event.AppendResult, error) {
	var appends []event.StreamAppend
	var last event.AppendResult
	var decided error // decide's own error, returned as it is
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var v int64
		err := tx.QueryRow(ctx, `SELECT version FROM streams WHERE stream_id = $1 FOR UPDATE`, stream).Scan(&v)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return err
		}
		if v != version {
			return &event.ConflictError{StreamID: stream, Expected: version, Actual: v}
		}
		if appends, decided = decide(ctx); decided != nil {
			return decided
		}
		writes, guards := splitGuards(appends)
		if len(writes) == 0 {
			return errors.New("append: nothing to append")
		}
		if err := checkGuards(guards); err != nil {
			return err
		}
		for _, a := range writes {
			r, err := s.AppendTx(ctx, tx, a.Stream, a.ExpectedVersion, a.Events...)
			if err != nil {
				return err
			}
			if r.Duplicate {
				return fmt.Errorf("append to %s: its events are stored already", a.Stream)
			}
			if last.Last.Less(r.Last) {
				last.Last = r.Last
			}
			last.Version = r.Version
		}
		for _, g := range guards {
			if err := s.guardTx(ctx, tx, g); err != nil {
				return err
			}
		}
		return nil
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
