package postgres

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
)

// AppendMulti appends to several streams in one transaction: all or none.
// It returns the result of the last append (its Last is the highest
// position written).
func (s *EventStore) AppendMulti(ctx context.Context, appends ...event.StreamAppend) (event.AppendResult, error) {
	if len(appends) > 1 {
		if res, ok, err := s.appendPipelined(ctx, appends); err != nil || ok {
			if err == nil {
				s.appended(appends)
			}
			return res, err
		}
	}
	var last event.AppendResult
	dups := 0
	err := pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		for _, a := range appends {
			r, err := s.AppendTx(ctx, tx, a.Stream, a.ExpectedVersion, a.Events...)
			if err != nil {
				return err
			}
			if last.Last.Less(r.Last) {
				last.Last = r.Last
			}
			last.Version = r.Version
			if r.Duplicate {
				dups++
			}
		}
		return nil
	})
	if err != nil {
		return event.AppendResult{}, fmt.Errorf("append: %w", err)
	}
	if dups == len(appends) {
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
	s.wake()
	if s.OnAppend != nil {
		s.OnAppend(n)
	}
}

// appendPipelined sends every stream's append in one round trip (a pgx
// batch in one transaction). ok is false when any append did not go
// through cleanly (a version conflict, a retried append): the transaction
// is rolled back and AppendMulti takes the careful path, which tells
// conflicts and duplicates apart.
func (s *EventStore) appendPipelined(ctx context.Context, appends []event.StreamAppend) (event.AppendResult, bool, error) {
	var b pgx.Batch
	for _, a := range appends {
		if len(a.Events) == 0 || a.Stream == "" {
			return event.AppendResult{}, false, nil
		}
		p, err := s.prepare(a.Stream, a.ExpectedVersion, a.Events)
		if err != nil {
			return event.AppendResult{}, false, err
		}
		b.Queue(p.sql, p.args...)
	}
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		return event.AppendResult{}, false, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // a no-op after Commit
	br := tx.SendBatch(ctx, &b)
	var res event.AppendResult
	for _, a := range appends {
		rows, err := br.Query()
		if err != nil {
			br.Close()
			return event.AppendResult{}, false, nil
		}
		count := 0
		for rows.Next() {
			var txid, pos, ver int64
			if err := rows.Scan(&txid, &pos, &ver); err != nil {
				break
			}
			count++
			res.Include(event.Position{TxID: uint64(txid), Pos: pos}, ver)
		}
		rows.Close()
		if rows.Err() != nil || count != len(a.Events) {
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
