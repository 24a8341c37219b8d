package push_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/memstore"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/commands"
	cmdpush "github.com/halocms/halocms/commands/push"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/push"
	projpush "github.com/halocms/halocms/projections/push"
	rmpush "github.com/halocms/halocms/readmodels/push"
	rmrights "github.com/halocms/halocms/readmodels/rights"
)

// ---- ports: a small in-test audience and token store, a counting sender
// (PostgreSQL, the event store and the locks are real) ----

// audience holds devices in push.DeviceKey order.
type audience struct {
	devices []push.Device
	known   map[string]bool // aliases
}

func newAudience(n int) *audience {
	a := &audience{known: map[string]bool{}}
	for i := 0; i < n; i++ {
		d := push.Device{AppUserID: fmt.Sprintf("u%06d", i), Alias: fmt.Sprintf("alias-%06d", i), Platform: push.Android,
			Token: fmt.Sprintf("tok-%06d", i)}
		if i%7 == 3 { // some app users have a second device
			a.devices = append(a.devices, d)
			d.Token, d.Platform = d.Token+"-ios", push.IOS
		}
		a.devices = append(a.devices, d)
		a.known[d.Alias] = true
	}
	sort.Slice(a.devices, func(i, j int) bool { return a.devices[i].Key().Less(a.devices[j].Key()) })
	return a
}

func (a *audience) Devices(ctx context.Context, app string, t push.Target, after push.DeviceKey, fn func(push.Device) error) error {
	for _, d := range a.devices {
		if err := ctx.Err(); err != nil {
			return err
		}
		if after.Less(d.Key()) {
			if err := fn(d); err != nil {
				return err
			}
		}
	}
	return nil
}

func (a *audience) UnknownAliases(ctx context.Context, app string, aliases []string) ([]string, error) {
	var out []string
	for _, al := range aliases {
		if !a.known[al] {
			out = append(out, al)
		}
	}
	return out, nil
}

func (a *audience) UnknownIdentified(ctx context.Context, app string, ids []string) ([]string, error) {
	return ids, nil
}

type tokens struct {
	mu      sync.Mutex
	removed []string
}

func (t *tokens) RemoveToken(ctx context.Context, app, appUserID, token string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.removed = append(t.removed, app+"/"+appUserID+"/"+token)
	return nil
}

// sender counts what it delivers per token; script, if set, decides the
// outcome of each attempt.
type sender struct {
	mu        sync.Mutex
	delivered map[string]int
	attempts  map[string][]time.Time
	total     atomic.Int64
	script    func(token string, attempt int) push.Result
	afterSend func(n int64)
	delay     time.Duration
}

func newSender() *sender {
	return &sender{delivered: map[string]int{}, attempts: map[string][]time.Time{}}
}

func (s *sender) Send(ctx context.Context, m push.Message) push.Result {
	if s.delay > 0 {
		time.Sleep(s.delay)
	}
	tok := m.Device.Token
	s.mu.Lock()
	s.attempts[tok] = append(s.attempts[tok], time.Now())
	n := len(s.attempts[tok])
	s.mu.Unlock()
	res := push.Result{Outcome: push.Delivered}
	if s.script != nil {
		res = s.script(tok, n)
	}
	if res.Outcome == push.Delivered {
		s.mu.Lock()
		s.delivered[tok]++
		s.mu.Unlock()
	}
	if total := s.total.Add(1); s.afterSend != nil {
		s.afterSend(total)
	}
	return res
}

func (s *sender) count(tok string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delivered[tok]
}

// ---- set-up ----

// env is the event store the dispatchers share: the real one (newEnv),
// whose pool also holds the dispatchers' locks, or the in-memory one
// (newMemEnv), for the tests of what the dispatchers decide and record.
type env struct {
	pool  *pgxpool.Pool        // nil over the in-memory store
	pg    *postgres.EventStore // nil over the in-memory store
	store commands.EventStore
}

func newEnv(t *testing.T) env {
	t.Helper()
	pool := pgtest.Pool(t)
	store := postgres.NewEventStore(pool, eventcodec.Default())
	t.Cleanup(store.Close)
	return env{pool: pool, pg: store, store: store}
}

// newMemEnv is an env over the in-memory store. Its dispatchers take
// allLocks unless given other locks: the tests that use it run one
// dispatcher at a time, or test the stream-version fence without locks.
func newMemEnv() env { return env{store: memstore.New(eventcodec.Default())} }

