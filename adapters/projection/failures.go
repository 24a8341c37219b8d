package projection

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/operations"
)

// Failure is the last failure of a projection's live runners, in any
// process, while the projection stands where it failed.
type Failure struct {
	// Event is the event the projector fails on, when the runner found it.
	Event *event.Position
	Error string
	// Failures counts the failed batches in a row of the process that
	// recorded it; Since is the first of them at this checkpoint, At the
	// last.
	Failures  int
	Process   string
	Since, At time.Time
}

// process names this process in projection_failures.
var process = func() string {
	host, _ := os.Hostname()
	return fmt.Sprintf("%s/%d", host, os.Getpid())
}()

// maxErrorBytes bounds an error recorded in projection_failures.
const maxErrorBytes = 4000

// recordFailure records r's failed batch in projection_failures, for
// `cms projections status` (best effort: a database that cannot be
// reached is logged by the runner already).
func (rt *Runtime) recordFailure(ctx context.Context, r *runner, err error, ev *event.Position, failures int) {
	msg := err.Error()
	if len(msg) > maxErrorBytes {
		msg = strings.ToValidUTF8(msg[:maxErrorBytes], "") + "…"
	}
	var evTx, evPos any
	if ev != nil {
		evTx, evPos = fmt.Sprint(ev.TxID), ev.Pos
	}
	c, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	_, xerr := rt.pool.Exec(c, `INSERT INTO projection_failures AS f (projection, checkpoint_tx, checkpoint_pos, event_tx, event_pos, error, failures, process)
		SELECT $1, tx_id, position, $2::text::xid8, $3, $4, $5, $6 FROM projection_checkpoints WHERE name = $1
		ON CONFLICT (projection) DO UPDATE SET checkpoint_tx = excluded.checkpoint_tx, checkpoint_pos = excluded.checkpoint_pos,
			event_tx = excluded.event_tx, event_pos = excluded.event_pos, error = excluded.error, failures = excluded.failures,
			process = excluded.process, at = now(),
			since = CASE WHEN (f.checkpoint_tx, f.checkpoint_pos) = (excluded.checkpoint_tx, excluded.checkpoint_pos) THEN f.since ELSE now() END`,
		r.name, evTx, evPos, msg, failures, process)
	if xerr == nil {
		r.recorded.Store(true)
	}
}

// clearFailure deletes r's projection's failure after a batch committed.
func (rt *Runtime) clearFailure(r *runner) {
	c, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := rt.pool.Exec(c, `DELETE FROM projection_failures WHERE projection = $1`, r.name); err == nil {
		r.recorded.Store(false)
	}
}

// failures reads the recorded failures of projections that still stand
// where they failed.
func (rt *Runtime) failures(ctx context.Context) (map[string]*Failure, error) {
	rows, err := rt.pool.Query(ctx, `SELECT f.projection, f.event_tx::text::bigint, f.event_pos, f.error, f.failures, f.process, f.since, f.at
		FROM projection_failures f JOIN projection_checkpoints c ON c.name = f.projection
		WHERE (c.tx_id, c.position) = (f.checkpoint_tx, f.checkpoint_pos)`)
	if err != nil {
		return nil, fmt.Errorf("projection failures: %w", err)
	}
	defer rows.Close()
	out := map[string]*Failure{}
	for rows.Next() {
		var name string
		var evTx, evPos *int64
		f := &Failure{}
		if err := rows.Scan(&name, &evTx, &evPos, &f.Error, &f.Failures, &f.Process, &f.Since, &f.At); err != nil {
			return nil, err
		}
		if evTx != nil && evPos != nil {
			f.Event = &event.Position{TxID: uint64(*evTx), Pos: *evPos}
		}
		out[name] = f
	}
	return out, rows.Err()
}

// notifiesParks accepts the NotifyChannel payloads that announce a parking
// or a replay (see Runtime.record).
func notifiesParks(payload string) bool {
	types := postgres.NotifiedTypes(payload)
	return slices.Contains(types, operations.EventParked{}.EventType()) ||
		slices.Contains(types, operations.ParkedEventsReplayed{}.EventType())
}
