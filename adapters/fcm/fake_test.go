package fcm_test

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
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/halocms/halocms/adapters/fcm"
)

const (
	projectID   = "halo-test"
	clientEmail = "push@halo-test.iam.gserviceaccount.com"
	sendPath    = "/v1/projects/halo-test/messages:send"
)

// testKey is the service account's key (made once: RSA keys are slow to
// generate).
var testKey = sync.OnceValue(func() *rsa.PrivateKey {
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		panic(err)
	}
	return k
})

// credentials is a service account key file whose token_uri is tokenURL.
func credentials(t testing.TB, tokenURL string) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(testKey())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(map[string]string{
		"type":           "service_account",
		"project_id":     projectID,
		"private_key_id": "key-1",
		"private_key":    string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email":   clientEmail,
		"token_uri":      tokenURL,
	})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// captured is one messages:send request as the fake received it.
type captured struct {
	method, path string
	header       http.Header
	body         []byte
}

// fakeFCM is a local FCM: a token endpoint that checks the JWT bearer
// grant and issues tokens tok-1, tok-2…, and a send endpoint that checks
// the bearer token, records the request and answers with reply.
type fakeFCM struct {
	t   testing.TB
	srv *httptest.Server

	tokenCalls atomic.Int32
	sendCalls  atomic.Int32
	valid      atomic.Value // string: the access token the send endpoint accepts

	mu          sync.Mutex
	tokenStatus int // 0: issue tokens; else answer with this status
	expiresIn   int
	reply       func(w http.ResponseWriter, r *http.Request)
	keep        bool // record requests (off in benchmarks)
	requests    []captured
}

func newFake(t testing.TB) *fakeFCM {
	f := &fakeFCM{t: t, expiresIn: 3600, keep: true, reply: func(w http.ResponseWriter, r *http.Request) {
		io.WriteString(w, `{"name":"projects/halo-test/messages/0:1"}`)
	}}
	f.valid.Store("")
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", f.token)
	mux.HandleFunc("POST "+sendPath, f.send)
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)
	return f
}

// sender is a Sender talking to the fake, with the default HTTP client.
func (f *fakeFCM) sender() *fcm.Sender {
	f.t.Helper()
	s, err := fcm.New(f.t.Context(), fcm.Config{CredentialsJSON: credentials(f.t, f.srv.URL+"/token"), Endpoint: f.srv.URL})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func (f *fakeFCM) setReply(reply func(w http.ResponseWriter, r *http.Request)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reply = reply
}

func (f *fakeFCM) captured() []captured {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]captured(nil), f.requests...)
}

// revoke makes the send endpoint refuse the current access token.
func (f *fakeFCM) revoke() { f.valid.Store("revoked") }

func (f *fakeFCM) token(w http.ResponseWriter, r *http.Request) {
	n := f.tokenCalls.Add(1)
	if err := r.ParseForm(); err != nil {
		f.t.Errorf("token request: %v", err)
	}
	if g := r.PostForm.Get("grant_type"); g != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		f.t.Errorf("grant_type = %q", g)
	}
	if err := f.checkAssertion(r.PostForm.Get("assertion")); err != nil {
		f.t.Errorf("assertion: %v", err)
		http.Error(w, `{"error":"invalid_grant"}`, http.StatusBadRequest)
		return
	}
	f.mu.Lock()
	status, expiresIn := f.tokenStatus, f.expiresIn
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	if status != 0 {
		w.WriteHeader(status)
		io.WriteString(w, `{"error":"invalid_grant","error_description":"Invalid JWT Signature."}`)
		return
	}
	tok := fmt.Sprintf("tok-%d", n)
	f.valid.Store(tok)
	fmt.Fprintf(w, `{"access_token":%q,"token_type":"Bearer","expires_in":%d}`, tok, expiresIn)
}

// checkAssertion verifies the grant's JWT: RS256 with the service
// account's key, key id, issuer, scope and audience (the token URL).
func (f *fakeFCM) checkAssertion(assertion string) error {
	claims := jwt.MapClaims{}
	tok, err := jwt.ParseWithClaims(assertion, claims, func(*jwt.Token) (any, error) {
		return &testKey().PublicKey, nil
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuedAt(), jwt.WithExpirationRequired(),
		jwt.WithIssuer(clientEmail), jwt.WithAudience(f.srv.URL+"/token"))
	if err != nil {
		return err
	}
	if kid := tok.Header["kid"]; kid != "key-1" {
		return fmt.Errorf("kid = %v", kid)
	}
	if scope := claims["scope"]; scope != fcm.Scope {
		return fmt.Errorf("scope = %v", scope)
	}
	exp, _ := claims.GetExpirationTime()
	if d := time.Until(exp.Time); d <= 0 || d > time.Hour+time.Minute {
		return fmt.Errorf("exp in %v", d)
	}
	return nil
}

func (f *fakeFCM) send(w http.ResponseWriter, r *http.Request) {
	f.sendCalls.Add(1)
	body, _ := io.ReadAll(r.Body)
	f.mu.Lock()
	if f.keep {
		f.requests = append(f.requests, captured{r.Method, r.URL.Path, r.Header.Clone(), body})
	}
	reply := f.reply
	f.mu.Unlock()
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	if auth := r.Header.Get("Authorization"); auth != "Bearer "+f.valid.Load().(string) {
		w.WriteHeader(http.StatusUnauthorized)
		io.WriteString(w, `{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}`)
		return
	}
	reply(w, r)
}

// fcmError answers with an FCM v1 error body.
func fcmError(status int, grpcStatus, errorCode, message string, header ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.WriteHeader(status)
		details := "[]"
		if errorCode != "" {
			details = fmt.Sprintf(`[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":%q}]`, errorCode)
		}
		fmt.Fprintf(w, `{"error":{"code":%d,"message":%q,"status":%q,"details":%s}}`, status, message, grpcStatus, details)
	}
}

// raw answers with status and body as given.
func raw(status int, body string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(status)
		io.WriteString(w, body)
	}
}

// jsonEqual reports whether a and b are the same JSON value.
func jsonEqual(t *testing.T, got []byte, want string) {
	t.Helper()
	var g, w any
	if err := json.Unmarshal(got, &g); err != nil {
		t.Fatalf("body %s: %v", got, err)
	}
	if err := json.Unmarshal([]byte(want), &w); err != nil {
		t.Fatalf("want %s: %v", want, err)
	}
	gb, _ := json.MarshalIndent(g, "", "  ")
	wb, _ := json.MarshalIndent(w, "", "  ")
	if string(gb) != string(wb) {
		t.Fatalf("body:\n%s\nwant:\n%s", gb, wb)
	}
}
