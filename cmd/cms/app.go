package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/halocms/halocms/adapters/apns"
	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/fcm"
	httpapi "github.com/halocms/halocms/adapters/http"
	httpanalytics "github.com/halocms/halocms/adapters/http/analytics"
	httpappuser "github.com/halocms/halocms/adapters/http/appuser"
	httpcontent "github.com/halocms/halocms/adapters/http/content"
	httpidentity "github.com/halocms/halocms/adapters/http/identity"
	httployalty "github.com/halocms/halocms/adapters/http/loyalty"
	httpmedia "github.com/halocms/halocms/adapters/http/media"
	httppush "github.com/halocms/halocms/adapters/http/push"
	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/live"
	"github.com/halocms/halocms/adapters/password"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/projection"
	"github.com/halocms/halocms/adapters/pushlog"
	"github.com/halocms/halocms/adapters/web"
	"github.com/halocms/halocms/commands"
	cmdanalytics "github.com/halocms/halocms/commands/analytics"
	cmdappuser "github.com/halocms/halocms/commands/appuser"
	cmdcontent "github.com/halocms/halocms/commands/content"
	cmdidentity "github.com/halocms/halocms/commands/identity"
	cmdloyalty "github.com/halocms/halocms/commands/loyalty"
	cmdpush "github.com/halocms/halocms/commands/push"
	cmdrights "github.com/halocms/halocms/commands/rights"
	cmdsession "github.com/halocms/halocms/commands/session"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/push"
	projanalytics "github.com/halocms/halocms/projections/analytics"
	projappuser "github.com/halocms/halocms/projections/appuser"
	projcontent "github.com/halocms/halocms/projections/content"
	projidentity "github.com/halocms/halocms/projections/identity"
	projloyalty "github.com/halocms/halocms/projections/loyalty"
	projmedia "github.com/halocms/halocms/projections/media"
	projpush "github.com/halocms/halocms/projections/push"
	projrights "github.com/halocms/halocms/projections/rights"
	rmanalytics "github.com/halocms/halocms/readmodels/analytics"
	rmappuser "github.com/halocms/halocms/readmodels/appuser"
	rmaudit "github.com/halocms/halocms/readmodels/audit"
	rmcontent "github.com/halocms/halocms/readmodels/content"
	rmidentity "github.com/halocms/halocms/readmodels/identity"
	rmloyalty "github.com/halocms/halocms/readmodels/loyalty"
	rmmedia "github.com/halocms/halocms/readmodels/media"
	rmpush "github.com/halocms/halocms/readmodels/push"
	rmrights "github.com/halocms/halocms/readmodels/rights"
)

// app is the composition root: every adapter and service, wired once.
type app struct {
	cfg      Config
	log      *slog.Logger
	pool     *pgxpool.Pool
	generic  *pgxpool.Pool // plan_cache_mode = force_generic_plan (see postgres.GenericPlans)
	store    *postgres.EventStore
	listener *postgres.Listener
	runtime  *projection.Runtime
	identity *cmdidentity.Service
	rights   *cmdrights.Service
	content  *cmdcontent.Service
	contents *rmcontent.Store
	sessions *cmdsession.Service
	users    *rmidentity.Store
	authz    *rmrights.Authorizer
	auditor  *rmaudit.Auditor
	metrics  *httpapi.Metrics
	push     *cmdpush.Service
	pushes   *rmpush.Store
	cancel   context.CancelFunc

	// App users, identified users and pockets (segmentation).
	appUsers     *cmdappuser.Service
	appUsersRead *rmappuser.Store

	// Loyalty: points accounts, stamps, stamp card definitions.
	loyalty     *cmdloyalty.Service
	loyaltyRead *rmloyalty.Store

	// Events apps report, and their daily figures.
	analytics     *cmdanalytics.Service
	analyticsRead *rmanalytics.Store

	// The media library.
	media mediaParts
}

func newLogger(level string) *slog.Logger {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		l = slog.LevelInfo
	}
	return slog.New(slog.NewJSONHandler(os.Stderr, &slog.HandlerOptions{Level: l}))
}

