// Command bench measures the event store, the projection runtime and the
// content API against real PostgreSQL and prints a table of figures and a
// summary against the targets of the performance issue:
//
//	go run ./cmd/bench                      # everything
//	go run ./cmd/bench -only append -duration 20s
//	go run ./cmd/bench -only content -content-sizes 10000 -content-duration 5s
//	make bench BENCH_ARGS='-only read -events 200000'
//	go run ./cmd/bench -only push -push-devices 100000
//	go run ./cmd/bench -only loyalty -loyalty-transactions 20000
//	go run ./cmd/bench -only events -events-rounds 3 -events-duration 4s
//	go run ./cmd/bench -only media -media-rounds 5 -media-images 32
//
// It works in a database of its own, cms_bench_<random>, created on the
// server of DATABASE_URL (or, when that is unset, the local server or
// private cluster that postgres.EnsureServer finds or starts, as `make run`
// does), migrated with postgres.Migrate and dropped at the end (-keep keeps
// it). The server's synchronous_commit is printed and must stay on: the
// append figures are for durable commits.
//
// The figures:
//
//   - append (store): -writers goroutines (default 16) each call
//     EventStore.Append with ONE rights.Granted event per call. Every writer
//     owns 64 user streams and appends to them in turn with the exact
//     expected version (NoStream first, then the version the previous append
//     returned), so each append runs the optimistic version check. Reported
//     as events/s (= commits/s), with latency percentiles.
//   - append (raw ceiling): in the same run, the same number of writers do
//     plain autocommit single-row INSERTs of the same encoded values into
//     bench_raw.events, a normal (logged) table created LIKE events
//     INCLUDING ALL (same columns, defaults, identity, primary key and
//     unique constraints) in a scratch schema dropped afterwards: what the
//     machine allows for one durable row per commit.
//   - append ratio: store / raw (target >= 70%). The two measurements
//     alternate in -rounds rounds (default 10: raw, store, store, raw, ...),
//     -duration (default 10s) in total for each, after a -warmup per round,
//     so that a change of fsync or CPU speed during the run (a shared
//     server) hits both alike. The per-round ratios and their median show
//     how noisy the machine is; the WAL fsync count shows the group commit.
//   - load: -events events (default 1,000,000) of the rights context
//     (rights.Granted / rights.Revoked for 10,000 users over 50 apps: grants
//     at app, module and item scope, revokes of rights held) appended with
//     EventStore.AppendMulti, 100 user streams x 10 events per transaction
//     (with exact expected versions) by 4 concurrent loaders. It sets up
//     the two figures below; its rate is printed for information.
//   - catch-up ReadAll (decoded): the whole log read from the zero position
//     with EventStore.ReadAll in batches of -batch (default 10,000) events,
//     decoded into domain events, as events/s (target >= 200,000/s).
//   - catch-up ReadAllRaw: the same read without decoding the data (only the
//     metadata is parsed), as events/s: the gap to ReadAll is the cost of
//     decoding.
//   - rebuild rights: the projection runtime's RebuildWith of the rights
//     projection over the whole log (the loaded events plus those of the
//     append phase), as events/s (target >= 30,000/s). The rebuilt
//     rights_grants rows of the loaded users are compared with what the
//     generator says they hold (a correctness check of the replay).
//   - content import and search: the content API over HTTP against the
//     real server. The phase builds ./cmd/cms (go build, from the module
//     root), starts `cms serve` on a free local port against a database of
//     its own (cms_bench_<random>, dropped at the end like the other), signs
//     in as admin, creates an app and a module "Products" of ten fields
//     (texts, numbers, a date, a boolean, a long text, a colour, a URL) and
//     imports deterministic pseudo-random products through
//     POST /api/generalcontent/instance/batch, 1,000 items per request, 4
//     requests at a time, 90% of them published and the rest concepts,
//     checking that the answer counts every create as a success: the import
//     rate as items/s (target >= 5,000). It imports up to each size of
//     -content-sizes (default 10,000 then 100,000, capped at -content-items,
//     default 100,000), waits until search counts every item, runs VACUUM
//     (ANALYZE) on the content tables (autovacuum, if on, would do it at
//     some point; without statistics the searches are many times slower)
//     and measures three searches with the app's token (which sees published
//     items only), each for -content-duration (default 10s) after a 2s
//     warm-up, by -content-clients closed-loop clients (default 16):
//     (a) category = one of 20 (in turn), sorted by values.price desc, page
//     1 of 20 items with the total count; (a) skip:true, the same without
//     pagination (every match, no count); (b) (a) AND a like on the title
//     AND a one-year window of releaseDate (varying per request). Reported
//     as p99 latency (target <= 20 ms for (a) and (b)) and req/s, with p50
//     and the CPU the server process, the bench and the machine used, and
//     the share of the CPUs' time the hypervisor gave to other guests
//     (steal: on a shared host, the first suspect of a slow run; the
//     loyalty phase's self measurements report the same). The first query of each kind is checked against the generated data
//     (total, order by price, each item a published match); any answer but
//     200 fails the phase. At the largest size, "(b) + writes" measures (b)
//     again while a paced writer creates 200 published items a second
//     (one per POST, up to 32 under way) in the same module, each create
//     followed by a search that must find it on its first page (see
//     content_follow.go): the p99 (target <= 20 ms) and the checks that
//     missed (must be 0; checks after creates that took the server's whole
//     read-your-writes wait are counted apart).
//     Then (-content-postgres, on by default) the
//     server is restarted on the same database with
//     CMS_SEARCH_INDEX_ITEMS=0, so that no module is kept in memory, and,
//     once it is idle, "(b) in PostgreSQL" measures (b) again at the last
//     size: the PostgreSQL search path (targets: p99 <= 20 ms and >= 1,500
//     req/s). -content-searches 'PostgreSQL' measures only that one.
//     With -keep the phase's database keeps what it needs to be worked in
//     again (the admin's password, the app, the module, the item count, in
//     its comment): -content-reuse NAME then imports only the items it
//     lacks, so that rounds of measurements on the same data skip the
//     import.
//   - writes: item creates, app-user registrations and loyalty earns over
//     HTTP, one per request, by -writers clients, as shares of plain
//     single-row INSERTs measured in the same alternating rounds (see
//     writes.go; targets: 30% and p50 < 5 ms for item creates, 20% for the
//     others).
//   - push: one push to a segment of -push-devices app users (default
//     100,000), dispatched by `cms serve` through its FCM provider to a
//     local FCM endpoint in the bench process (push.go): devices/s from
//     push.dispatch_started to push.dispatched (target >= 5,000), each
//     token received exactly once, and the server's peak RSS during the
//     dispatch.
//   - loyalty: -loyalty-transactions points transactions (default
//     1,000,000) over -loyalty-accounts identified users (default 10,000)
//     seeded straight into the event store of a `cms serve` (seeding rate,
//     live projections' catch-up); -loyalty-earns earn commands over HTTP
//     by 16 clients (commands/s, p50, p99); GET /api/loyalty/user/self by
//     16 clients with 64 signed-in users' tokens for -loyalty-duration, and
//     again while 16 other clients earn (p99, target <= 10 ms); `cms
//     projections rebuild loyalty` with the built binary beside the server
//     (events/s, target >= 30,000; peak RSS); 200 sampled accounts'
//     balances equal the bench's own sums before and after the rebuild
//     (loyalty.go).
//   - events: HALO's daily events (events.go). A `cms serve` with
//     -events-items products imported as in the content phase (default
//     10,000), 8 identified users signed in; then, in -events-rounds
//     rounds (default 3), the search (b) by 16 clients alone, 16 clients
//     reporting events alone (POST /api/events/daily, half with the
//     identified users' tokens, half with the app's), and both at once,
//     each for -events-duration (default 4s) after a 1s warm-up; then the
//     same for (b) with Cache-Control: no-cache (without the reports
//     alone). Reported: events accepted/s beside (b) and alone, (b)'s p99
//     beside the reports and alone, with the server's CPU; finally the
//     analytics projection must count every accepted report. About 1.5
//     minutes on a 2-core machine.
//   - media: the media library (media.go): a -media-upload-mb WAV
//     (default 256 MiB) streamed to POST /api/media/file against dd of the
//     same size into the server's data directory, in -media-rounds
//     alternating rounds (target: upload >= 80% of dd); -media-images
//     4000×3000 JPEGs made 320..640 pixels wide as WebP by 16 clients, each
//     request a first computation (p99 target < 300 ms; the server's peak
//     RSS meanwhile, target < 300 MB); one such image again and again for
//     -media-duration (targets >= 10,000 req/s, p99 < 10 ms).
//
// Each catch-up read and the rebuild stop after -phase-budget (default 2m)
// and then report the rate of the part done, marked PARTIAL, so that a slow
// store cannot make the run endless; -timeout (default 45m) bounds the whole
// run. The default run takes about 2 minutes on a 2-core machine, plus
// about 2.5 minutes for the content phase, 2.5 for the loyalty phase
// (about half of it seeding a million events and the server's live
// projections catching up with them), 1.5 for the events phase and 1 for
// the media phase (which writes about 3.5 GiB into the temporary
// directory, kept until the phase ends).
//
// The server may be shared: the number of other active sessions is printed
// before each timed phase, because they take CPU and fsyncs from the
// figures. -cpuprofile PREFIX writes a Go CPU profile per phase
// (PREFIX.<phase>.pprof) for `go tool pprof`; in the content phase that is
// the bench's HTTP client, not the server (profile that with perf). -strict
// makes a missed target an exit status of 1.
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
)

