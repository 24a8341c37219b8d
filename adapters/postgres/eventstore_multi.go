package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
)

// AppendMulti appends to several streams in one transaction: all or none.
// It returns the result of the last append (its Last is the highest
// position written). Appends without events are guards (see
// event.StreamAppend).
func (s *EventStore) AppendMulti(ctx context.Context, appends ...event.StreamAppend) (event.AppendResult, error) {
	writes, guards, err := splitAppends(appends)
	if err != nil {
		return event.AppendResult{}, err
	}
	if res, ok := s.group.append(ctx, writes, guards); ok {
		s.appended(writes)
		return res, nil
	}
	if len(appends) > 1 {
		appendOne := s.appendPipelined
		if oneStatement(writes) {
			appendOne = s.appendSet
		}
		if res, ok, err := appendOne(ctx, writes, guards); err != nil || ok {
			if err == nil {
				s.appended(writes)
			}
			return res, err
		}
	}
	var last event.AppendResult
	dups := 0
	err = pgx.BeginTxFunc(ctx, s.pool, readCommitted, func(tx pgx.Tx) (err error) {
		last, dups, err = s.appendTx(ctx, tx, writes, guards)
		return err
	})
	if err != nil {
		return event.AppendResult{}, fmt.Errorf("append: %w", err)
	}
	if dups == len(writes) {
		last.Duplicate = true
		return last, nil // a retry: nothing was written
	}
	s.appended(appends)
	return last, nil
}

func (s *EventStore) appended(appends []event.StreamAppend) {
	n := 0
	for _, a := range appends {
		n += len(a.Events)
	}
	s.wake(appends...)
	if s.OnAppend != nil {
		s.OnAppend(n)
	}
}

// appendPipelined sends the guards and every stream's append in one round
// trip (a pgx batch in one transaction). ok is false when any append or
// guard did not go through cleanly (a version conflict, a retried
// append): the transaction is rolled back and AppendMulti takes the
// careful path, which tells conflicts and duplicates apart; a guard whose
// stream is held is a conflict at once (see guardsHeld).
func (s *EventStore) appendPipelined(ctx context.Context, appends, guards []event.StreamAppend) (event.AppendResult, bool, error) {
	var b pgx.Batch
	if len(guards) > 0 {
		queueGuards(&b, guards)
	}
	rows := make([]int, len(appends))
	for i, a := range appends {
		if len(a.Events) == 0 || a.Stream == "" {
			return event.AppendResult{}, false, nil
		}
		p, err := s.prepare(a.Stream, a.ExpectedVersion, a.Events)
		if err != nil {
			return event.AppendResult{}, false, err
		}
		b.Queue(p.sql, p.args...)
		rows[i] = len(a.Events)
	}
	return s.sendAppends(ctx, &b, guards, rows)
}

