package projection

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/operations"
	"github.com/halocms/halocms/projections"
)

// Parked is an event parked for a projection: its live runners and its
// rebuilds go on past it without applying it, until Replay.
type Parked struct {
	Projection string
	Position   event.Position
	EventID    string
	EventType  string
	StreamID   string
	ParkedAt   time.Time
	By, Reason string
	// Error is the projection's failure on the event, when its runners had
	// recorded it before the parking.
	Error string
}

// ParkRequest asks Park to park an event for a projection.
type ParkRequest struct {
	Projection string
	// Event is the event's position as the log and status print it
	// ("TX/POS") or its id (a UUID).
	Event string
	// By is who parks it; Reason why (both required).
	By, Reason string
}

// ReplayResult tells what Replay did.
type ReplayResult struct {
	Projection string
	// Applied were applied to the live version (the projection had gone
	// past them); Released were not reached yet: the projection applies
	// them in log order when it gets there.
	Applied, Released []Parked
}

// Limits of a parking's texts.
const (
	maxReasonRunes = 1000
	maxByRunes     = 200
)

// parkLockTimeout bounds the wait for a projection's checkpoint row (a
// live batch in progress) in Park and Replay.
const parkLockTimeout = 30 * time.Second

// ErrNotParkable: the event named cannot be parked for the projection
// (unknown, already applied, already parked, of a type it does not use).
var ErrNotParkable = errors.New("cannot park")

// parkStream is the stream of the operations events about projection name.
func parkStream(name string) string { return event.StreamID("projection", name) }

// Park parks an event for a projection, in one transaction with the
// projection's checkpoint row locked (a live batch in progress finishes
// first): the event must be one the projection has not applied yet; it is
// recorded in projection_parked and an operations.EventParked event is
// appended to the log. The runners of every process leave it out of their
// next batch (they are woken by the parking's notification).
func (rt *Runtime) Park(ctx context.Context, req ParkRequest) (Parked, error) {
	p, ok := rt.byName[req.Projection]
	if !ok {
		return Parked{}, fmt.Errorf("%w: %q", ErrUnknownProjection, req.Projection)
	}
	by, reason, err := parkTexts(req.By, req.Reason)
	if err != nil {
		return Parked{}, err
	}
	if err := rt.ensure(ctx, p); err != nil {
		return Parked{}, err
	}
	var out Parked
	err = pgx.BeginFunc(ctx, rt.pool, func(tx pgx.Tx) error {
		_, cp, err := lockCheckpoint(ctx, tx, p.Name())
		if err != nil {
			return err
		}
		ev, err := findEvent(ctx, tx, req.Event)
		if err != nil {
			return err
		}
		var already bool
		if err := tx.QueryRow(ctx, `SELECT EXISTS (SELECT FROM projection_parked WHERE projection = $1 AND tx_id = $2::text::xid8 AND position = $3)`,
			p.Name(), fmt.Sprint(ev.Position.TxID), ev.Position.Pos).Scan(&already); err != nil {
			return err
		}
		if already {
			return fmt.Errorf("%w %s for %s: it is parked already", ErrNotParkable, ev.Position, p.Name())
		}
		if !cp.Less(ev.Position) {
			return fmt.Errorf("%w %s for %s: the projection already applied it (its checkpoint is %s)", ErrNotParkable, ev.Position, p.Name(), cp)
		}
		if s, ok := p.(projections.Selective); ok && !s.Handles(ev.EventType) {
			return fmt.Errorf("%w %s for %s: the projection does not use events of type %s", ErrNotParkable, ev.Position, p.Name(), ev.EventType)
		}
		ev.Projection, ev.By, ev.Reason = p.Name(), by, reason
		if err := tx.QueryRow(ctx, `SELECT coalesce((SELECT error FROM projection_failures
			WHERE projection = $1 AND event_tx = $2::text::xid8 AND event_pos = $3), '')`,
			p.Name(), fmt.Sprint(ev.Position.TxID), ev.Position.Pos).Scan(&ev.Error); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `INSERT INTO projection_parked (projection, tx_id, position, event_id, event_type, stream_id, parked_by, reason, error)
			VALUES ($1, $2::text::xid8, $3, $4, $5, $6, $7, $8, $9) ON CONFLICT DO NOTHING`,
			ev.Projection, fmt.Sprint(ev.Position.TxID), ev.Position.Pos, ev.EventID, ev.EventType, ev.StreamID, by, reason, ev.Error)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("%w %s for %s: it is parked already", ErrNotParkable, ev.Position, p.Name())
		}
		if err := tx.QueryRow(ctx, `SELECT parked_at FROM projection_parked WHERE projection = $1 AND tx_id = $2::text::xid8 AND position = $3`,
			ev.Projection, fmt.Sprint(ev.Position.TxID), ev.Position.Pos).Scan(&ev.ParkedAt); err != nil {
			return err
		}
		rec := operations.EventParked{Projection: p.Name(), TxID: ev.Position.TxID, Position: ev.Position.Pos, EventID: ev.EventID,
			Type: ev.EventType, StreamID: ev.StreamID, By: by, Reason: reason, Error: ev.Error}
		if err := rt.record(ctx, tx, p.Name(), rec); err != nil {
			return err
		}
		out = ev
		return nil
	})
	if err != nil {
		return Parked{}, fmt.Errorf("park for %s: %w", req.Projection, err)
	}
	rt.log.Info("event parked for a projection", "projection", out.Projection, "event", out.Position.String(), "type", out.EventType,
		"by", out.By, "reason", out.Reason)
	return out, nil
}

