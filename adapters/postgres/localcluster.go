package postgres

import (
	"context"
	"errors"
	"log/slog"
)

// EnsureServer returns the URL of a PostgreSQL server that answers: a local
// one if there is, otherwise a private cluster under dataDir.
// (Being completed: private cluster start-up.)
func EnsureServer(ctx context.Context, dataDir string, log *slog.Logger) (string, error) {
	url := "postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable"
	pool, err := Connect(ctx, url)
	if err != nil {
		return "", errors.Join(errors.New("no local PostgreSQL answers"), err)
	}
	pool.Close()
	return url, nil
}
