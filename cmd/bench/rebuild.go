package main

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/projection"
	projrights "github.com/halocms/halocms/projections/rights"
)

func rebuildPhase(ctx context.Context, cfg config, pool *pgxpool.Pool, store *postgres.EventStore, res *results) error {
	log := slog.New(slog.DiscardHandler)
	if cfg.verbose {
		log = logger
	}
	proj := projrights.Projector{}
	rt := projection.New(pool, store, nil, log, proj)
	progressf("rebuild: projection %q over the whole log (runtime's default batch size); %d other active sessions on the server",
		proj.Name(), otherSessions(ctx, pool))

	var done, total atomic.Int64
	stop := progressLoop(ctx, "rebuild", func() (int64, int64) { return done.Load(), total.Load() })
	start := time.Now()
	bctx, cancel := context.WithTimeout(ctx, cfg.phaseBudget)
	defer cancel()
	rr, err := rt.RebuildWith(bctx, proj.Name(), projection.RebuildOptions{
		Progress: func(d, t int64) { done.Store(d); total.Store(t) },
	})
	took := time.Since(start)
	stop()
	if err != nil && ctx.Err() == nil && bctx.Err() != nil {
		// Over budget: report the rate so far.
		res.add(figure{name: "rebuild: rights projection", value: rate(done.Load(), took), unit: "events/s", target: targetRebuildRate,
			detail: fmt.Sprintf("PARTIAL (stopped by -phase-budget %s): %d of %d events in %.1fs", cfg.phaseBudget, done.Load(), total.Load(), took.Seconds())})
		return nil
	}
	if err != nil {
		return err
	}
	var rows int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM public.rights_grants`).Scan(&rows); err != nil {
		return err
	}
	check := "not checked (no load model)"
	if res.model != nil {
		if err := checkRights(ctx, pool, res.model); err != nil {
			return err
		}
		check = fmt.Sprintf("the %d rows of the loaded users equal the generator's model", len(res.model))
	}
	res.add(figure{name: "rebuild: rights projection", value: rate(rr.Events, took), unit: "events/s", target: targetRebuildRate,
		detail: fmt.Sprintf("%d events in %.1fs (Rebuild: v%d -> v%d, switched at %s); rights_grants has %d rows; %s",
			rr.Events, took.Seconds(), rr.OldVersion, rr.Version, rr.Position, rows, check)})
	return nil
}

// rightsRow is one expected row of rights_grants.
type rightsRow struct{ user, app, kind, id string }

// checkRights compares the rebuilt rights_grants rows of the loaded users
// ("user-*") with what the load generator says they hold.
func checkRights(ctx context.Context, pool *pgxpool.Pool, model map[rightsRow]string) error {
	rows, err := pool.Query(ctx, `SELECT user_id, app_id, scope_kind, scope_id, array_to_string(permissions, ',')
		FROM public.rights_grants WHERE user_id LIKE 'user-%'`)
	if err != nil {
		return err
	}
	defer rows.Close()
	seen := 0
	var diffs []string
	for rows.Next() {
		var k rightsRow
		var perms string
		if err := rows.Scan(&k.user, &k.app, &k.kind, &k.id, &perms); err != nil {
			return err
		}
		seen++
		if want, ok := model[k]; !ok || want != perms {
			if len(diffs) < 5 {
				diffs = append(diffs, fmt.Sprintf("%v: projected %q, expected %q", k, perms, want))
			}
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if seen != len(model) {
		diffs = append(diffs, fmt.Sprintf("%d rows projected, %d expected", seen, len(model)))
	}
	if len(diffs) > 0 {
		return fmt.Errorf("rebuilt rights_grants differs from the generator's model: %s", strings.Join(diffs, "; "))
	}
	return nil
}

// modelOf lists the rows the loaded users should have.
func modelOf(users []*genUser) map[rightsRow]string {
	m := map[rightsRow]string{}
	for _, u := range users {
		for _, h := range u.held {
			// names and the projection both list permissions in canonical order.
			m[rightsRow{u.id, h.app, h.kind, h.id}] = strings.Join(names(h.perms), ",")
		}
	}
	return m
}
