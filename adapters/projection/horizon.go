package projection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/projections"
)

// Horizon returns an instant, by the database's clock, before which every
// event that projection name will ever apply is applied already: a read
// model's answer that says "up to now" (a content sync's syncTimestamp)
// can truthfully say "up to the horizon" only. It is the earliest of
//   - the database's clock (not the caller's, which may be skewed);
//   - for every other session on the database: the start of its
//     transaction if that has written (it may hold events not committed
//     yet, stamped since), else the start of its statement if one is
//     running (it may be an append, stamped then, still waiting for a
//     lock before its first write); an idle session that has written
//     nothing will stamp what it appends later;
//   - the earliest stamp among the events of the transaction of the first
//     event past the projection's checkpoint, in the log's order, of a type
//     its projector handles (committed but not applied yet, or hidden from
//     the runners by an older transaction still open);
//   - the stamp of the earliest event parked for the projection (see
//     Park): Replay applies it later, with its own stamp.
//
// The log orders events by their transaction ids, which a transaction
// takes at its first write, and an event is stamped by the statement that
// appends it (events.recorded_at is statement_timestamp()). A transaction
// whose first write is an append has its earliest stamp at about the time
// it took its id, so an event later in the log's order is not stamped
// before the third bound by more than moments (those between a later
// transaction's first write and its first append), unless its append
// waited for a lock before it wrote: an append at any version to a
// stream another open transaction is writing, or the creation of a stream
// another transaction is creating and then rolls back. Its stamp then
// precedes its transaction id by that wait. Content's SyncMargin covers
// moments, not such waits; content appends at exact versions, so only
// the second can happen to it. The sessions are read before, and the log
// after, in another statement (a later snapshot): a transaction that
// commits in between is still seen, as pending. Sessions that
// pg_stat_activity does not show in full (those of other roles, unless the
// role may read all statistics, and all of them with track_activities
// off) are not seen: every writer must connect as the server's role.
func (rt *Runtime) Horizon(ctx context.Context, name string) (time.Time, error) {
	p, ok := rt.byName[name]
	if !ok {
		return time.Time{}, fmt.Errorf("%w: %q", ErrUnknownProjection, name)
	}
	// One round trip, one transaction, which must be READ COMMITTED
	// whatever the database's default, so that the second statement takes
	// a snapshot of its own.
	b := &pgx.Batch{}
	b.Queue(`BEGIN ISOLATION LEVEL READ COMMITTED, READ ONLY`)
	var now time.Time
	var open, pending *time.Time
	b.Queue(openSessionsQuery).QueryRow(func(row pgx.Row) error { return row.Scan(&now, &open) })
	b.Queue(pendingStampQuery, p.Name(), rt.skipList(p)).QueryRow(func(row pgx.Row) error {
		err := row.Scan(&pending)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // nothing pending
		}
		return err
	})
	var parked *time.Time
	b.Queue(parkedStampQuery, p.Name()).QueryRow(func(row pgx.Row) error { return row.Scan(&parked) })
	b.Queue(`COMMIT`)
	if err := rt.pool.SendBatch(ctx, b).Close(); err != nil {
		return time.Time{}, err
	}
	for _, t := range []*time.Time{open, pending, parked} {
		if t != nil && t.Before(now) {
			now = *t
		}
	}
	return now, nil
}

// ErrSessionsHidden: the database does not show its sessions'
// transactions (track_activities is off), so Horizon cannot see those
// still open.
var ErrSessionsHidden = errors.New("track_activities is off: a horizon cannot see the transactions still open, and a read model's answer may leave out a change that commits late")

// SessionsVisible reports ErrSessionsHidden when the sessions of the
// database, as db connects to it, do not show their transactions.
func SessionsVisible(ctx context.Context, db projections.DB) error {
	var on bool
	if err := db.QueryRow(ctx, `SELECT current_setting('track_activities')::bool`).Scan(&on); err != nil {
		return err
	}
	if !on {
		return ErrSessionsHidden
	}
	return nil
}

// openSessionsQuery is Horizon's first statement: the database's clock,
// and the earliest stamp the other sessions on the database may yet
// commit (NULL if none).
const openSessionsQuery = `SELECT statement_timestamp(), (SELECT min(CASE WHEN a.backend_xid IS NOT NULL THEN a.xact_start
	                                  WHEN a.state = 'active' THEN a.query_start END)
	FROM pg_stat_activity a
	WHERE a.datname = current_database() AND a.pid <> pg_backend_pid() AND a.backend_type = 'client backend')`

// pendingStampQuery is Horizon's second: the stamp of the first event (by
// position) of the transaction of projection $1's first pending event
// (see firstPendingFrom), no row if none. A transaction's events take
// their positions in the order of its statements, and so of their stamps:
// its first event carries its earliest stamp. (A min() over the
// transaction would not walk the index when a transaction holds most of
// the log.)
const pendingStampQuery = `SELECT t.recorded_at FROM events t
	WHERE t.transaction_id = (SELECT e.transaction_id ` + firstPendingFrom + `)
	ORDER BY t.transaction_id, t.global_position LIMIT 1`

// parkedStampQuery is Horizon's third: the stamp of the earliest event
// parked for projection $1 (NULL if none).
const parkedStampQuery = `SELECT min(e.recorded_at) FROM projection_parked pk
	JOIN events e ON (e.transaction_id, e.global_position) = (pk.tx_id, pk.position) WHERE pk.projection = $1`

func (rt *Runtime) firstPending(ctx context.Context, p projections.Projector) (time.Time, bool, error) {
	var at time.Time
	err := rt.pool.QueryRow(ctx, firstPendingQuery, p.Name(), rt.skipList(p)).Scan(&at)
	if errors.Is(err, pgx.ErrNoRows) {
		return time.Time{}, false, nil
	}
	return at, err == nil, err
}

// firstPendingFrom finds the first event past projection $1's checkpoint
// of a type not in $2, in the log's order. It walks the primary key from
// the checkpoint and stops at the first such event
// (TestFirstPendingReadsTheIndex); a runner asks after every fruitless
// poll (firstPendingQuery), a sync on every call (pendingStampQuery), and
// a scan of the log would cost milliseconds per million events. (Not an
// EXISTS: PostgreSQL drops the ORDER BY and LIMIT inside one and may scan
// the whole log.)
const firstPendingFrom = `FROM events e
	WHERE (e.transaction_id, e.global_position) >
	      ((SELECT tx_id FROM projection_checkpoints WHERE name = $1), (SELECT position FROM projection_checkpoints WHERE name = $1))
	  AND e.event_type <> ALL($2::text[])
	ORDER BY e.transaction_id, e.global_position LIMIT 1`

// firstPendingQuery: when was that event recorded?
const firstPendingQuery = `SELECT e.recorded_at ` + firstPendingFrom
