package postgres_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
)

// closedPort is the address of a local port nothing listens on.
func closedPort(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestUnreachable: the failures of a database out of reach, as pgx
// reports them, are told apart from statements failing.
func TestUnreachable(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	url := "postgres://postgres@" + closedPort(t) + "/postgres?sslmode=disable&connect_timeout=5"

	_, refused := pgx.Connect(ctx, url)
	var ce *pgconn.ConnectError
	if !errors.As(refused, &ce) {
		t.Fatalf("connecting to a closed port: %T %v, want a *pgconn.ConnectError", refused, refused)
	}
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	_, poolRefused := pool.Exec(ctx, "SELECT 1")
	pool.Close()
	_, poolClosed := pool.Exec(ctx, "SELECT 1")

	// A real 57P01: the server ends a session (as it does to every
	// session when it shuts down).
	live := pgtest.Pool(t)
	conn, err := live.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := live.Exec(ctx, `SELECT pg_terminate_backend($1)`, conn.Conn().PgConn().PID()); err != nil {
		t.Fatal(err)
	}
	_, terminated := conn.Exec(ctx, "SELECT 1")
	conn.Release()
	var pgErr *pgconn.PgError
	if !errors.As(terminated, &pgErr) || pgErr.Code != "57P01" {
		t.Errorf("a terminated session's next statement: %T %v, want a 57P01", terminated, terminated)
	}
	_, syntax := live.Exec(ctx, "SELEC 1")

	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"connection refused", refused, true},
		{"connection refused, through a pool", fmt.Errorf("load: %w", poolRefused), true},
		{"a closed pool", poolClosed, true},
		{"a session the server ended", terminated, true},
		{"admin shutdown", fmt.Errorf("query: %w", &pgconn.PgError{Code: "57P01"}), true},
		{"crash shutdown", &pgconn.PgError{Code: "57P02"}, true},
		{"cannot connect now", &pgconn.PgError{Code: "57P03"}, true},
		{"connection failure", &pgconn.PgError{Code: "08006"}, true},
		{"a query canceled", &pgconn.PgError{Code: "57014"}, false},
		{"a data exception", &pgconn.PgError{Code: "22P05"}, false},
		{"a syntax error", syntax, false},
		{"an internal error", errors.New("boom"), false},
		{"the request's deadline", context.DeadlineExceeded, false},
		{"nil", nil, false},
	} {
		if got := postgres.Unreachable(tc.err); got != tc.want {
			t.Errorf("%s (%T %v): %v, want %v", tc.name, tc.err, tc.err, got, tc.want)
		}
	}
}
