// Package push projects push schedules, their delivery counts and the
// activity devices report into the tables the push read model queries and
// the dispatcher polls.
package push

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/push"
	"github.com/halocms/halocms/projections"
)

// Projector writes push_schedules (one row per schedule, with its
// statistics) and push_activity (one row per schedule, device alias and
// action: receipts, opens and dismissals count each device once, however
// often an SDK retries its report).
type Projector struct{}

var _ projections.Projector = Projector{}

// Handles reports that the projector uses the push context's events only.
func (Projector) Handles(eventType string) bool { return strings.HasPrefix(eventType, "push.") }

func (Projector) Name() string     { return "push" }
func (Projector) Tables() []string { return []string{"push_schedules", "push_activity"} }

func (Projector) Create(ctx context.Context, db projections.DB, schema string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
CREATE TABLE %[1]s.push_schedules (
    id                  text    PRIMARY KEY,
    app                 text    NOT NULL,
    name                text    NOT NULL,
    status              text    NOT NULL,
    send_on             bigint  NOT NULL,
    target              jsonb   NOT NULL,
    notification        jsonb   NOT NULL,
    created_at          bigint  NOT NULL,
    updated_at          bigint,
    dispatch_started_at bigint,
    dispatched_at       bigint,
    deleted_at          bigint,
    sent                integer NOT NULL DEFAULT 0,
    failed              integer NOT NULL DEFAULT 0,
    invalid             integer NOT NULL DEFAULT 0,
    received            integer NOT NULL DEFAULT 0,
    opened              integer NOT NULL DEFAULT 0,
    dismissed           integer NOT NULL DEFAULT 0
);
-- A hash index stores a 4-byte hash of the app, never the app itself: an
-- app id of any length (events from before its 64-character bound hold
-- some of 12,000) cannot fail a batch as a B-tree key over 2,704 bytes
-- does. The searches filter by app, then sort what matches.
CREATE INDEX ON %[1]s.push_schedules USING hash (app);
CREATE INDEX ON %[1]s.push_schedules USING gin (name gin_trgm_ops);
-- What the dispatcher polls: the schedules still to send.
CREATE INDEX ON %[1]s.push_schedules (send_on) WHERE status IN ('scheduled', 'dispatching');
CREATE TABLE %[1]s.push_activity (
    schedule_id text NOT NULL,
    alias       text NOT NULL,
    action      text NOT NULL,
    platform    text NOT NULL DEFAULT '',
    at          bigint NOT NULL,
    PRIMARY KEY (schedule_id, alias, action)
);`, schema))
	return err
}

// row is one push_schedules row; its JSON form feeds jsonb_to_recordset.
// target and notification hold the domain values as the event store
// encodes them.
type row struct {
	ID                string            `json:"id"`
	App               string            `json:"app"`
	Name              string            `json:"name"`
	Status            push.Status       `json:"status"`
	SendOn            int64             `json:"send_on"`
	Target            push.Target       `json:"target"`
	Notification      push.Notification `json:"notification"`
	CreatedAt         int64             `json:"created_at"`
	UpdatedAt         *int64            `json:"updated_at"`
	DispatchStartedAt *int64            `json:"dispatch_started_at"`
	DispatchedAt      *int64            `json:"dispatched_at"`
	DeletedAt         *int64            `json:"deleted_at"`
	Sent              int               `json:"sent"`
	Failed            int               `json:"failed"`
	Invalid           int               `json:"invalid"`
}

const rowCols = `id text, app text, name text, status text, send_on bigint, target jsonb, notification jsonb,
	created_at bigint, updated_at bigint, dispatch_started_at bigint, dispatched_at bigint, deleted_at bigint,
	sent integer, failed integer, invalid integer`

const rowNames = `id, app, name, status, send_on, target, notification, created_at, updated_at, dispatch_started_at,
	dispatched_at, deleted_at, sent, failed, invalid`

func ptr(v int64) *int64 { return &v }

// apply folds one schedule event into its row (nil until scheduled).
func apply(r *row, data any, at int64) *row {
	if e, ok := data.(push.Scheduled); ok {
		return &row{ID: e.ScheduleID, App: e.App, Name: e.Name, Status: push.StatusScheduled, SendOn: e.SendOn.UnixMilli(),
			Target: e.Target, Notification: e.Notification, CreatedAt: at}
	}
	if r == nil {
		return nil
	}
	switch e := data.(type) {
	case push.Edited:
		r.Name, r.Target, r.Notification, r.SendOn = e.Name, e.Target, e.Notification, e.SendOn.UnixMilli()
		r.UpdatedAt = ptr(at)
	case push.Cancelled:
		r.Status, r.UpdatedAt = push.StatusCancelled, ptr(at)
	case push.Deleted:
		r.Status, r.DeletedAt = push.StatusDeleted, ptr(at)
	case push.DispatchStarted:
		r.Status = push.StatusDispatching
		if r.DispatchStartedAt == nil {
			r.DispatchStartedAt = ptr(at)
		}
	case push.DeliveriesRecorded:
		for _, d := range e.Deliveries {
			switch d.Outcome {
			case push.Delivered:
				r.Sent++
			case push.Failed:
				r.Failed++
			case push.InvalidToken:
				r.Invalid++
			}
		}
	case push.Dispatched:
		r.Status, r.DispatchedAt = push.StatusDispatched, ptr(at)
		r.Sent, r.Failed, r.Invalid = e.Sent, e.Failed, e.Invalid
	}
	return r
}

// scheduleOf names the schedule of a schedule-stream event.
func scheduleOf(data any) (string, bool) {
	switch e := data.(type) {
	case push.Scheduled:
		return e.ScheduleID, true
	case push.Edited:
		return e.ScheduleID, true
	case push.Cancelled:
		return e.ScheduleID, true
	case push.Deleted:
		return e.ScheduleID, true
	case push.DispatchStarted:
		return e.ScheduleID, true
	case push.DeliveriesRecorded:
		return e.ScheduleID, true
	case push.Dispatched:
		return e.ScheduleID, true
	}
	return "", false
}

// Apply folds the batch's schedule events in memory, per touched schedule
// (its current row loaded once), and writes every touched row with one
// upsert; then it records the batch's activity with one statement that
// inserts the new (schedule, alias, action) rows and adds them to the
// schedules' counters.
func (Projector) Apply(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	if err := applySchedules(ctx, db, schema, events); err != nil {
		return fmt.Errorf("push projection: %w", err)
	}
	if err := applyActivity(ctx, db, schema, events); err != nil {
		return fmt.Errorf("push projection: %w", err)
	}
	return nil
}

func applySchedules(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	var ids []string
	rows := map[string]*row{}
	for _, r := range events {
		if id, ok := scheduleOf(r.Data); ok {
			if _, seen := rows[id]; !seen {
				rows[id] = nil
				ids = append(ids, id)
			}
		}
	}
	if len(ids) == 0 {
		return nil
	}
	table := schema + ".push_schedules"
	q, err := db.Query(ctx, `SELECT coalesce(jsonb_agg(to_jsonb(s)), '[]') FROM `+table+` s WHERE id = ANY($1)`, ids)
	if err != nil {
		return err
	}
	var raw []byte
	for q.Next() {
		if err := q.Scan(&raw); err != nil {
			q.Close()
			return err
		}
	}
	q.Close()
	if err := q.Err(); err != nil {
		return err
	}
	var current []row
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // numbers in extra keep their precision
	if err := dec.Decode(&current); err != nil {
		return fmt.Errorf("current rows: %w", err)
	}
	for i := range current {
		rows[current[i].ID] = &current[i]
	}
	for _, r := range events {
		if id, ok := scheduleOf(r.Data); ok {
			rows[id] = apply(rows[id], r.Data, r.RecordedAt.UnixMilli())
		}
	}
	out := make([]*row, 0, len(ids))
	for _, id := range ids {
		if rows[id] != nil {
			out = append(out, rows[id])
		}
	}
	if len(out) == 0 {
		return nil
	}
	b, err := json.Marshal(out)
	if err != nil {
		return err
	}
	_, err = db.Exec(ctx, `INSERT INTO `+table+` (`+rowNames+`)
		SELECT `+rowNames+` FROM jsonb_to_recordset($1::jsonb) AS x(`+rowCols+`)
		ON CONFLICT (id) DO UPDATE SET app = EXCLUDED.app, name = EXCLUDED.name, status = EXCLUDED.status,
		  send_on = EXCLUDED.send_on, target = EXCLUDED.target, notification = EXCLUDED.notification,
		  created_at = EXCLUDED.created_at, updated_at = EXCLUDED.updated_at,
		  dispatch_started_at = EXCLUDED.dispatch_started_at, dispatched_at = EXCLUDED.dispatched_at,
		  deleted_at = EXCLUDED.deleted_at, sent = EXCLUDED.sent, failed = EXCLUDED.failed, invalid = EXCLUDED.invalid`,
		string(b))
	return err
}

func applyActivity(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	var sched, alias, action, platform []string
	var at []int64
	for _, r := range events {
		if e, ok := r.Data.(push.ActivityRecorded); ok {
			sched, alias, action = append(sched, e.ScheduleID), append(alias, e.Alias), append(action, string(e.Action))
			platform, at = append(platform, string(e.Platform)), append(at, r.RecordedAt.UnixMilli())
		}
	}
	if len(sched) == 0 {
		return nil
	}
	_, err := db.Exec(ctx, `WITH ins AS (
		  INSERT INTO `+schema+`.push_activity (schedule_id, alias, action, platform, at)
		  SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::bigint[])
		  ON CONFLICT DO NOTHING
		  RETURNING schedule_id, action
		), c AS (
		  SELECT schedule_id, count(*) FILTER (WHERE action = 'receipt') AS r, count(*) FILTER (WHERE action = 'open') AS o,
		         count(*) FILTER (WHERE action = 'dismiss') AS d
		  FROM ins GROUP BY schedule_id
		)
		UPDATE `+schema+`.push_schedules s SET received = s.received + c.r, opened = s.opened + c.o, dismissed = s.dismissed + c.d
		FROM c WHERE s.id = c.schedule_id`, sched, alias, action, platform, at)
	return err
}
