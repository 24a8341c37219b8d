// Package push answers the push queries: schedules with their
// statistics, name search for the CMS, the schedules due for the
// dispatcher, from the push projection's tables.
package push

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/push"
	"github.com/halocms/halocms/readmodels/internal/like"
)

// Store reads the push tables.
type Store struct{ pool *pgxpool.Pool }

// NewStore returns a store over pool.
func NewStore(pool *pgxpool.Pool) *Store {
	if pool == nil {
		panic("push.NewStore: nil pool")
	}
	return &Store{pool: pool}
}

// Stats are a schedule's statistics: devices by delivery outcome, and
// devices that reported a receipt, an open or a dismissal (each device
// counted once per action).
type Stats struct {
	Sent, Failed, Invalid       int
	Received, Opened, Dismissed int
}

// Schedule is a push schedule as read; dates are epoch milliseconds.
type Schedule struct {
	ID                string
	App               string
	Name              string
	Status            push.Status
	SendOn            int64
	Target            push.Target
	Notification      push.Notification
	CreatedAt         int64
	UpdatedAt         *int64
	DispatchStartedAt *int64
	DispatchedAt      *int64
	Stats             Stats
}

const columns = `id, app, name, status, send_on, target, notification, created_at, updated_at, dispatch_started_at,
	dispatched_at, sent, failed, invalid, received, opened, dismissed`

func scan(row pgx.Row, extra ...any) (Schedule, error) {
	var s Schedule
	var target, notification []byte
	st := &s.Stats
	dest := append([]any{&s.ID, &s.App, &s.Name, &s.Status, &s.SendOn, &target, &notification, &s.CreatedAt, &s.UpdatedAt,
		&s.DispatchStartedAt, &s.DispatchedAt, &st.Sent, &st.Failed, &st.Invalid, &st.Received, &st.Opened, &st.Dismissed}, extra...)
	if err := row.Scan(dest...); err != nil {
		return s, err
	}
	if err := decode(target, &s.Target); err != nil {
		return s, fmt.Errorf("push schedule %s target: %w", s.ID, err)
	}
	if err := decode(notification, &s.Notification); err != nil {
		return s, fmt.Errorf("push schedule %s notification: %w", s.ID, err)
	}
	return s, nil
}

// decode keeps numbers (in extra) as json.Number.
func decode(b []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	return d.Decode(v)
}

// Schedule returns a schedule that is not deleted.
func (s *Store) Schedule(ctx context.Context, id string) (Schedule, error) {
	sc, err := scan(s.pool.QueryRow(ctx, `SELECT `+columns+` FROM push_schedules WHERE id = $1 AND deleted_at IS NULL`, id))
	if errors.Is(err, pgx.ErrNoRows) {
		return sc, fault.NotFoundf("push schedule %s not found", id).With("id", id)
	}
	return sc, err
}

// ScheduleApp returns the app of a schedule that is not deleted.
func (s *Store) ScheduleApp(ctx context.Context, id string) (string, error) {
	var app string
	err := s.pool.QueryRow(ctx, `SELECT app FROM push_schedules WHERE id = $1 AND deleted_at IS NULL`, id).Scan(&app)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fault.NotFoundf("push schedule %s not found", id).With("id", id)
	}
	return app, err
}

// Query selects schedules for the CMS list.
type Query struct {
	// AllApps lifts the app restriction; otherwise only schedules of Apps
	// (those the caller may read) are listed.
	AllApps bool
	Apps    []string
	// App, if set, lists that app's schedules only.
	App string
	// Name, if set, matches names containing it, case-insensitively.
	Name string
	// Status, if set, lists schedules in that status only.
	Status      push.Status
	Page, Limit int // 1-based page; Limit > 0
}

// Page is one page of schedules and the number of all matches.
type Page struct {
	Items []Schedule
	Total int
}

// Search lists the schedules matching q that are not deleted, the next
// to send first (sendOn descending), then by id.
func (s *Store) Search(ctx context.Context, q Query) (Page, error) {
	if q.Page < 1 || q.Limit < 1 {
		return Page{}, fault.Invalidf("page and limit must be at least 1")
	}
	apps := q.Apps
	if apps == nil {
		apps = []string{}
	}
	pattern := ""
	if q.Name != "" {
		pattern = like.Containing(q.Name)
	}
	rows, err := s.pool.Query(ctx, `SELECT `+columns+`, count(*) OVER () FROM push_schedules
		WHERE deleted_at IS NULL AND ($1 OR app = ANY($2)) AND ($3 = '' OR app = $3)
		  AND ($4 = '' OR name ILIKE $4) AND ($5 = '' OR status = $5)
		ORDER BY send_on DESC, id DESC LIMIT $6 OFFSET $7`,
		q.AllApps, apps, q.App, pattern, string(q.Status), q.Limit, (q.Page-1)*q.Limit)
	if err != nil {
		return Page{}, err
	}
	defer rows.Close()
	p := Page{Items: []Schedule{}}
	for rows.Next() {
		sc, err := scan(rows, &p.Total)
		if err != nil {
			return Page{}, err
		}
		p.Items = append(p.Items, sc)
	}
	if err := rows.Err(); err != nil {
		return Page{}, err
	}
	if len(p.Items) == 0 && q.Page > 1 {
		// Past the last page: count the matches anyway.
		err := s.pool.QueryRow(ctx, `SELECT count(*) FROM push_schedules
			WHERE deleted_at IS NULL AND ($1 OR app = ANY($2)) AND ($3 = '' OR app = $3)
			  AND ($4 = '' OR name ILIKE $4) AND ($5 = '' OR status = $5)`,
			q.AllApps, apps, q.App, pattern, string(q.Status)).Scan(&p.Total)
		if err != nil {
			return Page{}, err
		}
	}
	return p, nil
}

// Due lists up to limit schedules a dispatcher should work on at now:
// scheduled for now or earlier, or being sent; the oldest first. The
// read model may lag the event log: the dispatcher checks each schedule's
// stream before it sends.
func (s *Store) Due(ctx context.Context, now time.Time, limit int) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT id FROM push_schedules
		WHERE status IN ('scheduled', 'dispatching') AND (send_on <= $1 OR status = 'dispatching')
		ORDER BY send_on, id LIMIT $2`, now.UnixMilli(), limit)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowTo[string])
}