// record appends an operations event about projection name in tx, and
// notifies the runners of every process (see parksFor) at its commit.
func (rt *Runtime) record(ctx context.Context, tx pgx.Tx, name string, data interface{ EventType() string }) error {
	meta := event.Metadata{Actor: access.SystemActor.Label()}
	if _, err := rt.store.AppendTx(ctx, tx, parkStream(name), event.AnyVersion, event.Event{Data: data, Meta: meta}); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, `SELECT pg_notify($1, $2)`, postgres.NotifyChannel, data.EventType())
	return err
}

// parkTexts checks and trims who parks and why.
func parkTexts(by, reason string) (string, string, error) {
	by, reason = strings.TrimSpace(by), strings.TrimSpace(reason)
	switch {
	case by == "":
		return "", "", errors.New("who parks is required")
	case reason == "":
		return "", "", errors.New("a reason is required")
	case !utf8.ValidString(by) || !utf8.ValidString(reason) || strings.ContainsRune(by+reason, 0):
		return "", "", errors.New("who and why must be valid UTF-8 text")
	case utf8.RuneCountInString(by) > maxByRunes:
		return "", "", fmt.Errorf("who parks: at most %d characters", maxByRunes)
	case utf8.RuneCountInString(reason) > maxReasonRunes:
		return "", "", fmt.Errorf("the reason: at most %d characters", maxReasonRunes)
	}
	return by, reason, nil
}

// lockCheckpoint locks projection name's live checkpoint row in tx (live
// batches wait; a rebuild's switch too) and returns its version and
// position.
func lockCheckpoint(ctx context.Context, tx pgx.Tx, name string) (int, event.Position, error) {
	if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, parkLockTimeout.Milliseconds())); err != nil {
		return 0, event.Position{}, err
	}
	var v int
	var txID, pos int64
	if err := tx.QueryRow(ctx, `SELECT version, tx_id::text::bigint, position FROM projection_checkpoints WHERE name = $1 FOR UPDATE`,
		name).Scan(&v, &txID, &pos); err != nil {
		return 0, event.Position{}, fmt.Errorf("lock the checkpoint of %s: %w", name, err)
	}
	return v, event.Position{TxID: uint64(txID), Pos: pos}, nil
}

// ParsePosition reads a position as Position.String prints it ("TX/POS").
func ParsePosition(s string) (event.Position, bool) {
	a, b, ok := strings.Cut(strings.TrimSpace(s), "/")
	if !ok {
		return event.Position{}, false
	}
	tx, err1 := strconv.ParseUint(a, 10, 63)
	pos, err2 := strconv.ParseInt(b, 10, 64)
	if err1 != nil || err2 != nil || tx == 0 || pos <= 0 {
		return event.Position{}, false
	}
	return event.Position{TxID: tx, Pos: pos}, true
}

