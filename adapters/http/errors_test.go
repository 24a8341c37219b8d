package httpapi

import (
	"bytes"
	"context"
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

// A request whose client went away is counted as 499, not logged as a
// server failure; a cancellation the client did not cause stays a 500.
func TestErrorBodyClientGone(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	gone := httptest.NewRequest(http.MethodGet, "/api/generalcontent/instance/x", nil).WithContext(ctx)
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo}))
	if b := errorBody(gone, log, nil, fmt.Errorf("read: %w", context.Canceled)); b.Status != 499 {
		t.Errorf("client gone: status %d, want 499", b.Status)
	}
	if logged.Len() != 0 {
		t.Errorf("client gone was logged: %s", logged.String())
	}
	live := httptest.NewRequest(http.MethodGet, "/api/generalcontent/instance/x", nil)
	if b := errorBody(live, log, nil, fmt.Errorf("read: %w", context.Canceled)); b.Status != 500 {
		t.Errorf("canceled inside a live request: status %d, want 500", b.Status)
	}
}