// open connects (starting a local database if needed), migrates and wires
// the services. The projection runtime is created but not started.
func open(ctx context.Context, cfg Config, serving bool) (*app, error) {
	log := newLogger(cfg.LogLevel)
	if cfg.DatabaseURL == "" {
		server, err := postgres.EnsureServer(ctx, cfg.DataDir, 0, log)
		if err != nil {
			return nil, fmt.Errorf("no DATABASE_URL and no local PostgreSQL: %w", err)
		}
		// A database of our own on that server.
		if cfg.DatabaseURL, err = postgres.EnsureDatabase(ctx, server, "halocms"); err != nil {
			return nil, err
		}
		log.Info("using local PostgreSQL", "url", cfg.DatabaseURL)
	}
	pool, err := postgres.Connect(ctx, cfg.DatabaseURL)
	if err != nil {
		return nil, err
	}
	applied, err := postgres.Migrate(ctx, pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	if len(applied) > 0 {
		log.Info("migrations applied", "versions", applied)
	}
	if err := projection.SessionsVisible(ctx, pool); err != nil {
		log.Warn("content syncs may miss changes: turn track_activities on", "err", err)
	}
	a := &app{cfg: cfg, log: log, pool: pool, metrics: httpapi.NewMetrics()}
	a.store = postgres.NewEventStore(pool, eventcodec.Default())
	a.store.OnAppend = a.metrics.Appended
	lctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	a.cancel = cancel
	a.listen(lctx)
	a.loyaltyRead = rmloyalty.New(pool)
	ropts := projection.Options{WaitTimeout: cfg.ReadYourWrites}
	cacheViews := serving && cfg.Loyalty.ViewCacheEntries >= 0
	if cacheViews {
		ropts.OnChange = a.forgetViews
	}
	a.runtime = projection.NewRuntime(pool, a.store, a.listener, log, ropts,
		projidentity.Projector{}, projrights.Projector{}, projcontent.Projector{}, projpush.Projector{},
		projappuser.Projector{}, projloyalty.Projector{}, projanalytics.Projector{}, projmedia.Projector{})
	if cacheViews {
		// The account views are kept in memory until a loyalty batch, of
		// this process (at once) or another (when heard), changes them.
		a.loyaltyRead.CacheViews(cmp.Or(cfg.Loyalty.ViewCacheEntries, defaultViewCacheEntries),
			cmp.Or(cfg.Loyalty.ViewCacheTTL, defaultViewCacheTTL), a.runtime.Hearing)
	}
	if err := a.runtime.Setup(ctx); err != nil {
		a.Close()
		return nil, err
	}
	hasher := password.Bcrypt{Cost: cfg.BcryptCost}
	a.users = rmidentity.New(pool)
	a.authz = rmrights.NewAuthorizer(pool)
	var waiter commands.Waiter = a.runtime
	if !serving {
		// One-shot commands run no projections: do not wait for them.
		waiter = noWait{}
	}
	a.rights = cmdrights.NewService(a.store, a.authz, waiter)
	tokens := postgres.NewTokenStore(pool)
	if serving && cfg.TokenCacheTTL > 0 {
		revocations := postgres.NewListener(pool, postgres.TokenChannel, log)
		go revocations.Run(lctx)
		tokens.CacheAccess(cfg.TokenCacheTTL, revocations)
	}
	a.sessions = cmdsession.NewService(a.users, a.users, hasher, ids.Generator{}, tokens, postgres.NewLoginThrottle(pool),
		cmdsession.Config{AccessTTL: cfg.AccessTokenTTL, RefreshTTL: cfg.RefreshTokenTTL})
	a.identity = cmdidentity.NewService(a.store, hasher, ids.Generator{}, waiter, a.sessions)
	if a.generic, err = postgres.GenericPlans(pool); err != nil {
		a.Close()
		return nil, err
	}
	a.contents = rmcontent.NewStore(pool, a.generic)
	a.contents.KeepInMemory(a.cfg.SearchIndex)
	a.content = cmdcontent.NewService(a.store, a.store, a.authz, a.users, a.contents, ids.Generator{}, waiter)
	a.appUsersRead = rmappuser.New(pool)
	a.appUsers = cmdappuser.NewService(a.store, ids.Generator{}, a.appUsersRead, hasher, postgres.NewLoginThrottle(pool), a.sessions, waiter)
	a.pushes = rmpush.NewStore(pool)
	a.push = cmdpush.NewService(a.store, a.authz, a.appUsersRead, a.pushes, ids.Generator{}, waiter)
	a.analytics = cmdanalytics.NewService(a.store, ids.Generator{})
	a.analyticsRead = rmanalytics.NewStore(pool)
	a.auditor = rmaudit.New(a.store, a.authz, a.loyaltyRead)
	if serving {
		// One-shot commands touch no media files (nor their storage).
		if err := a.openMedia(ctx, waiter); err != nil {
			a.Close()
			return nil, err
		}
	}
	lopts := cmdloyalty.Options{CacheEntries: cfg.Loyalty.CacheEntries, CacheBytes: int64(cfg.Loyalty.CacheMiB) << 20, Log: a.log}
	if cfg.Loyalty.SnapshotEvery > 0 {
		lopts.Snapshots, lopts.SnapshotEvery = postgres.NewLoyaltySnapshots(pool), cfg.Loyalty.SnapshotEvery
	}
	a.loyalty = cmdloyalty.NewService(a.store, ids.Generator{}, a.authz, waiter, lopts)
	return a, nil
}

// forgetViews drops the cached loyalty views a change concerns.
func (a *app) forgetViews(c projection.Change) {
	switch {
	case c.Projection == (projloyalty.Projector{}).Name() && !c.All:
		a.loyaltyRead.Forget(c.Keys...)
	case c.Projection == (projloyalty.Projector{}).Name() || c.Projection == "":
		a.loyaltyRead.ForgetAll()
	}
}

func (a *app) Close() {
	a.cancel()
	if a.loyalty != nil {
		a.loyalty.StopSnapshots()
	}
	a.store.Close()
	if a.generic != nil {
		a.generic.Close()
	}
	a.pool.Close()
}

// ready: database reachable and projections running.
type readiness struct{ a *app }

func (r readiness) Ready(ctx context.Context) error {
	if err := r.a.pool.Ping(ctx); err != nil {
		return &httpapi.NotReady{Reason: "database", Err: err}
	}
	if err := r.a.runtime.Ready(); err != nil {
		nr := &httpapi.NotReady{Reason: "projections", Err: err}
		if failing := r.a.runtime.FailingEvents(); len(failing) > 0 {
			// What `cms projections park NAME --event TX/POS` takes.
			nr.Detail = map[string]any{"failing": failing}
		}
		return nr
	}
	return nil
}

// ReadyDetail adds the events parked per projection to /readyz's answer
// ("parked": {"push": ["TX/POS", ...]}), when there are any.
func (r readiness) ReadyDetail(ctx context.Context) map[string]any {
	parked, err := r.a.runtime.ParkedSummary(ctx)
	if err != nil {
		r.a.log.WarnContext(ctx, "readyz: reading the parked events", "err", err)
		return map[string]any{"parked": "unknown"}
	}
	if len(parked) == 0 {
		return nil
	}
	return map[string]any{"parked": parked}
}

func serve(ctx context.Context, cfg Config) error {
	tuneGC(newLogger(cfg.LogLevel))
	a, err := open(ctx, cfg, true)
	if err != nil {
		return err
	}
	defer a.Close()
	ln, err := net.Listen("tcp", a.cfg.HTTPAddr)
	if err != nil {
		return err
	}
	return a.serveOn(ctx, ln)
}

// serveOn runs the projections and serves HTTP on ln until ctx ends, then
// shuts down gracefully.
func (a *app) serveOn(ctx context.Context, ln net.Listener) error {
	rctx, stopRuntime := context.WithCancel(context.WithoutCancel(ctx))
	defer stopRuntime()
	runtimeDone := make(chan error, 1)
	go func() { runtimeDone <- a.runtime.Run(rctx) }()
	// After the projections started: creating the admin waits for them.
	if err := a.bootstrapAdmin(ctx); err != nil {
		return err
	}
	a.metrics.Register(lagCollector{a},
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cms_loyalty_cache_bytes",
			Help: "Estimated memory of the loyalty account states the command side keeps."},
			func() float64 { b, _ := a.loyalty.CacheFootprint(); return float64(b) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cms_loyalty_cache_accounts",
			Help: "Loyalty account states the command side keeps."},
			func() float64 { _, n := a.loyalty.CacheFootprint(); return float64(n) }),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cms_loyalty_view_cache_views",
			Help: "Loyalty account views (self, {id}) kept in memory."},
			func() float64 { return float64(a.loyaltyRead.ViewCache().Views) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cms_loyalty_view_cache_lookups_total",
			Help: "Loyalty account views asked for, by whether memory answered.", ConstLabels: prometheus.Labels{"result": "hit"}},
			func() float64 { return float64(a.loyaltyRead.ViewCache().Hits) }),
		prometheus.NewCounterFunc(prometheus.CounterOpts{Name: "cms_loyalty_view_cache_lookups_total",
			Help: "Loyalty account views asked for, by whether memory answered.", ConstLabels: prometheus.Labels{"result": "miss"}},
			func() float64 { return float64(a.loyaltyRead.ViewCache().Misses) }))
	// Expired tokens and stale login-failure counters.
	go a.cleanEvery(rctx, time.Hour, "token cleanup failed", "expired tokens deleted", a.sessions.Cleanup)
	idemKeys := postgres.NewIdempotencyKeys(a.pool, httpapi.IdempotencyTTL, httpapi.IdempotencyLease)
	go a.cleanEvery(rctx, time.Hour, "idempotency key cleanup failed", "expired idempotency keys deleted", idemKeys.Cleanup)
	go a.cleanEvery(rctx, 10*time.Minute, "media: sweeping abandoned uploads failed", "media: abandoned uploads removed",
		func(ctx context.Context) (int64, error) {
			n, err := a.media.storage.Sweep(ctx, stagedMaxAge)
			return int64(n), err
		})
	go a.cleanEvery(rctx, time.Hour, "sweeping abandoned resumable uploads failed", "abandoned resumable uploads removed",
		func(ctx context.Context) (int64, error) {
			n, err := a.media.uploads.Sweep(ctx, uploadMaxAge)
			return int64(n), err
		})
	stopDispatcher, err := a.startDispatcher(ctx)
	if err != nil {
		return err
	}
	defer stopDispatcher()
	stopExpirer := a.startExpirer(ctx)
	defer stopExpirer()

	files, err := a.mediaServer()
	if err != nil {
		return err
	}
	line := postgres.NewReadLine(a.cfg.ReadConcurrency)
	contentRead := rmcontent.NewQueries(a.contents, a.authz, a.runtime, line, a.metrics,
		rmcontent.QueriesConfig{CacheEntries: a.cfg.SearchCache, SearchTimeout: a.cfg.SearchTimeout})
	hub, liveRead := a.startLive(rctx, contentRead)
	appUsersRead := rmappuser.NewQueries(a.appUsersRead, a.authz)
	kit := httpapi.NewKit(httpapi.KitDeps{Log: a.log, Metrics: a.metrics, Authorizer: a.authz, Apps: appUsersRead,
		StoreRefused: postgres.DataException, StoreUnreachable: postgres.Unreachable})
	handler := httpapi.NewRouter(kit, httpapi.Deps{Sessions: a.sessions, Ready: readiness{a}, Web: web.Handler(),
		Idempotency: idempotencyStore{idemKeys}},
		httpapi.Config{TrustedProxies: a.cfg.TrustedProxies},
		httpidentity.New(kit, httpidentity.Deps{Identity: a.identity, Users: a.users, Rights: a.rights, Authorizer: a.authz, Audit: a.auditor,
			Versions: rmidentity.NewVersions(a.store)}),
		httpcontent.New(kit, httpcontent.Deps{Commands: a.content, Queries: contentRead, Authorizer: a.authz, Live: liveRead}),
		httppush.New(kit, httppush.Deps{Commands: a.push, Queries: rmpush.NewQueries(a.pushes, a.authz)}),
		httpappuser.New(kit, httpappuser.Deps{Commands: a.appUsers, Queries: appUsersRead}),
		httployalty.New(kit, httployalty.Deps{Commands: a.loyalty, Queries: rmloyalty.NewQueries(a.loyaltyRead, a.authz, line), Audit: a.auditor}),
		httpanalytics.New(kit, httpanalytics.Deps{Commands: a.analytics, Queries: rmanalytics.NewQueries(a.analyticsRead, a.authz, appUsersRead)}),
		httpmedia.New(kit, httpmedia.Deps{Commands: a.media.service, Queries: rmmedia.NewQueries(a.media.store, a.authz), Files: files,
			Uploads: a.media.uploads}))
	srv := &http.Server{Addr: a.cfg.HTTPAddr, Handler: handler, ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: slog.NewLogLogger(a.log.Handler(), slog.LevelWarn)}
	// Shutdown waits for the handlers: the live streams end first.
	srv.RegisterOnShutdown(hub.Close)
	a.log.Info("serving", "addr", ln.Addr().String())
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case err := <-runtimeDone:
		return fmt.Errorf("projections stopped: %w", err)
	case <-ctx.Done():
	}
	a.log.Info("shutting down")
	sctx, cancel := context.WithTimeout(context.Background(), a.cfg.ShutdownTimeout)
	defer cancel()
	err = srv.Shutdown(sctx)
	stopDispatcher() // the chunks in flight are sent and recorded first
	stopExpirer()
	stopRuntime()
	<-runtimeDone
	if err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

