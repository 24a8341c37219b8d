package push

import (
	"context"
	crand "crypto/rand"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/push"
)

// Sender sends one message to one device through a provider (FCM, APNs,
// the development log).
type Sender interface {
	Send(ctx context.Context, m push.Message) push.Result
}

// Locker claims a schedule for one dispatcher at a time, across
// processes. A claim ends with release, or when the process dies.
type Locker interface {
	TryLock(ctx context.Context, key string) (release func(), ok bool, err error)
}

// DueSchedules lists the schedules a dispatcher should work on at now
// (the read model; it may lag the log).
type DueSchedules interface {
	Due(ctx context.Context, now time.Time, limit int) ([]string, error)
}

// DispatcherConfig tunes a Dispatcher; zero fields take the defaults.
type DispatcherConfig struct {
	// ID names the dispatcher in DispatchStarted (default: host name, pid
	// and six random base32 characters).
	ID string
	// Poll is how often the dispatcher looks for due schedules (1s).
	Poll time.Duration
	// ChunkSize is the number of devices sent, then recorded in one
	// DeliveriesRecorded event (1000). After a crash at most one chunk
	// can be sent twice.
	ChunkSize int
	// Workers bounds the concurrent Send calls of one schedule (64).
	Workers int
	// Concurrency bounds the schedules one dispatcher sends at once (2).
	Concurrency int
	// MaxAttempts bounds the attempts per device on Retry outcomes (5);
	// then the delivery is recorded as failed.
	MaxAttempts int
	// BackoffMin and BackoffMax bound the exponential, jittered wait
	// between attempts (250ms, 30s). A provider's RetryAfter is honoured
	// up to MaxRetryAfter (5m).
	BackoffMin, BackoffMax, MaxRetryAfter time.Duration
	// SendTimeout bounds one Send call (30s).
	SendTimeout time.Duration
	Log         *slog.Logger
	Now         func() time.Time
}

func (c DispatcherConfig) withDefaults() DispatcherConfig {
	if c.ID == "" {
		host, _ := os.Hostname()
		c.ID = fmt.Sprintf("%s-%d-%s", host, os.Getpid(), crand.Text()[:6])
	}
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	defd := func(v *time.Duration, d time.Duration) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&c.ChunkSize, 1000)
	def(&c.Workers, 64)
	def(&c.Concurrency, 2)
	def(&c.MaxAttempts, 5)
	defd(&c.Poll, time.Second)
	defd(&c.BackoffMin, 250*time.Millisecond)
	defd(&c.BackoffMax, 30*time.Second)
	defd(&c.MaxRetryAfter, 5*time.Minute)
	defd(&c.SendTimeout, 30*time.Second)
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	return c
}

// Dispatcher sends each due push exactly once.
//
// Claim: a dispatcher works on a schedule only while it holds the
// schedule's lock (its Locker; cmd/cms gives it PostgreSQL session-level
// advisory locks, released if the process dies), and fences every write with the stream version it
// read: DispatchStarted and each DeliveriesRecorded are appended with the
// expected version, so a second dispatcher that somehow got there too
// appends nothing and stops.
//
// Progress: the audience is read in device-key order and sent chunk by
// chunk (up to Workers concurrent Send calls per chunk); each chunk's
// results are appended as one DeliveriesRecorded before the next chunk is
// sent. A dispatch that starts again (another process, a restart) reads
// the stream and continues after the last recorded device.
//
// Stopping: when Run's context ends, the Send calls in flight finish, the
// chunk is recorded (devices not sent yet, or waiting to retry, are
// recorded as pending and sent first when the dispatch resumes) and Run
// returns. So a graceful stop re-sends nothing. After a hard crash the one
// chunk sent but not recorded is sent again when the dispatch resumes: the
// providers take no idempotency key, so that window of at-least-once
// delivery cannot be closed.
type Dispatcher struct {
	store    commands.EventStore
	due      DueSchedules
	audience Audience
	tokens   Tokens
	sender   Sender
	locks    Locker
	cfg      DispatcherConfig
	nudge    chan struct{}

	mu       sync.Mutex
	inflight map[string]bool
	// finished remembers the schedules this dispatcher finished lately,
	// until the read model stops listing them as due: no need to load
	// their (large) streams again to find out.
	finished map[string]time.Time
	// elsewhere remembers when another process held a schedule's lock,
	// so that the next polls give the slots to other due schedules.
	elsewhere map[string]time.Time
}

