package projection

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
)

// Status describes one projection, for `cms projections status`.
type Status struct {
	Name string
	// Registered is false for a checkpoint row no projector of this
	// program claims (a removed projection).
	Registered bool
	// Version is the version readers read and live runners write.
	Version    int
	Checkpoint event.Position
	UpdatedAt  time.Time
	// LagEvents counts the committed, readable events after the checkpoint.
	LagEvents int64
	// LagSeconds is the age of the oldest of those events (0 when caught
	// up).
	LagSeconds float64
	// Rebuild is set while a rebuild (in any process) fills a new version,
	// or if one was interrupted.
	Rebuild *RebuildStatus
	// Runner is this process's live runner of the projection, if any.
	Runner *Health
	// Failure, Outdated and Parked are filled by FullStatus only.
	//
	// Failure is the last failure of its live runners (any process) while
	// it still stands where it failed; nil when none is recorded.
	Failure *Failure
	// Outdated says why the live version cannot take the projector's
	// writes (its runners wait for a rebuild); "" when it can.
	Outdated string
	// Parked lists the events parked for it, in log order.
	Parked []Parked
}

// RebuildStatus is the progress of a rebuild.
type RebuildStatus struct {
	Version    int
	Checkpoint event.Position
	UpdatedAt  time.Time
}

// Health describes a live runner of this process.
type Health struct {
	Name  string
	State string // StateStarting, StateRunning, StateBackoff, StateStopped
	Since time.Time
	// LastActivity is the end of the last query or message; LastBatch the
	// commit of the last non-empty batch.
	LastActivity time.Time
	LastBatch    time.Time
	// Failures counts consecutive failed batches; LastError is the latest.
	Failures  int
	LastError string
	ErrorAt   time.Time
	// FailingEvent is the event the last error is about, when the runner
	// found it.
	FailingEvent *event.Position
}

