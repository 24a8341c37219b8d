package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
)

// IdempotencyTTL is how long an Idempotency-Key is kept after its first
// request: a retry within it replays the first answer.
const IdempotencyTTL = 24 * time.Hour

// IdempotencyLease is how long a key stays in flight without an answer: a
// request that ended without completing or releasing its key (the server
// crashed) frees the key after it.
const IdempotencyLease = 5 * time.Minute

// maxIdempotencyKey bounds the key's length; maxReplayBody bounds the
// answers kept for replay (a larger answer releases its key).
const (
	maxIdempotencyKey = 255
	maxReplayBody     = 4 << 20
)

// IdempotencyScope names a key: the key the client sent, scoped by its
// caller (the token's subject, access.Actor.Label) and its route (method
// and path).
type IdempotencyScope struct {
	Key, Caller, Route string
}

// StoredAnswer is a first answer kept for replay: the status, the headers
// that matter (replayedHeaders) and the body.
type StoredAnswer struct {
	Status int
	Header http.Header
	Body   []byte
}

// ReserveState is what Reserve found.
type ReserveState int

const (
	// Reserved: the key is new (or expired); the caller runs the request
	// and then calls Complete or Release.
	Reserved ReserveState = iota
	// InFlight: the key's first request, with the same body, is still
	// running.
	InFlight
	// Replay: the key's first request, with the same body, answered
	// Answer.
	Replay
	// Mismatch: the key was first used with another body.
	Mismatch
)

// IdempotencyStore keeps Idempotency-Keys and their first answers,
// shared by every server. Reserve takes a key for a request whose body
// hashes to bodyHash, or reports what holds it; Complete stores the answer
// of a reserved key (kept for IdempotencyTTL from the reservation);
// Release forgets a reserved key so that the client may retry.
type IdempotencyStore interface {
	Reserve(ctx context.Context, s IdempotencyScope, bodyHash []byte) (ReserveState, StoredAnswer, error)
	Complete(ctx context.Context, s IdempotencyScope, a StoredAnswer) error
	Release(ctx context.Context, s IdempotencyScope) error
}

// IdempotencyOwner is a Context that handles the Idempotency-Key of some
// of its POSTs itself (loyalty's points and stamps, which keep their keys
// in the event log): the root's middleware leaves path alone.
type IdempotencyOwner interface {
	OwnsIdempotency(path string) bool
}

// replayedHeaders are the headers of a first answer that a replay repeats.
var replayedHeaders = []string{"Content-Type", "Location", "ETag", "Last-Modified", "Deprecation", "Sunset", "Link"}

