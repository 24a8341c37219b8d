package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// auditScenario grants at t1 and revokes at t2 (admin, over HTTP) and
// returns the full history.
type auditScenario struct {
	user, app string
	full      auditReport
}

func runAuditScenario(t *testing.T, ts *testServer) auditScenario {
	t.Helper()
	u := ts.createUser("audited", nil)
	app := ts.createApp("Audit App").ID
	other := ts.createApp("Other App").ID
	ts.mustJSON(ts.grant(ts.admin, map[string]any{"user": u.ID, "app": app, "permissions": []string{"read", "write"}}), 200, nil)
	m9 := ts.createModule(ts.admin, moduleBody(other, "Audited module", fld("title", ftText)))
	ts.mustJSON(ts.grant(ts.admin, map[string]any{"user": u.ID, "app": other, "module": m9.ID, "permissions": []string{"delete"}}), 200, nil)
	time.Sleep(60 * time.Millisecond) // t1 and t2 apart, at millisecond resolution
	ts.mustJSON(ts.revoke(ts.admin, map[string]any{"user": u.ID, "app": app, "permissions": []string{"read"}}), 200, nil)
	return auditScenario{user: u.ID, app: app, full: ts.audit(ts.admin, u.ID, app, "")}
}

var uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)

func TestAuditRights(t *testing.T) {
	t.Parallel()
	ts := startServer(t)
	start := time.Now()
	sc := runAuditScenario(t, ts)
	rep := sc.full

	t.Run("history", func(t *testing.T) {
		if len(rep.Changes) != 2 {
			t.Fatalf("changes %+v, want a grant and a revoke", rep.Changes)
		}
		g, r := rep.Changes[0], rep.Changes[1]
		if g.Action != "grant" || !slices.Equal(g.Permissions, []string{"read", "write"}) || g.App != sc.app || g.Module != "" || g.Item != "" {
			t.Errorf("first change %+v, want the grant of read, write on the app", g)
		}
		if r.Action != "revoke" || !slices.Equal(r.Permissions, []string{"read"}) || r.App != sc.app {
			t.Errorf("second change %+v, want the revoke of read", r)
		}
		for _, c := range rep.Changes {
			if c.By != "user:"+ts.adminID {
				t.Errorf("change by %q, want %q", c.By, "user:"+ts.adminID)
			}
			if c.ClientIP != "127.0.0.1" {
				t.Errorf("change from %q, want 127.0.0.1", c.ClientIP)
			}
			if !uuidPattern.MatchString(c.EventID) {
				t.Errorf("eventId %q is not a UUID", c.EventID)
			}
			if c.RecordedAt < start.Add(-time.Minute).UnixMilli() || c.RecordedAt > time.Now().Add(time.Minute).UnixMilli() {
				t.Errorf("recordedAt %d is not epoch milliseconds of now", c.RecordedAt)
			}
			if c.Correlation == "" {
				t.Errorf("change without a correlation id")
			}
		}
		if g.EventID == r.EventID || g.Position >= r.Position || g.RecordedAt >= r.RecordedAt {
			t.Errorf("changes not in order: %+v", rep.Changes)
		}
		want := []rightView{{App: sc.app, Permissions: []string{"write"}}}
		if !sameRights(rep.Effective, want) {
			t.Errorf("effective now %s, want %s", rightsText(rep.Effective), rightsText(want))
		}
		if rep.User != sc.user || rep.App != sc.app || rep.At < start.UnixMilli() {
			t.Errorf("report header %+v", rep)
		}
	})

	t.Run("as of a moment between grant and revoke", func(t *testing.T) {
		ts := ts.with(t)
		if len(rep.Changes) != 2 {
			t.Skip("no history (see the history subtest)")
		}
		t1, t2 := rep.Changes[0].RecordedAt, rep.Changes[1].RecordedAt
		mid := (t1 + t2) / 2
		if mid <= t1 {
			t.Fatalf("grant and revoke recorded at %d and %d: no millisecond between them", t1, t2)
		}
		for _, at := range []string{strconv.FormatInt(mid, 10), time.UnixMilli(mid).UTC().Format(time.RFC3339Nano)} {
			got := ts.audit(ts.admin, sc.user, sc.app, at)
			if len(got.Changes) != 1 || got.Changes[0].Action != "grant" || got.Changes[0].EventID != rep.Changes[0].EventID {
				t.Errorf("at=%s: changes %+v, want only the grant", at, got.Changes)
			}
			want := []rightView{{App: sc.app, Permissions: []string{"read", "write"}}}
			if !sameRights(got.Effective, want) {
				t.Errorf("at=%s: effective %s, want %s", at, rightsText(got.Effective), rightsText(want))
			}
			if got.At != mid {
				t.Errorf("at=%s: report at %d, want %d", at, got.At, mid)
			}
		}
		// Before anything happened: nothing.
		before := ts.audit(ts.admin, sc.user, sc.app, strconv.FormatInt(t1-1000, 10))
		if len(before.Changes) != 0 || len(before.Effective) != 0 {
			t.Errorf("before the grant: %+v", before)
		}
	})

	t.Run("all apps, and the projection agrees now", func(t *testing.T) {
		ts := ts.with(t)
		all := ts.audit(ts.admin, sc.user, "", "")
		if len(all.Changes) != 3 {
			t.Errorf("all apps: %d changes, want 3", len(all.Changes))
		}
		if got := ts.rightsOf(sc.user, ""); !sameRights(got, all.Effective) {
			t.Errorf("projection says %s, the log replay %s", rightsText(got), rightsText(all.Effective))
		}
		if got := ts.rightsOf(sc.user, sc.app); !sameRights(got, rep.Effective) {
			t.Errorf("projection on the app says %s, the log replay %s", rightsText(got), rightsText(rep.Effective))
		}
	})

	t.Run("correlation id from X-Request-Id", func(t *testing.T) {
		ts := ts.with(t)
		i7 := seedScopes(ts, sc.app).id(sc.app, "i1")
		r := ts.do(request{method: "POST", path: "/api/authentication/right/grant", token: ts.admin,
			header: http.Header{"X-Request-Id": {"req-audit-42"}},
			body:   map[string]any{"user": sc.user, "app": sc.app, "item": i7, "permissions": []string{"update"}}})
		expectStatus(t, r, 200)
		if got := r.Header.Get("X-Request-Id"); got != "req-audit-42" {
			t.Errorf("X-Request-Id answered %q", got)
		}
		got := ts.audit(ts.admin, sc.user, sc.app, "")
		last := got.Changes[len(got.Changes)-1]
		if last.Item != i7 || last.Correlation != "req-audit-42" {
			t.Errorf("last change %+v, want the item grant with correlationId req-audit-42", last)
		}
	})

	t.Run("refused queries", func(t *testing.T) {
		ts := ts.with(t)
		expectHaloError(t, ts.get(auditPath("", "", ""), ts.admin), 400)
		expectHaloError(t, ts.get(auditPath(sc.user, "", "yesterday"), ts.admin), 400)
		expectHaloError(t, ts.get(auditPath(sc.user, "", ""), ""), 401)
		ts.createUser("curious", nil)
		tok := ts.login("curious", userPass)
		expectHaloError(t, ts.get(auditPath(sc.user, "", ""), tok), 403)
		expectHaloError(t, ts.get(auditPath(sc.user, sc.app, ""), tok), 403)
		expectHaloError(t, ts.get(auditPath("", sc.app, ""), tok), 403) // refused before the query's faults
		// Trailing slash.
		expectStatus(t, ts.get("/api/audit/rights/?user="+sc.user, ts.admin), 200)
	})
}

