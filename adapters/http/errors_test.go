package httpapi

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
)

func TestErrorBodyStatus(t *testing.T) {
	r := httptest.NewRequest(http.MethodPost, "/api/generalcontent/instance", nil)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	for _, tc := range []struct {
		name   string
		err    error
		status int
	}{
		{"data the store cannot hold", fmt.Errorf("append to x: %w: %w", event.ErrDataRejected, &pgconn.PgError{Code: "54000"}), 400},
		{"a data exception", fmt.Errorf("query: %w", &pgconn.PgError{Code: "22P05"}), 400},
		{"another database error", fmt.Errorf("query: %w", &pgconn.PgError{Code: "08006"}), 500},
		{"an internal error", errors.New("boom"), 500},
		{"a failed precondition", fmt.Errorf("put: %w", fault.New(fault.Precondition, "stale")), 412},
	} {
		b := errorBody(r, log, postgres.DataException, tc.err)
		if b.Status != tc.status {
			t.Errorf("%s: status %d, want %d", tc.name, b.Status, tc.status)
		}
		if tc.status == 400 && b.Message != storeRefused {
			t.Errorf("%s: message %q, want %q", tc.name, b.Message, storeRefused)
		}
	}
}
