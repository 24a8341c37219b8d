package apns_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/halocms/halocms/adapters/apns"
	"github.com/halocms/halocms/adapters/pushtest"
	"github.com/halocms/halocms/domain/push"
)

const (
	keyID  = "ABC123DEFG"
	teamID = "DEF123GHIJ"
	topic  = "com.example.halo"
)

var testKey = sync.OnceValue(func() *ecdsa.PrivateKey {
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		panic(err)
	}
	return k
})

// p8 is testKey as Apple hands keys out: PEM, PKCS#8.
func p8(t testing.TB, key any) []byte {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

type captured struct {
	proto        int
	method, path string
	header       http.Header
	body         []byte
}

// fakeAPNs is a local APNs over TLS and HTTP/2 that checks the provider
// token's signature and claims, records requests and answers with reply.
type fakeAPNs struct {
	t   testing.TB
	srv *httptest.Server

	calls   atomic.Int32
	expired atomic.Value // string: a provider token to refuse as expired

	mu       sync.Mutex
	reply    func(w http.ResponseWriter, r *http.Request)
	keep     bool
	requests []captured
	jwts     map[string]bool // distinct provider tokens seen (and verified)
}

func newFake(t testing.TB) *fakeAPNs {
	f := &fakeAPNs{t: t, keep: true, jwts: map[string]bool{}, reply: func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("apns-id", "EC1BF194-B3B2-424A-89A9-5A918A6E6B5E")
	}}
	f.expired.Store("")
	f.srv = httptest.NewUnstartedServer(http.HandlerFunc(f.serve))
	f.srv.EnableHTTP2 = true
	f.srv.StartTLS()
	t.Cleanup(f.srv.Close)
	return f
}

func (f *fakeAPNs) sender() *apns.Sender {
	f.t.Helper()
	s, err := apns.New(apns.Config{
		KeyP8: p8(f.t, testKey()), KeyID: keyID, TeamID: teamID, Topic: topic,
		Endpoint: f.srv.URL, HTTPClient: f.srv.Client(),
	})
	if err != nil {
		f.t.Fatal(err)
	}
	return s
}

func (f *fakeAPNs) setReply(reply func(w http.ResponseWriter, r *http.Request)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.reply = reply
}

func (f *fakeAPNs) captured() []captured {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]captured(nil), f.requests...)
}

func (f *fakeAPNs) distinctJWTs() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return len(f.jwts)
}

func (f *fakeAPNs) serve(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	auth := r.Header.Get("Authorization")
	f.mu.Lock()
	if f.keep {
		f.requests = append(f.requests, captured{r.ProtoMajor, r.Method, r.URL.Path, r.Header.Clone(), body})
	}
	verified := f.jwts[auth]
	reply := f.reply
	f.mu.Unlock()

	if r.ProtoMajor != 2 {
		f.t.Errorf("request over HTTP/%d, want HTTP/2", r.ProtoMajor)
	}
	if !verified { // each distinct token once: verifying is slow
		if err := checkProviderToken(strings.TrimPrefix(auth, "bearer ")); err != nil || !strings.HasPrefix(auth, "bearer ") {
			f.t.Errorf("authorization %q: %v", auth, err)
			w.WriteHeader(http.StatusForbidden)
			io.WriteString(w, `{"reason":"InvalidProviderToken"}`)
			return
		}
		f.mu.Lock()
		f.jwts[auth] = true
		f.mu.Unlock()
	}
	if auth == "bearer "+f.expired.Load().(string) {
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, `{"reason":"ExpiredProviderToken"}`)
		return
	}
	reply(w, r)
}

// checkProviderToken verifies a provider token: ES256 with the test key,
// kid, issuer (team) and a current iat, and no other claims.
func checkProviderToken(s string) error {
	claims := jwt.MapClaims{}
	tok, err := jwt.ParseWithClaims(s, claims, func(*jwt.Token) (any, error) {
		return &testKey().PublicKey, nil
	}, jwt.WithValidMethods([]string{"ES256"}), jwt.WithIssuer(teamID), jwt.WithIssuedAt())
	if err != nil {
		return err
	}
	if kid := tok.Header["kid"]; kid != keyID {
		return fmt.Errorf("kid = %v", kid)
	}
	iat, err := claims.GetIssuedAt()
	if err != nil || iat == nil || time.Since(iat.Time) > time.Minute {
		return fmt.Errorf("iat = %v (%v)", iat, err)
	}
	if len(claims) != 2 {
		return fmt.Errorf("claims %v, want iss and iat only", claims)
	}
	return nil
}