// captureStdout runs f with os.Stdout redirected and returns what it wrote.
// Only for tests that do not run in parallel.
func captureStdout(t *testing.T, f func() error) (string, error) {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	saved := os.Stdout
	os.Stdout = w
	out := make(chan []byte)
	go func() {
		b, _ := io.ReadAll(r)
		out <- b
	}()
	ferr := f()
	os.Stdout = saved
	w.Close()
	b := <-out
	r.Close()
	return string(b), ferr
}

// TestAuditCLI runs `cms audit rights` against the server's database. It
// sets the environment, so it cannot run in parallel.
func TestAuditCLI(t *testing.T) {
	ts := startServer(t)
	sc := runAuditScenario(t, ts)
	t.Setenv("DATABASE_URL", ts.dbURL)
	t.Setenv("CMS_LOG_LEVEL", "error")

	out, err := captureStdout(t, func() error { return run([]string{"audit", "rights", "--user", sc.user}) })
	if err != nil {
		t.Fatalf("cms audit rights: %v\n%s", err, out)
	}
	var grants, revokes int
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 {
			continue
		}
		switch f[1] {
		case "grant":
			grants++
		case "revoke":
			revokes++
			if !strings.Contains(line, sc.app) || !strings.Contains(line, "[read]") {
				t.Errorf("revoke line %q: want the app and [read]", line)
			}
		default:
			continue
		}
		if !strings.Contains(line, "user:"+ts.adminID) || !strings.Contains(line, "127.0.0.1") {
			t.Errorf("line %q: want by user:%s from 127.0.0.1", line, ts.adminID)
		}
	}
	if grants != 2 || revokes != 1 {
		t.Errorf("output has %d grant and %d revoke lines, want 2 and 1:\n%s", grants, revokes, out)
	}
	if !strings.Contains(out, "Effective rights:") || !strings.Contains(out, "app "+sc.app+", whole app: [write]") {
		t.Errorf("output lacks the effective rights (write on the app):\n%s", out)
	}

	// --app, --at and --json.
	mid := (sc.full.Changes[0].RecordedAt + sc.full.Changes[1].RecordedAt) / 2
	at := time.UnixMilli(mid).UTC().Format(time.RFC3339Nano)
	out, err = captureStdout(t, func() error {
		return run([]string{"audit", "rights", "--user", sc.user, "--app", sc.app, "--at", at, "--json"})
	})
	if err != nil {
		t.Fatalf("cms audit rights --json: %v\n%s", err, out)
	}
	var rep struct {
		Changes []struct {
			Action      string
			Permissions []string
			By          string
			ClientIP    string
		}
		Effective []struct {
			App         string
			Permissions []string
		}
	}
	if err := json.NewDecoder(bytes.NewReader([]byte(out))).Decode(&rep); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	if len(rep.Changes) != 1 || rep.Changes[0].Action != "grant" || rep.Changes[0].By != "user:"+ts.adminID {
		t.Errorf("--at between grant and revoke: changes %+v, want the grant only", rep.Changes)
	}
	if len(rep.Effective) != 1 || !slices.Equal(rep.Effective[0].Permissions, []string{"read", "write"}) {
		t.Errorf("--at between grant and revoke: effective %+v, want read, write", rep.Effective)
	}

	// --json prints what GET /api/audit/rights answers for the same
	// query, under the same names (eventId, recordedAt in epoch
	// milliseconds, clientIp...), not the report's Go field names.
	var cli, api any
	if err := json.Unmarshal([]byte(out), &cli); err != nil {
		t.Fatalf("--json output: %v\n%s", err, out)
	}
	ts.mustJSON(ts.get(auditPath(sc.user, sc.app, strconv.FormatInt(mid, 10)), ts.admin), 200, &api)
	if !reflect.DeepEqual(cli, api) {
		t.Errorf("cms audit rights --json printed\n%s\nwant what the API answers:\n%v", out, api)
	}

	// Refused flags.
	if _, err := captureStdout(t, func() error { return run([]string{"audit", "rights"}) }); err == nil {
		t.Errorf("audit rights without --user succeeded")
	}
	if _, err := captureStdout(t, func() error { return run([]string{"audit", "rights", "--user", sc.user, "--at", "noon"}) }); err == nil {
		t.Errorf("audit rights with a bad --at succeeded")
	}
}