// Targets from the issue.
const (
	targetAppendRatio = 0.70
	targetReadRate    = 200_000
	targetRebuildRate = 30_000
)

type config struct {
	duration time.Duration
	warmup   time.Duration
	writers  int
	rounds   int
	events   int
	batch    int
	only     string
	keep     bool
	timeout  time.Duration
	// phaseBudget bounds each catch-up read and the rebuild: a pathological
	// store then gives a (partial) figure instead of an endless run.
	phaseBudget time.Duration
	cpuProfile  string
	strict      bool
	verbose     bool
	// content phase (content.go)
	contentItems     int
	contentSizes     string
	contentDuration  time.Duration
	contentClients   int
	contentSearches  string
	contentImporters int
	contentPostgres  bool
	contentReuse     string
	// push phase (push.go)
	pushDevices int
	// loyalty phase (loyalty.go)
	loyaltyAccounts     int
	loyaltyTransactions int
	loyaltyEarns        int
	loyaltyDuration     time.Duration
	// events phase (events.go)
	eventsItems    int
	eventsRounds   int
	eventsDuration time.Duration
	// web phase (web.go)
	webItems  int
	webRounds int
	// writes phase (writes.go)
	writesDuration time.Duration
	writesRounds   int
	writesKinds    string
	// media phase (media.go)
	mediaUploadMB int
	mediaRounds   int
	mediaImages   int
	mediaDuration time.Duration
}