// apnsError answers as APNs does: a status and {"reason"}.
func apnsError(status int, reason string, header ...string) func(http.ResponseWriter, *http.Request) {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("apns-id", "EC1BF194-B3B2-424A-89A9-5A918A6E6B5E")
		w.WriteHeader(status)
		if reason != "" {
			fmt.Fprintf(w, `{"reason":%q}`, reason)
		}
	}
}

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

func TestContract(t *testing.T) {
	pushtest.Run(t, func(t *testing.T, reply pushtest.Reply) (pushtest.Sender, bool) {
		f := newFake(t)
		switch reply {
		case pushtest.UnknownToken:
			f.setReply(apnsError(410, "Unregistered"))
		case pushtest.Throttle:
			f.setReply(apnsError(429, "TooManyRequests", "Retry-After", "7"))
		case pushtest.Unavailable:
			f.setReply(apnsError(503, "ServiceUnavailable"))
		case pushtest.BadPayload:
			f.setReply(apnsError(400, "PayloadEmpty"))
		case pushtest.Hang:
			f.setReply(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		}
		return f.sender(), true
	})
}

func TestNewRefusesBadConfig(t *testing.T) {
	rsaKey, err := rsa.GenerateKey(rand.Reader, 1024)
	if err != nil {
		t.Fatal(err)
	}
	p384, err := ecdsa.GenerateKey(elliptic.P384(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	good := apns.Config{KeyP8: p8(t, testKey()), KeyID: keyID, TeamID: teamID, Topic: topic}
	cases := map[string]func(c *apns.Config){
		"no key":       func(c *apns.Config) { c.KeyP8 = nil },
		"key not pem":  func(c *apns.Config) { c.KeyP8 = []byte("secret") },
		"rsa key":      func(c *apns.Config) { c.KeyP8 = p8(t, rsaKey) },
		"p-384 key":    func(c *apns.Config) { c.KeyP8 = p8(t, p384) },
		"no key id":    func(c *apns.Config) { c.KeyID = "" },
		"no team id":   func(c *apns.Config) { c.TeamID = "" },
		"no topic":     func(c *apns.Config) { c.Topic = "" },
		"bad endpoint": func(c *apns.Config) { c.Endpoint = "api.push.apple.com" },
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			c := good
			edit(&c)
			if _, err := apns.New(c); err == nil {
				t.Fatal("New accepted it")
			}
		})
	}
	if _, err := apns.New(good); err != nil {
		t.Fatalf("New refused a good config: %v", err)
	}
}

func TestSendRequestFormat(t *testing.T) {
	badge := 5
	full := push.Notification{
		Title: "Sale", Body: "50% off", Icon: "ic_sale", Sound: "chime", Color: "#ff0000",
		ClickAction: "OPEN_SALE", Badge: &badge,
		Image: &push.Image{URL: "https://cdn.example/sale.png", Layout: "expanded"},
		URL:   "shop://sale/7", Extra: map[string]any{"id": 7, "tags": []string{"a", "b"}},
	}
	cases := []struct {
		name               string
		n                  push.Notification
		pushType, priority string
		want               string
	}{
		{"alert", full, "alert", "10", `{
			"aps": {"alert": {"title": "Sale", "body": "50% off"}, "sound": "chime", "badge": 5,
				"category": "OPEN_SALE", "mutable-content": 1},
			"scheduleId": "s-42",
			"image": "{\"url\":\"https://cdn.example/sale.png\",\"layout\":\"expanded\"}",
			"extra": "{\"id\":7,\"tags\":[\"a\",\"b\"]}",
			"url": "shop://sale/7"}`},
		{"silent", push.Notification{Title: "ignored", Sound: "chime", Badge: &badge, Silent: true, Extra: map[string]any{"refresh": true}},
			"background", "5", `{
			"aps": {"content-available": 1},
			"scheduleId": "s-42", "content_available": "1", "extra": "{\"refresh\":true}"}`},
		{"body only, image without layout", push.Notification{Body: "Hi", Image: &push.Image{URL: "https://cdn.example/i.png"}},
			"alert", "10", `{
			"aps": {"alert": {"body": "Hi"}, "mutable-content": 1},
			"scheduleId": "s-42", "image": "{\"url\":\"https://cdn.example/i.png\",\"layout\":\"default\"}"}`},
		{"badge zero only", push.Notification{Badge: new(int)}, "alert", "10",
			`{"aps": {"badge": 0}, "scheduleId": "s-42"}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			m := push.Message{ScheduleID: "s-42", Device: push.Device{Platform: push.IOS, Token: "a1b2c3d4"}, Notification: c.n}
			if got := f.sender().Send(context.Background(), m); got.Outcome != push.Delivered {
				t.Fatalf("Send = %+v", got)
			}
			reqs := f.captured()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.proto != 2 || r.method != http.MethodPost || r.path != "/3/device/a1b2c3d4" {
				t.Errorf("request HTTP/%d %s %s, want HTTP/2 POST /3/device/a1b2c3d4", r.proto, r.method, r.path)
			}
			wantHeaders := map[string]string{
				"Apns-Topic": topic, "Apns-Push-Type": c.pushType, "Apns-Priority": c.priority,
				"Apns-Expiration": "0", "Content-Type": "application/json",
			}
			for k, v := range wantHeaders {
				if got := r.header.Get(k); got != v {
					t.Errorf("%s = %q, want %q", k, got, v)
				}
			}
			if err := checkProviderToken(strings.TrimPrefix(r.header.Get("Authorization"), "bearer ")); err != nil {
				t.Errorf("provider token: %v", err)
			}
			jsonEqual(t, r.body, c.want)
		})
	}
}

func TestSendRefusesExtraThatIsNotJSON(t *testing.T) {
	f := newFake(t)
	m := pushtest.Message(push.IOS, "a1b2c3d4")
	m.Notification.Extra = map[string]any{"f": func() {}}
	got := f.sender().Send(context.Background(), m)
	if got.Outcome != push.Failed || !strings.Contains(got.Reason, "extra") {
		t.Fatalf("Send = %+v, want failed about extra", got)
	}
	if n := f.calls.Load(); n != 0 {
		t.Fatalf("%d messages reached APNs", n)
	}
}

func TestSendOutcomes(t *testing.T) {
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		name       string
		reply      func(http.ResponseWriter, *http.Request)
		want       push.Outcome
		retryAfter time.Duration
		approx     bool
		reason     string
	}{
		{"delivered", apnsError(200, ""), push.Delivered, 0, false, ""},
		{"unregistered", apnsError(410, "Unregistered"), push.InvalidToken, 0, false, "Unregistered"},
		{"410 expired token", apnsError(410, "ExpiredToken"), push.InvalidToken, 0, false, "ExpiredToken"},
		{"bad device token", apnsError(400, "BadDeviceToken"), push.InvalidToken, 0, false, "BadDeviceToken"},
		{"token not for topic", apnsError(400, "DeviceTokenNotForTopic"), push.InvalidToken, 0, false, "DeviceTokenNotForTopic"},
		{"too many requests", apnsError(429, "TooManyRequests"), push.Retry, 0, false, "TooManyRequests"},
		{"too many requests with seconds", apnsError(429, "TooManyRequests", "Retry-After", "30"), push.Retry, 30 * time.Second, false, "TooManyRequests"},
		{"unavailable with date", apnsError(503, "ServiceUnavailable", "Retry-After", date), push.Retry, 80 * time.Second, true, "ServiceUnavailable"},
		{"internal", apnsError(500, "InternalServerError"), push.Retry, 0, false, "InternalServerError"},
		{"shutdown", apnsError(503, "Shutdown"), push.Retry, 0, false, "Shutdown"},
		{"502 without body", apnsError(502, ""), push.Retry, 0, false, "502 Bad Gateway"},
		{"payload too large", apnsError(413, "PayloadTooLarge"), push.Failed, 0, false, "PayloadTooLarge"},
		{"topic disallowed", apnsError(400, "TopicDisallowed"), push.Failed, 0, false, "TopicDisallowed"},
		{"invalid provider token", apnsError(403, "InvalidProviderToken"), push.Failed, 0, false, "InvalidProviderToken"},
		{"bad path", apnsError(404, "BadPath"), push.Failed, 0, false, "BadPath"},
		{"html 400", func(w http.ResponseWriter, r *http.Request) {
			w.WriteHeader(400)
			io.WriteString(w, "<html/>")
		}, push.Failed, 0, false, "400 Bad Request"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.setReply(c.reply)
			got := f.sender().Send(context.Background(), pushtest.Message(push.IOS, "a1b2c3d4"))
			if got.Outcome != c.want {
				t.Fatalf("Send = %+v, want %v", got, c.want)
			}
			if c.approx {
				if got.RetryAfter < c.retryAfter || got.RetryAfter > c.retryAfter+15*time.Second {
					t.Errorf("RetryAfter = %v, want about %v", got.RetryAfter, c.retryAfter)
				}
			} else if got.RetryAfter != c.retryAfter {
				t.Errorf("RetryAfter = %v, want %v", got.RetryAfter, c.retryAfter)
			}
			if got.Reason != c.reason {
				t.Errorf("Reason = %q, want %q", got.Reason, c.reason)
			}
		})
	}
}

// sendMany sends n messages at once and counts the outcomes.
func sendMany(s *apns.Sender, n int) map[push.Outcome]int {
	var mu sync.Mutex
	got := map[push.Outcome]int{}
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := s.Send(context.Background(), pushtest.Message(push.IOS, "a1b2c3d4"))
			mu.Lock()
			got[r.Outcome]++
			mu.Unlock()
		}()
	}
	wg.Wait()
	return got
}

func TestSendReusesTheProviderToken(t *testing.T) {
	f := newFake(t)
	s := f.sender()
	if got := sendMany(s, 50); got[push.Delivered] != 50 {
		t.Fatalf("outcomes %v, want all delivered", got)
	}
	if n := f.distinctJWTs(); n != 1 {
		t.Fatalf("%d distinct provider tokens, want 1", n)
	}
}

func TestSendSignsANewTokenWhenAppleSaysItExpired(t *testing.T) {
	f := newFake(t)
	s := f.sender()
	if got := sendMany(s, 10); got[push.Delivered] != 10 {
		t.Fatalf("outcomes %v, want all delivered", got)
	}
	f.expired.Store(strings.TrimPrefix(f.captured()[0].header.Get("Authorization"), "bearer "))
	// Sends in flight with the expired token are Retry; the first refusal
	// drops it, later ones find the new token already there and leave it.
	if got := sendMany(s, 20); got[push.Retry] == 0 || got[push.Retry]+got[push.Delivered] != 20 {
		t.Fatalf("outcomes %v after the token expired, want retries (then deliveries)", got)
	}
	if got := sendMany(s, 20); got[push.Delivered] != 20 {
		t.Fatalf("outcomes %v, want all delivered with a new token", got)
	}
	if n := f.distinctJWTs(); n != 2 {
		t.Fatalf("%d distinct provider tokens, want 2", n)
	}
	res := s.Send(context.Background(), pushtest.Message(push.IOS, "a1b2c3d4"))
	if res.Outcome != push.Delivered {
		t.Fatalf("Send = %+v", res)
	}
}

// BenchmarkSend pushes through a local APNs (TLS, HTTP/2) from parallel
// goroutines.
func BenchmarkSend(b *testing.B) {
	f := newFake(b)
	f.mu.Lock()
	f.keep = false
	f.mu.Unlock()
	s := f.sender()
	m := pushtest.Message(push.IOS, "a1b2c3d4")
	b.SetParallelism(16)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if got := s.Send(context.Background(), m); got.Outcome != push.Delivered {
				b.Errorf("Send = %+v", got)
				return
			}
		}
	})
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "sends/s")
}
