package pgtest

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// Project makes p's tables in the public schema of a fresh database and
// applies evs to them in batches of n events, each in a transaction of its
// own, as a live runner (small batches) or a rebuild (large ones) would.
func Project(t testing.TB, p projections.Projector, evs []event.Recorded, n int) *pgxpool.Pool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	pool := Pool(t)
	if err := p.Create(ctx, pool, "public"); err != nil {
		t.Fatal(err)
	}
	for len(evs) > 0 {
		k := min(n, len(evs))
		if err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
			return p.Apply(ctx, tx, "public", evs[:k])
		}); err != nil {
			t.Fatalf("apply: %v", err)
		}
		evs = evs[k:]
	}
	return pool
}

// Lines runs queries that each answer one text column, and returns their
// rows, one a line, in the queries' order.
func Lines(t testing.TB, pool *pgxpool.Pool, queries ...string) string {
	t.Helper()
	var b strings.Builder
	for _, q := range queries {
		rows, err := pool.Query(context.Background(), q)
		if err != nil {
			t.Fatal(err)
		}
		texts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range texts {
			b.WriteString(s + "\n")
		}
	}
	return b.String()
}
