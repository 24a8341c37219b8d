package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"
)

// TestPushScheduleLifecycle: schedule (the §7.1 shape and ours), read,
// search by name, edit, cancel, delete, through the real router.
func TestPushScheduleLifecycle(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	app := ts.createApp("Push App")

	// HALO's §7.1 body to a segment, with and without a trailing slash.
	p := ts.schedulePush(pushPath+"/", ts.admin, segmentPush(app.ID, "Weekend Sale"))
	if p.Status != "scheduled" || p.AppID != app.ID || p.Name != "Weekend Sale" || p.TagMode != "partial" ||
		len(p.FilterTags) != 1 || p.FilterTags[0].Name != "lang" || p.FilterTags[0].Value != "de" {
		t.Fatalf("scheduled: %+v", p)
	}
	n := p.Notification
	if n.Title != "Sale" || n.Body != "30% off" || n.Badge == nil || *n.Badge != 2 || n.Sound != "chime" ||
		n.URL != "myapp://sale" || n.Extra["campaign"] != "w42" || n.Silent {
		t.Fatalf("notification from the payload: %+v", n)
	}
	if p.CreatedAt == nil || p.Statistics != (pushStatsView{}) {
		t.Fatalf("a new schedule has createdAt and zero statistics: %+v", p)
	}

	// HALO's integer appId (the app's number, as app users show it).
	var au struct {
		AppID json.Number `json:"appId"`
	}
	ts.mustNum(ts.post("/api/segmentation/appuser", ts.appToken(app), map[string]any{"devices": []any{}, "tags": []any{}}), 201, &au)
	byNumber := segmentPush(app.ID, "By number")
	byNumber["appId"] = au.AppID
	num := ts.schedulePush(pushPath, ts.admin, byNumber)
	if num.AppID != app.ID {
		t.Fatalf("appId %s scheduled for app %q, want %q", au.AppID, num.AppID, app.ID)
	}
	ts.mustJSON(ts.do(request{method: http.MethodDelete, path: pushPath + "/" + num.ID, token: ts.admin}), 200, &pushView{})

	// Our own shape; the demo's path; a silent push.
	ours := ts.schedulePush(pushPath, ts.admin, map[string]any{
		"appId": app.ID, "name": "Order news", "sendOn": later(),
		"filterTags": []any{map[string]any{"id": "000000000000000000000151"}, map[string]any{"name": "vip"}}, "tagMode": "total",
		"notification": map[string]any{"title": "Shipped", "image": map[string]any{"url": "https://cdn.example.com/a.png", "layout": "expanded"},
			"url": "myapp://orders/1", "extra": map[string]any{"orderId": 1}, "clickAction": "OPEN"},
	})
	if ours.TagMode != "total" || ours.Notification.Image == nil || ours.Notification.Image.Layout != "expanded" ||
		ours.Notification.ClickAction != "OPEN" {
		t.Fatalf("our shape: %+v", ours)
	}
	demo := ts.schedulePush(pushDemoPath+"/", ts.admin, map[string]any{
		"appId": app.ID, "name": "demo silent", "sendOn": later(), "filterTags": []any{map[string]any{"name": "x", "value": "y"}},
		"payload": map[string]any{"data": map[string]any{"content_available": "1", "custom": map[string]any{"k": "v"}}},
	})
	if !demo.Notification.Silent || demo.Notification.Extra["k"] != "v" {
		t.Fatalf("the demo's silent push: %+v", demo.Notification)
	}

	// Read one; search by name, case-insensitively.
	var got pushView
	ts.mustJSON(ts.get(pushPath+"/"+p.ID, ts.admin), 200, &got)
	if got.ID != p.ID || got.Name != p.Name || got.SendOn != p.SendOn {
		t.Fatalf("GET: %+v, want %+v", got, p)
	}
	page := ts.pushes(ts.admin, url.Values{"appId": {app.ID}, "name": {"sALe"}})
	if page.Pagination.TotalItems != 1 || len(page.Items) != 1 || page.Items[0].ID != p.ID {
		t.Fatalf("search sALe: %+v", page)
	}
	all := ts.pushes(ts.admin, url.Values{"appId": {app.ID}, "limit": {"2"}})
	if all.Pagination.TotalItems != 3 || all.Pagination.TotalPages != 2 || len(all.Items) != 2 {
		t.Fatalf("list, 2 a page: %+v", all.Pagination)
	}

	// Edit: what GET returned, changed, goes back (PUT accepts the response shape).
	edit := map[string]any{"appId": app.ID, "id": p.ID, "status": "scheduled", "statistics": map[string]any{}, "createdAt": 1,
		"name": "Weekend Sale (final)", "sendOn": later() + 60_000, "filterTags": []any{map[string]any{"name": "lang", "value": "en"}},
		"notification": map[string]any{"title": "Sale!", "body": "40% off"}}
	var edited pushView
	ts.mustJSON(ts.put(pushPath+"/"+p.ID+"/", ts.admin, edit), 200, &edited)
	if edited.Name != "Weekend Sale (final)" || edited.FilterTags[0].Value != "en" || edited.Notification.Title != "Sale!" || edited.UpdatedAt == nil {
		t.Fatalf("edited: %+v", edited)
	}

	// Cancel: no longer editable (409), cancelling again changes nothing.
	var cancelled pushView
	ts.mustJSON(ts.post(pushPath+"/"+p.ID+"/cancel", ts.admin, nil), 200, &cancelled)
	if cancelled.Status != "cancelled" {
		t.Fatalf("cancelled: %+v", cancelled)
	}
	expectHaloError(t, ts.put(pushPath+"/"+p.ID, ts.admin, edit), http.StatusConflict)
	ts.mustJSON(ts.post(pushPath+"/"+p.ID+"/cancel/", ts.admin, nil), 200, &cancelled)
	if page := ts.pushes(ts.admin, url.Values{"status": {"cancelled"}}); len(page.Items) != 1 || page.Items[0].ID != p.ID {
		t.Fatalf("status=cancelled: %+v", page.Items)
	}

	// Delete: gone from reads and lists; deleting again is a 404.
	var deleted pushView
	ts.mustJSON(ts.do(request{method: http.MethodDelete, path: pushPath + "/" + p.ID, token: ts.admin}), 200, &deleted)
	if deleted.Status != "deleted" {
		t.Fatalf("deleted: %+v", deleted)
	}
	expectHaloError(t, ts.get(pushPath+"/"+p.ID, ts.admin), http.StatusNotFound)
	expectHaloError(t, ts.do(request{method: http.MethodDelete, path: pushPath + "/" + p.ID, token: ts.admin}), http.StatusNotFound)
	if page := ts.pushes(ts.admin, url.Values{"appId": {app.ID}}); page.Pagination.TotalItems != 2 {
		t.Fatalf("after delete: %d schedules, want 2", page.Pagination.TotalItems)
	}
	expectHaloError(t, ts.get(pushPath+"/nosuchid", ts.admin), http.StatusNotFound)
	expectHaloError(t, ts.post(pushPath+"/nosuchid/cancel", ts.admin, nil), http.StatusNotFound)
}

