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
		{"the database out of reach", fmt.Errorf("query: %w", &pgconn.PgError{Code: "08006"}), 503},
		{"the database shutting down", fmt.Errorf("query: %w", &pgconn.PgError{Code: "57P01"}), 503},
		{"another database error", fmt.Errorf("query: %w", &pgconn.PgError{Code: "42601"}), 500},
		{"an internal error", errors.New("boom"), 500},
		{"a failed precondition", fmt.Errorf("put: %w", fault.New(fault.Precondition, "stale")), 412},
	} {
		b := errorBody(r, log, storeErrors{refused: postgres.DataException, unreachable: postgres.Unreachable}, tc.err)
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
	if b := errorBody(gone, log, storeErrors{}, fmt.Errorf("read: %w", context.Canceled)); b.Status != 499 {
		t.Errorf("client gone: status %d, want 499", b.Status)
	}
	if logged.Len() != 0 {
		t.Errorf("client gone was logged: %s", logged.String())
	}
	live := httptest.NewRequest(http.MethodGet, "/api/generalcontent/instance/x", nil)
	if b := errorBody(live, log, storeErrors{}, fmt.Errorf("read: %w", context.Canceled)); b.Status != 500 {
		t.Errorf("canceled inside a live request: status %d, want 500", b.Status)
	}
}

// A database out of reach is a 503 with Retry-After, logged once as a
// warning, not as a server failure.
func TestWriteErrorUnreachable(t *testing.T) {
	var logged bytes.Buffer
	log := slog.New(slog.NewTextHandler(&logged, &slog.HandlerOptions{Level: slog.LevelInfo}))
	r := httptest.NewRequest(http.MethodGet, "/api/generalcontent/instance/x", nil)
	w := httptest.NewRecorder()
	writeError(w, r, log, storeErrors{unreachable: postgres.Unreachable}, fmt.Errorf("read: %w", &pgconn.PgError{Code: "57P03"}))
	if w.Code != 503 || w.Header().Get("Retry-After") != "5" {
		t.Errorf("status %d, Retry-After %q; want 503, 5", w.Code, w.Header().Get("Retry-After"))
	}
	if n := bytes.Count(logged.Bytes(), []byte("level=WARN")); n != 1 || bytes.Contains(logged.Bytes(), []byte("level=ERROR")) {
		t.Errorf("logged %q, want one warning", logged.String())
	}
}