// idempotency honours Idempotency-Key on POSTs (draft-ietf-httpapi-
// idempotency-key-header): a key seen with the same body replays the first
// answer with Idempotent-Replayed: true; with another body it is a 422;
// while the first request runs, a 409. Only 2xx answers are kept; another
// answer releases the key. It runs after authentication (keys are scoped
// by caller).
func (s *server) idempotency(next http.Handler) http.Handler {
	if s.Idempotency == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		raw, present := r.Header["Idempotency-Key"]
		if r.Method != http.MethodPost || !present || s.ownsIdempotency(r.URL.Path) {
			next.ServeHTTP(w, r)
			return
		}
		key, ok := parseIdempotencyKey(raw)
		if !ok {
			s.fail(w, r, fault.Invalidf("Idempotency-Key must be one key of 1 to %d printable characters", maxIdempotencyKey).With("header", "Idempotency-Key"))
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil { // too large, or broken: the handler answers as it would
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			next.ServeHTTP(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		sum := sha256.Sum256(body)
		scope := IdempotencyScope{Key: key, Caller: access.From(r.Context()).Label(), Route: r.Method + " " + routePath(r.URL.Path)}
		state, ans, err := s.Idempotency.Reserve(r.Context(), scope, sum[:])
		switch {
		case err != nil:
			s.fail(w, r, err)
		case state == Mismatch:
			s.fail(w, r, fault.New(fault.Unprocessable, "this Idempotency-Key was used with another request body").With("header", "Idempotency-Key"))
		case state == InFlight:
			s.fail(w, r, fault.New(fault.Conflict, "a request with this Idempotency-Key is still being processed; retry later").With("header", "Idempotency-Key"))
		case state == Replay:
			s.replay(w, r, ans)
		default:
			s.runReserved(w, r, scope, next)
		}
	})
}

// runReserved serves a request whose key it reserved, then keeps its
// answer (2xx) or releases the key (anything else, a panic included).
func (s *server) runReserved(w http.ResponseWriter, r *http.Request, scope IdempotencyScope, next http.Handler) {
	rec := &recorder{ResponseWriter: w}
	ctx := context.WithoutCancel(r.Context())
	done := false
	defer func() {
		if !done {
			s.releaseKey(ctx, scope)
		}
	}()
	next.ServeHTTP(rec, r)
	done = true
	st := rec.statusCode()
	if st < 200 || st > 299 || rec.overflow {
		s.releaseKey(ctx, scope)
		return
	}
	a := StoredAnswer{Status: st, Header: http.Header{}, Body: rec.body.Bytes()}
	if noStore(w.Header()) { // a secret (a token, an app's secret) is never kept
		a.Status, a.Body = secretAnswer, nil
	}
	for _, h := range replayedHeaders {
		if v := w.Header().Values(h); len(v) > 0 {
			a.Header[h] = v
		}
	}
	if err := s.Idempotency.Complete(ctx, scope, a); err != nil {
		s.kit.log.Warn("idempotency key not stored", "route", scope.Route, "err", err)
	}
}

func (s *server) releaseKey(ctx context.Context, scope IdempotencyScope) {
	if err := s.Idempotency.Release(ctx, scope); err != nil {
		s.kit.log.Warn("idempotency key not released", "route", scope.Route, "err", err)
	}
}

func (s *server) ownsIdempotency(path string) bool {
	for _, o := range s.owners {
		if o.OwnsIdempotency(path) {
			return true
		}
	}
	return false
}

// secretAnswer is the Status kept for a 2xx answer that held a secret
// (Cache-Control: no-store): a retry is told it succeeded (409), not
// shown the secret again.
const secretAnswer = 0

func noStore(h http.Header) bool {
	for _, v := range h.Values("Cache-Control") {
		for _, d := range strings.Split(v, ",") {
			if strings.EqualFold(strings.TrimSpace(d), "no-store") {
				return true
			}
		}
	}
	return false
}

// replay writes a kept answer again.
func (s *server) replay(w http.ResponseWriter, r *http.Request, a StoredAnswer) {
	if a.Status == secretAnswer {
		err := fault.New(fault.Conflict, "a request with this Idempotency-Key succeeded already; its answer held a secret, which is not kept").With("header", "Idempotency-Key")
		if loc := a.Header.Get("Location"); loc != "" {
			err = err.With("location", loc)
		}
		s.fail(w, r, err)
		return
	}
	for h, v := range a.Header {
		w.Header()[h] = v
	}
	w.Header().Set("Idempotent-Replayed", "true")
	w.WriteHeader(a.Status)
	_, _ = w.Write(a.Body)
}

// parseIdempotencyKey reads the header: one line, a key as is or as a
// structured-field string ("..."), printable ASCII, bounded.
func parseIdempotencyKey(lines []string) (string, bool) {
	if len(lines) != 1 {
		return "", false
	}
	k := strings.TrimSpace(lines[0])
	if len(k) >= 2 && k[0] == '"' && k[len(k)-1] == '"' {
		k = k[1 : len(k)-1]
	}
	if k == "" || len(k) > maxIdempotencyKey {
		return "", false
	}
	for i := 0; i < len(k); i++ {
		if k[i] < 0x20 || k[i] > 0x7e {
			return "", false
		}
	}
	return k, true
}

// routePath is path without a trailing slash (every path works with and
// without one).
func routePath(p string) string {
	if len(p) > 1 {
		return strings.TrimRight(p, "/")
	}
	return p
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// recorder passes an answer on and keeps a copy of it (up to
// maxReplayBody).
type recorder struct {
	http.ResponseWriter
	status   int
	body     bytes.Buffer
	overflow bool
}

func (r *recorder) WriteHeader(code int) {
	if r.status == 0 {
		r.status = code
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	if r.status == 0 {
		r.status = http.StatusOK
	}
	if !r.overflow {
		if r.body.Len()+len(b) > maxReplayBody {
			r.overflow = true
			r.body = bytes.Buffer{}
		} else {
			r.body.Write(b)
		}
	}
	return r.ResponseWriter.Write(b)
}

func (r *recorder) statusCode() int {
	if r.status == 0 {
		return http.StatusOK
	}
	return r.status
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
