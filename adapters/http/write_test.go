package httpapi

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// JSON answers go out whole, with their Content-Length, not in chunks:
// one write less per answer larger than net/http's 2 KB buffer, and no
// chunk framing for the client to undo. WriteJSON's bytes are those
// json.Encoder wrote before (a trailing newline included).
func TestAnswersCarryTheirLength(t *testing.T) {
	big := map[string]any{"items": strings.Repeat("<x>", 5000)} // past the 2 KB buffer; HTML escaped as before
	encoded := []byte(`{"items":[1,2,3]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/json":
			WriteJSON(w, http.StatusCreated, big)
		case "/encoded":
			WriteBody(w, http.StatusOK, bytes.Repeat(encoded, 300))
		case "/unencodable":
			WriteJSON(w, http.StatusOK, map[string]any{"f": func() {}})
		}
	}))
	defer srv.Close()
	var want bytes.Buffer
	if err := json.NewEncoder(&want).Encode(big); err != nil {
		t.Fatal(err)
	}
	for path, c := range map[string]struct {
		status int
		body   []byte
	}{
		"/json":        {http.StatusCreated, want.Bytes()},
		"/encoded":     {http.StatusOK, bytes.Repeat(encoded, 300)},
		"/unencodable": {http.StatusOK, []byte{}},
	} {
		resp, err := http.Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != c.status || !bytes.Equal(body, c.body) {
			t.Errorf("%s: %d with %d bytes, want %d with %d", path, resp.StatusCode, len(body), c.status, len(c.body))
		}
		if resp.ContentLength != int64(len(c.body)) || len(resp.TransferEncoding) > 0 {
			t.Errorf("%s: Content-Length %d, Transfer-Encoding %v; want a length of %d, not chunked", path, resp.ContentLength, resp.TransferEncoding, len(c.body))
		}
		if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
			t.Errorf("%s: Content-Type %q", path, ct)
		}
	}
}
