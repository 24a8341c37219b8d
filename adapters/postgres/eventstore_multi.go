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
	n := 0
	for _, a := range appends {
		n += len(a.Events)
	}
	s.wake()
	if s.OnAppend != nil {
		s.OnAppend(n)
	}
	return last, nil
}
