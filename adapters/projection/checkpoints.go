package projection

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// writeCheckpoint sets the checkpoint row (a projection's, or a rebuild's
// own) to p, in q: the transaction that applied the events up to p, so
// that both commit or neither does.
func writeCheckpoint(ctx context.Context, q projections.DB, row string, p event.Position) error {
	tag, err := q.Exec(ctx, checkpointSQL, checkpointArgs(row, p)...)
	return checkpointWritten(row, tag, err)
}

// checkpointSQL sets a checkpoint row (checkpointArgs).
const checkpointSQL = `UPDATE projection_checkpoints SET tx_id = $2::text::xid8, position = $3, updated_at = now() WHERE name = $1`

func checkpointArgs(row string, p event.Position) []any { return []any{row, fmt.Sprint(p.TxID), p.Pos} }

// checkpointWritten checks checkpointSQL's outcome.
func checkpointWritten(row string, tag pgconn.CommandTag, err error) error {
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", row, err)
	}
	if tag.RowsAffected() != 1 {
		return fmt.Errorf("checkpoint %s: row missing", row)
	}
	return nil
}

// checkpoint is a row of the checkpoint table.
type checkpoint struct {
	name string
	pos  event.Position
}

// readCheckpoints reads the live checkpoints of names (all if nil; a
// rebuild's own rows are left out).
func readCheckpoints(ctx context.Context, q projections.DB, names []string) ([]checkpoint, error) {
	rows, err := q.Query(ctx, `SELECT name, tx_id::text::bigint, position FROM projection_checkpoints
		WHERE ($1::text[] IS NULL OR name = ANY($1)) AND strpos(name, '@') = 0`, names)
	if err != nil {
		return nil, err
	}
	var out []checkpoint
	var cp checkpoint
	var tx int64
	_, err = pgx.ForEachRow(rows, []any{&cp.name, &tx, &cp.pos.Pos}, func() error {
		cp.pos.TxID = uint64(tx)
		out = append(out, cp)
		return nil
	})
	return out, err
}

// claimBatch reads which of a batch's events (not empty) are parked for
// projection name, and sets its checkpoint to last, in one round trip:
// both in tx, the batch transaction, which applies the rest after and
// commits all of it or nothing. It returns the events to apply.
func claimBatch(ctx context.Context, tx pgx.Tx, name string, events []event.Recorded, last event.Position) ([]event.Recorded, error) {
	var b pgx.Batch
	b.Queue(parkedInSQL, parkedInArgs(name, events)...)
	b.Queue(checkpointSQL, checkpointArgs(name, last)...)
	br := tx.SendBatch(ctx, &b)
	rows, err := br.Query()
	kept, _, err := leaveParked(name, events, rows, err)
	if err == nil {
		tag, cerr := br.Exec()
		err = checkpointWritten(name, tag, cerr)
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	return kept, err
}
