package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"
)

// runProjectionsCLI runs `cms projections ARGS` against the database at
// dbURL and returns what it printed and its error.
func runProjectionsCLI(t *testing.T, dbURL string, args ...string) (string, error) {
	t.Helper()
	t.Setenv("DATABASE_URL", dbURL)
	var out bytes.Buffer
	cmd := projectionsCmd()
	cmd.SetOut(&out)
	cmd.SetErr(&out)
	cmd.SetArgs(args)
	err := cmd.Execute()
	return out.String(), err
}

// The way out of a stuck projection, as an operator takes it: a push the
// projector cannot apply (a table trigger stands in for the projector's
// bug) wedges `push`; `cms projections status` names the event; `cms
// projections park` lets the serving process go on past it without a
// restart (/readyz ready again, listing it; later schedules appear);
// once the bug is fixed, `cms projections replay` applies it. Both are
// in the log.
func TestProjectionsParkAndReplayCLI(t *testing.T) { // not parallel: it sets DATABASE_URL
	ts := startServer(t, withConfig(func(c *Config) { c.ReadYourWrites = 2 * time.Second }))
	ctx := context.Background()
	app := ts.createApp("Parking")
	ts.schedulePush(pushPath, ts.admin, segmentPush(app.ID, "Before"))
	if _, err := ts.app.pool.Exec(ctx, `
CREATE FUNCTION public.refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.name = 'Poison' THEN RAISE EXCEPTION 'poisoned schedule'; END IF;
  RETURN NEW;
END $$;
CREATE TRIGGER refuse_poison BEFORE INSERT OR UPDATE ON proj_push_v1.push_schedules
  FOR EACH ROW EXECUTE FUNCTION public.refuse_poison();`); err != nil {
		t.Fatal(err)
	}
	r := ts.post(pushPath, ts.admin, segmentPush(app.ID, "Poison"))
	t.Logf("scheduling the poison: %d", r.Status)

	// The runner names the event it fails on; status prints it.
	failing := regexp.MustCompile(`push .*failing at (\d+/\d+)`)
	var pos string
	for deadline := time.Now().Add(30 * time.Second); pos == ""; {
		out, err := runProjectionsCLI(t, ts.dbURL, "status")
		if err != nil {
			t.Fatalf("status: %v\n%s", err, out)
		}
		if m := failing.FindStringSubmatch(out); m != nil {
			pos = m[1]
			t.Logf("status while wedged:\n%s", out)
			if !strings.Contains(out, "poisoned schedule") || !strings.Contains(out, "cms projections park push --event "+pos) {
				t.Errorf("status names the event but not the error and what to do:\n%s", out)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("status never showed push failing at an event:\n%s", out)
		}
		time.Sleep(200 * time.Millisecond)
	}
	var wedged struct {
		Reason  string            `json:"reason"`
		Failing map[string]string `json:"failing"`
	}
	if r := ts.get("/readyz", ""); r.Status != 503 || json.Unmarshal(r.Body, &wedged) != nil || wedged.Reason != "projections" || wedged.Failing["push"] != pos {
		t.Errorf("/readyz while push is wedged: %s; want a 503 naming the event %s", r, pos)
	}

	if out, err := runProjectionsCLI(t, ts.dbURL, "park", "push", "--event", pos); err == nil {
		t.Errorf("park without a reason: %s", out)
	}
	out, err := runProjectionsCLI(t, ts.dbURL, "park", "push", "--event", pos, "--reason", "trigger bug, ticket 42", "--by", "tester")
	if err != nil || !strings.Contains(out, "parked "+pos) {
		t.Fatalf("park: %v\n%s", err, out)
	}

	// The serving process goes on past it, without a restart.
	var ready struct {
		Status string              `json:"status"`
		Parked map[string][]string `json:"parked"`
	}
	for deadline := time.Now().Add(30 * time.Second); ; {
		r := ts.get("/readyz", "")
		if r.Status == 200 {
			if err := json.Unmarshal(r.Body, &ready); err != nil {
				t.Fatal(err)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("/readyz after the park: %s", r)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if ready.Status != "ready" || len(ready.Parked["push"]) != 1 || ready.Parked["push"][0] != pos {
		t.Errorf("/readyz after the park: %+v, want push's parked event %s", ready, pos)
	}
	if m := string(ts.get("/metrics", "").Body); !strings.Contains(m, `cms_projection_parked_events{projection="push"} 1`) ||
		!strings.Contains(m, `cms_projection_parked_events{projection="content"} 0`) {
		t.Errorf("/metrics does not count the parked event")
	}
	ts.schedulePush(pushPath, ts.admin, segmentPush(app.ID, "After"))
	names := func() map[string]bool {
		got := map[string]bool{}
		for _, p := range ts.pushes(ts.admin, url.Values{"appId": {app.ID}}).Items {
			got[p.Name] = true
		}
		return got
	}
	if got := names(); !got["Before"] || !got["After"] || got["Poison"] {
		t.Errorf("schedules after the park: %v, want Before and After", got)
	}
	out, err = runProjectionsCLI(t, ts.dbURL, "status")
	t.Logf("status after the park:\n%s", out)
	if err != nil || !strings.Contains(out, pos+"  push.scheduled") || !strings.Contains(out, "by tester: trigger bug, ticket 42") ||
		failing.MatchString(out) {
		t.Errorf("status after the park (%v):\n%s", err, out)
	}

	// Still broken: the replay refuses, naming the event.
	if out, err := runProjectionsCLI(t, ts.dbURL, "replay", "push", "--reason", "try"); err == nil || !strings.Contains(err.Error(), pos) {
		t.Errorf("replay with the bug still there: %v\n%s", err, out)
	}
	if _, err := ts.app.pool.Exec(ctx, `DROP TRIGGER refuse_poison ON proj_push_v1.push_schedules`); err != nil {
		t.Fatal(err)
	}
	out, err = runProjectionsCLI(t, ts.dbURL, "replay", "push", "--reason", "trigger fixed", "--by", "tester")
	if err != nil || !strings.Contains(out, "applied "+pos) {
		t.Fatalf("replay: %v\n%s", err, out)
	}
	if got := names(); !got["Poison"] {
		t.Errorf("schedules after the replay: %v, want Poison too", got)
	}
	r = ts.get("/readyz", "")
	if r.Status != 200 || strings.Contains(string(r.Body), "parked") {
		t.Errorf("/readyz after the replay: %s", r)
	}
	var parked, replayed int
	if err := ts.app.pool.QueryRow(ctx, `SELECT
		count(*) FILTER (WHERE event_type = 'operations.event_parked' AND data->>'By' = 'tester' AND data->>'Reason' = 'trigger bug, ticket 42'),
		count(*) FILTER (WHERE event_type = 'operations.parked_events_replayed' AND data->>'By' = 'tester')
		FROM events WHERE stream_id = 'projection-push'`).Scan(&parked, &replayed); err != nil {
		t.Fatal(err)
	}
	if parked != 1 || replayed != 1 {
		t.Errorf("the log has %d parking and %d replay events, want 1 and 1", parked, replayed)
	}
}