// startLive runs the follower of the log's content changes, one per
// process, until ctx ends, and returns its hub and the live streams it
// feeds.
func (a *app) startLive(ctx context.Context, q *rmcontent.Queries) (*live.Hub, *rmcontent.Live) {
	hub := live.NewHub(live.Config{MaxStreams: a.cfg.Live.MaxStreams, MaxPerOwner: a.cfg.Live.MaxPerUser})
	go live.NewFollower(a.store, hub, a.listener.Watch(live.Wakes).C, a.log).Run(ctx)
	a.metrics.Register(prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "cms_live_streams",
		Help: "Live streams of content changes open on this process."}, func() float64 { return float64(hub.Streams()) }))
	return hub, rmcontent.NewLive(q, hub, rmcontent.LiveConfig{Recheck: a.cfg.Live.Recheck})
}

// bootstrapAdmin creates the first admin when no user exists, with the
// credentials from the environment or a generated password printed once.
func (a *app) bootstrapAdmin(ctx context.Context) error {
	any, err := a.users.AnyUser(ctx)
	if err != nil || any {
		return err
	}
	pw := a.cfg.AdminPassword
	generated := pw == ""
	if generated {
		pw = ids.Token(20)
	}
	u, err := a.identity.CreateUser(access.WithActor(ctx, access.SystemActor), cmdidentity.CreateUser{
		Username: a.cfg.AdminUsername, Password: pw, Name: "Administrator", Admin: true,
	})
	if err != nil {
		return fmt.Errorf("creating the first admin: %w", err)
	}
	a.log.Info("first admin created", "username", u.Username, "id", u.ID)
	if generated {
		line := strings.Repeat("=", 64)
		fmt.Fprintf(os.Stdout, "%s\nFirst start: created admin user\n  username: %s\n  password: %s\nThis password is shown only once.\n%s\n",
			line, u.Username, pw, line)
	}
	return nil
}