// NewDispatcher wires a dispatcher; every dependency is required.
func NewDispatcher(store commands.EventStore, due DueSchedules, audience Audience, tokens Tokens, sender Sender,
	locks Locker, cfg DispatcherConfig) *Dispatcher {
	if store == nil || due == nil || audience == nil || tokens == nil || sender == nil || locks == nil {
		panic("push.NewDispatcher: nil dependency")
	}
	return &Dispatcher{store: store, due: due, audience: audience, tokens: tokens, sender: sender, locks: locks,
		cfg: cfg.withDefaults(), nudge: make(chan struct{}, 1), inflight: map[string]bool{},
		finished: map[string]time.Time{}, elsewhere: map[string]time.Time{}}
}

// ID is the dispatcher's name in the events it writes.
func (d *Dispatcher) ID() string { return d.cfg.ID }

// Nudge makes Run look for due schedules now instead of at its next poll.
func (d *Dispatcher) Nudge() {
	select {
	case d.nudge <- struct{}{}:
	default:
	}
}

// Run dispatches due schedules until ctx ends, then lets the dispatches in
// progress record what they sent and returns.
func (d *Dispatcher) Run(ctx context.Context) {
	slots := make(chan struct{}, d.cfg.Concurrency)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		ids, err := d.due.Due(ctx, d.cfg.Now(), 100)
		if err != nil && ctx.Err() == nil {
			d.cfg.Log.Warn("push dispatcher: listing due schedules failed", "err", err)
		}
	start:
		for _, id := range ids {
			if d.busy(id) {
				continue
			}
			select {
			case slots <- struct{}{}:
			default:
				break start // every slot busy: the rest waits for the next round
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer func() { <-slots }()
				claimed, err := d.Dispatch(ctx, id)
				if !claimed && err == nil {
					d.mu.Lock()
					d.elsewhere[id] = time.Now()
					d.mu.Unlock()
				}
				if err != nil {
					d.cfg.Log.Error("push dispatch failed; it resumes at the next poll", "schedule", id, "err", err)
				} else if claimed && d.recentlyDone(id) {
					d.Nudge() // sent, and a slot is free: look again now
				}
			}()
		}
		t := time.NewTimer(d.cfg.Poll)
		select {
		case <-ctx.Done():
			t.Stop()
			return
		case <-t.C:
		case <-d.nudge:
			t.Stop()
		}
	}
}

// busy reports whether the dispatcher is sending id, or found it done
// in the last minute.
func (d *Dispatcher) busy(id string) bool {
	d.mu.Lock()
	inflight := d.inflight[id]
	at, held := d.elsewhere[id]
	if held && time.Since(at) > 10*d.cfg.Poll {
		delete(d.elsewhere, id)
		held = false
	}
	d.mu.Unlock()
	return inflight || held || d.recentlyDone(id)
}

// recentlyDone reports whether the dispatcher sent id, or found it sent or
// cancelled, in the last minute.
func (d *Dispatcher) recentlyDone(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	for k, at := range d.finished {
		if time.Since(at) > time.Minute {
			delete(d.finished, k)
		}
	}
	_, ok := d.finished[id]
	return ok
}

// done remembers that id needs no dispatch any more.
func (d *Dispatcher) done(id string) {
	d.mu.Lock()
	d.finished[id] = time.Now()
	d.mu.Unlock()
}

// claimLocal keeps two goroutines of this dispatcher off one schedule
// (its lock is re-entrant within the process's session).
func (d *Dispatcher) claimLocal(id string) bool {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.inflight[id] {
		return false
	}
	d.inflight[id] = true
	return true
}

func (d *Dispatcher) releaseLocal(id string) {
	d.mu.Lock()
	delete(d.inflight, id)
	d.mu.Unlock()
}

// LockKey is the advisory-lock key of a schedule's dispatch.
func LockKey(id string) string { return "cms.push.dispatch:" + id }

// errFenced: the stream moved on under the dispatcher (another one
// recorded first).
var errFenced = errors.New("another dispatcher wrote to the schedule")

// Dispatch sends schedule id if it is due and the dispatcher can claim it;
// claimed reports whether it could. When ctx ends it stops after
// recording the chunk in flight; the next Dispatch resumes.
func (d *Dispatcher) Dispatch(ctx context.Context, id string) (claimed bool, err error) {
	if !d.claimLocal(id) {
		return false, nil
	}
	defer d.releaseLocal(id)
	release, ok, err := d.locks.TryLock(ctx, LockKey(id))
	if err != nil || !ok {
		return false, err
	}
	defer release()
	err = d.dispatch(ctx, id)
	if errors.Is(err, errFenced) {
		d.cfg.Log.Warn("push dispatch stopped: another dispatcher wrote to the schedule", "schedule", id, "dispatcher", d.cfg.ID)
		return true, nil
	}
	return true, err
}

