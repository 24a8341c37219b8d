package main

import (
	"strings"
	"testing"
	"time"
)

// TestPushScheduleBoundsAndUnknownApp: a schedule for an app that does not
// exist, an over-long appId or text are each a 400, and none of them
// appends an event, so the push projection stays ready (issue 34: a
// 12,000-character appId used to wedge it for good). A valid schedule
// still works afterwards.
func TestPushScheduleBoundsAndUnknownApp(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	app := ts.createApp("Push Bounds")
	before := ts.pushEvents()

	with := func(change func(b map[string]any)) map[string]any {
		b := segmentPush(app.ID, "Bounds")
		change(b)
		return b
	}
	notification := func(k string, v any) func(b map[string]any) {
		return func(b map[string]any) {
			delete(b, "payload")
			b["notification"] = map[string]any{"title": "t", "body": "b", k: v}
		}
	}
	long := strings.Repeat("x", 12_000)
	for _, c := range []struct {
		name   string
		path   string
		body   map[string]any
		status int
	}{
		{"unknown app", pushPath, with(func(b map[string]any) { b["appId"] = "6b0b4460e63d52c0551980ca" }), 400},
		{"unknown app to aliases", pushToAliasesPath, with(func(b map[string]any) {
			b["appId"], b["aliases"] = "ffffffffffffffffffffffff", []string{"anonymous-x"}
			delete(b, "filterTags")
		}), 400},
		{"12,000-character appId", pushPath, with(func(b map[string]any) { b["appId"] = long }), 400},
		{"65-character appId", pushPath, with(func(b map[string]any) { b["appId"] = strings.Repeat("a", 65) }), 400},
		{"long name", pushPath, with(func(b map[string]any) { b["name"] = long }), 400},
		{"long tag value", pushPath, with(func(b map[string]any) {
			b["filterTags"] = []any{map[string]any{"name": "lang", "value": long}}
		}), 400},
		{"long tag id", pushPath, with(func(b map[string]any) { b["filterTags"] = []any{map[string]any{"id": long}} }), 400},
		{"long title", pushPath, with(notification("title", long)), 400},
		{"long body", pushPath, with(notification("body", long)), 400},
		{"long icon", pushPath, with(notification("icon", long)), 400},
		{"long sound", pushPath, with(notification("sound", long)), 400},
		{"long clickAction", pushPath, with(notification("clickAction", long)), 400},
		{"long url", pushPath, with(notification("url", long)), 400},
		{"long extra", pushPath, with(notification("extra", map[string]any{"k": long})), 400},
		{"long alias", pushToAliasesPath, with(func(b map[string]any) {
			b["aliases"] = []string{long}
			delete(b, "filterTags")
		}), 400},
	} {
		t.Run(c.name, func(t *testing.T) {
			expectHaloError(t, ts.post(c.path, ts.admin, c.body), c.status)
		})
	}
	if n := ts.pushEvents(); n != before {
		t.Fatalf("refused schedules appended %d events", n-before)
	}

	// The push projection is ready and a valid schedule still works.
	if r := ts.get("/readyz", ""); r.Status != 200 {
		t.Fatalf("/readyz after refused schedules: %s", r)
	}
	p := ts.schedulePush(pushPath, ts.admin, segmentPush(app.ID, "Still works"))
	ts.waitPush(t, p.ID, 5*time.Second, func(v pushView) bool { return v.Name == "Still works" })
	if r := ts.get("/readyz", ""); r.Status != 200 {
		t.Fatalf("/readyz after a valid schedule: %s", r)
	}
}