// lagCollector exports each projection's lag.
type lagCollector struct{ a *app }

var (
	lagEventsDesc  = prometheus.NewDesc("cms_projection_lag_events", "Events not yet applied by the projection.", []string{"projection"}, nil)
	lagSecondsDesc = prometheus.NewDesc("cms_projection_lag_seconds", "Age of the oldest event not yet applied.", []string{"projection"}, nil)
	parkedDesc     = prometheus.NewDesc("cms_projection_parked_events", "Events parked for the projection (cms projections park), not applied until replayed.", []string{"projection"}, nil)
)

func (c lagCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- lagEventsDesc
	ch <- lagSecondsDesc
	ch <- parkedDesc
}

func (c lagCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	sts, err := c.a.runtime.Status(ctx)
	if err != nil {
		return
	}
	parked, perr := c.a.runtime.ParkedCounts(ctx) // on an error, the lags still count
	for _, s := range sts {
		ch <- prometheus.MustNewConstMetric(lagEventsDesc, prometheus.GaugeValue, float64(s.LagEvents), s.Name)
		ch <- prometheus.MustNewConstMetric(lagSecondsDesc, prometheus.GaugeValue, s.LagSeconds, s.Name)
		if perr == nil {
			ch <- prometheus.MustNewConstMetric(parkedDesc, prometheus.GaugeValue, float64(parked[s.Name]), s.Name)
		}
	}
}

