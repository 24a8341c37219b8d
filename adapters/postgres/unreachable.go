package postgres

import (
	"errors"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/puddle/v2"
)

// Unreachable reports whether err is the database being out of reach
// rather than a statement failing: a connection that could not be made
// (refused, timed out, or turned away by the server: a database that
// does not accept connections, a role that may not connect), one the
// server reset, the pool closed, or a server error of SQLSTATE class 08
// (connection exception) or 57P01-57P03 (administrator or crash
// shutdown, cannot connect now: a server restarting). Such a failure is
// the same request's success a few seconds later: the HTTP adapter
// answers it with a 503 and Retry-After.
func Unreachable(err error) bool {
	if err == nil {
		return false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return true
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case "57P01", "57P02", "57P03":
			return true
		}
		return strings.HasPrefix(pgErr.Code, "08")
	}
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) ||
		errors.Is(err, puddle.ErrClosedPool)
}
