package main

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/projection"
)

const (
	dailyEventsPath = "/api/events/daily"
	statsPath       = "/api/events/daily/stats"
)

// eventView is HALO's HaloEvent as the server answers it (wire reference
// §8.1), with pointers to tell a field left out from a zero.
type eventView struct {
	ClientID   *string        `json:"clientId"`
	ClientType *string        `json:"clientType"`
	AppID      *int           `json:"appId"`
	CustomerID *int           `json:"customerId"`
	Category   *string        `json:"category"`
	Type       *string        `json:"type"`
	Coord      *string        `json:"coord"`
	IP         *string        `json:"ip"`
	Extra      map[string]any `json:"extra"`
}

type eventDayView struct {
	Day           string           `json:"day"`
	ActiveDevices int64            `json:"activeDevices"`
	Events        int64            `json:"events"`
	ByType        map[string]int64 `json:"byType"`
}

type eventStatsView struct {
	App   string         `json:"app"`
	AppID int            `json:"appId"`
	From  string         `json:"from"`
	To    string         `json:"to"`
	Days  []eventDayView `json:"days"`
}

// appNumber is an app's number (HALO's integer appId).
func (ts *testServer) appNumber(app string) int {
	ts.t.Helper()
	var n int
	if err := ts.app.pool.QueryRow(context.Background(), `SELECT number FROM appuser_apps WHERE app = $1`, app).Scan(&n); err != nil {
		ts.t.Fatalf("number of app %s: %v", app, err)
	}
	return n
}

// eventsCaughtUp waits for the analytics projection to apply every event
// committed so far (reports do not wait for it).
func (ts *testServer) eventsCaughtUp() {
	ts.t.Helper()
	ctx := context.Background()
	pos, err := ts.app.store.Last(ctx)
	if err != nil {
		ts.t.Fatal(err)
	}
	if !ts.app.runtime.WaitForBound(ctx, 20*time.Second, pos, "analytics") {
		ts.t.Fatalf("the analytics projection did not reach %v", pos)
	}
}

// today is the stats of app for today (UTC), as tok reads them.
func (ts *testServer) eventsToday(tok, app string) eventDayView {
	ts.t.Helper()
	var st eventStatsView
	ts.mustJSON(ts.get(statsPath+"?app="+app, tok), http.StatusOK, &st)
	today := time.Now().UTC().Format(time.DateOnly)
	if len(st.Days) != 30 || st.To != today || st.Days[29].Day != today {
		ts.t.Fatalf("stats of %s: %d days to %s, want 30 to %s", app, len(st.Days), st.To, today)
	}
	return st.Days[29]
}

// eventsTables dumps the analytics tables, in key order.
func (ts *testServer) eventsTables() string {
	ts.t.Helper()
	var b strings.Builder
	for _, q := range []string{
		`SELECT app, day::text, type::text || ':' || events FROM analytics_daily_counts ORDER BY 1, 2, 3`,
		`SELECT app, day::text, device FROM analytics_daily_devices ORDER BY 1, 2, 3`,
	} {
		rows, err := ts.app.pool.Query(context.Background(), q)
		if err != nil {
			ts.t.Fatal(err)
		}
		for rows.Next() {
			var a, d, x string
			if err := rows.Scan(&a, &d, &x); err != nil {
				ts.t.Fatal(err)
			}
			fmt.Fprintf(&b, "%s %s %s\n", a, d, x)
		}
		rows.Close()
	}
	return b.String()
}

// identifiedToken registers an identified user of the app and signs in.
func (ts *testServer) identifiedToken(appTok, email string) string {
	ts.t.Helper()
	alias := ts.createAppUser(appTok, map[string]any{"devices": []any{}, "tags": []any{}}).Alias
	ts.register(appTok, email, "secret-"+email, alias)
	return ts.loginForm(appTok, email, "secret-"+email, alias).Token.AccessToken
}