// noWait is the waiter of one-shot commands, which run no projections.
type noWait struct{}

func (noWait) WaitFor(context.Context, event.Position, ...string) bool { return false }

// cleanEvery runs clean at once, then every interval until ctx ends,
// logging how many things it removed (done) or why it failed (failed):
// the periodic clean-ups of tokens, Idempotency-Keys and abandoned uploads.
func (a *app) cleanEvery(ctx context.Context, interval time.Duration, failed, done string, clean func(context.Context) (int64, error)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		if n, err := clean(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn(failed, "err", err, "removed", n)
		} else if n > 0 {
			a.log.Info(done, "count", n)
		}
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// startDispatcher runs the push dispatcher with the configured providers
// until the returned stop is called; stop lets the pushes in flight
// record what they sent, then returns.
func (a *app) startDispatcher(ctx context.Context) (stop func(), err error) {
	sender, err := pushSender(ctx, a.cfg.Push, a.log)
	if err != nil {
		return nil, err
	}
	locks := postgres.NewAdvisoryLocks(a.pool)
	d := cmdpush.NewDispatcher(a.store, a.pushes, a.appUsersRead, a.appUsers, sender, locks, cmdpush.DispatcherConfig{
		Poll: a.cfg.Push.Poll, Workers: a.cfg.Push.Workers, ChunkSize: a.cfg.Push.ChunkSize, Log: a.log,
	})
	a.push.OnDue(d.Nudge)
	dctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() { defer close(done); d.Run(dctx) }()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
			locks.Close()
		})
	}, nil
}