// run is the state of one dispatch.
type run struct {
	d       *Dispatcher
	stop    context.Context // ends: finish the chunk, record, return
	work    context.Context // sends and appends (survives stop)
	sc      push.Schedule
	version int64
	started time.Time
	devices int
}

func (d *Dispatcher) dispatch(ctx context.Context, id string) error {
	work := access.WithActor(context.WithoutCancel(ctx), access.SystemActor)
	sc, version, err := commands.Load(work, d.store, push.Stream(id), push.Schedule{ID: id}, apply)
	if err != nil {
		return err
	}
	now := d.cfg.Now()
	if !sc.Exists() || sc.Status == push.StatusDispatched || sc.Status == push.StatusCancelled {
		d.done(id) // the read model is behind: skip it for a while
		return nil
	}
	if !sc.Due(now) || ctx.Err() != nil {
		return nil // not due yet (edited to a later time), or stopping
	}
	r := &run{d: d, stop: ctx, work: work, sc: sc, version: version, started: time.Now()}
	evs, err := sc.StartDispatch(d.cfg.ID, now)
	if err != nil {
		return err
	}
	if err := r.append(evs); err != nil {
		return err
	}
	d.cfg.Log.Info("push dispatch started", "schedule", id, "app", sc.App, "dispatcher", d.cfg.ID,
		"resumed", evs[0].(push.DispatchStarted).Resumed, "pending", len(sc.Pending), "sent_before", sc.Sent+sc.Failed+sc.Invalid)
	// Devices left pending by an interrupted dispatch go first.
	for len(r.sc.Pending) > 0 && ctx.Err() == nil {
		batch := r.sc.Pending[:min(len(r.sc.Pending), d.cfg.ChunkSize)]
		devs, attempts := make([]push.Device, len(batch)), make([]int, len(batch))
		for i, p := range batch {
			devs[i], attempts[i] = p.Device(), p.Attempts
		}
		if err := r.sendAndRecord(devs, attempts); err != nil {
			return err
		}
	}
	if ctx.Err() == nil {
		if err := r.audience(); err != nil {
			return err
		}
	}
	if ctx.Err() != nil {
		d.cfg.Log.Info("push dispatch interrupted; it resumes after the last recorded device", "schedule", id,
			"devices", r.devices, "pending", len(r.sc.Pending))
		return nil
	}
	if evs, err = r.sc.Finish(); err != nil {
		return err
	}
	if err := r.append(evs); err != nil {
		return err
	}
	d.done(id)
	took := time.Since(r.started)
	d.cfg.Log.Info("push dispatched", "schedule", id, "app", sc.App, "sent", r.sc.Sent, "failed", r.sc.Failed,
		"invalid", r.sc.Invalid, "devices_this_run", r.devices, "took", took.Round(time.Millisecond))
	return nil
}

// append writes events with the version read; a conflict means another
// dispatcher wrote: errFenced.
func (r *run) append(evs []any) error {
	if len(evs) == 0 {
		return nil
	}
	res, err := r.d.store.Append(r.work, push.Stream(r.sc.ID), r.version,
		commands.WithApp(commands.Wrap(r.work, evs...), r.sc.App)...)
	if errors.Is(err, event.ErrVersionConflict) {
		return errFenced
	}
	if err != nil {
		return fmt.Errorf("append %s: %w", push.Stream(r.sc.ID), err)
	}
	r.version = res.Version
	for _, e := range evs {
		r.sc = r.sc.Apply(e)
	}
	return nil
}