func main() {
	var cfg config
	flag.DurationVar(&cfg.duration, "duration", 10*time.Second, "append phase: timed length of each of the two measurements (store and raw), split into -rounds")
	flag.DurationVar(&cfg.warmup, "warmup", 250*time.Millisecond, "append phase: untimed warm-up before each round's measurement")
	flag.IntVar(&cfg.writers, "writers", 16, "concurrent writers in the append phase")
	flag.IntVar(&cfg.rounds, "rounds", 10, "append phase: alternate raw and store measurements in this many rounds (-duration each in total)")
	flag.IntVar(&cfg.events, "events", 1_000_000, "events to load for the read and rebuild phases")
	flag.IntVar(&cfg.batch, "batch", 10_000, "ReadAll batch size of the catch-up read")
	flag.StringVar(&cfg.only, "only", "", "run one phase only: append, read, rebuild, content, writes, push, loyalty, web, events or media (read and rebuild load -events first)")
	flag.BoolVar(&cfg.keep, "keep", false, "keep the benchmark database instead of dropping it")
	flag.DurationVar(&cfg.timeout, "timeout", 45*time.Minute, "abort the whole run after this long")
	flag.DurationVar(&cfg.phaseBudget, "phase-budget", 2*time.Minute, "stop each catch-up read and the rebuild after this long and report the partial rate")
	flag.StringVar(&cfg.cpuProfile, "cpuprofile", "", "write a Go CPU profile per phase to PREFIX.<phase>.pprof")
	flag.BoolVar(&cfg.strict, "strict", false, "exit with status 1 when a figure misses its target")
	flag.BoolVar(&cfg.verbose, "v", false, "log details (server set-up, runtime logs)")
	flag.IntVar(&cfg.contentItems, "content-items", 100_000, "content phase: items to import at most")
	flag.StringVar(&cfg.contentSizes, "content-sizes", "10000,100000", "content phase: comma-separated item counts to import up to and measure the searches at (capped at -content-items)")
	flag.DurationVar(&cfg.contentDuration, "content-duration", 10*time.Second, "content phase: timed length of each search measurement (after a 2s warm-up)")
	flag.IntVar(&cfg.contentClients, "content-clients", 16, "content phase: concurrent search clients (closed loop)")
	flag.IntVar(&cfg.contentImporters, "content-importers", 4, "content phase: concurrent batch requests of the import")
	flag.BoolVar(&cfg.contentPostgres, "content-postgres", true, "content phase: at the end, restart the server with CMS_SEARCH_INDEX_ITEMS=0 and measure \"(b) in PostgreSQL\" (the in-memory copy off; -content-searches selects it by that name)")
	flag.StringVar(&cfg.contentReuse, "content-reuse", "", "content phase: work in this database, which a content phase run with -keep left, importing only the items it lacks (it is kept)")
	flag.StringVar(&cfg.contentSearches, "content-searches", "", "content phase: measure only the searches whose name matches this regular expression, e.g. '^\\(b\\)' (default all)")
	flag.IntVar(&cfg.webItems, "web-items", webItemsDefault, "web phase: items in the module whose list is measured")
	flag.IntVar(&cfg.webRounds, "web-rounds", 15, "web phase: navigations and filter changes measured")
	flag.DurationVar(&cfg.writesDuration, "writes-duration", 12*time.Second, "writes phase: timed length of each kind of write, split into -writes-rounds")
	flag.IntVar(&cfg.writesRounds, "writes-rounds", 4, "writes phase: rounds the kinds of write alternate in")
	flag.StringVar(&cfg.writesKinds, "writes-kinds", "", "writes phase: measure only the kinds of write whose name matches this regular expression (the raw ceiling always)")
	flag.IntVar(&cfg.pushDevices, "push-devices", 100_000, "push phase: app users (one device each) in the pushed segment")
	flag.IntVar(&cfg.loyaltyAccounts, "loyalty-accounts", 10_000, "loyalty phase: identified users with a loyalty account")
	flag.IntVar(&cfg.loyaltyTransactions, "loyalty-transactions", 1_000_000, "loyalty phase: points transactions seeded over the accounts")
	flag.IntVar(&cfg.loyaltyEarns, "loyalty-earns", 20_000, "loyalty phase: earn commands over HTTP (16 clients)")
	flag.DurationVar(&cfg.loyaltyDuration, "loyalty-duration", 10*time.Second, "loyalty phase: timed length of each self measurement (after a 2s warm-up)")
	flag.IntVar(&cfg.eventsItems, "events-items", 10_000, "events phase: items imported for the search (b)")
	flag.IntVar(&cfg.eventsRounds, "events-rounds", 3, "events phase: rounds of (b) alone and (b) beside the reports, for each of (b) and (b) no-cache")
	flag.DurationVar(&cfg.eventsDuration, "events-duration", 4*time.Second, "events phase: timed length of each measurement of a round (after a 1s warm-up)")
	flag.IntVar(&cfg.mediaUploadMB, "media-upload-mb", 256, "media phase: size of the uploaded file (and of dd's) in MiB")
	flag.IntVar(&cfg.mediaRounds, "media-rounds", 7, "media phase: alternating rounds of dd and an upload")
	flag.IntVar(&cfg.mediaImages, "media-images", 32, "media phase: distinct 4000×3000 JPEGs uploaded, each made at 5 widths by the first-transform measurement")
	flag.DurationVar(&cfg.mediaDuration, "media-duration", 10*time.Second, "media phase: timed length of the cached-transform measurement (after a 1s warm-up)")
	flag.Parse()

	if err := cfg.validate(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		flag.Usage()
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	ctx, cancel := context.WithTimeout(ctx, cfg.timeout)
	defer cancel()

	res, err := run(ctx, cfg)
	res.print(os.Stdout)
	if err != nil {
		if errors.Is(ctx.Err(), context.DeadlineExceeded) {
			err = fmt.Errorf("%w (the whole run is bounded by -timeout %s)", err, cfg.timeout)
		}
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
	if cfg.strict && res.missed() {
		os.Exit(1)
	}
}

func (c *config) validate() error {
	switch c.only {
	case "", "append", "read", "rebuild", "content", "writes", "push", "loyalty", "web", "events", "media":
	default:
		return fmt.Errorf("-only %q: want append, read, rebuild, content, writes, push, loyalty, web, events or media", c.only)
	}
	if err := c.validateMedia(); err != nil {
		return err
	}
	if err := c.validateEvents(); err != nil {
		return err
	}
	if c.writesRounds < 1 || c.writesDuration/time.Duration(max(c.writesRounds, 1)) < 100*time.Millisecond {
		return fmt.Errorf("-writes-rounds %d: want at least 1, and rounds of at least 100ms", c.writesRounds)
	}
	if c.webItems < 1 || c.webRounds < 1 {
		return errors.New("-web-items and -web-rounds must be positive")
	}
	if err := c.validateLoyalty(); err != nil {
		return err
	}
	if c.pushDevices < 1 {
		return fmt.Errorf("-push-devices %d: want at least 1", c.pushDevices)
	}
	if err := c.validateContent(); err != nil {
		return err
	}
	if c.writers < 1 || c.writers > 200 {
		return fmt.Errorf("-writers %d: want 1..200", c.writers)
	}
	if c.duration <= 0 || c.warmup < 0 {
		return errors.New("-duration must be positive and -warmup not negative")
	}
	if c.rounds < 1 || c.duration/time.Duration(c.rounds) < 100*time.Millisecond {
		return fmt.Errorf("-rounds %d: want at least 1, and rounds of at least 100ms", c.rounds)
	}
	if c.events < 1 {
		return fmt.Errorf("-events %d: want at least 1", c.events)
	}
	if c.phaseBudget <= 0 {
		return errors.New("-phase-budget must be positive")
	}
	if c.batch < 1 {
		return fmt.Errorf("-batch %d: want at least 1", c.batch)
	}
	return nil
}

func (c *config) runs(phase string) bool { return c.only == "" || c.only == phase }

// logger is the bench's own progress log (stderr).
var logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelInfo}))

