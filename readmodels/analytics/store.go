// Package analytics answers the CMS's questions about the events apps
// report: events per day and type, and the day's active devices, for one
// app over a range of days.
package analytics

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/domain/analytics"
	"github.com/halocms/halocms/domain/fault"
)

// Day is one day's figures of an app.
type Day struct {
	Day           time.Time // UTC midnight
	ActiveDevices int64     // distinct devices that reported (app tokens' reports name none)
	Events        int64
	ByType        map[analytics.Type]int64 // every type, zeros included
}

// Store reads the analytics tables.
type Store struct {
	pool    *pgxpool.Pool
	clients sync.Map // app id → client id, which never changes
}

// NewStore returns a store over pool.
func NewStore(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

func emptyDay(d time.Time) Day {
	by := make(map[analytics.Type]int64, len(analytics.Types))
	for _, t := range analytics.Types {
		by[t] = 0
	}
	return Day{Day: d, ByType: by}
}

// Days returns app's figures for every day from from to to (UTC
// midnights, inclusive), days without reports included.
func (s *Store) Days(ctx context.Context, app string, from, to time.Time) ([]Day, error) {
	out := []Day{}
	index := map[string]int{}
	for d := from; !d.After(to); d = d.AddDate(0, 0, 1) {
		index[d.Format(time.DateOnly)] = len(out)
		out = append(out, emptyDay(d))
	}
	rows, err := s.pool.Query(ctx, `
SELECT day::text, type, events, 0::bigint FROM analytics_daily_counts WHERE app = $1 AND day BETWEEN $2 AND $3
UNION ALL
SELECT day::text, 0, 0, count(*) FROM analytics_daily_devices WHERE app = $1 AND day BETWEEN $2 AND $3 GROUP BY day`,
		app, from.Format(time.DateOnly), to.Format(time.DateOnly))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var day string
		var typ int
		var events, devices int64
		if err := rows.Scan(&day, &typ, &events, &devices); err != nil {
			return nil, err
		}
		i, ok := index[day]
		if !ok {
			continue
		}
		d := &out[i]
		if typ == 0 {
			d.ActiveDevices = devices
			continue
		}
		d.Events += events
		if t := analytics.TypeOfCode(typ); t.Code() != 0 {
			d.ByType[t] += events
		}
	}
	return out, rows.Err()
}

// ClientID is the client id of app's credentials (fault.NotFound for no
// such app), remembered once read: it never changes.
func (s *Store) ClientID(ctx context.Context, app string) (string, error) {
	if c, ok := s.clients.Load(app); ok {
		return c.(string), nil
	}
	var c string
	err := s.pool.QueryRow(ctx, `SELECT client_id FROM identity_apps WHERE id = $1`, app).Scan(&c)
	if errors.Is(err, pgx.ErrNoRows) {
		return "", fault.NotFoundf("app %s not found", app)
	}
	if err != nil {
		return "", err
	}
	s.clients.Store(app, c)
	return c, nil
}
