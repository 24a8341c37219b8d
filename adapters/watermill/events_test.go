package watermill_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	wmsql "github.com/ThreeDotsLabs/watermill-sql/v4/pkg/sql"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres/pgtest"
	cmswm "github.com/halocms/halocms/adapters/watermill"
	"github.com/halocms/halocms/domain/event"
)

func selectQuery(t *testing.T, group string, batch int) wmsql.Query {
	t.Helper()
	return schemaQuery(t, cmswm.EventsSchema{BatchSize: batch}, group)
}

func schemaQuery(t *testing.T, schema cmswm.EventsSchema, group string) wmsql.Query {
	t.Helper()
	q, err := schema.SelectQuery(wmsql.SelectQueryParams{
		Topic: cmswm.Topic, ConsumerGroup: group, OffsetsAdapter: cmswm.CheckpointOffsets{HandlerWritesCheckpoint: true},
	})
	if err != nil {
		t.Fatal(err)
	}
	return q
}

func seed(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	seedTyped(t, pool, n, "'test.happened'")
}

// seedTyped seeds n events whose types are the SQL expression typ of g,
// the event's number (1..n).
func seedTyped(t *testing.T, pool *pgxpool.Pool, n int, typ string) {
	t.Helper()
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
		SELECT 's-' || (g % 100), g, gen_random_uuid(), `+typ+`, 1, jsonb_build_object('n', g),
			jsonb_build_object('eventId', gen_random_uuid(), 'actor', 'tester', 'app', 'app-1')
		FROM generate_series(1, $1) g`, n); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `ANALYZE events`); err != nil {
		t.Fatal(err)
	}
	// Wait until the events are readable: an older transaction still open
	// anywhere in the cluster (other tests) hides them for a moment.
	for deadline := time.Now().Add(10 * time.Second); ; {
		var visible int
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM events WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())`).Scan(&visible); err != nil {
			t.Fatal(err)
		}
		if visible == n {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events readable", visible, n)
		}
		time.Sleep(5 * time.Millisecond)
	}
	subscribe(t, pool, "p")
}

// subscribe makes the checkpoint row of consumer group, as a subscriber does.
func subscribe(t *testing.T, pool *pgxpool.Pool, group string) {
	t.Helper()
	before, err := cmswm.CheckpointOffsets{}.BeforeSubscribingQueries(wmsql.BeforeSubscribingQueriesParams{ConsumerGroup: group})
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range before {
		if _, err := pool.Exec(context.Background(), q.Query, q.Args...); err != nil {
			t.Fatal(err)
		}
	}
}

// The batch query is one index range scan on the primary key from the
// checkpoint, not a scan of the backlog.
func TestSelectIsAnIndexRangeScan(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	seed(t, pool, 50000)
	ctx := context.Background()
	if _, err := pool.Exec(ctx, `UPDATE projection_checkpoints SET tx_id = (SELECT transaction_id FROM events LIMIT 1), position = 25000 WHERE name = 'p'`); err != nil {
		t.Fatal(err)
	}
	for _, schema := range []cmswm.EventsSchema{{BatchSize: 1000}, {BatchSize: 1000, Skip: []string{"test.other"}}} {
		q := schemaQuery(t, schema, "p")
		var plan strings.Builder
		rows, err := pool.Query(ctx, `EXPLAIN (ANALYZE, COSTS OFF) `+q.Query, q.Args...)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var line string
			_ = rows.Scan(&line)
			plan.WriteString(line + "\n")
		}
		rows.Close()
		p := plan.String()
		if !strings.Contains(p, "Index Scan using events_pkey") || !strings.Contains(p, "ROW(transaction_id, global_position) > ROW(") ||
			strings.Contains(p, "Bitmap") || strings.Contains(p, "Seq Scan on events") {
			t.Errorf("skipping %v: plan is not an index range scan:\n%s", schema.Skip, p)
		}
	}
}