var quiet = slog.New(slog.NewTextHandler(io.Discard, nil))

// schedule appends a push scheduled for sendOn, to a segment.
func (e env) schedule(t *testing.T, app string, sendOn time.Time) string {
	t.Helper()
	id := ids.Generator{}.NewID()
	evs, err := push.NewSchedule(push.Schedule{}, id, app, push.Spec{Name: "test " + id,
		Target:       push.Target{Tags: []push.TagFilter{{Name: "segment", Value: "all"}}},
		Notification: push.Notification{Title: "Hello", Body: "World"}, SendOn: sendOn}, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.store.Append(context.Background(), push.Stream(id), event.NoStream, commands.Wrap(context.Background(), evs...)...); err != nil {
		t.Fatal(err)
	}
	return id
}

// load folds the schedule's stream and counts how often each device was
// recorded with a final outcome.
func (e env) load(t *testing.T, id string) (push.Schedule, map[push.DeviceKey]int) {
	t.Helper()
	recs, err := e.store.ReadStream(context.Background(), push.Stream(id), 0)
	if err != nil {
		t.Fatal(err)
	}
	s := push.Schedule{}
	final := map[push.DeviceKey]int{}
	for _, r := range recs {
		s = s.Apply(r.Data)
		if b, ok := r.Data.(push.DeliveriesRecorded); ok {
			for _, d := range b.Deliveries {
				if d.Outcome.Final() {
					final[d.Key()]++
				}
			}
		}
	}
	return s, final
}

type noDue struct{}

func (noDue) Due(context.Context, time.Time, int) ([]string, error) { return nil, nil }

func (e env) dispatcher(t *testing.T, name string, aud cmdpush.Audience, tok cmdpush.Tokens, snd cmdpush.Sender,
	locks cmdpush.Locker, cfg cmdpush.DispatcherConfig) *cmdpush.Dispatcher {
	t.Helper()
	if locks == nil && e.pool == nil {
		locks = allLocks{}
	}
	if locks == nil {
		l := postgres.NewAdvisoryLocks(e.pool)
		t.Cleanup(l.Close)
		locks = l
	}
	cfg.ID, cfg.Log = name, quiet
	if cfg.ChunkSize == 0 {
		cfg.ChunkSize = 250
	}
	if cfg.Workers == 0 {
		cfg.Workers = 16
	}
	return cmdpush.NewDispatcher(e.store, noDue{}, aud, tok, snd, locks, cfg)
}

// checkExactlyOnce asserts that every device of aud got the push exactly
// once (sender) and is recorded exactly once with a final outcome
// (stream), and that the schedule is dispatched.
func checkExactlyOnce(t *testing.T, e env, id string, aud *audience, snd *sender) {
	t.Helper()
	s, final := e.load(t, id)
	if s.Status != push.StatusDispatched || s.Sent != len(aud.devices) || s.Failed+s.Invalid != 0 || len(s.Pending) != 0 {
		t.Fatalf("schedule %s: status %s, sent %d failed %d invalid %d pending %d; want dispatched with %d sent",
			id, s.Status, s.Sent, s.Failed, s.Invalid, len(s.Pending), len(aud.devices))
	}
	bad := 0
	for _, d := range aud.devices {
		if n, r := snd.count(d.Token), final[d.Key()]; n != 1 || r != 1 {
			if bad++; bad <= 5 {
				t.Errorf("device %s: delivered %d times, recorded %d times; want 1 and 1", d.Token, n, r)
			}
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d devices not delivered exactly once", bad, len(aud.devices))
	}
	if len(final) != len(aud.devices) {
		t.Fatalf("%d devices recorded, audience has %d", len(final), len(aud.devices))
	}
}

// ---- tests ----

// TestTwoDispatchersRaceDeliverOnce: two dispatchers (each with its own
// lock session, as two processes) call Dispatch on the same due schedule
// over and over until it is sent: every device gets it exactly once.
func TestTwoDispatchersRaceDeliverOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	aud := newAudience(2000)
	snd := newSender()
	snd.delay = 100 * time.Microsecond
	id := e.schedule(t, "app1", time.Time{})
	ds := []*cmdpush.Dispatcher{
		e.dispatcher(t, "A", aud, &tokens{}, snd, nil, cmdpush.DispatcherConfig{}),
		e.dispatcher(t, "B", aud, &tokens{}, snd, nil, cmdpush.DispatcherConfig{}),
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	var claims [2]atomic.Int64
	start := make(chan struct{})
	for i, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			for ctx.Err() == nil {
				claimed, err := d.Dispatch(ctx, id)
				if err != nil {
					t.Errorf("dispatcher %d: %v", i, err)
					return
				}
				if claimed {
					claims[i].Add(1)
				}
				if s, _ := e.load(t, id); s.Status == push.StatusDispatched {
					return
				}
			}
		}()
	}
	close(start)
	wg.Wait()
	checkExactlyOnce(t, e, id, aud, snd)
	if snd.total.Load() != int64(len(aud.devices)) {
		t.Fatalf("%d sends for %d devices", snd.total.Load(), len(aud.devices))
	}
	if claims[0].Load()+claims[1].Load() == 0 {
		t.Fatal("neither dispatcher claimed the schedule")
	}
}

