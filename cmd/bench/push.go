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
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
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

func pushPhase(ctx context.Context, cfg config, serverURL string, res *results) (err error) {
	n := cfg.pushDevices
	fake := newFakeFCM()
	defer fake.srv.Close()
	p, err := openServerPhase(ctx, cfg, serverURL, pushSeedLoaders+2)
	if err != nil {
		return err
	}
	defer p.close(&err)
	if err := p.makeDir("cms-bench-push-"); err != nil {
		return err
	}
	creds, err := fake.credentialsFile(p.dir)
	if err != nil {
		return err
	}
	if err := p.launch(ctx, "push", "CMS_PUSH_PROVIDER=fcm", "CMS_FCM_CREDENTIALS="+creds, "CMS_FCM_ENDPOINT="+fake.srv.URL); err != nil {
		return err
	}
	if err := p.signIn(ctx, 4, "push bench"); err != nil {
		return err
	}
	store := postgres.NewEventStore(p.pool, eventcodec.Default())
	defer store.Close()
	seg, err := seedSegment(ctx, store, p.pool, p.app.ID, n)
	if err != nil {
		return err
	}
	d, err := dispatch(ctx, p, n)
	if err != nil {
		return err
	}
	once, twice, missing := fake.exactlyOnce(n)
	if once != n || fake.sends.Load() != int64(n) {
		return fmt.Errorf("the fake FCM got %d sends: %d tokens once, %d more than once, %d never (want each of %d once)",
			fake.sends.Load(), once, twice, missing, n)
	}
	d.report(res, n, p.srv.cmd.Process.Pid, seg)
	return nil
}

// segmentTimes is how long the segment took to seed into the event store
// and for the server to project.
type segmentTimes struct{ seeded, projected time.Duration }

// seedSegment seeds n app users of app into the store and waits until
// the server has projected them.
func seedSegment(ctx context.Context, store *postgres.EventStore, pool *pgxpool.Pool, app string, n int) (segmentTimes, error) {
	var t segmentTimes
	t0 := time.Now()
	if err := seedAppUsers(ctx, store, app, n); err != nil {
		return t, fmt.Errorf("seed app users: %w", err)
	}
	t.seeded = time.Since(t0)
	progressf("push: seeded %d app users in %s (%.0f/s); waiting for the server to project them", n, t.seeded.Round(time.Millisecond), rate(int64(n), t.seeded))
	t1 := time.Now()
	if err := waitAppUsers(ctx, pool, app, n); err != nil {
		return t, err
	}
	t.projected = time.Since(t1)
	progressf("push: the server projected them in %s", t.projected.Round(time.Millisecond))
	return t, nil
}

// pushDispatch is what the dispatch of the push took: time, the server's
// CPU and its memory (RSS and peak RSS, as /proc/<pid>/status tells them).
type pushDispatch struct {
	took, wall           time.Duration // push.dispatch_started -> push.dispatched; POST -> push.dispatched
	cpu                  float64       // seconds
	resetPeak            bool          // whether the peak was reset before the push
	rssBefore, hwmBefore string
	peak, rssAfter       string
	peakKiB              float64
}

// dispatch schedules one push to the segment of n devices and waits until
// the server has dispatched it, watching its CPU and memory.
func dispatch(ctx context.Context, p *serverPhase, n int) (pushDispatch, error) {
	var d pushDispatch
	pid := p.srv.cmd.Process.Pid
	d.rssBefore, _ = procStatus(pid, "VmRSS")
	d.hwmBefore, _ = procStatus(pid, "VmHWM")
	d.resetPeak = os.WriteFile(fmt.Sprintf("/proc/%d/clear_refs", pid), []byte("5"), 0) == nil

	progressf("push: scheduling one push to the segment of %d devices; %d other active sessions on the server", n, otherSessions(ctx, p.pool))
	var push struct {
		ID string `json:"id"`
	}
	cpu0 := p.srv.cpuSeconds()
	t2 := time.Now()
	if err := p.api.call(ctx, http.MethodPost, "/api/push/schedule", p.admin, map[string]any{
		"appId": p.app.ID, "name": "bench push", "filterTags": []any{map[string]any{"name": "segment", "value": "bench"}},
		"payload": map[string]any{"notification": map[string]any{"title": "Bench", "body": "One push to every device"},
			"data": map[string]any{"url": "bench://push", "extra": map[string]any{"run": p.db.name}}},
	}, http.StatusCreated, &push); err != nil {
		return d, fmt.Errorf("schedule the push: %w", err)
	}
	started, finished, err := waitDispatched(ctx, p.pool, push.ID)
	if err != nil {
		return d, err
	}
	d.wall = time.Since(t2)
	d.cpu = p.srv.cpuSeconds() - cpu0
	d.peak, d.peakKiB = procStatus(pid, "VmHWM")
	d.rssAfter, _ = procStatus(pid, "VmRSS")
	d.took = finished.Sub(started)
	return d, nil
}

// report adds the push's figures: the rate and the server's peak RSS.
func (d pushDispatch) report(res *results, n, pid int, seg segmentTimes) {
	peakNote := "peak RSS during the dispatch"
	if !d.resetPeak {
		peakNote = "peak RSS of the whole run (clear_refs not writable)"
	}
	res.add(figure{name: fmt.Sprintf("push to %s devices, devices/s", sizeLabel(n)), value: rate(int64(n), d.took), unit: "devices/s",
		target: targetPushRate,
		detail: fmt.Sprintf("dispatch_started -> dispatched %s (POST -> dispatched %s), each token received once by the local FCM; "+
			"server CPU %.1fs; %s %s (RSS %s before, %s after; %s peak while seeding/projecting)",
			d.took.Round(time.Millisecond), d.wall.Round(time.Millisecond), d.cpu, peakNote, d.peak, d.rssBefore, d.rssAfter, d.hwmBefore)})
	res.add(figure{name: "push server peak RSS during the dispatch, MiB", value: d.peakKiB / 1024, unit: "MiB", decimals: 1,
		detail: fmt.Sprintf("VmHWM of pid %d; seeding %s, projecting %s", pid, seg.seeded.Round(time.Millisecond), seg.projected.Round(time.Millisecond))})
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
