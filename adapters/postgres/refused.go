package postgres

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// DataException reports whether err is PostgreSQL's refusal of the data a
// statement was given (SQLSTATE class 22: a NUL character, invalid
// UTF-8, a number out of range): the request's fault, and the failed
// statement changed nothing. The HTTP adapter answers it with a 400.
func DataException(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "22")
}