// allLocks grants every lock: only the stream-version fence is left.
type allLocks struct{}

func (allLocks) TryLock(context.Context, string) (func(), bool, error) { return func() {}, true, nil }

// TestFencingWithoutLocks: with the locks out of the way, dispatchers
// racing on one schedule still record every device exactly once (the
// expected version stops the one that lost), and a device is sent twice
// at most within the one chunk a dispatcher sent before it was fenced.
func TestFencingWithoutLocks(t *testing.T) {
	t.Parallel()
	e := newMemEnv()
	aud := newAudience(1500)
	snd := newSender()
	snd.delay = 200 * time.Microsecond
	id := e.schedule(t, "app1", time.Time{})
	const chunk = 100
	var ds []*cmdpush.Dispatcher
	for _, n := range []string{"A", "B", "C"} {
		ds = append(ds, e.dispatcher(t, n, aud, &tokens{}, snd, allLocks{}, cmdpush.DispatcherConfig{ChunkSize: chunk}))
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var wg sync.WaitGroup
	for _, d := range ds {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if _, err := d.Dispatch(ctx, id); err != nil {
					t.Errorf("%s: %v", d.ID(), err)
					return
				}
				if s, _ := e.load(t, id); s.Status == push.StatusDispatched {
					return
				}
			}
		}()
	}
	wg.Wait()
	s, final := e.load(t, id)
	if s.Status != push.StatusDispatched || s.Sent != len(aud.devices) {
		t.Fatalf("status %s sent %d, want dispatched and %d", s.Status, s.Sent, len(aud.devices))
	}
	for _, d := range aud.devices {
		if final[d.Key()] != 1 || snd.count(d.Token) < 1 {
			t.Fatalf("device %s recorded %d times, delivered %d times", d.Token, final[d.Key()], snd.count(d.Token))
		}
	}
	// Count the takeovers (DispatchStarted after the first): each may
	// re-send at most one chunk.
	recs, _ := e.store.ReadStream(ctx, push.Stream(id), 0)
	starts := 0
	for _, r := range recs {
		if _, ok := r.Data.(push.DispatchStarted); ok {
			starts++
		}
	}
	extra := snd.total.Load() - int64(len(aud.devices))
	if extra > int64((starts-1)*chunk) {
		t.Fatalf("%d extra sends with %d takeovers of chunks of %d", extra, starts-1, chunk)
	}
	t.Logf("%d dispatch starts, %d devices sent twice", starts, extra)
}