// An app reports events as Android does; each answer is the event with the
// server's fields, as HALO's; the figures count the events per type and
// the identified users as active devices (an app token's reports as events
// only); a retry with the same Idempotency-Key counts once.
func TestEventsDaily(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Events app")
	other := ts.createApp("Other app")
	appTok := ts.appToken(app)
	ann := ts.identifiedToken(appTok, "ann@example.com")
	bob := ts.identifiedToken(appTok, "bob@example.com")

	fixture := map[string]any{"type": "1", "coord": "3,3", "extra": map[string]any{"prevRoom": "2C", "roomName": "2B"}}
	r := ts.post(dailyEventsPath+"/", appTok, fixture)
	var ev eventView
	ts.mustJSON(r, http.StatusOK, &ev)
	checkShapeOf(t, r, "event-daily-response.android.json")
	if deref(ev.ClientID) != app.ClientID || deref(ev.ClientType) != "app" || ev.AppID == nil || *ev.AppID != ts.appNumber(app.ID) ||
		ev.CustomerID == nil || *ev.CustomerID != 1 || deref(ev.Category) != "MOB_APP" || deref(ev.Type) != "1" ||
		deref(ev.Coord) != "3,3" || deref(ev.IP) != "127.0.0.1" || ev.Extra["prevRoom"] != "2C" || ev.Extra["roomName"] != "2B" {
		t.Errorf("answer %s: want the event with the server's fields", r.Body)
	}
	// An identified user's token reports for its app; no trailing slash.
	for _, b := range []map[string]any{{"type": "1"}, {"type": "1", "coord": nil, "extra": nil}, {"type": "4", "coord": "52.37,4.89"}} {
		r := ts.post(dailyEventsPath, ann, b)
		ts.mustJSON(r, http.StatusOK, &ev)
		if deref(ev.ClientID) != app.ClientID || ev.Extra == nil {
			t.Errorf("%s: want the app's client id and an extra object", r)
		}
	}
	// The server's own fields may come back; they are not believed.
	ts.mustJSON(ts.post(dailyEventsPath, bob, map[string]any{"type": "2", "clientId": "forged", "appId": 999, "ip": "1.2.3.4",
		"customerId": 7, "category": "X", "clientType": "y"}), http.StatusOK, &ev)
	if deref(ev.ClientID) != app.ClientID || deref(ev.IP) != "127.0.0.1" {
		t.Errorf("sent fields believed: %+v", ev)
	}
	// A retry with the same Idempotency-Key replays the first answer.
	key := http.Header{"Idempotency-Key": {"open-42"}}
	for i := 0; i < 2; i++ {
		expectStatus(t, ts.do(request{method: http.MethodPost, path: dailyEventsPath, token: bob, body: map[string]any{"type": "3"}, header: key}), http.StatusOK)
	}

	ts.eventsCaughtUp()
	day := ts.eventsToday(ts.admin, app.ID)
	want := map[string]int64{"1": 3, "2": 1, "3": 1, "4": 1}
	if day.Events != 6 || day.ActiveDevices != 2 || fmt.Sprint(day.ByType) != fmt.Sprint(want) {
		t.Errorf("today: %+v, want 6 events %v and 2 active devices", day, want)
	}
	if d := ts.eventsToday(ts.admin, fmt.Sprint(ts.appNumber(app.ID))); d.Events != 6 {
		t.Errorf("by the app's number: %+v", d)
	}
	if d := ts.eventsToday(ts.admin, other.ID); d.Events != 0 || d.ActiveDevices != 0 {
		t.Errorf("the other app: %+v, want nothing", d)
	}
	var st eventStatsView
	ts.mustJSON(ts.get(statsPath+"?app="+app.ID+"&from=2026-01-30&to=2026-02-02", ts.admin), http.StatusOK, &st)
	if len(st.Days) != 4 || st.Days[0].Day != "2026-01-30" || st.Days[3].Day != "2026-02-02" || st.Days[1].ByType["4"] != 0 {
		t.Errorf("a range of days: %+v", st)
	}
}

