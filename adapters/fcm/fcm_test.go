package fcm_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/fcm"
	"github.com/halocms/halocms/adapters/pushtest"
	"github.com/halocms/halocms/domain/push"
)

func TestContract(t *testing.T) {
	pushtest.Run(t, func(t *testing.T, reply pushtest.Reply) (pushtest.Sender, bool) {
		f := newFake(t)
		switch reply {
		case pushtest.UnknownToken:
			f.setReply(fcmError(404, "NOT_FOUND", "UNREGISTERED", "Requested entity was not found."))
		case pushtest.Throttle:
			f.setReply(fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "Quota exceeded.", "Retry-After", "7"))
		case pushtest.Unavailable:
			f.setReply(fcmError(503, "UNAVAILABLE", "UNAVAILABLE", "The service is currently unavailable."))
		case pushtest.BadPayload:
			f.setReply(fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Android message is too big"))
		case pushtest.Hang:
			f.setReply(func(w http.ResponseWriter, r *http.Request) { <-r.Context().Done() })
		}
		return f.sender(), true
	})
}

func TestNewRefusesBadConfig(t *testing.T) {
	good := func() map[string]string {
		var m map[string]string
		if err := json.Unmarshal(credentials(t, "http://127.0.0.1/token"), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	ecKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	ecDER, _ := x509.MarshalPKCS8PrivateKey(ecKey)
	cases := []struct {
		name     string
		edit     func(map[string]string)
		endpoint string
		raw      string
	}{
		{name: "not json", raw: "{"},
		{name: "user credentials", edit: func(m map[string]string) { m["type"] = "authorized_user" }},
		{name: "no project", edit: func(m map[string]string) { delete(m, "project_id") }},
		{name: "key not pem", edit: func(m map[string]string) { m["private_key"] = "secret" }},
		{name: "key not rsa", edit: func(m map[string]string) {
			m["private_key"] = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: ecDER}))
		}},
		{name: "key garbage", edit: func(m map[string]string) {
			m["private_key"] = string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: []byte("junk")}))
		}},
		{name: "bad endpoint", endpoint: "fcm.googleapis.com"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := good()
			if c.edit != nil {
				c.edit(m)
			}
			creds, _ := json.Marshal(m)
			if c.raw != "" {
				creds = []byte(c.raw)
			}
			if _, err := fcm.New(context.Background(), fcm.Config{CredentialsJSON: creds, Endpoint: c.endpoint}); err == nil {
				t.Fatal("New accepted it")
			}
		})
	}
	if _, err := fcm.New(context.Background(), fcm.Config{CredentialsJSON: credentials(t, "http://127.0.0.1/token")}); err != nil {
		t.Fatalf("New refused good credentials: %v", err)
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
	fullData := `{
		"title": "Sale", "body": "50% off", "icon": "ic_sale", "sound": "chime", "color": "#ff0000",
		"click_action": "OPEN_SALE", "badge": "5",
		"image": "{\"url\":\"https://cdn.example/sale.png\",\"layout\":\"expanded\"}",
		"url": "shop://sale/7", "extra": "{\"id\":7,\"tags\":[\"a\",\"b\"]}", "scheduleId": "s-42"}`
	silent := push.Notification{Silent: true, Extra: map[string]any{"refresh": true}}
	silentData := `{"content_available": "1", "extra": "{\"refresh\":true}", "scheduleId": "s-42"}`

	cases := []struct {
		name     string
		platform push.Platform
		n        push.Notification
		want     string
	}{
		{"android full", push.Android, full,
			`{"message": {"token": "dev-tok", "data": ` + fullData + `, "android": {"priority": "high"}}}`},
		{"android silent", push.Android, silent,
			`{"message": {"token": "dev-tok", "data": ` + silentData + `}}`},
		{"ios full", push.IOS, full,
			`{"message": {"token": "dev-tok", "data": ` + fullData + `, "apns": {
				"headers": {"apns-push-type": "alert", "apns-priority": "10"},
				"payload": {"aps": {"alert": {"title": "Sale", "body": "50% off"}, "sound": "chime",
					"badge": 5, "category": "OPEN_SALE", "mutable-content": 1}}}}}`},
		{"ios silent", push.IOS, silent,
			`{"message": {"token": "dev-tok", "data": ` + silentData + `, "apns": {
				"headers": {"apns-push-type": "background", "apns-priority": "5"},
				"payload": {"aps": {"content-available": 1}}}}}`},
		{"android title only, image without layout", push.Android,
			push.Notification{Title: "Hi", Image: &push.Image{URL: "https://cdn.example/i.png"}},
			`{"message": {"token": "dev-tok", "data": {"title": "Hi", "scheduleId": "s-42",
				"image": "{\"url\":\"https://cdn.example/i.png\",\"layout\":\"default\"}"},
				"android": {"priority": "high"}}}`},
		{"ios badge zero, no alert", push.IOS, push.Notification{Badge: new(int)},
			`{"message": {"token": "dev-tok", "data": {"badge": "0", "scheduleId": "s-42"}, "apns": {
				"headers": {"apns-push-type": "alert", "apns-priority": "10"},
				"payload": {"aps": {"badge": 0}}}}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			m := push.Message{ScheduleID: "s-42", Device: push.Device{Platform: c.platform, Token: "dev-tok"}, Notification: c.n}
			if got := f.sender().Send(context.Background(), m); got.Outcome != push.Delivered {
				t.Fatalf("Send = %+v", got)
			}
			reqs := f.captured()
			if len(reqs) != 1 {
				t.Fatalf("%d requests, want 1", len(reqs))
			}
			r := reqs[0]
			if r.method != http.MethodPost || r.path != sendPath {
				t.Errorf("request %s %s, want POST %s", r.method, r.path, sendPath)
			}
			if got := r.header.Get("Authorization"); got != "Bearer tok-1" {
				t.Errorf("Authorization = %q", got)
			}
			if got := r.header.Get("Content-Type"); got != "application/json; charset=utf-8" {
				t.Errorf("Content-Type = %q", got)
			}
			jsonEqual(t, r.body, c.want)
		})
	}
}

func TestSendRefusesExtraThatIsNotJSON(t *testing.T) {
	f := newFake(t)
	m := pushtest.Message(push.Android, "dev-tok")
	m.Notification.Extra = map[string]any{"f": func() {}}
	got := f.sender().Send(context.Background(), m)
	if got.Outcome != push.Failed || !strings.Contains(got.Reason, "extra") {
		t.Fatalf("Send = %+v, want failed about extra", got)
	}
	if n := f.sendCalls.Load(); n != 0 {
		t.Fatalf("%d messages reached FCM", n)
	}
}

func TestSendOutcomes(t *testing.T) {
	date := time.Now().Add(90 * time.Second).UTC().Format(http.TimeFormat)
	cases := []struct {
		name       string
		reply      func(http.ResponseWriter, *http.Request)
		want       push.Outcome
		retryAfter time.Duration // exact, or at least when approx
		approx     bool
		reason     string
	}{
		{"delivered", raw(200, `{"name":"projects/halo-test/messages/1"}`), push.Delivered, 0, false, ""},
		{"unregistered", fcmError(404, "NOT_FOUND", "UNREGISTERED", "Requested entity was not found."),
			push.InvalidToken, 0, false, "UNREGISTERED: Requested entity was not found."},
		{"sender id mismatch", fcmError(403, "PERMISSION_DENIED", "SENDER_ID_MISMATCH", "SenderId mismatch"),
			push.InvalidToken, 0, false, "SENDER_ID_MISMATCH"},
		{"invalid registration token", fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT",
			"The registration token is not a valid FCM registration token"), push.InvalidToken, 0, false, "INVALID_ARGUMENT"},
		{"token field violation", raw(400, `{"error":{"code":400,"message":"Invalid value","status":"INVALID_ARGUMENT",
			"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.token","description":"Invalid registration token"}]}]}}`),
			push.InvalidToken, 0, false, "INVALID_ARGUMENT"},
		{"invalid payload", fcmError(400, "INVALID_ARGUMENT", "INVALID_ARGUMENT", "Message is too big"),
			push.Failed, 0, false, "INVALID_ARGUMENT: Message is too big"},
		{"data field violation", raw(400, `{"error":{"code":400,"message":"Invalid value","status":"INVALID_ARGUMENT",
			"details":[{"@type":"type.googleapis.com/google.rpc.BadRequest","fieldViolations":[{"field":"message.data[0].value","description":"Invalid value"}]}]}}`),
			push.Failed, 0, false, "INVALID_ARGUMENT"},
		{"quota with seconds", fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "Quota exceeded", "Retry-After", "30"),
			push.Retry, 30 * time.Second, false, "QUOTA_EXCEEDED"},
		{"quota with date", fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "Quota exceeded", "Retry-After", date),
			push.Retry, 80 * time.Second, true, "QUOTA_EXCEEDED"},
		{"429 without body or header", raw(429, ""), push.Retry, 0, false, "Too Many Requests"},
		{"retry-after garbage", fcmError(429, "RESOURCE_EXHAUSTED", "QUOTA_EXCEEDED", "", "Retry-After", "soon"),
			push.Retry, 0, false, "QUOTA_EXCEEDED"},
		{"unavailable", fcmError(503, "UNAVAILABLE", "UNAVAILABLE", "try later", "Retry-After", "2"),
			push.Retry, 2 * time.Second, false, "UNAVAILABLE"},
		{"internal", fcmError(500, "INTERNAL", "INTERNAL", "oops"), push.Retry, 0, false, "INTERNAL"},
		{"502 html", raw(502, "<html>bad gateway</html>"), push.Retry, 0, false, "Bad Gateway"},
		{"apns credentials", fcmError(401, "UNAUTHENTICATED", "THIRD_PARTY_AUTH_ERROR", "Auth error from APNS or Web Push Service"),
			push.Failed, 0, false, "THIRD_PARTY_AUTH_ERROR"},
		{"permission denied", fcmError(403, "PERMISSION_DENIED", "", "The caller does not have permission"),
			push.Failed, 0, false, "PERMISSION_DENIED: The caller does not have permission"},
		{"project not found", fcmError(404, "NOT_FOUND", "", "Project not found"), push.Failed, 0, false, "NOT_FOUND"},
		{"unspecified 400", fcmError(400, "INVALID_ARGUMENT", "UNSPECIFIED_ERROR", "Request contains an invalid argument."),
			push.Failed, 0, false, "INVALID_ARGUMENT"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFake(t)
			f.setReply(c.reply)
			got := f.sender().Send(context.Background(), pushtest.Message(push.Android, "dev-tok"))
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
			if !strings.HasPrefix(got.Reason, c.reason) {
				t.Errorf("Reason = %q, want it to start with %q", got.Reason, c.reason)
			}
		})
	}
}

func TestSendFetchesOneTokenForManySends(t *testing.T) {
	f := newFake(t)
	s := f.sender()
	var wg sync.WaitGroup
	for range 50 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := s.Send(context.Background(), pushtest.Message(push.Android, "dev-tok")); got.Outcome != push.Delivered {
				t.Errorf("Send = %+v", got)
			}
		}()
	}
	wg.Wait()
	if n := f.tokenCalls.Load(); n != 1 {
		t.Fatalf("token endpoint hit %d times, want once", n)
	}
	if n := f.sendCalls.Load(); n != 50 {
		t.Fatalf("%d sends reached FCM, want 50", n)
	}
}

func TestSendFetchesATokenAgainWhenFCMRefusesIt(t *testing.T) {
	f := newFake(t)
	s := f.sender()
	// send sends 20 messages at once and counts the outcomes.
	send := func() map[push.Outcome]int {
		var mu sync.Mutex
		got := map[push.Outcome]int{}
		var wg sync.WaitGroup
		for range 20 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := s.Send(context.Background(), pushtest.Message(push.IOS, "dev-tok"))
				mu.Lock()
				got[r.Outcome]++
				mu.Unlock()
			}()
		}
		wg.Wait()
		return got
	}
	if got := send(); got[push.Delivered] != 20 {
		t.Fatalf("outcomes %v, want all delivered", got)
	}
	f.revoke()
	// Sends in flight with the refused token are Retry; the first refusal
	// drops it, later ones find a new token already there and leave it.
	if got := send(); got[push.Retry] == 0 || got[push.Retry]+got[push.Delivered] != 20 {
		t.Fatalf("outcomes %v after the token was refused, want retries (then deliveries)", got)
	}
	if got := send(); got[push.Delivered] != 20 {
		t.Fatalf("outcomes %v, want all delivered with the new token", got)
	}
	if n := f.tokenCalls.Load(); n != 2 {
		t.Fatalf("token endpoint hit %d times, want twice", n)
	}
	reqs := f.captured()
	if got := reqs[len(reqs)-1].header.Get("Authorization"); got != "Bearer tok-2" {
		t.Fatalf("last send used %q, want the new token", got)
	}
}

func TestSendFetchesATokenAgainWhenItExpires(t *testing.T) {
	f := newFake(t)
	f.mu.Lock()
	f.expiresIn = 5 // within oauth2's early-expiry margin: stale at once
	f.mu.Unlock()
	s := f.sender()
	for range 2 {
		if got := s.Send(context.Background(), pushtest.Message(push.Android, "dev-tok")); got.Outcome != push.Delivered {
			t.Fatalf("Send = %+v", got)
		}
	}
	if n := f.tokenCalls.Load(); n != 2 {
		t.Fatalf("token endpoint hit %d times, want twice", n)
	}
}

func TestSendWhenTheTokenEndpointFails(t *testing.T) {
	cases := []struct {
		status int
		want   push.Outcome
		reason string
	}{
		{http.StatusBadRequest, push.Failed, "oauth: invalid_grant"},
		{http.StatusServiceUnavailable, push.Retry, "oauth: "},
	}
	for _, c := range cases {
		t.Run(http.StatusText(c.status), func(t *testing.T) {
			f := newFake(t)
			f.mu.Lock()
			f.tokenStatus = c.status
			f.mu.Unlock()
			s := f.sender()
			for range 3 {
				got := s.Send(context.Background(), pushtest.Message(push.Android, "dev-tok"))
				if got.Outcome != c.want || !strings.HasPrefix(got.Reason, c.reason) {
					t.Fatalf("Send = %+v, want %v with reason %q", got, c.want, c.reason)
				}
			}
			if n := f.tokenCalls.Load(); n != 1 {
				t.Errorf("token endpoint hit %d times in the cooldown, want once", n)
			}
			if n := f.sendCalls.Load(); n != 0 {
				t.Errorf("%d sends reached FCM without a token", n)
			}
		})
	}
}

func TestSendUsesTheGivenHTTPClient(t *testing.T) {
	f := newFake(t)
	var calls int
	var mu sync.Mutex
	client := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		mu.Lock()
		calls++
		mu.Unlock()
		return http.DefaultTransport.RoundTrip(r)
	})}
	s, err := fcm.New(context.Background(), fcm.Config{
		CredentialsJSON: credentials(t, f.srv.URL+"/token"), Endpoint: f.srv.URL + "/", HTTPClient: client,
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := s.Send(context.Background(), pushtest.Message(push.Android, "dev-tok")); got.Outcome != push.Delivered {
		t.Fatalf("Send = %+v", got)
	}
	if calls != 2 { // the token, then the message
		t.Fatalf("the given client made %d requests, want 2", calls)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

// BenchmarkSend pushes through a local FCM from parallel goroutines.
func BenchmarkSend(b *testing.B) {
	f := newFake(b)
	f.keep = false
	s := f.sender()
	m := pushtest.Message(push.Android, "dev-tok")
	b.SetParallelism(16) // the dispatcher sends from many goroutines
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
