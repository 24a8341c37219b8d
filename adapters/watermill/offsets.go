package watermill

import (
	"errors"
	"strconv"

	wmsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
)

// CheckpointOffsets is a watermill-sql OffsetsAdapter over
// `projection_checkpoints`: the consumer group is the projection name and
// its offset is the row's (tx_id, position).
//
// NextOffsetQuery locks the row FOR UPDATE SKIP LOCKED for the whole batch
// transaction: a second runner of the same projection (another process, or
// a rebuild switching versions) gets no row, hence no events, until the
// first one commits or rolls back. Only one runner applies a batch at a
// time, and it reads the checkpoint it then advances under that lock.
type CheckpointOffsets struct {
	// HandlerWritesCheckpoint says that the message handler writes the
	// checkpoint itself, in the batch transaction, together with the
	// read-model writes. The ack query then does not write: it checks that
	// the checkpoint equals the last acknowledged row and fails (rolling the
	// whole batch back) if not. So a batch can never commit an advanced
	// checkpoint without the writes that go with it, whatever watermill
	// does on deadlines, cancellations or close.
	//
	// When false, the ack query advances the checkpoint to the last
	// acknowledged row (the classic watermill-sql behaviour, for handlers
	// that apply one message at a time).
	HandlerWritesCheckpoint bool
}

var _ wmsql.OffsetsAdapter = CheckpointOffsets{}

var errNoGroup = errors.New("watermill: consumer group (projection name) is required")

// NextOffsetQuery returns the checkpoint columns tx_id, position and
// version (EventsSchema selects them) of the locked row.
func (CheckpointOffsets) NextOffsetQuery(params wmsql.NextOffsetQueryParams) (wmsql.Query, error) {
	if params.ConsumerGroup == "" {
		return wmsql.Query{}, errNoGroup
	}
	return wmsql.Query{
		Query: `SELECT tx_id, position, version FROM projection_checkpoints WHERE name = $1 FOR UPDATE SKIP LOCKED`,
		Args:  []any{params.ConsumerGroup},
	}, nil
}

// AckMessageQuery advances (or verifies, see HandlerWritesCheckpoint) the
// checkpoint to the last acknowledged row.
func (a CheckpointOffsets) AckMessageQuery(params wmsql.AckMessageQueryParams) (wmsql.Query, error) {
	if params.ConsumerGroup == "" {
		return wmsql.Query{}, errNoGroup
	}
	tx, _ := params.LastRow.ExtraData["transaction_id"].(wmsql.XID8)
	args := []any{params.ConsumerGroup, strconv.FormatUint(uint64(tx), 10), params.LastRow.Offset}
	if a.HandlerWritesCheckpoint {
		// The error branch depends on a column, so the planner cannot
		// fold it into a constant error.
		return wmsql.Query{
			Query: `SELECT CASE WHEN tx_id = $2::text::xid8 AND position = $3 THEN 0
				ELSE ('projection ' || name || ': checkpoint not written for the acknowledged batch, rolling back')::int END
				FROM projection_checkpoints WHERE name = $1`,
			Args: args,
		}, nil
	}
	return wmsql.Query{
		Query: `UPDATE projection_checkpoints SET tx_id = $2::text::xid8, position = $3, updated_at = now() WHERE name = $1`,
		Args:  args,
	}, nil
}

// ConsumedMessageQuery is not used.
func (CheckpointOffsets) ConsumedMessageQuery(wmsql.ConsumedMessageQueryParams) (wmsql.Query, error) {
	return wmsql.Query{}, nil
}

// SchemaInitializingQueries returns nothing: the migrations own the table.
func (CheckpointOffsets) SchemaInitializingQueries(wmsql.OffsetsSchemaInitializingQueriesParams) ([]wmsql.Query, error) {
	return nil, nil
}

// BeforeSubscribingQueries creates the checkpoint row (version 1, start of
// the log) if it is missing, so that there is always a row to lock.
func (CheckpointOffsets) BeforeSubscribingQueries(params wmsql.BeforeSubscribingQueriesParams) ([]wmsql.Query, error) {
	if params.ConsumerGroup == "" {
		return nil, errNoGroup
	}
	return []wmsql.Query{{
		Query: `INSERT INTO projection_checkpoints (name) VALUES ($1) ON CONFLICT (name) DO NOTHING`,
		Args:  []any{params.ConsumerGroup},
	}}, nil
}
