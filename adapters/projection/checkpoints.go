package projection

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// writeCheckpoint sets the checkpoint row (a projection's, or a rebuild's
// own) to p, in q: the transaction that applied the events up to p, so
// that both commit or neither does.
func writeCheckpoint(ctx context.Context, q projections.DB, row string, p event.Position) error {
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
