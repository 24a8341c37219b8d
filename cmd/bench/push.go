package main

// The push phase: one push to a segment of -push-devices app users,
// dispatched by the real server binary through its FCM provider to a
// local FCM endpoint served by the bench:
//
//   - a database of its own; ./cmd/cms built and started with
//     CMS_PUSH_PROVIDER=fcm, CMS_FCM_CREDENTIALS a service account key
//     made up for the run (a fresh RSA key) whose token_uri is the fake's
//     OAuth token endpoint, and CMS_FCM_ENDPOINT the fake itself, which
//     answers every messages:send with 200 and counts the tokens;
//   - -push-devices app users, each with one Android token and the tag
//     segment=bench, seeded straight into the event store (appuser.Created
//     events, 500 streams per AppendMulti, 4 loaders at a time), then
//     projected by the server (the phase waits until the read model
//     counts them all);
//   - one push to the segment (POST /api/push/schedule, filterTags
//     [{name: segment, value: bench}]); the rate is devices / (the
//     recorded_at of push.dispatched - that of push.dispatch_started), and
//     the fake must have received each token exactly once;
//   - memory: the server's peak RSS during the dispatch (VmHWM of
//     /proc/<pid>/status, reset through /proc/<pid>/clear_refs just before
//     the push) and its RSS before and after.
//
// The fake FCM runs in the bench process on the same 2 cores: it takes
// CPU from the server, so the rate is a lower bound of the server's.

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
)

// targetPushRate is the target: devices dispatched per second.
const targetPushRate = 5_000

const (
	pushSeedBatch   = 500 // app user streams per AppendMulti
	pushSeedLoaders = 4
	pushProjectWait = 10 * time.Minute
	pushDispatchMax = 10 * time.Minute
)

// fakeFCM is the local FCM endpoint: an OAuth token endpoint and
// messages:send, answering 200 and counting tokens.
type fakeFCM struct {
	srv   *httptest.Server
	sends atomic.Int64
	mu    sync.Mutex
	seen  map[string]int
}

