package httpapi

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
)

// storeRefused is the message of a 400 for data the store cannot hold.
const storeRefused = "the request contains characters or values that cannot be stored"

// storeUnreachable is the message of a 503 while the database cannot be
// reached (restarting, failing over, the network between down).
const storeUnreachable = "the database cannot be reached; try again shortly"

// OutageRetryAfter is the Retry-After, in seconds, of a 503 while the
// database cannot be reached: about what a PostgreSQL restart or a
// failover takes.
const OutageRetryAfter = 5

// storeErrors tell a store's failures apart by what the store knows of
// them (the HTTP root knows no store): refused, the request's data the
// store cannot hold (postgres.DataException); unreachable, the store out
// of reach (postgres.Unreachable). Either may be nil: none is.
type storeErrors struct {
	refused, unreachable func(error) bool
}

// statusOf is the one table from failure kinds to HTTP status codes.
var statusOf = map[fault.Kind]int{
	fault.Invalid:         http.StatusBadRequest,
	fault.NotFound:        http.StatusNotFound,
	fault.Conflict:        http.StatusConflict,
	fault.Unauthenticated: http.StatusUnauthorized,
	fault.Forbidden:       http.StatusForbidden,
	fault.TooManyRequests: http.StatusTooManyRequests,
	fault.Unavailable:     http.StatusServiceUnavailable,
	fault.Precondition:    http.StatusPreconditionFailed,
	fault.Unprocessable:   http.StatusUnprocessableEntity,
	fault.TooLarge:        http.StatusRequestEntityTooLarge,
	fault.Unsupported:     http.StatusUnsupportedMediaType,
	fault.Internal:        http.StatusInternalServerError,
}

// haloError is the HALO error body: {"error": {status, message, extra, type}}.
type haloError struct {
	Error ErrorBody `json:"error"`
}

// ErrorBody is the body of a HALO error (and of each failed operation of a
// content batch).
type ErrorBody struct {
	Status  int            `json:"status"`
	Message string         `json:"message"`
	Extra   map[string]any `json:"extra"`
	Type    string         `json:"type"`
}

// writeError maps err to a status and writes the HALO error body. Only
// internal errors are logged, and their detail is not shown to the caller.
func writeError(w http.ResponseWriter, r *http.Request, log *slog.Logger, se storeErrors, err error) {
	body := errorBody(r, log, se, err)
	if body.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="halo"`)
	}
	if body.Status == http.StatusTooManyRequests || body.Status == http.StatusServiceUnavailable {
		if s, ok := body.Extra["retryAfter"]; ok {
			w.Header().Set("Retry-After", ToString(s))
		}
	}
	WriteJSON(w, body.Status, haloError{Error: body})
}

// errorBody is the one mapping from failures to HTTP statuses and HALO
// error bodies (also used for the per-operation errors of a batch).
// se tells the store's failures that are not the server's fault.
func errorBody(r *http.Request, log *slog.Logger, se storeErrors, err error) ErrorBody {
	var fe *fault.Error
	status := http.StatusInternalServerError
	body := ErrorBody{Message: "internal server error", Extra: map[string]any{}, Type: "HaloError"}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &fe):
		status = statusOf[fe.Kind]
		body.Message = fe.Message
		if fe.Extra != nil {
			body.Extra = fe.Extra
		}
	case errors.As(err, &mbe):
		status = http.StatusRequestEntityTooLarge
		body.Message = "request body is too large (limit " + strconv.FormatInt(mbe.Limit, 10) + " bytes)"
	case errors.Is(err, event.ErrDataRejected):
		// The event store refused an append for its data (too large, a
		// number it cannot hold); nothing was written.
		status = http.StatusBadRequest
		body.Message = storeRefused
	case se.refused != nil && se.refused(err):
		// Input the store cannot hold (for PostgreSQL a data exception:
		// a NUL character, invalid UTF-8); the failed statement changed
		// nothing.
		status = http.StatusBadRequest
		body.Message = storeRefused
	case se.unreachable != nil && se.unreachable(err):
		// The database is restarting or out of reach: the same request
		// is likely to succeed a few seconds later.
		status = http.StatusServiceUnavailable
		body.Message = storeUnreachable
		body.Extra["retryAfter"] = OutageRetryAfter
		log.WarnContext(r.Context(), "database unreachable", "method", r.Method, "path", r.URL.Path, "err", err)
		body.Status = status
		return body
	}
	if status == http.StatusInternalServerError && errors.Is(err, context.Canceled) && r.Context().Err() != nil {
		// The client went away (a page navigated on, a search was
		// replaced by the next): nobody reads the answer, and the server
		// is not at fault. 499 as nginx names it, for the metrics.
		status = statusClientClosed
		body.Message = "the client closed the request"
	}
	switch {
	case status == statusClientClosed:
		log.DebugContext(r.Context(), "request canceled by the client", "method", r.Method, "path", r.URL.Path)
	case status == http.StatusServiceUnavailable:
		// A request past its time bound: the caller's to narrow, and
		// anyone with a public app token can cause one.
		log.WarnContext(r.Context(), "request stopped", "method", r.Method, "path", r.URL.Path, "err", err)
	case status >= 500:
		log.ErrorContext(r.Context(), "request failed", "method", r.Method, "path", r.URL.Path, "err", err)
	}
	body.Status = status
	return body
}

// statusClientClosed is what a request whose client went away is counted
// as (nginx's 499); no answer reaches anyone.
const statusClientClosed = 499

// ToString is a scalar a client sent (a number, a string) as text.
func ToString(v any) string {
	switch x := v.(type) {
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case float64:
		return strconv.FormatFloat(x, 'f', 0, 64)
	case string:
		return x
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// WriteJSON writes v as JSON, followed by a newline (as json.Encoder
// does), with status.
func WriteJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		// Only a value that cannot be encoded (a server bug): the status
		// is already chosen, the body stays empty, as json.Encoder left it.
		WriteBody(w, status, nil)
		return
	}
	WriteBody(w, status, append(b, '\n'))
}

// WriteBody writes an encoded JSON body with its Content-Length, so that
// net/http sends it as it is instead of in chunks (one write less per
// answer larger than its 2 KB buffer, and no chunk framing for the
// client to undo).
func WriteBody(w http.ResponseWriter, status int, body []byte) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}