// audience streams the devices after the last recorded one and sends
// them chunk by chunk, reading the next chunk while one is sent.
func (r *run) audience() error {
	size := r.d.cfg.ChunkSize
	pctx, cancel := context.WithCancel(r.work)
	ch := make(chan push.Device, size)
	errc := make(chan error, 1)
	go func() {
		defer close(ch)
		errc <- r.d.audience.Devices(pctx, r.sc.App, r.sc.Target, r.sc.Last, func(dv push.Device) error {
			select {
			case ch <- dv:
				return nil
			case <-pctx.Done():
				return pctx.Err()
			}
		})
	}()
	defer func() {
		cancel()
		for range ch { //nolint:revive // drain: let the producer end
		}
	}()
	last := r.sc.Last
	for r.stop.Err() == nil {
		chunk := make([]push.Device, 0, size)
		for dv := range ch {
			k := dv.Key()
			if !last.Less(k) {
				r.d.cfg.Log.Warn("push audience out of order: device skipped", "schedule", r.sc.ID, "app_user", dv.AppUserID)
				continue
			}
			last = k
			if chunk = append(chunk, dv); len(chunk) == size {
				break
			}
		}
		if len(chunk) == 0 {
			break
		}
		if err := r.sendAndRecord(chunk, nil); err != nil {
			return err
		}
	}
	if r.stop.Err() != nil {
		return nil
	}
	if err := <-errc; err != nil {
		return fmt.Errorf("push audience of %s: %w", r.sc.ID, err)
	}
	return nil
}

// sendAndRecord sends a chunk and appends its deliveries.
func (r *run) sendAndRecord(devs []push.Device, attempts []int) error {
	ds := r.send(devs, attempts)
	evs, err := r.sc.Record(ds)
	if err != nil {
		return err
	}
	r.devices += len(devs)
	return r.append(evs)
}

// send delivers a chunk with up to Workers concurrent Send calls; the
// result is in the chunk's order. Once stop ends, devices not started are
// left pending.
func (r *run) send(devs []push.Device, attempts []int) []push.Delivery {
	out := make([]push.Delivery, len(devs))
	var next atomic.Int64
	var wg sync.WaitGroup
	for w := 0; w < min(r.d.cfg.Workers, len(devs)); w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := int(next.Add(1) - 1)
				if i >= len(devs) {
					return
				}
				prior := 0
				if attempts != nil {
					prior = attempts[i]
				}
				out[i] = r.deliver(devs[i], prior)
			}
		}()
	}
	wg.Wait()
	return out
}

// deliver sends to one device until a final outcome, retrying Retry
// outcomes with backoff up to MaxAttempts in all; an invalid token is
// removed from its app user.
func (r *run) deliver(dv push.Device, attempts int) push.Delivery {
	d := r.d
	out := push.Delivery{AppUserID: dv.AppUserID, Alias: dv.Alias, Platform: dv.Platform, Token: dv.Token,
		Outcome: push.Retry, Reason: "not sent yet", Attempts: attempts}
	msg := push.Message{ScheduleID: r.sc.ID, Device: dv, Notification: r.sc.Notification}
	for r.stop.Err() == nil {
		ctx, cancel := context.WithTimeout(r.work, d.cfg.SendTimeout)
		res := d.sender.Send(ctx, msg)
		cancel()
		out.Attempts++
		out.Outcome, out.Reason = res.Outcome, res.Reason
		switch res.Outcome {
		case push.Delivered, push.Failed:
			return out
		case push.InvalidToken:
			if err := d.tokens.RemoveToken(r.work, r.sc.App, dv.AppUserID, dv.Token); err != nil {
				d.cfg.Log.Warn("push: removing an invalid token failed", "app", r.sc.App, "app_user", dv.AppUserID, "err", err)
			}
			return out
		case push.Retry:
			if out.Attempts >= d.cfg.MaxAttempts {
				out.Outcome, out.Reason = push.Failed, fmt.Sprintf("gave up after %d attempts: %s", out.Attempts, res.Reason)
				return out
			}
			t := time.NewTimer(d.backoff(out.Attempts, res.RetryAfter))
			select {
			case <-t.C:
			case <-r.stop.Done():
				t.Stop()
			}
		default:
			out.Outcome, out.Reason = push.Failed, fmt.Sprintf("the provider answered an unknown outcome %d: %s", int(res.Outcome), res.Reason)
			return out
		}
	}
	out.Outcome = push.Retry // stopping: pending, sent when the dispatch resumes
	return out
}

// backoff is the wait before attempt n+1: exponential from BackoffMin,
// capped at BackoffMax, jittered down to half; at least the provider's
// RetryAfter (capped at MaxRetryAfter).
func (d *Dispatcher) backoff(n int, retryAfter time.Duration) time.Duration {
	b := d.cfg.BackoffMax
	if n < 30 {
		if e := d.cfg.BackoffMin << (n - 1); e > 0 && e < b {
			b = e
		}
	}
	b = b/2 + rand.N(b/2+1)
	if retryAfter > b {
		b = min(retryAfter, d.cfg.MaxRetryAfter)
	}
	return b
}
