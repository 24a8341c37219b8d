// Package postgres holds the PostgreSQL adapters: the event store, the
// embedded migrations, the token and login-throttle stores, and the local
// cluster used by `make run` and `make test` when no server is configured.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Connect opens a pool and checks that the server answers.
func Connect(ctx context.Context, url string) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	if !strings.Contains(url, "pool_max_conns") && cfg.MaxConns < 20 {
		cfg.MaxConns = 20
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("database: %w", err)
	}
	return pool, nil
}

// GenericPlans opens a second pool on pool's database whose sessions plan
// every prepared statement once, for any values (plan_cache_mode =
// force_generic_plan), with pool's connection limit. It is for the few
// statements whose planning costs more than running them and whose plan
// does not depend on their values (see readmodels/content's one-statement
// page); everything else uses pool, planned for its actual values.
func GenericPlans(pool *pgxpool.Pool) (*pgxpool.Pool, error) {
	cfg := pool.Config()
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	return pgxpool.NewWithConfig(context.Background(), cfg)
}

// EnsureDatabase creates database name on the server of serverURL if it
// does not exist, and returns the URL of that database.
func EnsureDatabase(ctx context.Context, serverURL, name string) (string, error) {
	conn, err := pgx.Connect(ctx, serverURL)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, name).Scan(&exists); err != nil {
		return "", err
	}
	if !exists {
		_, err := conn.Exec(ctx, `CREATE DATABASE `+pgx.Identifier{name}.Sanitize())
		var pgErr *pgconn.PgError
		if err != nil && !(errors.As(err, &pgErr) && pgErr.Code == "42P04") { // duplicate_database: a concurrent start
			return "", fmt.Errorf("create database %s: %w", name, err)
		}
	}
	cfg, err := pgx.ParseConfig(serverURL)
	if err != nil {
		return "", err
	}
	u := &url.URL{Scheme: "postgres", Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Path: "/" + name}
	if cfg.User != "" {
		u.User = url.User(cfg.User)
		if cfg.Password != "" {
			u.User = url.UserPassword(cfg.User, cfg.Password)
		}
	}
	q := url.Values{}
	if strings.HasPrefix(cfg.Host, "/") {
		// unix socket directory
		u.Host = ""
		q.Set("host", cfg.Host)
		q.Set("port", strconv.Itoa(int(cfg.Port)))
	} else {
		q.Set("sslmode", "disable")
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}