func progressf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "bench: "+format+"\n", args...)
}

func run(ctx context.Context, cfg config) (*results, error) {
	res := &results{}
	serverURL := os.Getenv("DATABASE_URL")
	if serverURL == "" {
		var log *slog.Logger
		if cfg.verbose {
			log = logger
		}
		u, err := postgres.EnsureServer(ctx, postgres.DefaultDataDir(), 0, log)
		if err != nil {
			return res, fmt.Errorf("no DATABASE_URL and no local PostgreSQL: %w", err)
		}
		serverURL = u
	}
	db, err := createDatabase(ctx, serverURL)
	if err != nil {
		return res, err
	}
	res.header = append(res.header, "database: "+db.name)
	defer db.release(cfg.keep)

	pool, err := db.connect(ctx, cfg.writers+6)
	if err != nil {
		return res, err
	}
	defer pool.Close()
	if _, err := postgres.Migrate(ctx, pool); err != nil {
		return res, fmt.Errorf("migrate %s: %w", db.name, err)
	}
	info, err := serverInfo(ctx, pool)
	if err != nil {
		return res, err
	}
	res.header = append(res.header, info...)
	res.header = append(res.header, fmt.Sprintf("client: %s %s/%s, GOMAXPROCS=%d, NumCPU=%d",
		runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.GOMAXPROCS(0), runtime.NumCPU()))

	store := postgres.NewEventStore(pool, eventcodec.Default())
	defer store.Close()

	if cfg.runs("append") {
		if err := profiled(cfg, "append", func() error { return appendPhase(ctx, cfg, pool, store, res) }); err != nil {
			return res, fmt.Errorf("append phase: %w", err)
		}
	}
	if cfg.runs("read") || cfg.runs("rebuild") {
		if err := profiled(cfg, "load", func() error { return loadPhase(ctx, cfg, pool, store, res) }); err != nil {
			return res, fmt.Errorf("load phase: %w", err)
		}
	}
	if cfg.runs("read") {
		if err := profiled(cfg, "read", func() error { return readPhase(ctx, cfg, pool, store, res) }); err != nil {
			return res, fmt.Errorf("read phase: %w", err)
		}
	}
	if cfg.runs("rebuild") {
		if err := profiled(cfg, "rebuild", func() error { return rebuildPhase(ctx, cfg, pool, store, res) }); err != nil {
			return res, fmt.Errorf("rebuild phase: %w", err)
		}
	}
	if cfg.runs("content") {
		if err := profiled(cfg, "content", func() error { return contentPhase(ctx, cfg, serverURL, res) }); err != nil {
			return res, fmt.Errorf("content phase: %w", err)
		}
	}
	if cfg.runs("writes") {
		if err := profiled(cfg, "writes", func() error { return writesPhase(ctx, cfg, serverURL, res) }); err != nil {
			return res, fmt.Errorf("writes phase: %w", err)
		}
	}
	if cfg.runs("push") {
		if err := profiled(cfg, "push", func() error { return pushPhase(ctx, cfg, serverURL, res) }); err != nil {
			return res, fmt.Errorf("push phase: %w", err)
		}
	}
	if cfg.runs("loyalty") {
		if err := profiled(cfg, "loyalty", func() error { return loyaltyPhase(ctx, cfg, serverURL, res) }); err != nil {
			return res, fmt.Errorf("loyalty phase: %w", err)
		}
	}
	if cfg.runs("events") {
		if err := profiled(cfg, "events", func() error { return eventsPhase(ctx, cfg, serverURL, res) }); err != nil {
			return res, fmt.Errorf("events phase: %w", err)
		}
	}
	if cfg.runs("web") {
		if err := profiled(cfg, "web", func() error { return webPhase(ctx, cfg, serverURL, res) }); err != nil {
			return res, fmt.Errorf("web phase: %w", err)
		}
	}
	if cfg.runs("media") {
		if err := profiled(cfg, "media", func() error { return mediaPhase(ctx, cfg, serverURL, res) }); err != nil {
			return res, fmt.Errorf("media phase: %w", err)
		}
	}
	return res, nil
}

