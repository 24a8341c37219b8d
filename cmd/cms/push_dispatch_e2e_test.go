package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// fcmFake is a local FCM endpoint for the whole program: an OAuth token
// endpoint and messages:send, which refuses tokens starting with "dead-"
// as UNREGISTERED and records the data of every message it accepts.
type fcmFake struct {
	srv  *httptest.Server
	mu   sync.Mutex
	got  map[string][]map[string]string // token -> data of each delivered message
	dead map[string]int                 // refused tokens -> attempts
}

func newFCMFake(t *testing.T) (*fcmFake, string) {
	t.Helper()
	f := &fcmFake{got: map[string][]map[string]string{}, dead: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"e2e","token_type":"Bearer","expires_in":3600}`)
	})
	mux.HandleFunc("POST /v1/projects/e2e/messages:send", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Message struct {
				Token string            `json:"token"`
				Data  map[string]string `json:"data"`
			} `json:"message"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || r.Header.Get("Authorization") != "Bearer e2e" {
			http.Error(w, `{"error":{"code":400,"status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
			return
		}
		tok := body.Message.Token
		f.mu.Lock()
		defer f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		if strings.HasPrefix(tok, "dead-") {
			f.dead[tok]++
			w.WriteHeader(http.StatusNotFound)
			io.WriteString(w, `{"error":{"code":404,"message":"Requested entity was not found.","status":"NOT_FOUND",
				"details":[{"@type":"type.googleapis.com/google.firebase.fcm.v1.FcmError","errorCode":"UNREGISTERED"}]}}`)
			return
		}
		f.got[tok] = append(f.got[tok], body.Message.Data)
		io.WriteString(w, `{"name":"projects/e2e/messages/1"}`)
	})
	f.srv = httptest.NewServer(mux)
	t.Cleanup(f.srv.Close)

	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	creds, _ := json.Marshal(map[string]string{"type": "service_account", "project_id": "e2e", "private_key_id": "k1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "push@e2e.iam.gserviceaccount.com", "token_uri": f.srv.URL + "/token"})
	path := filepath.Join(t.TempDir(), "fcm.json")
	if err := os.WriteFile(path, creds, 0o600); err != nil {
		t.Fatal(err)
	}
	return f, path
}

// received returns the data of the messages token got.
func (f *fcmFake) received(token string) []map[string]string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]map[string]string(nil), f.got[token]...)
}

func (f *fcmFake) total() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, g := range f.got {
		n += len(g)
	}
	return n
}

// TestPushDispatchEndToEnd: app users registered through the
// segmentation API get pushes to a segment, to aliases and to an
// identified user, through the FCM provider, each device once; the token
// FCM reports unregistered is removed from its app user; the statistics
// count the outcomes and the devices' reports.
func TestPushDispatchEndToEnd(t *testing.T) {
	t.Parallel()
	fake, creds := newFCMFake(t)
	ts := startServer(t, withConfig(func(c *Config) {
		c.Push = PushConfig{Provider: "fcm", FCMCredentials: creds, FCMEndpoint: fake.srv.URL, Poll: 100 * time.Millisecond}
	}))
	app := ts.createApp("Dispatch App")
	appTok := ts.appToken(app)

	// Five app users in the segment team=blue (the second with a dead
	// token besides its live one), one outside it.
	type user struct {
		view   appUserView
		tokens []string
	}
	var users []user
	for i, devs := range [][]string{{"tok-0"}, {"tok-1", "dead-1"}, {"tok-2"}, {"tok-3"}, {"tok-4"}, {"tok-5"}} {
		team := "blue"
		if i == 5 {
			team = "red"
		}
		devices := []map[string]any{}
		for _, d := range devs {
			devices = append(devices, map[string]any{"platform": "android", "token": d})
		}
		var u appUserView
		ts.mustJSON(ts.post(appUserPath, appTok, map[string]any{"devices": devices,
			"tags": []any{map[string]any{"name": "team", "value": team, "tagType": userTag}}}), 201, &u)
		users = append(users, user{u, devs})
	}
	// An identified user signs up on the third app user's device.
	var profile struct {
		ID string `json:"id"`
	}
	ts.mustJSON(ts.post(registerPath, appTok, map[string]any{
		"auth":    map[string]any{"email": "ann@example.com", "password": "secret-pass-1", "deviceId": users[2].view.Alias},
		"profile": map[string]any{"name": "Ann", "email": "ann@example.com"},
	}), 201, &profile)
	if profile.ID == "" {
		t.Fatal("register: no identified id")
	}

	dispatched := func(p pushView) bool { return p.Status == "dispatched" }
	// 1. The segment, now.
	seg := ts.schedulePush(pushPath, ts.admin, map[string]any{"appId": app.ID, "name": "blue team",
		"filterTags": []any{map[string]any{"name": "team", "value": "blue"}},
		"notification": map[string]any{"title": "Hi blue", "image": map[string]any{"url": "https://cdn.example.com/i.png"},
			"url": "myapp://blue", "extra": map[string]any{"k": "v"}}})
	done := ts.waitPush(t, seg.ID, 20*time.Second, dispatched)
	if done.Statistics.Sent != 5 || done.Statistics.Invalid != 1 || done.Statistics.Failed != 0 || done.DispatchedAt == nil {
		t.Fatalf("segment push statistics: %+v", done)
	}
	for i, u := range users {
		want := 1
		if i == 5 {
			want = 0
		}
		if got := fake.received(u.tokens[0]); len(got) != want {
			t.Fatalf("%s got the segment push %d times, want %d", u.tokens[0], len(got), want)
		}
	}
	data := fake.received("tok-0")[0]
	if data["scheduleId"] != seg.ID || data["title"] != "Hi blue" || data["url"] != "myapp://blue" ||
		data["extra"] != `{"k":"v"}` || !strings.Contains(data["image"], `"layout":"default"`) {
		t.Fatalf("the data message: %v", data)
	}
	// The unregistered token is gone from its app user, the live one stays.
	deadline := time.Now().Add(10 * time.Second)
	for {
		var u appUserView
		ts.mustJSON(ts.get(appUserPath+"/"+users[1].view.ID, appTok), 200, &u)
		if len(u.Devices) == 1 && u.Devices[0].Token == "tok-1" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the dead token is still there: %+v", u.Devices)
		}
		time.Sleep(50 * time.Millisecond)
	}

	// 2. To an alias; 3. to the identified user.
	al := ts.schedulePush(pushToAliasesPath, ts.admin, map[string]any{"appId": app.ID, "name": "red one",
		"aliases": []string{users[5].view.Alias}, "notification": map[string]any{"title": "Hi red"}})
	id := ts.schedulePush(pushToIdentifiedPath, ts.admin, map[string]any{"appId": app.ID, "name": "Ann",
		"identified": []string{profile.ID}, "notification": map[string]any{"body": "Hi Ann"}})
	for _, p := range []pushView{al, id} {
		if s := ts.waitPush(t, p.ID, 20*time.Second, dispatched).Statistics; s.Sent != 1 || s.Invalid+s.Failed != 0 {
			t.Fatalf("push %s: %+v", p.Name, s)
		}
	}
	if got := fake.received("tok-5"); len(got) != 1 || got[0]["title"] != "Hi red" {
		t.Fatalf("the alias push: %v", got)
	}
	if got := fake.received("tok-2"); len(got) != 2 || got[1]["body"] != "Hi Ann" {
		t.Fatalf("the identified push: %v", got)
	}
	if n := fake.total(); n != 7 {
		t.Fatalf("FCM delivered %d messages, want 7 (5 + 1 + 1)", n)
	}
	// A sent push cannot be edited or cancelled any more.
	expectHaloError(t, ts.post(pushPath+"/"+seg.ID+"/cancel", ts.admin, nil), http.StatusConflict)
	expectHaloError(t, ts.put(pushPath+"/"+seg.ID, ts.admin, segmentPush(app.ID, "late")), http.StatusConflict)

	// The devices report; the statistics follow.
	for _, u := range users[:3] {
		ts.mustJSON(ts.post(pushActivityPath, appTok, form("device", u.view.Alias, "schedule", seg.ID, "action", "receipt", "platform", "android")), 200, nil)
	}
	ts.mustJSON(ts.post(pushActivityPath, appTok, map[string]any{"device": users[0].view.Alias, "schedule": seg.ID, "action": "open"}), 200, nil)
	ts.waitPush(t, seg.ID, 10*time.Second, func(p pushView) bool {
		return p.Statistics == pushStatsView{Sent: 5, Invalid: 1, Received: 3, Opened: 1}
	})
}

// TestPushSentOnceAcrossRestart: a push scheduled a moment ahead is sent
// after its time by a server that was stopped (gracefully) and started
// again on the same database in between; each device gets it once.
func TestPushSentOnceAcrossRestart(t *testing.T) {
	t.Parallel()
	fake, creds := newFCMFake(t)
	push := func(c *Config) {
		c.Push = PushConfig{Provider: "fcm", FCMCredentials: creds, FCMEndpoint: fake.srv.URL, Poll: 100 * time.Millisecond}
	}
	ts := startServer(t, withConfig(push))
	app := ts.createApp("Restart App")
	appTok := ts.appToken(app)
	for i := 0; i < 20; i++ {
		ts.mustJSON(ts.post(appUserPath, appTok, map[string]any{
			"devices": []any{map[string]any{"platform": "ios", "token": "tok-r" + string(rune('a'+i))}},
			"tags":    []any{map[string]any{"name": "all", "value": "yes"}}}), 201, nil)
	}
	p := ts.schedulePush(pushPath, ts.admin, map[string]any{"appId": app.ID, "name": "soon",
		"sendOn":     time.Now().Add(5 * time.Second).UnixMilli(),
		"filterTags": []any{map[string]any{"name": "all"}}, "notification": map[string]any{"title": "Soon"}})
	ts.stop(t)
	ts.done <- nil // the cleanup must not wait for serveOn again
	if time.Now().UnixMilli() >= p.SendOn {
		t.Fatal("the first server was stopped only after the send time; the test proves nothing (machine too slow?)")
	}
	if n := fake.total(); n != 0 {
		t.Fatalf("%d messages before the send time", n)
	}
	ts2 := ts.another(t)
	done := ts2.waitPush(t, p.ID, 20*time.Second, func(v pushView) bool { return v.Status == "dispatched" })
	if done.Statistics.Sent != 20 || fake.total() != 20 {
		t.Fatalf("after the restart: %+v, FCM got %d", done.Statistics, fake.total())
	}
	for i := 0; i < 20; i++ {
		if got := fake.received("tok-r" + string(rune('a'+i))); len(got) != 1 {
			t.Fatalf("device %d got the push %d times", i, len(got))
		}
	}
}
