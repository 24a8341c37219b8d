package main

// The local FCM endpoint of the push phase: it runs in the bench process,
// answers the server's OAuth token requests and messages:send with 200,
// and counts the tokens it received.

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
)

// fakeFCM is the local FCM endpoint: an OAuth token endpoint and
// messages:send, answering 200 and counting tokens.
type fakeFCM struct {
	srv   *httptest.Server
	sends atomic.Int64
	mu    sync.Mutex
	seen  map[string]int
}

func newFakeFCM() *fakeFCM {
	f := &fakeFCM{seen: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"bench-token","token_type":"Bearer","expires_in":3600}`) //nolint:errcheck
	})
	mux.HandleFunc("POST /v1/projects/bench/messages:send", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Message struct {
				Token string `json:"token"`
			} `json:"message"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Message.Token == "" {
			http.Error(w, `{"error":{"code":400,"status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
			return
		}
		f.sends.Add(1)
		f.mu.Lock()
		f.seen[body.Message.Token]++
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"name":"projects/bench/messages/1"}`) //nolint:errcheck
	})
	f.srv = httptest.NewServer(mux)
	return f
}

// exactlyOnce counts the tokens received once, more than once, and the
// expected ones never received.
func (f *fakeFCM) exactlyOnce(tokens int) (once, twice, missing int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i < tokens; i++ {
		switch f.seen[benchToken(i)] {
		case 0:
			missing++
		case 1:
			once++
		default:
			twice++
		}
	}
	return once, twice, missing
}

// credentialsFile writes a service account key whose token_uri is the
// fake's.
func (f *fakeFCM) credentialsFile(dir string) (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "bench", "private_key_id": "bench-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "push@bench.iam.gserviceaccount.com", "token_uri": f.srv.URL + "/token",
	})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "fcm.json")
	return path, os.WriteFile(path, b, 0o600)
}

func benchToken(i int) string {
	return fmt.Sprintf("bench-fcm-token-%08d-%s", i, strings.Repeat("x", 120))
}