// TestPushBadInputChangesNothing: every bad body is a 4xx in the HALO
// error shape and schedules nothing.
func TestPushBadInputChangesNothing(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	app := ts.createApp("Bad Push App")
	withKV := func(kv ...any) map[string]any {
		b := segmentPush(app.ID, "bad")
		for i := 0; i+1 < len(kv); i += 2 {
			if kv[i+1] == nil {
				delete(b, kv[i].(string))
			} else {
				b[kv[i].(string)] = kv[i+1]
			}
		}
		return b
	}
	bigExtra := map[string]any{"blob": strings.Repeat("x", 4100)}
	cases := []struct {
		name   string
		path   string
		body   any
		status int
		field  string
	}{
		{"unknown alias", pushToAliasesPath, map[string]any{"appId": app.ID, "name": "n", "aliases": []string{"anonymous-nobody"},
			"notification": map[string]any{"title": "t"}}, 400, "aliases"},
		{"unknown identified user", pushToIdentifiedPath, map[string]any{"appId": app.ID, "name": "n", "identified": []string{"identified-nobody"},
			"notification": map[string]any{"title": "t"}}, 400, "identified"},
		{"empty target", pushPath, withKV("filterTags", nil), 400, "target"},
		{"empty alias list", pushToAliasesPath, withKV("filterTags", nil, "aliases", []string{}), 400, "aliases"},
		{"tags to toAliases", pushToAliasesPath, withKV(), 400, "aliases"},
		{"two kinds of target", pushPath, withKV("aliases", []string{"a"}), 400, "target"},
		{"past date", pushPath, withKV("sendOn", time.Now().Add(-time.Hour).UnixMilli()), 400, "sendOn"},
		{"oversized payload", pushPath, withKV("payload", nil, "notification", map[string]any{"title": "t", "extra": bigExtra}), 400, "notification"},
		{"no notification", pushPath, withKV("payload", nil), 400, "notification"},
		{"notification and payload", pushPath, withKV("notification", map[string]any{"title": "t"}), 400, "notification"},
		{"nothing to show", pushPath, withKV("payload", map[string]any{"data": map[string]any{"url": "x://y"}}), 400, "notification"},
		{"bad layout", pushPath, withKV("payload", nil, "notification", map[string]any{"title": "t",
			"image": map[string]any{"url": "https://x.test/i.png", "layout": "diagonal"}}), 400, "image"},
		{"bad colour", pushPath, withKV("payload", nil, "notification", map[string]any{"title": "t", "color": "red"}), 400, "color"},
		{"localization keys", pushPath, withKV("payload", map[string]any{"notification": map[string]any{"title": "t", "body_loc_key": "k"}}), 400, "payload.notification"},
		{"no name", pushPath, withKV("name", nil), 400, "name"},
		{"no app", pushPath, withKV("appId", nil), 400, "appId"},
		{"bad tag mode", pushPath, withKV("tagMode", "some"), 400, "tagMode"},
		{"unknown field", pushPath, withKV("colour", "red"), 400, ""},
		{"malformed JSON", pushPath, `{"appId": "x", "name":`, 400, ""},
		{"sendOn not a number", pushPath, withKV("sendOn", "tomorrow"), 400, ""},
		{"too large a body", pushPath, withKV("aliases", strings.Split(strings.Repeat("a,", 1<<19), ","), "filterTags", nil), 413, ""},
	}
	for _, c := range cases {
		r := ts.post(c.path, ts.admin, c.body)
		expectHaloError(t, r, c.status)
		if c.field != "" {
			var e haloErr
			if err := decodeNum(r.Body, &e); err == nil && e.Error != nil && e.Error.Extra["field"] != c.field {
				t.Errorf("%s: extra.field = %v, want %s (%s)", c.name, e.Error.Extra["field"], c.field, e.Error.Message)
			}
		}
	}
	// The unknown alias is named.
	r := ts.post(pushToAliasesPath, ts.admin, map[string]any{"appId": app.ID, "name": "n", "aliases": []string{"anonymous-ghost"},
		"notification": map[string]any{"title": "t"}})
	if !strings.Contains(string(r.Body), "anonymous-ghost") {
		t.Errorf("the unknown alias is not named: %s", r)
	}
	if n := ts.pushEvents(); n != 0 {
		t.Fatalf("%d push events after bad input only", n)
	}
	if page := ts.pushes(ts.admin, url.Values{}); page.Pagination.TotalItems != 0 {
		t.Fatalf("bad input scheduled %d pushes", page.Pagination.TotalItems)
	}

	// Bad edits change nothing either.
	p := ts.schedulePush(pushPath, ts.admin, segmentPush(app.ID, "good"))
	before := ts.pushEvents()
	for _, b := range []any{withKV("sendOn", int64(1000)), withKV("filterTags", nil), withKV("payload", nil), `{"name":`} {
		expectHaloError(t, ts.put(pushPath+"/"+p.ID, ts.admin, b), http.StatusBadRequest)
	}
	if after := ts.pushEvents(); after != before {
		t.Fatalf("bad edits appended %d events", after-before)
	}
	var still pushView
	ts.mustJSON(ts.get(pushPath+"/"+p.ID, ts.admin), 200, &still)
	if still.Name != "good" || still.SendOn != p.SendOn {
		t.Fatalf("after bad edits: %+v", still)
	}
	// Bad list parameters.
	expectHaloError(t, ts.get(pushPath+"?status=sent", ts.admin), http.StatusBadRequest)
	expectHaloError(t, ts.get(pushPath+"?limit=0", ts.admin), http.StatusBadRequest)
}