// sendAppends runs batch b in one transaction, in one round trip: the
// statements of queueGuards first when there are guards, then append
// statements that each return rows[i] rows (transaction id, position and
// version of each event written). ok is false, with the transaction rolled
// back, when any guard or statement did not go through cleanly; a guard
// whose stream is held is a conflict at once (see guardsHeld).
func (s *EventStore) sendAppends(ctx context.Context, b *pgx.Batch, guards []event.StreamAppend, rows []int) (event.AppendResult, bool, error) {
	tx, err := s.pool.BeginTx(ctx, readCommitted)
	if err != nil {
		return event.AppendResult{}, false, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	br := tx.SendBatch(ctx, b)
	if len(guards) > 0 {
		if held, err := guardsHeld(br, guards); !held {
			br.Close()
			return event.AppendResult{}, false, err
		}
	}
	var res event.AppendResult
	for _, want := range rows {
		r, err := br.Query()
		if err != nil {
			br.Close()
			return event.AppendResult{}, false, nil
		}
		if n, err := includeRows(r, &res); err != nil || n != want {
			br.Close()
			return event.AppendResult{}, false, nil
		}
	}
	if err := br.Close(); err != nil {
		return event.AppendResult{}, false, nil
	}
	if err := tx.Commit(ctx); err != nil {
		return event.AppendResult{}, false, fmt.Errorf("append: %w", err)
	}
	return res, true, nil
}

// oneStatement reports whether appendSet can write appends: distinct
// streams, each new (NoStream) or at an exact version, with events.
func oneStatement(appends []event.StreamAppend) bool {
	seen := make(map[string]struct{}, len(appends))
	for _, a := range appends {
		if len(a.Events) == 0 || a.Stream == "" || a.ExpectedVersion < event.NoStream {
			return false
		}
		if _, dup := seen[a.Stream]; dup {
			return false
		}
		seen[a.Stream] = struct{}{}
	}
	return true
}

// appendSetSQL creates the new streams and advances the others from their
// expected version, then inserts the events of the streams it could claim,
// in the order given (stream by stream, as appendPipelined writes them).
// A stream that exists already, or moved on, claims nothing: its events
// are left out and the caller sees fewer rows than it sent.
const appendSetSQL = `
WITH a AS (
	SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[]) AS a (stream_id, expected, n)
), created AS (
	INSERT INTO streams (stream_id, version)
	SELECT stream_id, n FROM a WHERE expected = 0
	ON CONFLICT (stream_id) DO NOTHING
	RETURNING stream_id
), advanced AS (
	UPDATE streams s SET version = s.version + a.n FROM a
	WHERE a.expected > 0 AND s.stream_id = a.stream_id AND s.version = a.expected
	RETURNING s.stream_id
)
INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
SELECT e.stream_id, e.ver, e.id, e.typ, e.sv, e.data, e.meta
FROM unnest($4::text[], $5::bigint[], $6::uuid[], $7::text[], $8::int[], $9::jsonb[], $10::jsonb[])
	WITH ORDINALITY AS e (stream_id, ver, id, typ, sv, data, meta, ord)
WHERE e.stream_id IN (SELECT stream_id FROM created UNION ALL SELECT stream_id FROM advanced)
ORDER BY e.ord
RETURNING transaction_id::text::bigint, global_position, stream_version`

// appendSet writes every stream's append with one statement: one parse,
// one plan and one round trip for the whole chunk instead of one statement
// per stream, the guards first in the same round trip. ok is false, with
// the transaction rolled back, when any guard failed or any stream could
// not be claimed or any row not written (a version conflict, a retried
// append): AppendMulti then takes the careful path, which tells conflicts
// and duplicates apart; a guard whose stream is held is a conflict at once.
func (s *EventStore) appendSet(ctx context.Context, appends, guards []event.StreamAppend) (event.AppendResult, bool, error) {
	args, total, err := s.setArgs(appends)
	if err != nil {
		return event.AppendResult{}, false, err
	}
	var b pgx.Batch
	if len(guards) > 0 {
		queueGuards(&b, guards)
	}
	b.Queue(appendSetSQL, args...)
	return s.sendAppends(ctx, &b, guards, []int{total})
}

// setArgs encodes appends into the arguments of appendSetSQL; total is
// the number of events.
func (s *EventStore) setArgs(appends []event.StreamAppend) (args []any, total int, err error) {
	for _, a := range appends {
		total += len(a.Events)
	}
	var (
		streams   = make([]string, len(appends))
		expected  = make([]int64, len(appends))
		counts    = make([]int64, len(appends))
		evStreams = make([]string, 0, total)
		versions  = make([]int64, 0, total)
		enc       = newEncodedEvents(total)
	)
	for i, a := range appends {
		streams[i], expected[i], counts[i] = a.Stream, a.ExpectedVersion, int64(len(a.Events))
		if err := s.encode(&enc, a.Events); err != nil {
			return nil, 0, err
		}
		for n := range a.Events {
			evStreams = append(evStreams, a.Stream)
			versions = append(versions, a.ExpectedVersion+int64(n)+1)
		}
	}
	return []any{streams, expected, counts, evStreams, versions, enc.ids, enc.types, enc.versions, enc.datas, enc.metas}, total, nil
}