// Status reports every registered projection (and any other checkpoint
// row), with its lag. Counting the lag reads the unprocessed part of the
// log, so it costs time proportional to the lag.
func (rt *Runtime) Status(ctx context.Context) ([]Status, error) {
	rows, err := rt.pool.Query(ctx, `SELECT name, version, tx_id::text::bigint, position, updated_at FROM projection_checkpoints`)
	if err != nil {
		return nil, fmt.Errorf("projection status: %w", err)
	}
	byName := map[string]*Status{}
	type rb struct {
		name string
		st   RebuildStatus
	}
	var rebuilds []rb
	for rows.Next() {
		var (
			name    string
			version int
			tx, pos int64
			at      time.Time
		)
		if err := rows.Scan(&name, &version, &tx, &pos, &at); err != nil {
			rows.Close()
			return nil, err
		}
		cp := event.Position{TxID: uint64(tx), Pos: pos}
		if base, ok := strings.CutSuffix(name, "@rebuild"); ok {
			rebuilds = append(rebuilds, rb{base, RebuildStatus{Version: version, Checkpoint: cp, UpdatedAt: at}})
			continue
		}
		byName[name] = &Status{Name: name, Version: version, Checkpoint: cp, UpdatedAt: at}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, r := range rebuilds {
		if s, ok := byName[r.name]; ok {
			st := r.st
			s.Rebuild = &st
		}
	}
	var out []Status
	for _, p := range rt.projs {
		s, ok := byName[p.Name()]
		if !ok {
			s = &Status{Name: p.Name()}
		}
		s.Registered = true
		delete(byName, p.Name())
		out = append(out, *s)
	}
	var others []string
	for n := range byName {
		others = append(others, n)
	}
	sort.Strings(others)
	for _, n := range others {
		out = append(out, *byName[n])
	}
	health := map[string]Health{}
	for _, h := range rt.Health() {
		health[h.Name] = h
	}
	for i := range out {
		s := &out[i]
		if h, ok := health[s.Name]; ok {
			s.Runner = &h
		}
		var lagSeconds *float64
		if err := rt.pool.QueryRow(ctx, `SELECT count(*), extract(epoch FROM now() - min(recorded_at))::float8 FROM events
			WHERE (transaction_id, global_position) > ($1::text::xid8, $2)
			  AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())`,
			fmt.Sprint(s.Checkpoint.TxID), s.Checkpoint.Pos).Scan(&s.LagEvents, &lagSeconds); err != nil {
			return nil, fmt.Errorf("projection %s lag: %w", s.Name, err)
		}
		if lagSeconds != nil && *lagSeconds > 0 {
			s.LagSeconds = *lagSeconds
		}
	}
	return out, nil
}

// FullStatus is Status with what operators need to know beyond lags
// (for `cms projections status`): each projection's last failure,
// whether it waits for a rebuild, and the events parked for it. It costs
// a few queries per projection more than Status (which /metrics runs).
func (rt *Runtime) FullStatus(ctx context.Context) ([]Status, error) {
	out, err := rt.Status(ctx)
	if err != nil {
		return nil, err
	}
	failures, err := rt.failures(ctx)
	if err != nil {
		return nil, err
	}
	parked, err := rt.ListParked(ctx, "")
	if err != nil {
		return nil, err
	}
	for i := range out {
		s := &out[i]
		s.Failure = failures[s.Name]
		for _, pk := range parked {
			if pk.Projection == s.Name {
				s.Parked = append(s.Parked, pk)
			}
		}
		if p, ok := rt.byName[s.Name]; ok && !s.UpdatedAt.IsZero() {
			if s.Outdated, err = rt.outdatedVersion(ctx, p); err != nil {
				return nil, fmt.Errorf("projection %s: %w", s.Name, err)
			}
		}
	}
	return out, nil
}

// ParkedCounts counts the events parked per projection (/metrics).
func (rt *Runtime) ParkedCounts(ctx context.Context) (map[string]int, error) {
	rows, err := rt.pool.Query(ctx, `SELECT projection, count(*) FROM projection_parked GROUP BY projection`)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	var name string
	var n int
	_, err = pgx.ForEachRow(rows, []any{&name, &n}, func() error { out[name] = n; return nil })
	return out, err
}

// Health reports this process's live runners, in registration order
// (empty before Start).
func (rt *Runtime) Health() []Health {
	rt.mu.Lock()
	defer rt.mu.Unlock()
	var out []Health
	for _, p := range rt.projs {
		r, ok := rt.runners[p.Name()]
		if !ok {
			continue
		}
		r.mu.Lock()
		h := Health{Name: r.name, State: r.state, Since: r.since, LastActivity: r.lastActivity,
			LastBatch: r.lastBatch, Failures: r.failures, ErrorAt: r.lastErrAt, FailingEvent: r.failingEvent}
		if r.lastErr != nil {
			h.LastError = r.lastErr.Error()
		}
		r.mu.Unlock()
		out = append(out, h)
	}
	return out
}

// StuckAfter is how long a running runner may go without any activity
// (a query ending or a message arriving) before Ready reports it stuck.
const StuckAfter = 30 * time.Second

// Ready returns nil when the runtime is started and every runner is
// subscribed and alive (for /readyz); otherwise an error naming the runners
// that are not.
func (rt *Runtime) Ready() error {
	rt.mu.Lock()
	started := len(rt.runners) == len(rt.projs)
	rt.mu.Unlock()
	if !started {
		return errors.New("projections: not started")
	}
	var bad []string
	now := time.Now()
	for _, h := range rt.Health() {
		switch {
		case h.State != StateRunning:
			msg := h.Name + ": " + h.State
			if h.LastError != "" {
				msg += " (" + h.LastError + ")"
			}
			bad = append(bad, msg)
		case h.Failures > 0:
			bad = append(bad, fmt.Sprintf("%s: failing (%d in a row: %s)", h.Name, h.Failures, h.LastError))
		case now.Sub(h.LastActivity) > StuckAfter:
			bad = append(bad, fmt.Sprintf("%s: no activity for %s", h.Name, now.Sub(h.LastActivity).Round(time.Second)))
		}
	}
	if len(bad) > 0 {
		return errors.New("projections: " + strings.Join(bad, "; "))
	}
	return nil
}

// FailingEvents names, per projection whose runner in this process
// fails, the event it fails on ("TX/POS"), when the runner found it.
func (rt *Runtime) FailingEvents() map[string]string {
	out := map[string]string{}
	for _, h := range rt.Health() {
		if h.Failures > 0 && h.FailingEvent != nil {
			out[h.Name] = h.FailingEvent.String()
		}
	}
	return out
}

// maxParkedShown bounds the parked events ParkedSummary lists.
const maxParkedShown = 100

// ParkedSummary lists the positions of the events parked per projection
// (at most 100 in all), for /readyz: a projection that goes on past
// parked events is ready, and says so.
func (rt *Runtime) ParkedSummary(ctx context.Context) (map[string][]string, error) {
	parked, err := listParked(ctx, rt.pool, "", maxParkedShown)
	if err != nil || len(parked) == 0 {
		return nil, err
	}
	out := map[string][]string{}
	for _, p := range parked {
		out[p.Projection] = append(out[p.Projection], p.Position.String())
	}
	return out, nil
}
