// Package watermill wires watermill (github.com/ThreeDotsLabs/watermill and
// watermill-sql v4) to the event store: a subscriber that reads the
// PostgreSQL `events` table in log order, with one consumer group per
// projection whose offsets are the projection's checkpoint row in
// `projection_checkpoints`.
//
// Events are never published through watermill: the event store appends
// them. The schema adapter only reads.
package watermill

import (
	stdsql "database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"time"

	wm "github.com/ThreeDotsLabs/watermill"
	wmsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/ThreeDotsLabs/watermill/message"
	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
)

// Topic is the watermill topic name of the event log. The schema adapter
// ignores it (there is one log), but watermill wants one.
const Topic = "events"

// Message metadata keys set on every event message.
const (
	MetaType          = "event_type"
	MetaSchemaVersion = "schema_version"
	MetaStreamID      = "stream_id"
	MetaStreamVersion = "stream_version"
	MetaPosition      = "position" // global position
	MetaTxID          = "tx_id"    // transaction id (xid8)
	MetaRecordedAt    = "recorded_at"
	MetaEventMetadata = "event_metadata" // the stored metadata JSON object
	// MetaProjectionVersion is the version of the consumer group's
	// projection, read from its checkpoint row while the row is locked for
	// the batch: the handler writes into that version's tables.
	MetaProjectionVersion = "projection_version"
	// MetaBatchIndex and MetaBatchSize place the message in the batch read
	// by one SELECT (index 1..size). A handler can buffer a batch and apply
	// it set-wise on its last message: every message of the batch is
	// processed in the same transaction, committed after the last ack.
	MetaBatchIndex = "batch_index"
	MetaBatchSize  = "batch_size"
)

// DefaultBatchSize is the number of events one SELECT reads.
const DefaultBatchSize = 1000

// EventsSchema is a watermill-sql SchemaAdapter over the `events` table.
//
// It reads in (transaction_id, global_position) order with the row-value
// comparison, only below pg_snapshot_xmin(pg_current_snapshot()), so that
// each batch is one index range scan however far behind the consumer is and
// no event committed out of order is ever skipped. (watermill's default
// PostgreSQL schema uses an OR form whose cost grows with the backlog.)
//
// It must be paired with CheckpointOffsets: its SELECT uses the columns
// tx_id, position and version of CheckpointOffsets.NextOffsetQuery.
type EventsSchema struct {
	// BatchSize is the number of events per SELECT (DefaultBatchSize if 0).
	BatchSize int
	// Skip lists event types the consumer does not use: the SELECT leaves
	// their rows out, but for the last row it scanned, so that the
	// consumer's checkpoint still advances past them. Every projection
	// reads the whole log; this saves the database turning the others'
	// events from jsonb into text, and the consumer a message for each.
	Skip []string
}

var _ wmsql.SchemaAdapter = EventsSchema{}

// ErrPublishNotSupported is returned by InsertQuery: events are appended
// through the event store, never published through watermill.
var ErrPublishNotSupported = errors.New("watermill: events are appended through the event store, not published")

// InsertQuery refuses: see ErrPublishNotSupported.
func (EventsSchema) InsertQuery(wmsql.InsertQueryParams) (wmsql.Query, error) {
	return wmsql.Query{}, ErrPublishNotSupported
}

// SchemaInitializingQueries returns nothing: the migrations own the tables.
func (EventsSchema) SchemaInitializingQueries(wmsql.SchemaInitializingQueriesParams) ([]wmsql.Query, error) {
	return nil, nil
}

// SubscribeIsolationLevel is READ COMMITTED: the checkpoint row is locked
// FOR UPDATE, which in READ COMMITTED returns its newest committed version
// (another runner's or a rebuild's last write), and the handler's writes
// see the newest state of the projection's tables.
func (EventsSchema) SubscribeIsolationLevel() stdsql.IsolationLevel {
	return stdsql.LevelReadCommitted
}

func (s EventsSchema) batchSize() int {
	if s.BatchSize <= 0 {
		return DefaultBatchSize
	}
	return s.BatchSize
}

