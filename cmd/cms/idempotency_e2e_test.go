package main

import (
	"net/http"
	"testing"
)

// Idempotency-Key on a create: a retry with the same key and body
// replays the first answer and creates nothing more; another body is a
// 422; without a key every POST creates.
func TestIdempotencyKeyCreate(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Idempotent App")
	mod := ts.createModule(ts.admin, moduleBody(app.ID, "Retried", articleFields()...))
	body := map[string]any{"module": mod.ID, "name": "Once", "values": map[string]any{"title": "Hello"}}
	keyed := func(key string, body any) response {
		return ts.do(request{method: http.MethodPost, path: instancePath, token: ts.admin, body: body,
			header: http.Header{"Idempotency-Key": {key}}})
	}

	first := keyed("create-1", body)
	var created instView
	ts.mustNum(first, 201, &created)
	again := keyed("create-1", body)
	if again.Status != first.Status || string(again.Body) != string(first.Body) ||
		again.Header.Get("Content-Type") != first.Header.Get("Content-Type") || again.Header.Get("Location") != first.Header.Get("Location") ||
		again.Header.Get("Idempotent-Replayed") != "true" {
		t.Fatalf("retry: %s %v, want the first answer %s %v again", again, again.Header, first, first.Header)
	}
	if got := ts.searchIDs(ts.admin, map[string]any{"moduleIds": []string{mod.ID}}); len(got) != 1 || got[0] != created.ID {
		t.Fatalf("items after a retried create: %v, want only %s", got, created.ID)
	}

	other := map[string]any{"module": mod.ID, "name": "Twice", "values": map[string]any{"title": "Hello"}}
	expectHaloError(t, keyed("create-1", other), http.StatusUnprocessableEntity)

	// A failed request releases its key: the client may retry it.
	expectHaloError(t, keyed("create-2", map[string]any{"module": mod.ID, "name": "Bad", "values": map[string]any{}}), http.StatusBadRequest)
	expectStatus(t, keyed("create-2", other), http.StatusCreated)

	expectStatus(t, ts.post(instancePath, ts.admin, body), http.StatusCreated)
	expectStatus(t, ts.post(instancePath, ts.admin, body), http.StatusCreated)
	if got := ts.searchIDs(ts.admin, map[string]any{"moduleIds": []string{mod.ID}}); len(got) != 4 {
		t.Fatalf("items: %v, want 4 (one per keyed create, two without a key)", got)
	}
}