// TestPushRights: scheduling needs write on the app, editing and
// cancelling update, deleting delete, reading read; app tokens may not
// schedule or read pushes; no token is a 401 everywhere.
func TestPushRights(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	app := ts.createApp("Rights App")
	other := ts.createApp("Other App")
	_, reader := ts.userWith("pushreader", grantTo{app: app.ID, perms: []string{"read"}})
	_, writer := ts.userWith("pushwriter", grantTo{app: app.ID, perms: []string{"read", "write"}})
	_, updater := ts.userWith("pushupdater", grantTo{app: app.ID, perms: []string{"read", "update"}})
	_, deleter := ts.userWith("pushdeleter", grantTo{app: app.ID, perms: []string{"read", "delete"}})
	_, stranger := ts.userWith("pushstranger", grantTo{app: other.ID, perms: []string{"read", "write", "update", "delete"}})
	appTok := ts.appToken(app)

	p := ts.schedulePush(pushPath, ts.admin, segmentPush(app.ID, "admin's"))
	id := p.ID
	endpoints := []request{
		{method: http.MethodPost, path: pushPath, body: segmentPush(app.ID, "x")},
		{method: http.MethodPost, path: pushToAliasesPath, body: map[string]any{"appId": app.ID, "name": "n", "aliases": []string{"a"}, "notification": map[string]any{"title": "t"}}},
		{method: http.MethodPost, path: pushToIdentifiedPath, body: map[string]any{"appId": app.ID, "name": "n", "identified": []string{"i"}, "notification": map[string]any{"title": "t"}}},
		{method: http.MethodPost, path: pushDemoPath, body: segmentPush(app.ID, "x")},
		{method: http.MethodGet, path: pushPath},
		{method: http.MethodGet, path: pushPath + "/" + id},
		{method: http.MethodPut, path: pushPath + "/" + id, body: segmentPush(app.ID, "x")},
		{method: http.MethodPost, path: pushPath + "/" + id + "/cancel"},
		{method: http.MethodDelete, path: pushPath + "/" + id},
		{method: http.MethodPost, path: pushActivityPath, body: map[string]any{"device": "a", "schedule": id, "action": "open"}},
	}
	for _, e := range endpoints {
		expectHaloError(t, ts.do(e), http.StatusUnauthorized)
		e.token = "not-a-token"
		expectHaloError(t, ts.do(e), http.StatusUnauthorized)
	}
	// App tokens: no scheduling (even for their own app), no reading.
	for _, e := range endpoints[:9] {
		e.token = appTok
		expectHaloError(t, ts.do(e), http.StatusForbidden)
	}

	forbidden := func(token string, rq request) {
		t.Helper()
		rq.token = token
		expectHaloError(t, ts.do(rq), http.StatusForbidden)
	}
	// Scheduling: write.
	for _, tok := range []string{reader, updater, deleter, stranger} {
		forbidden(tok, endpoints[0])
		forbidden(tok, endpoints[3])
	}
	mine := ts.schedulePush(pushPath, writer, segmentPush(app.ID, "writer's"))
	// Reading: read on the app.
	forbidden(stranger, request{method: http.MethodGet, path: pushPath + "/" + id})
	forbidden(stranger, request{method: http.MethodGet, path: pushPath + "?appId=" + app.ID})
	if page := ts.pushes(stranger, url.Values{}); page.Pagination.TotalItems != 0 {
		t.Fatalf("a user without read on the app lists %d of its pushes", page.Pagination.TotalItems)
	}
	if page := ts.pushes(reader, url.Values{"appId": {app.ID}}); page.Pagination.TotalItems != 2 {
		t.Fatalf("the reader lists %d pushes, want 2", page.Pagination.TotalItems)
	}
	ts.mustJSON(ts.get(pushPath+"/"+mine.ID, reader), 200, nil)
	// Editing and cancelling: update.
	for _, tok := range []string{reader, writer, deleter, stranger} {
		forbidden(tok, request{method: http.MethodPut, path: pushPath + "/" + mine.ID, body: segmentPush(app.ID, "changed")})
		forbidden(tok, request{method: http.MethodPost, path: pushPath + "/" + mine.ID + "/cancel"})
	}
	ts.mustJSON(ts.put(pushPath+"/"+mine.ID, updater, segmentPush(app.ID, "changed")), 200, nil)
	ts.mustJSON(ts.post(pushPath+"/"+mine.ID+"/cancel", updater, nil), 200, nil)
	// Deleting: delete.
	for _, tok := range []string{reader, writer, updater, stranger} {
		forbidden(tok, request{method: http.MethodDelete, path: pushPath + "/" + mine.ID})
	}
	ts.mustJSON(ts.do(request{method: http.MethodDelete, path: pushPath + "/" + mine.ID, token: deleter}), 200, nil)

	// Activity: the app's own token; another app's token does not see the push.
	otherTok := ts.appToken(other)
	expectHaloError(t, ts.post(pushActivityPath, otherTok, map[string]any{"device": "a", "schedule": id, "action": "open"}), http.StatusNotFound)
	expectHaloError(t, ts.post(pushActivityPath, reader, map[string]any{"device": "a", "schedule": id, "action": "open"}), http.StatusForbidden)
	expectHaloError(t, ts.post(pushActivityPath, appTok, map[string]any{"device": "anonymous-madeup", "schedule": id, "action": "open"}), http.StatusNotFound)
	ts.mustJSON(ts.post(pushActivityPath, appTok, map[string]any{"device": ts.newAlias(appTok), "schedule": id, "action": "open"}), 200, nil)
}