// TestRestartMidDispatchResumes: dispatcher A is stopped (its context
// cancelled, as on SIGTERM) in the middle of a chunk; it records what it
// sent (the rest of the chunk as pending). B then resumes: every device
// gets the push exactly once overall.
func TestRestartMidDispatchResumes(t *testing.T) {
	t.Parallel()
	e := newMemEnv()
	aud := newAudience(1200)
	snd := newSender()
	snd.delay = 200 * time.Microsecond
	id := e.schedule(t, "app1", time.Time{})
	ctxA, stopA := context.WithCancel(context.Background())
	snd.afterSend = func(n int64) {
		if n == 430 { // in the middle of the second chunk of 250
			stopA()
		}
	}
	a := e.dispatcher(t, "A", aud, &tokens{}, snd, nil, cmdpush.DispatcherConfig{})
	if claimed, err := a.Dispatch(ctxA, id); err != nil || !claimed {
		t.Fatalf("A: claimed %v, %v", claimed, err)
	}
	s, final := e.load(t, id)
	sentByA := snd.total.Load()
	if s.Status != push.StatusDispatching || len(final) != int(sentByA) || len(final) >= len(aud.devices) {
		t.Fatalf("after A stopped: status %s, %d recorded final, %d sent, %d pending", s.Status, len(final), sentByA, len(s.Pending))
	}
	if len(s.Pending) == 0 {
		t.Fatal("A stopped mid-chunk but recorded no pending device")
	}
	t.Logf("A sent %d devices and left %d pending", sentByA, len(s.Pending))

	snd.afterSend = nil
	b := e.dispatcher(t, "B", aud, &tokens{}, snd, nil, cmdpush.DispatcherConfig{})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if claimed, err := b.Dispatch(ctx, id); err != nil || !claimed {
		t.Fatalf("B: claimed %v, %v", claimed, err)
	}
	checkExactlyOnce(t, e, id, aud, snd)
}

// crashingStore fails the append of the nth DeliveriesRecorded: the
// chunk was sent but not recorded, as when the process dies.
type crashingStore struct {
	commands.EventStore
	n, seen int
}

func (c *crashingStore) Append(ctx context.Context, stream string, v int64, evs ...event.Event) (event.AppendResult, error) {
	if _, ok := evs[0].Data.(push.DeliveriesRecorded); ok {
		if c.seen++; c.seen == c.n {
			return event.AppendResult{}, errors.New("power cut")
		}
	}
	return c.EventStore.Append(ctx, stream, v, evs...)
}

// TestCrashResendsAtMostOneChunk: the at-least-once window after a hard
// crash is the one chunk sent but not recorded; everything else is sent
// exactly once.
func TestCrashResendsAtMostOneChunk(t *testing.T) {
	t.Parallel()
	e := newMemEnv()
	aud := newAudience(1000)
	snd := newSender()
	id := e.schedule(t, "app1", time.Time{})
	var locks allLocks // one dispatcher at a time
	crashing := cmdpush.NewDispatcher(&crashingStore{EventStore: e.store, n: 2}, noDue{}, aud, &tokens{}, snd, locks,
		cmdpush.DispatcherConfig{ID: "A", ChunkSize: 100, Log: quiet})
	ctx := context.Background()
	if _, err := crashing.Dispatch(ctx, id); err == nil {
		t.Fatal("the crashed dispatch reported no error")
	}
	b := e.dispatcher(t, "B", aud, &tokens{}, snd, nil, cmdpush.DispatcherConfig{ChunkSize: 100})
	if _, err := b.Dispatch(ctx, id); err != nil {
		t.Fatal(err)
	}
	s, final := e.load(t, id)
	if s.Status != push.StatusDispatched || s.Sent != len(aud.devices) {
		t.Fatalf("status %s sent %d", s.Status, s.Sent)
	}
	twice := 0
	for i, d := range aud.devices {
		if final[d.Key()] != 1 {
			t.Fatalf("device %s recorded %d times", d.Token, final[d.Key()])
		}
		switch n := snd.count(d.Token); {
		case n == 2 && i >= 100 && i < 200: // the second chunk: sent, not recorded
			twice++
		case n != 1:
			t.Fatalf("device %d (%s) delivered %d times", i, d.Token, n)
		}
	}
	if twice != 100 {
		t.Fatalf("%d devices sent twice, want the 100 of the unrecorded chunk", twice)
	}
}