// A session that read the log while it was empty still reads a batch of a
// long log as one index range scan: the SELECT is planned for its values,
// not from a generic plan cached on the short log (which fetched and sorted
// the whole range past the checkpoint). No ANALYZE in between, as with
// autovacuum off.
func TestSelectIsPlannedForTheLogItReads(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	ctx := context.Background()
	subscribe(t, pool, "p")
	conn, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	q := selectQuery(t, "p", 100)
	for range 10 { // an empty log, past the five custom plans before a generic one
		rows, err := conn.Query(ctx, q.Query, q.Args...)
		if err != nil {
			t.Fatal(err)
		}
		rows.Close()
	}
	if _, err := pool.Exec(ctx, `INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
		SELECT 'long', g, gen_random_uuid(), 'test.happened', 1, '{}', '{}' FROM generate_series(1, 30000) g`); err != nil {
		t.Fatal(err)
	}
	tx, err := conn.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	for deadline := time.Now().Add(10 * time.Second); ; {
		var read, fetched int
		rows, err := tx.Query(ctx, q.Query, q.Args...) // the very statement the session ran before
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			read++
		}
		if rows.Close(); rows.Err() != nil {
			t.Fatal(rows.Err())
		}
		if err := tx.QueryRow(ctx, `SELECT idx_tup_fetch FROM pg_stat_xact_user_tables WHERE relname = 'events'`).Scan(&fetched); err != nil {
			t.Fatal(err)
		}
		if read == 100 {
			if fetched > 1000 {
				t.Errorf("the batch of 100 fetched %d rows of the log", fetched)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d events readable, want 100", read)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// Rows become messages that carry the whole recorded event.
func TestMessagesCarryTheEvent(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	seed(t, pool, 10)
	ctx := context.Background()
	q := selectQuery(t, "p", 4)
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx) //nolint:errcheck
	rows, err := tx.Query(ctx, q.Query, q.Args...)
	if err != nil {
		t.Fatal(err)
	}
	var recs []event.Recorded
	for rows.Next() {
		row, r := scanRecorded(t, rows)
		i, n, err := cmswm.BatchPlace(row.Msg)
		if err != nil || i != len(recs)+1 || n != 4 {
			t.Errorf("batch place %d/%d (%v), want %d/4", i, n, err, len(recs)+1)
		}
		if v, err := cmswm.ProjectionVersion(row.Msg); err != nil || v != 1 {
			t.Errorf("projection version %d (%v)", v, err)
		}
		if row.Offset != r.Pos {
			t.Errorf("offset %d, position %d", row.Offset, r.Pos)
		}
		recs = append(recs, r)
	}
	rows.Close()
	if len(recs) != 4 {
		t.Fatalf("%d messages, want 4", len(recs))
	}
	r := recs[0]
	var data struct{ N int }
	if err := json.Unmarshal(r.Data.(json.RawMessage), &data); err != nil || data.N != 1 {
		t.Errorf("data %s (%v)", r.Data, err)
	}
	if r.Type != "test.happened" || r.SchemaVersion != 1 || r.StreamID != "s-1" || r.StreamVersion != 1 ||
		r.Meta.Actor != "tester" || r.Meta.App != "app-1" || r.Meta.EventID == "" || r.RecordedAt.IsZero() || r.TxID == 0 {
		t.Errorf("recorded %+v", r)
	}
	for i := 1; i < len(recs); i++ {
		if !recs[i-1].Position.Less(recs[i].Position) {
			t.Errorf("not in log order: %s then %s", recs[i-1].Position, recs[i].Position)
		}
	}
}

// The rows of skipped types are left out of a batch, but for its last,
// which the checkpoint advances to.
func TestSkippedTypesAreLeftOut(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	seedTyped(t, pool, 9, "CASE WHEN g % 3 = 0 THEN 'test.happened' ELSE 'test.other' END")
	ctx := context.Background()
	read := func(batch int) (ns []int, types []string) {
		t.Helper()
		q := schemaQuery(t, cmswm.EventsSchema{BatchSize: batch, Skip: []string{"test.other", "test.unused"}}, "p")
		rows, err := pool.Query(ctx, q.Query, q.Args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		for rows.Next() {
			row, r := scanRecorded(t, rows)
			var d struct{ N int }
			if err := json.Unmarshal(r.Data.(json.RawMessage), &d); err != nil {
				t.Fatal(err)
			}
			if i, n, err := cmswm.BatchPlace(row.Msg); err != nil || i != len(ns)+1 || n == 0 {
				t.Errorf("event %d: batch place %d/%d (%v)", d.N, i, n, err)
			}
			ns, types = append(ns, d.N), append(types, r.Type)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return ns, types
	}
	// Events 1..5 scanned: 3 is kept, 5 is the last.
	if ns, types := read(5); fmt.Sprint(ns) != "[3 5]" || fmt.Sprint(types) != "[test.happened test.other]" {
		t.Errorf("batch of 5: events %v of types %v, want [3 5]", ns, types)
	}
	if ns, _ := read(100); fmt.Sprint(ns) != "[3 6 9]" {
		t.Errorf("batch of 100: events %v, want [3 6 9]", ns)
	}
}

// While one runner holds a batch, a second runner of the same projection
// reads nothing.
func TestSecondRunnerGetsNothingWhileLocked(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	seed(t, pool, 10)
	ctx := context.Background()
	q := selectQuery(t, "p", 100)
	count := func(tx pgx.Tx) int {
		rows, err := tx.Query(ctx, q.Query, q.Args...)
		if err != nil {
			t.Fatal(err)
		}
		defer rows.Close()
		n := 0
		for rows.Next() {
			n++
		}
		return n
	}
	tx1, _ := pool.Begin(ctx)
	defer tx1.Rollback(ctx) //nolint:errcheck
	tx2, _ := pool.Begin(ctx)
	defer tx2.Rollback(ctx) //nolint:errcheck
	if n := count(tx1); n != 10 {
		t.Fatalf("first runner read %d events, want 10", n)
	}
	if n := count(tx2); n != 0 {
		t.Errorf("second runner read %d events while the first holds the checkpoint", n)
	}
}

// With HandlerWritesCheckpoint, the ack refuses to commit a batch whose
// checkpoint the handler did not write.
func TestAckRefusesUnwrittenCheckpoint(t *testing.T) {
	t.Parallel()
	pool := pgtest.Pool(t)
	seed(t, pool, 3)
	ctx := context.Background()
	var tx, pos int64
	if err := pool.QueryRow(ctx, `SELECT transaction_id::text::bigint, max(global_position) FROM events GROUP BY 1`).Scan(&tx, &pos); err != nil {
		t.Fatal(err)
	}
	ack, err := cmswm.CheckpointOffsets{HandlerWritesCheckpoint: true}.AckMessageQuery(wmsql.AckMessageQueryParams{
		ConsumerGroup: "p", LastRow: wmsql.Row{Offset: pos, ExtraData: map[string]any{"transaction_id": wmsql.XID8(tx)}},
	})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, ack.Query, ack.Args...); err == nil || !strings.Contains(err.Error(), "checkpoint not written") {
		t.Errorf("ack without the checkpoint: %v, want a refusal", err)
	}
	if _, err := pool.Exec(ctx, `UPDATE projection_checkpoints SET tx_id = $1::text::xid8, position = $2 WHERE name = 'p'`, fmt.Sprint(tx), pos); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, ack.Query, ack.Args...); err != nil {
		t.Errorf("ack with the checkpoint written: %v", err)
	}
	plain, _ := cmswm.CheckpointOffsets{}.AckMessageQuery(wmsql.AckMessageQueryParams{
		ConsumerGroup: "p", LastRow: wmsql.Row{Offset: 2, ExtraData: map[string]any{"transaction_id": wmsql.XID8(tx)}},
	})
	if _, err := pool.Exec(ctx, plain.Query, plain.Args...); err != nil {
		t.Fatal(err)
	}
	var got int64
	_ = pool.QueryRow(ctx, `SELECT position FROM projection_checkpoints WHERE name = 'p'`).Scan(&got)
	if got != 2 {
		t.Errorf("classic ack left position %d, want 2", got)
	}
	if _, err := (cmswm.EventsSchema{}).InsertQuery(wmsql.InsertQueryParams{}); err == nil {
		t.Error("InsertQuery accepted a publish")
	}
}

// scanRecorded turns the current row of an events SELECT into its message
// and the event it carries.
func scanRecorded(t *testing.T, rows pgx.Rows) (wmsql.Row, event.Recorded) {
	t.Helper()
	row, err := cmswm.EventsSchema{}.UnmarshalMessage(wmsql.UnmarshalMessageParams{Row: rows})
	if err != nil {
		t.Fatal(err)
	}
	r, err := cmswm.Recorded(row.Msg)
	if err != nil {
		t.Fatal(err)
	}
	return row, r
}
