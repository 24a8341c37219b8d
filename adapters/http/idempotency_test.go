package httpapi

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/halocms/halocms/domain/access"
)

// memKeys is an in-memory IdempotencyStore.
type memKeys struct {
	mu   sync.Mutex
	rows map[IdempotencyScope]*memKey
}

type memKey struct {
	hash   []byte
	answer *StoredAnswer
}

func (m *memKeys) Reserve(_ context.Context, s IdempotencyScope, h []byte) (ReserveState, StoredAnswer, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	k, ok := m.rows[s]
	switch {
	case !ok:
		m.rows[s] = &memKey{hash: h}
		return Reserved, StoredAnswer{}, nil
	case !bytes.Equal(k.hash, h):
		return Mismatch, StoredAnswer{}, nil
	case k.answer == nil:
		return InFlight, StoredAnswer{}, nil
	}
	return Replay, *k.answer, nil
}

func (m *memKeys) Complete(_ context.Context, s IdempotencyScope, a StoredAnswer) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.rows[s].answer = &a
	return nil
}

func (m *memKeys) Release(_ context.Context, s IdempotencyScope) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.rows, s)
	return nil
}

// The middleware replays a 2xx answer to the same key and body, refuses
// another body (422) and a key in flight (409), releases the key of a
// failed request, scopes keys by caller and route, and leaves requests
// without a key, other methods and owned paths alone.
func TestIdempotencyMiddleware(t *testing.T) {
	store := &memKeys{rows: map[IdempotencyScope]*memKey{}}
	s := &server{kit: &Kit{log: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps: Deps{Idempotency: store},
		owners: []IdempotencyOwner{ownPrefix("/owned/")}}
	calls := 0
	status := http.StatusCreated
	var block chan struct{}
	h := s.idempotency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if block != nil {
			<-block
		}
		b, _ := io.ReadAll(r.Body)
		w.Header().Set("Location", "/things/"+string(b))
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("X-Request-Id", "per-request")
		w.WriteHeader(status)
		_, _ = io.WriteString(w, `{"n":`+string(rune('0'+calls))+`}`)
	}))
	do := func(method, path, caller, key, body string) *httptest.ResponseRecorder {
		r := httptest.NewRequest(method, path, strings.NewReader(body))
		if key != "" {
			r.Header.Set("Idempotency-Key", key)
		}
		r = r.WithContext(access.WithActor(r.Context(), access.Actor{Kind: access.User, ID: caller}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		return rec
	}

	first := do("POST", "/things", "u1", "k1", "a")
	again := do("POST", "/things/", "u1", `"k1"`, "a")
	if calls != 1 || first.Code != 201 || again.Code != 201 || again.Body.String() != first.Body.String() ||
		again.Header().Get("Location") != "/things/a" || again.Header().Get("Content-Type") != "application/json" ||
		again.Header().Get("Idempotent-Replayed") != "true" || again.Header().Get("X-Request-Id") != "" {
		t.Fatalf("replay: calls %d, first %d %s, again %d %v %s", calls, first.Code, first.Body, again.Code, again.Header(), again.Body)
	}
	if rec := do("POST", "/things", "u1", "k1", "b"); rec.Code != 422 || calls != 1 || !strings.Contains(rec.Body.String(), "HaloError") {
		t.Fatalf("another body: %d %s, calls %d, want a 422", rec.Code, rec.Body, calls)
	}
	if do("POST", "/things", "u2", "k1", "a"); calls != 2 {
		t.Fatalf("another caller's key: calls %d, want 2", calls)
	}
	if do("POST", "/other", "u1", "k1", "a"); calls != 3 {
		t.Fatalf("another route's key: calls %d, want 3", calls)
	}
	do("POST", "/things", "u1", "", "a")
	do("POST", "/things", "u1", "", "a")
	do("PUT", "/things", "u1", "k1", "b")
	do("POST", "/owned/x", "u1", "k9", "a")
	do("POST", "/owned/x", "u1", "k9", "b")
	if calls != 8 {
		t.Fatalf("without a key, on PUT and on owned paths: calls %d, want 8", calls)
	}

	status = http.StatusBadRequest
	do("POST", "/things", "u1", "k2", "a")
	status = http.StatusCreated
	if rec := do("POST", "/things", "u1", "k2", "a"); rec.Code != 201 || calls != 10 {
		t.Fatalf("retry after a failure: %d, calls %d, want the request run again", rec.Code, calls)
	}

	block = make(chan struct{})
	done := make(chan struct{})
	go func() { do("POST", "/things", "u1", "k3", "a"); close(done) }()
	for {
		store.mu.Lock()
		_, held := store.rows[IdempotencyScope{Key: "k3", Caller: "user:u1", Route: "POST /things"}]
		store.mu.Unlock()
		if held {
			break
		}
	}
	rec := do("POST", "/things", "u1", "k3", "a")
	close(block)
	<-done
	if rec.Code != 409 {
		t.Fatalf("a key in flight: %d %s, want a 409", rec.Code, rec.Body)
	}

	for _, bad := range []string{strings.Repeat("x", 256), "a\x01b", `""`} {
		if rec := do("POST", "/things", "u1", bad, "a"); rec.Code != 400 {
			t.Errorf("key %q: %d, want a 400", bad, rec.Code)
		}
	}
}

type ownPrefix string

func (p ownPrefix) OwnsIdempotency(path string) bool { return strings.HasPrefix(path, string(p)) }

// An answer that holds a secret (Cache-Control: no-store) is not kept: a
// retry with its key is a 409 naming where the created thing is, and the
// request is not run again.
func TestIdempotencySecretNotKept(t *testing.T) {
	store := &memKeys{rows: map[IdempotencyScope]*memKey{}}
	s := &server{kit: &Kit{log: slog.New(slog.NewTextHandler(io.Discard, nil))}, Deps: Deps{Idempotency: store}}
	calls := 0
	h := s.idempotency(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		w.Header().Set("Cache-Control", "private, no-store")
		w.Header().Set("Location", "/apps/1")
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"clientSecret":"s3cret"}`)
	}))
	var recs []*httptest.ResponseRecorder
	for range 2 {
		r := httptest.NewRequest("POST", "/apps", strings.NewReader(`{}`))
		r.Header.Set("Idempotency-Key", "k")
		r = r.WithContext(access.WithActor(r.Context(), access.Actor{Kind: access.User, ID: "u"}))
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		recs = append(recs, rec)
	}
	for _, row := range store.rows {
		if row.answer == nil || len(row.answer.Body) != 0 {
			t.Fatalf("kept %+v, want an answer without the body", row.answer)
		}
	}
	if calls != 1 || recs[0].Code != 201 || recs[1].Code != 409 || strings.Contains(recs[1].Body.String(), "s3cret") ||
		!strings.Contains(recs[1].Body.String(), "/apps/1") {
		t.Fatalf("calls %d; first %d; retry %d %s", calls, recs[0].Code, recs[1].Code, recs[1].Body)
	}
}
