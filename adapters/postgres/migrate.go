package postgres

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// Migrate applies every embedded migration that has not run yet, each in its
// own transaction, and returns the versions it applied.
func Migrate(ctx context.Context, pool *pgxpool.Pool) ([]int64, error) {
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return nil, err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	// Several processes may start at once: serialise migrations.
	if _, err := pool.Exec(ctx, `SELECT pg_advisory_lock(7265001)`); err != nil {
		return nil, err
	}
	defer pool.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(7265001)`) //nolint:errcheck
	results, err := p.Up(ctx)
	if err != nil {
		return nil, fmt.Errorf("migrations: %w", err)
	}
	var applied []int64
	for _, r := range results {
		applied = append(applied, r.Source.Version)
	}
	return applied, nil
}

// MigrationFiles returns the embedded migrations (for tests that key
// templates on their content).
func MigrationFiles() fs.FS {
	sub, _ := fs.Sub(migrationFiles, "migrations")
	return sub
}