func profiled(cfg config, phase string, f func() error) error {
	if cfg.cpuProfile == "" {
		return f()
	}
	name := cfg.cpuProfile + "." + phase + ".pprof"
	out, err := os.Create(name)
	if err != nil {
		return err
	}
	defer out.Close()
	if err := pprof.StartCPUProfile(out); err != nil {
		return err
	}
	err = f()
	pprof.StopCPUProfile()
	progressf("CPU profile of %s: %s", phase, name)
	return err
}

// ---- the benchmark database ----

type benchDB struct {
	name  string
	admin *pgx.ConnConfig // the server's database named in the URL
}

func createDatabase(ctx context.Context, serverURL string) (*benchDB, error) {
	admin, err := pgx.ParseConfig(serverURL)
	if err != nil {
		return nil, fmt.Errorf("database url: %w", err)
	}
	var b [4]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	db := &benchDB{name: "cms_bench_" + hex.EncodeToString(b[:]), admin: admin}
	cctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(cctx, admin)
	if err != nil {
		return nil, fmt.Errorf("connect to %s@%s/%s: %w", admin.User, admin.Host, admin.Database, err)
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(cctx, "CREATE DATABASE "+pgx.Identifier{db.name}.Sanitize()); err != nil {
		return nil, fmt.Errorf("create database %s (the role needs CREATEDB): %w", db.name, err)
	}
	progressf("created database %s on %s", db.name, admin.Host)
	return db, nil
}

func (db *benchDB) connect(ctx context.Context, maxConns int) (*pgxpool.Pool, error) {
	cfg, err := pgxpool.ParseConfig("")
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig = db.admin.Copy()
	cfg.ConnConfig.Database = db.name
	if cfg.MaxConns < int32(maxConns) {
		cfg.MaxConns = int32(maxConns)
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to %s: %w", db.name, err)
	}
	return pool, nil
}

// release drops the database, or keeps it (-keep) and says so.
func (db *benchDB) release(keep bool) {
	if keep {
		progressf("kept database %s", db.name)
		return
	}
	if err := db.drop(); err != nil {
		progressf("could not drop database %s: %v", db.name, err)
	}
}

// drop removes the database (WITH FORCE: stray sessions of an aborted run
// must not keep it alive). It uses its own context: it also runs after an
// interrupt or a timeout.
func (db *benchDB) drop() error {
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	conn, err := pgx.ConnectConfig(ctx, db.admin)
	if err != nil {
		return err
	}
	defer conn.Close(context.Background())
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{db.name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return err
	}
	progressf("dropped database %s", db.name)
	return nil
}

func serverInfo(ctx context.Context, pool *pgxpool.Pool) ([]string, error) {
	var version string
	if err := pool.QueryRow(ctx, `SELECT current_setting('server_version')`).Scan(&version); err != nil {
		return nil, err
	}
	rows, err := pool.Query(ctx, `SELECT name, current_setting(name) FROM pg_settings
		WHERE name IN ('synchronous_commit', 'fsync', 'wal_sync_method', 'commit_delay', 'shared_buffers', 'max_wal_size')
		ORDER BY name`)
	if err != nil {
		return nil, err
	}
	var settings []string
	for rows.Next() {
		var n, v string
		if err := rows.Scan(&n, &v); err != nil {
			rows.Close()
			return nil, err
		}
		settings = append(settings, n+"="+v)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	return []string{"server: PostgreSQL " + version + " (" + strings.Join(settings, ", ") + ")"}, nil
}

// otherSessions counts the server's other active client sessions: load the
// bench does not control.
func otherSessions(ctx context.Context, pool *pgxpool.Pool) int {
	var n int
	_ = pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
		WHERE backend_type = 'client backend' AND state = 'active' AND datname IS DISTINCT FROM current_database()`).Scan(&n)
	return n
}
