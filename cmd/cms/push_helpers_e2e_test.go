package main

// Helpers of the push end-to-end tests: paths, bodies and typed views of
// the push schedule shapes.

import (
	"context"
	"net/url"
	"testing"
	"time"
)

// Paths of the push API.
const (
	pushPath             = "/api/push/schedule"
	pushToAliasesPath    = "/api/push/schedule/toAliases"
	pushToIdentifiedPath = "/api/push/schedule/toIdentified"
	pushDemoPath         = "/api/authentication/schedule"
	pushActivityPath     = "/api/push/schedule/activity"
)

type pushStatsView struct {
	Sent      int `json:"sent"`
	Failed    int `json:"failed"`
	Invalid   int `json:"invalid"`
	Received  int `json:"received"`
	Opened    int `json:"opened"`
	Dismissed int `json:"dismissed"`
}

type pushNotificationView struct {
	Title string `json:"title"`
	Body  string `json:"body"`
	Image *struct {
		URL    string `json:"url"`
		Layout string `json:"layout"`
	} `json:"image"`
	URL         string         `json:"url"`
	Extra       map[string]any `json:"extra"`
	Silent      bool           `json:"silent"`
	Sound       string         `json:"sound"`
	Badge       *int           `json:"badge"`
	ClickAction string         `json:"clickAction"`
}

type pushView struct {
	ID         string `json:"id"`
	AppID      string `json:"appId"`
	Name       string `json:"name"`
	Status     string `json:"status"`
	SendOn     int64  `json:"sendOn"`
	Aliases    []string
	Identified []string
	FilterTags []struct {
		ID    string `json:"id"`
		Name  string `json:"name"`
		Value string `json:"value"`
	} `json:"filterTags"`
	TagMode           string               `json:"tagMode"`
	Notification      pushNotificationView `json:"notification"`
	CreatedAt         *int64               `json:"createdAt"`
	UpdatedAt         *int64               `json:"updatedAt"`
	DispatchStartedAt *int64               `json:"dispatchStartedAt"`
	DispatchedAt      *int64               `json:"dispatchedAt"`
	Statistics        pushStatsView        `json:"statistics"`
}

type pushPage struct {
	Pagination paginationView `json:"pagination"`
	Items      []pushView     `json:"items"`
}

// later is a send time an hour ahead: the push stays scheduled.
func later() int64 { return time.Now().Add(time.Hour).UnixMilli() }

// segmentPush is a §7.1 body to a tag segment, an hour ahead.
func segmentPush(app, name string) map[string]any {
	return map[string]any{
		"appId": app, "name": name, "sendOn": later(),
		"filterTags": []any{map[string]any{"name": "lang", "value": "de"}},
		"payload": map[string]any{
			"notification": map[string]any{"title": "Sale", "body": "30% off", "badge": "2", "sound": "chime"},
			"data":         map[string]any{"url": "myapp://sale", "content_available": 0, "extra": `{"campaign":"w42"}`},
		},
	}
}

// schedulePush posts body to path as token and wants 201.
func (ts *testServer) schedulePush(path, token string, body any) pushView {
	ts.t.Helper()
	var p pushView
	ts.mustJSON(ts.post(path, token, body), 201, &p)
	if p.ID == "" {
		ts.t.Fatalf("schedule: no id in %+v", p)
	}
	return p
}

// pushes lists the schedules token sees with the query.
func (ts *testServer) pushes(token string, q url.Values) pushPage {
	ts.t.Helper()
	var p pushPage
	ts.mustJSON(ts.get(pushPath+"?"+q.Encode(), token), 200, &p)
	return p
}

// pushStreams counts the events of push schedule streams in the log.
func (ts *testServer) pushEvents() int {
	ts.t.Helper()
	var n int
	if err := ts.app.pool.QueryRow(context.Background(),
		`SELECT count(*) FROM events WHERE stream_id LIKE 'push-%' OR stream_id LIKE 'pushactivity-%'`).Scan(&n); err != nil {
		ts.t.Fatal(err)
	}
	return n
}

// waitPush polls GET /api/push/schedule/{id} as admin until cond holds.
func (ts *testServer) waitPush(t testing.TB, id string, within time.Duration, cond func(pushView) bool) pushView {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var p pushView
		ts.mustJSON(ts.get(pushPath+"/"+id, ts.admin), 200, &p)
		if cond(p) {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("push %s after %s: %+v", id, within, p)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// newAlias creates an app user with the app token and returns its alias.
func (ts *testServer) newAlias(appTok string) string {
	ts.t.Helper()
	var au struct {
		Alias string `json:"alias"`
	}
	ts.mustJSON(ts.post("/api/segmentation/appuser", appTok, map[string]any{"devices": []any{}, "tags": []any{}}), 201, &au)
	if au.Alias == "" {
		ts.t.Fatal("a new app user has no alias")
	}
	return au.Alias
}