// TestPushActivity: receipts, opens and dismissals from devices, as a form
// (Android) or JSON (iOS), echoed as in the fixtures and counted once per
// device in the schedule's statistics.
func TestPushActivity(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	app := ts.createApp("Activity App")
	tok := ts.appToken(app)
	p := ts.schedulePush(pushPath, ts.admin, segmentPush(app.ID, "with activity"))
	myalias, otherAlias, iosalias := ts.newAlias(tok), ts.newAlias(tok), ts.newAlias(tok)

	// Android: a form; the answer echoes it (push-activity-response-*.android.json).
	for _, f := range []url.Values{
		form("device", myalias, "schedule", p.ID, "action", "receipt", "platform", "android"),
		form("device", myalias, "schedule", p.ID, "action", "open", "platform", "android"),
		form("device", myalias, "schedule", p.ID, "action", "open", "platform", "android"), // a retry
	} {
		var echo map[string]string
		ts.mustJSON(ts.post(pushActivityPath, tok, f), 200, &echo)
		if echo["device"] != myalias || echo["schedule"] != p.ID || echo["action"] != f.Get("action") {
			t.Fatalf("echo %v of %v", echo, f)
		}
	}
	r := ts.post(pushActivityPath, tok, form("device", otherAlias, "schedule", p.ID, "action", "receipt"))
	expectStatus(t, r, 200)
	checkShapeOf(t, r, "push-activity-response-receipt.android.json")
	// iOS: JSON, with a trailing slash.
	for _, b := range []map[string]any{
		{"device": iosalias, "schedule": p.ID, "action": "receipt", "platform": "ios"},
		{"device": iosalias, "schedule": p.ID, "action": "dismiss", "platform": "ios"},
	} {
		ts.mustJSON(ts.post(pushActivityPath+"/", tok, b), 200, nil)
	}
	// Bad input: 4xx, nothing recorded.
	before := ts.pushEvents()
	for _, c := range []struct {
		body   any
		status int
	}{
		{map[string]any{"device": "a", "schedule": p.ID, "action": "click"}, 400},
		{map[string]any{"device": "", "schedule": p.ID, "action": "open"}, 400},
		{map[string]any{"device": "a", "schedule": p.ID, "action": "open", "platform": "windows"}, 400},
		{map[string]any{"device": "a", "schedule": p.ID, "action": "open", "extra": 1}, 400},
		{map[string]any{"device": "a", "schedule": "", "action": "open"}, 400},
		{map[string]any{"device": "a", "schedule": "nosuchpush", "action": "open"}, 404},
		{form("device", "a", "schedule", p.ID, "action", "bogus"), 400},
		{`{"device":`, 400},
	} {
		expectHaloError(t, ts.post(pushActivityPath, tok, c.body), c.status)
	}
	if after := ts.pushEvents(); after != before {
		t.Fatalf("bad activity reports appended %d events", after-before)
	}
	// Statistics: myalias received+opened (opened twice: counted once),
	// other received, iosalias received+dismissed.
	ts.waitPush(t, p.ID, 10*time.Second, func(v pushView) bool {
		return v.Statistics == pushStatsView{Received: 3, Opened: 1, Dismissed: 1}
	})
}