// TestRetriesWithBackoff: Retry outcomes are retried with backoff,
// honouring the provider's RetryAfter, up to MaxAttempts, then failed.
func TestRetriesWithBackoff(t *testing.T) {
	t.Parallel()
	e := newMemEnv()
	aud := newAudience(30)
	snd := newSender()
	retryTwice, retryAfter, never := aud.devices[3].Token, aud.devices[7].Token, aud.devices[11].Token
	snd.script = func(tok string, n int) push.Result {
		switch {
		case tok == retryTwice && n <= 2:
			return push.Result{Outcome: push.Retry, Reason: "UNAVAILABLE"}
		case tok == retryAfter && n == 1:
			return push.Result{Outcome: push.Retry, RetryAfter: 300 * time.Millisecond, Reason: "QUOTA_EXCEEDED"}
		case tok == never:
			return push.Result{Outcome: push.Retry, Reason: "INTERNAL"}
		}
		return push.Result{Outcome: push.Delivered}
	}
	id := e.schedule(t, "app1", time.Time{})
	d := e.dispatcher(t, "A", aud, &tokens{}, snd, nil, cmdpush.DispatcherConfig{
		MaxAttempts: 4, BackoffMin: 20 * time.Millisecond, BackoffMax: 40 * time.Millisecond})
	if _, err := d.Dispatch(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	recs, _ := e.store.ReadStream(context.Background(), push.Stream(id), 0)
	got := map[string]push.Delivery{}
	for _, r := range recs {
		if b, ok := r.Data.(push.DeliveriesRecorded); ok {
			for _, dl := range b.Deliveries {
				got[dl.Token] = dl
			}
		}
	}
	check := func(tok string, outcome push.Outcome, attempts int) {
		t.Helper()
		if g := got[tok]; g.Outcome != outcome || g.Attempts != attempts {
			t.Errorf("%s: recorded %s after %d attempts (%q); want %s after %d", tok, g.Outcome, g.Attempts, g.Reason, outcome, attempts)
		}
	}
	check(retryTwice, push.Delivered, 3)
	check(retryAfter, push.Delivered, 2)
	check(never, push.Failed, 4)
	check(aud.devices[0].Token, push.Delivered, 1)
	if r := got[never].Reason; !strings.Contains(r, "INTERNAL") || !strings.Contains(r, "4 attempts") {
		t.Errorf("reason of the failed device: %q", r)
	}
	snd.mu.Lock()
	defer snd.mu.Unlock()
	if at := snd.attempts[retryAfter]; len(at) != 2 || at[1].Sub(at[0]) < 300*time.Millisecond {
		t.Errorf("RetryAfter 300ms not honoured: attempts at %v", at)
	}
	at := snd.attempts[never]
	for i := 1; i < len(at); i++ {
		// Exponential from 20ms, capped at 40ms, jittered down to half.
		if gap := at[i].Sub(at[i-1]); gap < 10*time.Millisecond {
			t.Errorf("retry %d after %s: no backoff", i, gap)
		}
	}
	s, _ := e.load(t, id)
	if s.Status != push.StatusDispatched || s.Failed != 1 || s.Sent != len(aud.devices)-1 {
		t.Fatalf("status %s sent %d failed %d", s.Status, s.Sent, s.Failed)
	}
}

// TestInvalidTokensRemoved: tokens the provider reports invalid are
// removed from their app users and counted as invalid.
func TestInvalidTokensRemoved(t *testing.T) {
	t.Parallel()
	e := newMemEnv()
	aud := newAudience(40)
	snd := newSender()
	bad := map[string]bool{aud.devices[2].Token: true, aud.devices[20].Token: true}
	snd.script = func(tok string, n int) push.Result {
		if bad[tok] {
			return push.Result{Outcome: push.InvalidToken, Reason: "UNREGISTERED"}
		}
		return push.Result{Outcome: push.Delivered}
	}
	tok := &tokens{}
	id := e.schedule(t, "app7", time.Time{})
	d := e.dispatcher(t, "A", aud, tok, snd, nil, cmdpush.DispatcherConfig{})
	if _, err := d.Dispatch(context.Background(), id); err != nil {
		t.Fatal(err)
	}
	want := []string{"app7/" + aud.devices[2].AppUserID + "/" + aud.devices[2].Token,
		"app7/" + aud.devices[20].AppUserID + "/" + aud.devices[20].Token}
	sort.Strings(tok.removed)
	sort.Strings(want)
	if strings.Join(tok.removed, ",") != strings.Join(want, ",") {
		t.Fatalf("removed %v, want %v", tok.removed, want)
	}
	s, _ := e.load(t, id)
	if s.Invalid != 2 || s.Sent != len(aud.devices)-2 || s.Status != push.StatusDispatched {
		t.Fatalf("status %s sent %d invalid %d", s.Status, s.Sent, s.Invalid)
	}
	for tk := range bad {
		if n := len(snd.attempts[tk]); n != 1 {
			t.Errorf("invalid token %s tried %d times, want once", tk, n)
		}
	}
}

// TestScheduledLaterSentOnTime: the whole loop (service, projection,
// read model, Run): a push scheduled two seconds ahead is not sent before
// its time, and is sent (once) soon after it; a cancelled one never.
func TestScheduledLaterSentOnTime(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	rt := projection.NewRuntime(e.pool, e.pg, nil, quiet, projection.Options{}, projpush.Projector{})
	rctx, stopRT := context.WithCancel(ctx)
	rtDone := make(chan error, 1)
	go func() { rtDone <- rt.Run(rctx) }()
	defer func() { stopRT(); <-rtDone }()

	aud := newAudience(50)
	snd := newSender()
	var firstSend atomic.Int64
	snd.afterSend = func(n int64) {
		if n == 1 {
			firstSend.Store(time.Now().UnixMilli())
		}
	}
	rm := rmpush.NewStore(e.pool)
	svc := cmdpush.NewService(e.store, rmrights.NewAuthorizer(e.pool), aud, rm, ids.Generator{}, rt)
	locks := postgres.NewAdvisoryLocks(e.pool)
	defer locks.Close()
	d := cmdpush.NewDispatcher(e.store, rm, aud, &tokens{}, snd, locks, cmdpush.DispatcherConfig{Poll: 50 * time.Millisecond, Log: quiet})
	svc.OnDue(d.Nudge)
	dctx, stopD := context.WithCancel(ctx)
	dDone := make(chan struct{})
	go func() { d.Run(dctx); close(dDone) }()
	defer func() { stopD(); <-dDone }()

	// The send times count from when the projection runs and from each
	// write: a slow start (a loaded CI machine) must not make a push due
	// before the test is ready for it.
	for ready := time.Now().Add(20 * time.Second); rt.Ready() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(ready) {
			t.Fatalf("projections not ready: %v", rt.Ready())
		}
	}
	sys := access.WithActor(ctx, access.SystemActor)
	if _, err := e.store.Append(ctx, identity.AppStream("app1"), event.NoStream, event.Event{Data: identity.AppCreated{AppID: "app1", Name: "app1"}}); err != nil {
		t.Fatal(err)
	}
	spec := push.Spec{Name: "cancelled", Target: push.Target{Aliases: []string{aud.devices[0].Alias}},
		Notification: push.Notification{Title: "Soon"}, SendOn: time.Now().Add(2 * time.Second)}
	cancelled, err := svc.Schedule(sys, "app1", spec)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Cancel(sys, cancelled.ID); err != nil {
		t.Fatal(err)
	}
	spec.Name, spec.SendOn = "later", time.Now().Add(2*time.Second)
	later, err := svc.Schedule(sys, "app1", spec)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Until(later.SendOn) - 300*time.Millisecond)
	if n := snd.total.Load(); n != 0 {
		t.Fatalf("%d sends before the send time", n)
	}
	deadline := time.Now().Add(15 * time.Second)
	for {
		s, _ := e.load(t, later.ID)
		if s.Status == push.StatusDispatched {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("not dispatched 15s after its time: %s", s.Status)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if first := firstSend.Load(); first < later.SendOn.UnixMilli() {
		t.Fatalf("first send at %d, before the send time %d", first, later.SendOn.UnixMilli())
	}
	// The whole audience of the aliases target is this fake's; the
	// sender saw each device once.
	if n := snd.total.Load(); n != int64(len(aud.devices)) {
		t.Fatalf("%d sends, want %d (once each)", n, len(aud.devices))
	}
	time.Sleep(300 * time.Millisecond) // a few more polls
	if s, _ := e.load(t, cancelled.ID); s.Status != push.StatusCancelled {
		t.Fatalf("cancelled push is %s", s.Status)
	}
	if n := snd.total.Load(); n != int64(len(aud.devices)) {
		t.Fatalf("%d sends after the cancelled push's time, want still %d", n, len(aud.devices))
	}
	// The read model shows the statistics.
	deadline = time.Now().Add(10 * time.Second)
	for {
		sc, err := rm.Schedule(ctx, later.ID)
		if err != nil {
			t.Fatal(err)
		}
		if sc.Status == push.StatusDispatched && sc.Stats.Sent == len(aud.devices) && sc.DispatchedAt != nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("read model: %+v", sc)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