// SelectQuery reads the next batch after the consumer group's checkpoint.
// If the checkpoint row is locked by another runner of the same projection
// (FOR UPDATE SKIP LOCKED), it returns no rows.
func (s EventsSchema) SelectQuery(params wmsql.SelectQueryParams) (wmsql.Query, error) {
	next, err := params.OffsetsAdapter.NextOffsetQuery(wmsql.NextOffsetQueryParams{
		Topic: params.Topic, ConsumerGroup: params.ConsumerGroup,
	})
	if err != nil {
		return wmsql.Query{}, err
	}
	// The inner query is the index range scan; the window functions run
	// over its (limited) result only.
	scan := `SELECT e.global_position, e.transaction_id, e.event_id, e.stream_id, e.stream_version, e.event_type,
	       e.schema_version, e.data, e.metadata, e.recorded_at
	FROM events e
	WHERE (e.transaction_id, e.global_position) > ((SELECT tx_id FROM cp), (SELECT position FROM cp))
	  AND e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
	ORDER BY e.transaction_id, e.global_position
	LIMIT ` + strconv.Itoa(s.batchSize())
	args := next.Args
	if len(s.Skip) > 0 {
		// The scanned rows of skipped types are left out, but for the last
		// one, which the checkpoint then advances to.
		args = append(slices.Clip(args), s.Skip)
		scan = `SELECT * FROM (
	SELECT s.*, lead(s.global_position) OVER (ORDER BY s.transaction_id, s.global_position) IS NULL AS last
	FROM (` + scan + `) s
) s
WHERE s.last OR s.event_type <> ALL($` + strconv.Itoa(len(args)) + `::text[])`
	}
	q := `WITH cp AS (` + next.Query + `)
SELECT b.global_position, b.transaction_id::text::bigint, b.event_id::text, b.stream_id, b.stream_version, b.event_type,
       b.schema_version, b.data, b.metadata, b.recorded_at, (SELECT version FROM cp),
       row_number() OVER (ORDER BY b.transaction_id, b.global_position), count(*) OVER ()
FROM (` + scan + `) b
ORDER BY b.transaction_id, b.global_position`
	// Planned for its values every time (unnamed, see planned): a
	// session's cached generic plan outlives the log's size. Planned on a
	// short log (a new installation, a test), it sorts the whole range past
	// the checkpoint; kept while millions of events are appended (no
	// ANALYZE in between, as with autovacuum off), it took a runner about
	// a second a batch to catch up, a thousand times the planned statement.
	return wmsql.Query{Query: q, Args: append([]any{planned}, args...)}, nil
}

// planned runs a statement unnamed, planned for its actual values (about
// 0.13 ms for the batch SELECT; the statement's description stays cached).
const planned = pgx.QueryExecModeCacheDescribe

// UnmarshalMessage turns one row into a message: payload = event data JSON,
// metadata = the Meta* keys.
func (EventsSchema) UnmarshalMessage(params wmsql.UnmarshalMessageParams) (wmsql.Row, error) {
	var (
		pos, tx, streamVersion int64
		id, streamID, typ      string
		sv, version            int32
		data, meta             []byte
		recordedAt             time.Time
		index, size            int64
	)
	if err := params.Row.Scan(&pos, &tx, &id, &streamID, &streamVersion, &typ, &sv, &data, &meta,
		&recordedAt, &version, &index, &size); err != nil {
		return wmsql.Row{}, fmt.Errorf("scan event row: %w", err)
	}
	msg := message.NewMessage(id, data)
	msg.Metadata = message.Metadata{
		MetaType:              typ,
		MetaSchemaVersion:     strconv.Itoa(int(sv)),
		MetaStreamID:          streamID,
		MetaStreamVersion:     strconv.FormatInt(streamVersion, 10),
		MetaPosition:          strconv.FormatInt(pos, 10),
		MetaTxID:              strconv.FormatInt(tx, 10),
		MetaRecordedAt:        recordedAt.UTC().Format(time.RFC3339Nano),
		MetaEventMetadata:     string(meta),
		MetaProjectionVersion: strconv.Itoa(int(version)),
		MetaBatchIndex:        strconv.FormatInt(index, 10),
		MetaBatchSize:         strconv.FormatInt(size, 10),
	}
	return wmsql.Row{
		Offset:    pos,
		UUID:      []byte(id),
		Payload:   data,
		Msg:       msg,
		ExtraData: map[string]any{"transaction_id": wmsql.XID8(tx)},
	}, nil
}

