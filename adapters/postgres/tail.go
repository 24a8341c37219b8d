package postgres

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
)

// ReadTail returns, in log order and undecoded (as ReadAllRaw), the events
// whose type starts with prefix among the last n events a reader following
// the log can see, and the position of the newest of those n: a reader
// that goes on from there with ReadAll misses nothing and repeats nothing.
// An empty log gives no events and the zero position. It reads n index
// entries back from the head, whatever the log's length: a live feed that
// starts with the recent past in memory, so that clients can resume across
// a restart.
func (s *EventStore) ReadTail(ctx context.Context, prefix string, n int) ([]event.Recorded, event.Position, error) {
	var head event.Position
	var tx, pos int64
	err := s.pool.QueryRow(ctx, `SELECT transaction_id::text::bigint, global_position FROM events
		WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())
		ORDER BY events.transaction_id DESC, events.global_position DESC LIMIT 1`).Scan(&tx, &pos)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return nil, event.Position{}, nil
	case err != nil:
		return nil, event.Position{}, fmt.Errorf("read tail: %w", err)
	}
	head = event.Position{TxID: uint64(tx), Pos: pos}
	// Everything up to head is committed (below the snapshot's xmin), so
	// the reads below see all of it, whatever commits meanwhile.
	var low event.Position
	err = s.pool.QueryRow(ctx, `SELECT transaction_id::text::bigint, global_position FROM events
		WHERE (transaction_id, global_position) <= ($1::text::xid8, $2)
		ORDER BY events.transaction_id DESC, events.global_position DESC OFFSET $3 LIMIT 1`,
		fmt.Sprint(head.TxID), head.Pos, max(n, 1)-1).Scan(&tx, &pos)
	switch {
	case errors.Is(err, pgx.ErrNoRows): // fewer than n: from the start
	case err != nil:
		return nil, event.Position{}, fmt.Errorf("read tail: %w", err)
	default:
		low = event.Position{TxID: uint64(tx), Pos: pos}
	}
	rows, err := s.pool.Query(ctx, `SELECT `+selectColumns+` FROM events
		WHERE (transaction_id, global_position) >= ($1::text::xid8, $2)
		  AND (transaction_id, global_position) <= ($3::text::xid8, $4)
		  AND starts_with(event_type, $5)
		ORDER BY events.transaction_id, events.global_position`,
		fmt.Sprint(low.TxID), low.Pos, fmt.Sprint(head.TxID), head.Pos, prefix)
	if err != nil {
		return nil, event.Position{}, fmt.Errorf("read tail: %w", err)
	}
	evs, err := scanRecorded(rows, nil, 0)
	if err != nil {
		return nil, event.Position{}, fmt.Errorf("read tail: %w", err)
	}
	return evs, head, nil
}
