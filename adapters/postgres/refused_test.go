package postgres

import (
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
)

func TestDataException(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"a data exception", fmt.Errorf("query: %w", &pgconn.PgError{Code: "22P05"}), true},
		{"another database error", fmt.Errorf("query: %w", &pgconn.PgError{Code: "08006"}), false},
		{"an internal error", errors.New("boom"), false},
	} {
		if got := DataException(tc.err); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