// Bad reports are 400s in HALO's error shape (413 past the body's bound),
// never 5xx; only app tokens and app users' tokens report.
func TestEventsDailyRefused(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Events app")
	appTok := ts.appToken(app)
	deep := map[string]any{"a": map[string]any{"b": map[string]any{"c": map[string]any{"d": map[string]any{}}}}}
	many := map[string]any{}
	for i := 0; i < 65; i++ {
		many[fmt.Sprint("k", i)] = i
	}
	bad := map[string]any{
		"type out of range":   map[string]any{"type": "5"},
		"type zero":           map[string]any{"type": "0"},
		"type missing":        map[string]any{"coord": "3,3"},
		"type an object":      map[string]any{"type": map[string]any{}},
		"type too long":       map[string]any{"type": strings.Repeat("1", 5000)},
		"coord not a pair":    map[string]any{"type": "1", "coord": "3"},
		"coord not numbers":   map[string]any{"type": "1", "coord": "a,b"},
		"coord out of range":  map[string]any{"type": "1", "coord": "91,0"},
		"coord NaN":           map[string]any{"type": "1", "coord": "NaN,0"},
		"coord a number":      map[string]any{"type": "1", "coord": 3},
		"coord too long":      map[string]any{"type": "1", "coord": "1," + strings.Repeat("0", 100)},
		"extra an array":      map[string]any{"type": "1", "extra": []any{1}},
		"extra a string":      map[string]any{"type": "1", "extra": "x"},
		"extra too deep":      map[string]any{"type": "1", "extra": deep},
		"extra too many":      map[string]any{"type": "1", "extra": many},
		"extra long string":   map[string]any{"type": "1", "extra": map[string]any{"s": strings.Repeat("x", 1001)}},
		"extra long name":     map[string]any{"type": "1", "extra": map[string]any{strings.Repeat("k", 101): 1}},
		"unknown field":       map[string]any{"type": "1", "device": "x"},
		"malformed":           `{"type": "1"`,
		"two values":          `{"type": "1"} {}`,
		"empty":               ``,
		"null":                `null`,
		"an array":            `[{"type": "1"}]`,
		"huge number":         `{"type": "1", "extra": {"n": 1` + strings.Repeat("0", 60) + `}}`,
		"number past numeric": `{"type": "1", "extra": {"n": 1e999999999}}`,
		"NUL in a string":     `{"type": "1", "extra": {"s": "a\u0000b"}}`,
		"NUL in a name":       `{"type": "1", "extra": {"a\u0000b": 1}}`,
		"NUL in coord":        `{"type": "1", "coord": "1,2\u0000"}`,
	}
	for name, b := range bad {
		r := ts.post(dailyEventsPath, appTok, b)
		if r.Status >= 500 {
			t.Errorf("%s: %s", name, r)
		}
		expectHaloError(t, r, http.StatusBadRequest)
	}
	expectHaloError(t, ts.post(dailyEventsPath, appTok, map[string]any{"type": "1", "extra": map[string]any{"s": strings.Repeat("x", 17<<10)}}),
		http.StatusRequestEntityTooLarge)
	// Who may report: app tokens and app users' tokens, no one else.
	expectHaloError(t, ts.post(dailyEventsPath, "", map[string]any{"type": "1"}), http.StatusUnauthorized)
	expectHaloError(t, ts.post(dailyEventsPath, "not-a-token", map[string]any{"type": "1"}), http.StatusUnauthorized)
	expectHaloError(t, ts.post(dailyEventsPath, ts.admin, map[string]any{"type": "1"}), http.StatusForbidden)
	// Nothing refused was counted.
	ts.eventsCaughtUp()
	if d := ts.eventsToday(ts.admin, app.ID); d.Events != 0 {
		t.Errorf("refused reports counted: %+v", d)
	}
}