// findEvent finds the event ref names: a position ("TX/POS") or an id.
func findEvent(ctx context.Context, q projections.DB, ref string) (Parked, error) {
	var row pgx.Row
	if pos, ok := ParsePosition(ref); ok {
		row = q.QueryRow(ctx, `SELECT transaction_id::text::bigint, global_position, event_id::text, event_type, stream_id FROM events
			WHERE global_position = $1 AND transaction_id = $2::text::xid8`, pos.Pos, fmt.Sprint(pos.TxID))
	} else if id, err := uuid.Parse(strings.TrimSpace(ref)); err == nil {
		row = q.QueryRow(ctx, `SELECT transaction_id::text::bigint, global_position, event_id::text, event_type, stream_id FROM events
			WHERE event_id = $1`, id)
	} else {
		return Parked{}, fmt.Errorf("%w %q: name the event by its position (TX/POS, as the log and `cms projections status` print it) or its id", ErrNotParkable, ref)
	}
	var ev Parked
	var txID int64
	if err := row.Scan(&txID, &ev.Position.Pos, &ev.EventID, &ev.EventType, &ev.StreamID); errors.Is(err, pgx.ErrNoRows) {
		return Parked{}, fmt.Errorf("%w %q: no such event in the log", ErrNotParkable, ref)
	} else if err != nil {
		return Parked{}, err
	}
	ev.Position.TxID = uint64(txID)
	return ev, nil
}

// ListParked returns the events parked for projection name (for every
// projection if ""), in log order per projection.
func (rt *Runtime) ListParked(ctx context.Context, name string) ([]Parked, error) {
	return listParked(ctx, rt.pool, name, 0)
}

func listParked(ctx context.Context, q projections.DB, name string, limit int) ([]Parked, error) {
	rows, err := q.Query(ctx, `SELECT projection, tx_id::text::bigint, position, event_id::text, event_type, stream_id, parked_at, parked_by, reason, error
		FROM projection_parked WHERE ($1 = '' OR projection = $1) ORDER BY projection, tx_id, position LIMIT nullif($2, 0)`, name, limit)
	if err != nil {
		return nil, fmt.Errorf("parked events: %w", err)
	}
	var out []Parked
	var p Parked
	var txID int64
	_, err = pgx.ForEachRow(rows, []any{&p.Projection, &txID, &p.Position.Pos, &p.EventID, &p.EventType, &p.StreamID,
		&p.ParkedAt, &p.By, &p.Reason, &p.Error}, func() error {
		p.Position.TxID = uint64(txID)
		out = append(out, p)
		return nil
	})
	return out, err
}

// withoutParked returns events without those parked for projection name
// (events itself when none is), read in q, and the positions it left out.
func withoutParked(ctx context.Context, q projections.DB, name string, events []event.Recorded) ([]event.Recorded, []event.Position, error) {
	if len(events) == 0 {
		return events, nil, nil
	}
	rows, err := q.Query(ctx, parkedInSQL, parkedInArgs(name, events)...)
	return leaveParked(name, events, rows, err)
}

// parkedInSQL reads which events of a range (parkedInArgs) are parked for
// a projection.
const parkedInSQL = `SELECT tx_id::text::bigint, position FROM projection_parked WHERE projection = $1
	AND (tx_id, position) >= ($2::text::xid8, $3) AND (tx_id, position) <= ($4::text::xid8, $5)`

// parkedInArgs are parkedInSQL's arguments for events (not empty) of
// projection name.
func parkedInArgs(name string, events []event.Recorded) []any {
	first, last := events[0].Position, events[len(events)-1].Position
	return []any{name, fmt.Sprint(first.TxID), first.Pos, fmt.Sprint(last.TxID), last.Pos}
}

// leaveParked returns events without those that parkedInSQL's rows (or
// its error, err) name as parked for projection name, and the positions
// it left out.
func leaveParked(name string, events []event.Recorded, rows pgx.Rows, err error) ([]event.Recorded, []event.Position, error) {
	if err != nil {
		return nil, nil, fmt.Errorf("parked events of %s: %w", name, err)
	}
	var skipped []event.Position
	var txID, pos int64
	if _, err := pgx.ForEachRow(rows, []any{&txID, &pos}, func() error {
		skipped = append(skipped, event.Position{TxID: uint64(txID), Pos: pos})
		return nil
	}); err != nil {
		return nil, nil, fmt.Errorf("parked events of %s: %w", name, err)
	}
	if len(skipped) == 0 {
		return events, nil, nil
	}
	parked := make(map[event.Position]bool, len(skipped))
	for _, s := range skipped {
		parked[s] = true
	}
	kept := make([]event.Recorded, 0, len(events)-len(skipped))
	for _, e := range events {
		if !parked[e.Position] {
			kept = append(kept, e)
		}
	}
	return kept, skipped, nil
}
