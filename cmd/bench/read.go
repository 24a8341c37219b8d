package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/rights"
)

func readPhase(ctx context.Context, cfg config, pool *pgxpool.Pool, store *postgres.EventStore, res *results) error {
	var total int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&total); err != nil {
		return err
	}
	progressf("read: catch-up of %d events from the zero position, batches of %d; %d other active sessions on the server",
		total, cfg.batch, otherSessions(ctx, pool))

	raw, err := catchUp(ctx, total, cfg.batch, cfg.phaseBudget, func(after event.Position) ([]event.Recorded, error) {
		return store.ReadAllRaw(ctx, nil, after, cfg.batch)
	}, nil)
	if err != nil {
		return fmt.Errorf("ReadAllRaw: %w", err)
	}
	var granted, revoked int64
	dec, err := catchUp(ctx, total, cfg.batch, cfg.phaseBudget, func(after event.Position) ([]event.Recorded, error) {
		return store.ReadAll(ctx, after, cfg.batch)
	}, func(r event.Recorded) error {
		switch r.Data.(type) {
		case rights.Granted:
			granted++
		case rights.Revoked:
			revoked++
		default:
			return fmt.Errorf("event %s: decoded to %T", r.Position, r.Data)
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("ReadAll: %w", err)
	}
	res.add(figure{name: "catch-up: ReadAll, decoded", value: dec.rate(), unit: "events/s", target: targetReadRate,
		detail: dec.String() + fmt.Sprintf(" (%d rights.granted, %d rights.revoked)", granted, revoked)})
	res.add(figure{name: "catch-up: ReadAllRaw, undecoded", value: raw.rate(), unit: "events/s", detail: raw.String()})
	return nil
}

type readStats struct {
	events, batches int64
	elapsed         time.Duration
	slowest         time.Duration
	batch           int
	partial         bool // stopped by the phase budget
}

func (s readStats) rate() float64 { return rate(s.events, s.elapsed) }

func (s readStats) String() string {
	p := ""
	if s.partial {
		p = "PARTIAL (stopped by -phase-budget): "
	}
	return p + fmt.Sprintf("%d events in %.2fs, %d batches of up to %d, slowest batch %s",
		s.events, s.elapsed.Seconds(), s.batches, s.batch, s.slowest.Round(time.Millisecond))
}

// catchUp reads the whole log from the zero position and checks that it got
// every event once, in log order. After budget it stops and reports the
// part it read (partial).
func catchUp(ctx context.Context, total int64, batch int, budget time.Duration, read func(after event.Position) ([]event.Recorded, error), check func(event.Recorded) error) (readStats, error) {
	s := readStats{batch: batch}
	var pos event.Position
	start := time.Now()
	deadline := start.Add(budget)
	var seen atomic.Int64
	stop := progressLoop(ctx, "read", func() (int64, int64) { return seen.Load(), total })
	defer stop()
	for {
		if err := ctx.Err(); err != nil {
			return s, err
		}
		if time.Now().After(deadline) {
			s.partial = true
			break
		}
		t0 := time.Now()
		recs, err := read(pos)
		if err != nil {
			return s, err
		}
		s.slowest = max(s.slowest, time.Since(t0))
		if len(recs) == 0 {
			break
		}
		s.batches++
		for _, r := range recs {
			if !pos.Less(r.Position) {
				return s, fmt.Errorf("event at %s read after %s: out of log order", r.Position, pos)
			}
			pos = r.Position
			if check != nil {
				if err := check(r); err != nil {
					return s, err
				}
			}
		}
		s.events += int64(len(recs))
		seen.Store(s.events)
		if len(recs) < batch {
			break
		}
	}
	s.elapsed = time.Since(start)
	if !s.partial && s.events != total {
		return s, fmt.Errorf("read %d events, the log holds %d", s.events, total)
	}
	return s, nil
}