// The figures are for CMS users holding read on the app: everyone else is
// refused, and a caller who may read no app is refused before the
// request's faults.
func TestEventStatsRights(t *testing.T) {
	t.Parallel()
	ts := startContentServer(t)
	app := ts.createApp("Events app")
	other := ts.createApp("Other app")
	appTok := ts.appToken(app)
	ann := ts.identifiedToken(appTok, "ann@example.com")
	_, reader := ts.userWith("reader", grantTo{app: app.ID, perms: []string{"read"}})
	_, elsewhere := ts.userWith("elsewhere", grantTo{app: other.ID, perms: []string{"read"}})
	_, writer := ts.userWith("writer", grantTo{app: app.ID, perms: []string{"write"}})
	ts.createUser("nobody", nil)
	nobody := ts.login("nobody", userPass)
	ok := statsPath + "?app=" + app.ID

	expectStatus(t, ts.get(ok, reader), http.StatusOK)
	expectStatus(t, ts.get(statsPath+"/?app="+app.ID, reader), http.StatusOK)
	expectHaloError(t, ts.get(ok, ""), http.StatusUnauthorized)
	for name, tok := range map[string]string{"no rights": nobody, "read elsewhere": elsewhere, "write only": writer,
		"the app's token": appTok, "an identified user": ann} {
		r := ts.get(ok, tok)
		if r.Status != http.StatusForbidden {
			t.Errorf("%s: %s, want 403", name, r)
		}
		expectHaloError(t, r, http.StatusForbidden)
	}
	// The request's faults: told to a reader, hidden from one who may read
	// nothing.
	for _, q := range []string{"", "?app=" + app.ID + "&from=yesterday", "?app=" + app.ID + "&to=2026-13-01", "?app=99999",
		"?app=2147483648", "?app=" + app.ID + "&from=2026-02-02&to=2026-02-01", "?app=" + app.ID + "&from=2024-01-01&to=2026-01-01"} {
		expectHaloError(t, ts.get(statsPath+q, reader), http.StatusBadRequest)
		expectHaloError(t, ts.get(statsPath+q, nobody), http.StatusForbidden)
	}
	expectHaloError(t, ts.get(statsPath+"?app=no-such-app", ts.admin), http.StatusBadRequest)
	for _, q := range []string{"?app=%00", "?app=" + strings.Repeat("x", 5000), "?app=-1", "?app=9223372036854775808",
		"?app=" + app.ID + "&to=9999-12-31", "?app=" + app.ID + "&from=0001-01-01&to=0001-01-02"} {
		if r := ts.get(statsPath+q, ts.admin); r.Status >= 500 {
			t.Errorf("%s", r)
		} else if r.Status != http.StatusOK {
			expectHaloError(t, r, r.Status)
		}
	}
	expectHaloError(t, ts.get(statsPath+"?app=no-such-app", reader), http.StatusForbidden)
}

// `cms projections rebuild analytics` replays the log into tables equal to
// the live ones; the server goes on counting into the new version. It sets
// the environment, so it cannot run in parallel.
func TestEventsRebuild(t *testing.T) {
	ts := startContentServer(t)
	app := ts.createApp("Events app")
	appTok := ts.appToken(app)
	toks := []string{appTok, ts.identifiedToken(appTok, "ann@example.com"), ts.identifiedToken(appTok, "bob@example.com")}
	for i := 0; i < 30; i++ {
		expectStatus(t, ts.post(dailyEventsPath, toks[i%3], map[string]any{"type": fmt.Sprint(1 + i%4)}), http.StatusOK)
	}
	ts.eventsCaughtUp()
	tables := ts.eventsTables()
	before := ts.eventsToday(ts.admin, app.ID)
	if before.Events != 30 || before.ActiveDevices != 2 || !strings.Contains(tables, "identified:") {
		t.Fatalf("before the rebuild: %+v\n%s", before, tables)
	}

	t.Setenv("DATABASE_URL", ts.dbURL)
	t.Setenv("CMS_LOG_LEVEL", "error")
	out, err := captureStdout(t, func() error { return run([]string{"projections", "rebuild", "analytics"}) })
	if err != nil || !strings.Contains(out, "rebuilt analytics") {
		t.Fatalf("cms projections rebuild analytics: %v\n%s", err, out)
	}
	if got := ts.eventsTables(); got != tables {
		t.Errorf("rebuilt tables differ:\n%s\nlive were:\n%s", got, tables)
	}
	if after := ts.eventsToday(ts.admin, app.ID); fmt.Sprint(after) != fmt.Sprint(before) {
		t.Errorf("after the rebuild %+v, before %+v", after, before)
	}
	// A rebuild by the runtime, verified against the live tables too.
	if _, err := ts.app.runtime.RebuildWith(context.Background(), "analytics", projection.RebuildOptions{BatchSize: 7, Verify: true}); err != nil {
		t.Fatalf("rebuild in batches of 7: %v", err)
	}
	if got := ts.eventsTables(); got != tables {
		t.Errorf("rebuilt in batches of 7, tables differ:\n%s", got)
	}
	// The live runner goes on into the new version.
	expectStatus(t, ts.post(dailyEventsPath, appTok, map[string]any{"type": "1"}), http.StatusOK)
	deadline := time.Now().Add(20 * time.Second)
	for {
		d := ts.eventsToday(ts.admin, app.ID)
		if d.Events == 31 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a report after the rebuilds: %+v, want 31 events", d)
		}
		time.Sleep(50 * time.Millisecond)
	}
	var raw map[string]any
	_ = json.Unmarshal(ts.get(statsPath+"?app="+app.ID, ts.admin).Body, &raw)
	if raw["appId"] == nil {
		t.Errorf("stats without appId: %v", raw)
	}
}