// startExpirer runs the loyalty expirer, which records the expiry of
// points lots when their date passes, without waiting for a request,
// until the returned stop is called (stop waits for it to return).
func (a *app) startExpirer(ctx context.Context) (stop func()) {
	poll := a.cfg.Loyalty.ExpiryPoll
	if poll <= 0 {
		poll = time.Second
	}
	e := cmdloyalty.NewExpirer(a.loyalty, a.loyaltyRead, poll, a.log.With("component", "loyalty-expirer"))
	ectx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	done := make(chan struct{})
	go func() {
		defer close(done)
		if err := e.Run(ectx); err != nil && ectx.Err() == nil {
			a.log.Error("loyalty expirer stopped", "err", err)
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			cancel()
			<-done
		})
	}
}

// pushSender builds the providers the configuration names: one for
// Android devices and one for iOS devices (the same unless IOSProvider
// differs).
func pushSender(ctx context.Context, c PushConfig, log *slog.Logger) (cmdpush.Sender, error) {
	build := func(name string) (cmdpush.Sender, error) {
		switch name {
		case "", "log":
			return pushlog.New(log.With("component", "push")), nil
		case "fcm":
			if c.FCMCredentials == "" {
				return nil, errors.New("CMS_PUSH_PROVIDER=fcm needs CMS_FCM_CREDENTIALS (the service account key file)")
			}
			creds, err := os.ReadFile(c.FCMCredentials)
			if err != nil {
				return nil, fmt.Errorf("CMS_FCM_CREDENTIALS: %w", err)
			}
			return fcm.New(ctx, fcm.Config{CredentialsJSON: creds, Endpoint: c.FCMEndpoint})
		case "apns":
			if c.APNSKey == "" {
				return nil, errors.New("the apns provider needs CMS_APNS_KEY (the .p8 key file), CMS_APNS_KEY_ID, CMS_APNS_TEAM_ID and CMS_APNS_TOPIC")
			}
			key, err := os.ReadFile(c.APNSKey)
			if err != nil {
				return nil, fmt.Errorf("CMS_APNS_KEY: %w", err)
			}
			return apns.New(apns.Config{KeyP8: key, KeyID: c.APNSKeyID, TeamID: c.APNSTeamID, Topic: c.APNSTopic, Endpoint: c.APNSEndpoint})
		}
		return nil, fmt.Errorf("unknown push provider %q", name)
	}
	android, err := build(c.Provider)
	if err != nil {
		return nil, err
	}
	ios := android
	if c.IOSProvider != "" && c.IOSProvider != c.Provider {
		if ios, err = build(c.IOSProvider); err != nil {
			return nil, err
		}
	}
	return cmdpush.PlatformSenders{ByPlatform: map[push.Platform]cmdpush.Sender{push.Android: android, push.IOS: ios}, Default: android}, nil
}

// listen starts the process's listener of new events, which this
// process's own appends fire as they commit (see postgres.Listener.Own).
func (a *app) listen(ctx context.Context) {
	a.listener = postgres.NewListener(a.pool, postgres.NotifyChannel, a.log)
	a.listener.Own(a.store)
	go a.listener.Run(ctx)
}