// Recorded rebuilds the recorded event carried by msg. Data is the stored
// JSON as json.RawMessage: decode it with the event store's codec
// (postgres.EventStore.Decode).
func Recorded(msg *message.Message) (event.Recorded, error) {
	md := msg.Metadata
	var r event.Recorded
	var err error
	num := func(key string) int64 {
		if err != nil {
			return 0
		}
		var v int64
		v, err = strconv.ParseInt(md.Get(key), 10, 64)
		if err != nil {
			err = fmt.Errorf("message %s: metadata %s: %w", msg.UUID, key, err)
		}
		return v
	}
	r.TxID = uint64(num(MetaTxID))
	r.Pos = num(MetaPosition)
	r.StreamVersion = num(MetaStreamVersion)
	r.SchemaVersion = int(num(MetaSchemaVersion))
	if err != nil {
		return event.Recorded{}, err
	}
	r.StreamID = md.Get(MetaStreamID)
	r.Type = md.Get(MetaType)
	if r.RecordedAt, err = time.Parse(time.RFC3339Nano, md.Get(MetaRecordedAt)); err != nil {
		return event.Recorded{}, fmt.Errorf("message %s: metadata %s: %w", msg.UUID, MetaRecordedAt, err)
	}
	if raw := md.Get(MetaEventMetadata); raw != "" {
		if r.Meta, err = postgres.DecodeMetadata([]byte(raw)); err != nil {
			return event.Recorded{}, fmt.Errorf("message %s: %w", msg.UUID, err)
		}
	}
	r.Data = json.RawMessage(msg.Payload)
	return r, nil
}

// BatchPlace returns the message's place in its SELECT batch (1-based index
// and batch size).
func BatchPlace(msg *message.Message) (index, size int, err error) {
	index, err = strconv.Atoi(msg.Metadata.Get(MetaBatchIndex))
	if err == nil {
		size, err = strconv.Atoi(msg.Metadata.Get(MetaBatchSize))
	}
	if err != nil {
		return 0, 0, fmt.Errorf("message %s: batch metadata: %w", msg.UUID, err)
	}
	return index, size, nil
}

// ProjectionVersion returns the projection version carried by msg.
func ProjectionVersion(msg *message.Message) (int, error) {
	v, err := strconv.Atoi(msg.Metadata.Get(MetaProjectionVersion))
	if err != nil {
		return 0, fmt.Errorf("message %s: metadata %s: %w", msg.UUID, MetaProjectionVersion, err)
	}
	return v, nil
}

// PgxTx returns the pgx transaction a watermill-sql (pgx) subscriber
// consumes msg in: the handler's writes in it commit together with the
// batch's offsets.
func PgxTx(msg *message.Message) (pgx.Tx, bool) {
	tx, ok := wmsql.TxFromContext(msg.Context())
	if !ok {
		return nil, false
	}
	if w, ok := tx.(watchedTx); ok {
		tx = w.Tx
	}
	switch t := tx.(type) {
	case *wmsql.PgxTx:
		return t.Tx, t.Tx != nil
	case wmsql.PgxTx:
		return t.Tx, t.Tx != nil
	}
	return nil, false
}

// NewLogger adapts slog for watermill, demoting watermill's chatty Info
// messages (subscriber start/stop) to Debug.
func NewLogger(l *slog.Logger) wm.LoggerAdapter {
	return wm.NewSlogLoggerWithLevelMapping(l, map[slog.Level]slog.Level{slog.LevelInfo: slog.LevelDebug})
}