func newFakeFCM() *fakeFCM {
	f := &fakeFCM{seen: map[string]int{}}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /token", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"access_token":"bench-token","token_type":"Bearer","expires_in":3600}`) //nolint:errcheck
	})
	mux.HandleFunc("POST /v1/projects/bench/messages:send", func(w http.ResponseWriter, r *http.Request) {
		var body struct {
			Message struct {
				Token string `json:"token"`
			} `json:"message"`
		}
		if err := json.NewDecoder(r.Body).Decode(&body); err != nil || body.Message.Token == "" {
			http.Error(w, `{"error":{"code":400,"status":"INVALID_ARGUMENT"}}`, http.StatusBadRequest)
			return
		}
		f.sends.Add(1)
		f.mu.Lock()
		f.seen[body.Message.Token]++
		f.mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"name":"projects/bench/messages/1"}`) //nolint:errcheck
	})
	f.srv = httptest.NewServer(mux)
	return f
}

// exactlyOnce counts the tokens received once, more than once, and the
// expected ones never received.
func (f *fakeFCM) exactlyOnce(tokens int) (once, twice, missing int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := 0; i < tokens; i++ {
		switch f.seen[benchToken(i)] {
		case 0:
			missing++
		case 1:
			once++
		default:
			twice++
		}
	}
	return once, twice, missing
}

// credentialsFile writes a service account key whose token_uri is the
// fake's.
func (f *fakeFCM) credentialsFile(dir string) (string, error) {
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", err
	}
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return "", err
	}
	b, err := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "bench", "private_key_id": "bench-1",
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": "push@bench.iam.gserviceaccount.com", "token_uri": f.srv.URL + "/token",
	})
	if err != nil {
		return "", err
	}
	path := filepath.Join(dir, "fcm.json")
	return path, os.WriteFile(path, b, 0o600)
}

func benchToken(i int) string {
	return fmt.Sprintf("bench-fcm-token-%08d-%s", i, strings.Repeat("x", 120))
}

func pushPhase(ctx context.Context, cfg config, serverURL string, res *results) (err error) {
	n := cfg.pushDevices
	db, err := createDatabase(ctx, serverURL)
	if err != nil {
		return err
	}
	defer func() {
		if cfg.keep {
			progressf("kept database %s", db.name)
			return
		}
		if err := db.drop(); err != nil {
			progressf("could not drop database %s: %v", db.name, err)
		}
	}()
	pool, err := db.connect(ctx, pushSeedLoaders+2)
	if err != nil {
		return err
	}
	defer pool.Close()

	fake := newFakeFCM()
	defer fake.srv.Close()
	tmp, err := os.MkdirTemp("", "cms-bench-push-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	creds, err := fake.credentialsFile(tmp)
	if err != nil {
		return err
	}
	srv, password, err := launchServer(ctx, "push", tmp, databaseURL(serverURL, db.name),
		"CMS_PUSH_PROVIDER=fcm", "CMS_FCM_CREDENTIALS="+creds, "CMS_FCM_ENDPOINT="+fake.srv.URL)
	if err != nil {
		return err
	}
	defer srv.stop()
	defer func() {
		if err != nil {
			if tail := srv.logTail(40); tail != "" {
				err = fmt.Errorf("%w\nserver log (last lines):\n%s", err, tail)
			}
		}
	}()
	pid := srv.cmd.Process.Pid

	a := newCMSAPI(srv.base, 4)
	defer a.hc.CloseIdleConnections()
	admin, app, err := a.adminApp(ctx, password, "push bench")
	if err != nil {
		return err
	}

	// Seed the segment straight into the event store.
	store := postgres.NewEventStore(pool, eventcodec.Default())
	defer store.Close()
	t0 := time.Now()
	if err := seedAppUsers(ctx, store, app.ID, n); err != nil {
		return fmt.Errorf("seed app users: %w", err)
	}
	seeded := time.Since(t0)
	progressf("push: seeded %d app users in %s (%.0f/s); waiting for the server to project them", n, seeded.Round(time.Millisecond), rate(int64(n), seeded))
	t1 := time.Now()
	if err := waitAppUsers(ctx, pool, app.ID, n); err != nil {
		return err
	}
	projected := time.Since(t1)
	progressf("push: the server projected them in %s", projected.Round(time.Millisecond))

	rssBefore, _ := procStatus(pid, "VmRSS")
	hwmBefore, _ := procStatus(pid, "VmHWM")
	resetPeak := os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil

	progressf("push: scheduling one push to the segment of %d devices; %d other active sessions on the server", n, otherSessions(ctx, pool))
	var push struct {
		ID string `json:"id"`
	}
	cpu0 := srv.cpuSeconds()
	t2 := time.Now()
	if err := a.call(ctx, http.MethodPost, "/api/push/schedule", admin, map[string]any{
		"appId": app.ID, "name": "bench push", "filterTags": []any{map[string]any{"name": "segment", "value": "bench"}},
		"payload": map[string]any{"notification": map[string]any{"title": "Bench", "body": "One push to every device"},
			"data": map[string]any{"url": "bench://push", "extra": map[string]any{"run": db.name}}},
	}, http.StatusCreated, &push); err != nil {
		return fmt.Errorf("schedule the push: %w", err)
	}
	started, finished, err := waitDispatched(ctx, pool, push.ID)
	if err != nil {
		return err
	}
	wall := time.Since(t2)
	cpu := srv.cpuSeconds() - cpu0
	peak, peakKiB := procStatus(pid, "VmHWM")
	rssAfter, _ := procStatus(pid, "VmRSS")

	once, twice, missing := fake.exactlyOnce(n)
	if once != n || fake.sends.Load() != int64(n) {
		return fmt.Errorf("the fake FCM got %d sends: %d tokens once, %d more than once, %d never (want each of %d once)",
			fake.sends.Load(), once, twice, missing, n)
	}
	took := finished.Sub(started)
	peakNote := "peak RSS during the dispatch"
	if !resetPeak {
		peakNote = "peak RSS of the whole run (clear_refs not writable)"
	}
	res.add(figure{name: fmt.Sprintf("push to %s devices, devices/s", sizeLabel(n)), value: rate(int64(n), took), unit: "devices/s",
		target: targetPushRate,
		detail: fmt.Sprintf("dispatch_started -> dispatched %s (POST -> dispatched %s), each token received once by the local FCM; "+
			"server CPU %.1fs; %s %s (RSS %s before, %s after; %s peak while seeding/projecting)",
			took.Round(time.Millisecond), wall.Round(time.Millisecond), cpu, peakNote, peak, rssBefore, rssAfter, hwmBefore)})
	res.add(figure{name: "push server peak RSS during the dispatch, MiB", value: peakKiB / 1024, unit: "MiB", decimals: 1,
		detail: fmt.Sprintf("VmHWM of pid %d; seeding %s, projecting %s", pid, seeded.Round(time.Millisecond), projected.Round(time.Millisecond))})
	return nil
}

// seedAppUsers appends n appuser.Created events (one Android token and the
// tag segment=bench each), pushSeedBatch streams per transaction.
func seedAppUsers(ctx context.Context, store *postgres.EventStore, app string, n int) error {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(pushSeedLoaders)
	for from := 0; from < n; from += pushSeedBatch {
		to := min(from+pushSeedBatch, n)
		g.Go(func() error {
			appends := make([]event.StreamAppend, 0, to-from)
			for i := from; i < to; i++ {
				id := fmt.Sprintf("benchuser%015d", i)
				evs, err := appuser.Create(appuser.AppUser{}, id, app, fmt.Sprintf("anonymous-bench%08d", i), appuser.Profile{
					Devices: []appuser.Device{{Platform: appuser.Android, Token: benchToken(i)}},
					Tags:    []appuser.Tag{{ID: "t-segment", Name: "segment", Value: "bench", TagType: appuser.UserTag}},
				}, func() string { return "t-" + strconv.Itoa(i) })
				if err != nil {
					return err
				}
				appends = append(appends, event.StreamAppend{Stream: appuser.Stream(id), ExpectedVersion: event.NoStream,
					Events: []event.Event{{Data: evs[0], Meta: event.Metadata{Actor: "system", App: app}}}})
			}
			_, err := store.AppendMulti(gctx, appends...)
			return err
		})
	}
	return g.Wait()
}

// waitAppUsers waits until the appusers read model has n app users of app.
func waitAppUsers(ctx context.Context, pool *pgxpool.Pool, app string, n int) error {
	deadline := time.Now().Add(pushProjectWait)
	last := -1
	for {
		var got int
		err := pool.QueryRow(ctx, `SELECT count(*) FROM appusers WHERE app = $1`, app).Scan(&got)
		if err == nil && got >= n {
			return nil
		}
		if err == nil && got != last {
			progressf("push: %d of %d app users projected", got, n)
			last = got
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("after %s the read model has %d of the %d app users (%v)", pushProjectWait, got, n, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Second):
		}
	}
}

// waitDispatched waits for the push's push.dispatched event and returns
// the recorded_at of its first push.dispatch_started and of it.
func waitDispatched(ctx context.Context, pool *pgxpool.Pool, id string) (started, finished time.Time, err error) {
	deadline := time.Now().Add(pushDispatchMax)
	for {
		err = pool.QueryRow(ctx, `SELECT min(recorded_at) FILTER (WHERE event_type = 'push.dispatch_started'),
			max(recorded_at) FILTER (WHERE event_type = 'push.dispatched') FROM events WHERE stream_id = $1`,
			"push-"+id).Scan(&started, &finished)
		if err == nil {
			return started, finished, nil
		}
		if time.Now().After(deadline) {
			return started, finished, fmt.Errorf("push %s not dispatched after %s", id, pushDispatchMax)
		}
		select {
		case <-ctx.Done():
			return started, finished, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// procStatus returns a "kB" field of /proc/<pid>/status, as "123.4 MiB".
func procStatus(pid int, field string) (string, float64) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return "?", 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, field+":"); ok {
			kib, err := strconv.ParseFloat(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 64)
			if err != nil {
				return "?", 0
			}
			return fmt.Sprintf("%.1f MiB", kib/1024), kib
		}
	}
	return "?", 0
}
