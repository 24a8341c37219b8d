package main

// The loyalty phase: the points ledger over HTTP against the real server
// binary, on a log of -loyalty-transactions points transactions over
// -loyalty-accounts identified users:
//
//   - a database of its own and `cms serve` (launchServer); an app;
//   - seeding straight into the event store (EventStore.AppendMulti,
//     loyaltySeedBatch accounts per transaction, loyaltySeedLoaders at a
//     time): per account appuser.IdentifiedRegistered (all sharing one
//     bcrypt hash, so that any of them can sign in) and
//     IdentifiedEmailClaimed, then its loyalty stream: AccountOpened and
//     its transactions, about 90% PointsEarned (one in five with an
//     expiresAt one to two years ahead) and 10% PointsRedeemed taking
//     lots as the domain does (expiring lots first, soonest first, then
//     the others in earn order), with exact running balances. Reported:
//     the seeding rate and how long the server's live projections took to
//     reach the last seeded event;
//   - earn over HTTP: -loyalty-earns POST /api/loyalty/user/{id}/earn by
//     loyaltyClients clients with a CMS admin token, on random accounts,
//     each with its own idempotencyKey: commands/s, p50, p99;
//   - self: loyaltyLogins identified users sign in (password grant of
//     /api/segmentation/identified/login); loyaltyClients clients GET
//     /api/loyalty/user/self with their tokens in turn for
//     -loyalty-duration after a warm-up (req/s, p50, p99, target p99 <=
//     10 ms), then again while loyaltyClients other clients keep earning
//     (p99 under write load);
//   - correctness: loyaltySample accounts' GET /api/loyalty/user/{id}
//     balance, earned, redeemed and transactionCount equal the bench's own
//     sums;
//   - rebuild: the built binary's `cms projections rebuild loyalty` beside
//     the running server: the log's events / the command's wall time
//     (target >= 30,000/s) and its peak RSS; then the same sample is
//     checked again through the server, which reads the rebuilt version.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/password"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
)

// targetLoyaltySelfP99 is the target for GET self under load (ms).
const targetLoyaltySelfP99 = 10

const (
	loyaltySeedBatch    = 20 // accounts (3 streams each) per AppendMulti
	loyaltySeedLoaders  = 4
	loyaltyClients      = 16
	loyaltyLogins       = 64
	loyaltySample       = 200
	loyaltyWarmup       = 2 * time.Second
	loyaltyCatchUpWait  = 10 * time.Minute
	loyaltyRequestLimit = 30 * time.Second
	loyaltyPassword     = "bench-loyalty-password"
	loyaltyRedeemEvery  = 10 // every 10th transaction of an account is a redemption (when it has points)
	loyaltyExpiringOf   = 5  // one earn in 5 carries an expiresAt
)

// loyaltyAccount is what the bench knows of an account: the sums the
// server must show.
type loyaltyAccount struct {
	id, email string
	balance   atomic.Int64
	earned    atomic.Int64
	redeemed  atomic.Int64
	count     atomic.Int64 // points transactions
}

func (a *loyaltyAccount) earn(n int64) {
	a.balance.Add(n)
	a.earned.Add(n)
	a.count.Add(1)
}

// benchIdentifiedID is an identified user id of HALO's shape
// ("identified-" and 26 characters of [a-z2-7]) that encodes i.
func benchIdentifiedID(i int) string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz234567"
	b := []byte("identified-bench" + strings.Repeat("a", 21))
	for k := len(b) - 1; i > 0; k-- {
		b[k] = alphabet[i%32]
		i /= 32
	}
	return string(b)
}

// transactionsOf is how many seeded transactions account i of n gets.
func transactionsOf(i, n, total int) int {
	t := total / n
	if i < total%n {
		t++
	}
	return t
}

func (c *config) validateLoyalty() error {
	if c.loyaltyAccounts < loyaltyLogins {
		return fmt.Errorf("-loyalty-accounts %d: want at least %d (the signed-in users)", c.loyaltyAccounts, loyaltyLogins)
	}
	if c.loyaltyTransactions < c.loyaltyAccounts {
		return fmt.Errorf("-loyalty-transactions %d: want at least one per account (-loyalty-accounts %d)", c.loyaltyTransactions, c.loyaltyAccounts)
	}
	if c.loyaltyEarns < 1 {
		return fmt.Errorf("-loyalty-earns %d: want at least 1", c.loyaltyEarns)
	}
	if c.loyaltyDuration <= 0 {
		return errors.New("-loyalty-duration must be positive")
	}
	return nil
}

// loyaltyBench is the state of one run of the phase.
type loyaltyBench struct {
	cfg      config
	api      *cmsAPI
	admin    string
	accounts []*loyaltyAccount
	run      string // makes the idempotency keys of this run unique
	keys     atomic.Int64
}

func loyaltyPhase(ctx context.Context, cfg config, serverURL string, res *results) (err error) {
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
	pool, err := db.connect(ctx, loyaltySeedLoaders+2)
	if err != nil {
		return err
	}
	defer pool.Close()

	tmp, err := os.MkdirTemp("", "cms-bench-loyalty-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	dbURL := databaseURL(serverURL, db.name)
	srv, adminPassword, err := launchServer(ctx, "loyalty", tmp, dbURL)
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

	a := newCMSAPI(srv.base, 2*loyaltyClients)
	defer a.hc.CloseIdleConnections()
	admin, app, err := a.adminApp(ctx, adminPassword, "loyalty bench")
	if err != nil {
		return err
	}
	run, err := randomHex(4)
	if err != nil {
		return err
	}
	b := &loyaltyBench{cfg: cfg, api: a, admin: admin, run: run}
	res.header = append(res.header, fmt.Sprintf("loyalty phase: database %s, %d accounts, %d seeded transactions, server pid %d",
		db.name, cfg.loyaltyAccounts, cfg.loyaltyTransactions, srv.cmd.Process.Pid))

	// 1. Seed, and wait for the live projections.
	store := postgres.NewEventStore(pool, eventcodec.Default())
	defer store.Close()
	progressf("loyalty: seeding %d accounts and %d transactions (AppendMulti, %d accounts per transaction, %d loaders); %d other active sessions on the server",
		cfg.loyaltyAccounts, cfg.loyaltyTransactions, loyaltySeedBatch, loyaltySeedLoaders, otherSessions(ctx, pool))
	seedStart := time.Now()
	seeded, last, err := b.seed(ctx, store, app.ID)
	if err != nil {
		return fmt.Errorf("seed: %w", err)
	}
	seedTook := time.Since(seedStart)
	progressf("loyalty: seeded %d events in %s (%s events/s); waiting for the server's projections to reach %s",
		seeded, seedTook.Round(time.Millisecond), thousands(rate(seeded, seedTook)), last)
	waitStart := time.Now()
	reached, err := waitProjections(ctx, pool, last)
	if err != nil {
		return err
	}
	var each []string
	for _, name := range slices.Sorted(maps.Keys(reached)) {
		each = append(each, fmt.Sprintf("%s +%s", name, reached[name].Round(100*time.Millisecond)))
	}
	loyaltyAt := waitStart.Add(reached["loyalty"]).Sub(seedStart)
	allAt := time.Since(seedStart)
	res.add(figure{name: "loyalty seed (event store), events/s", value: rate(seeded, seedTook), unit: "events/s",
		detail: fmt.Sprintf("%d events (%d identified users with their email claims, %d account streams: AccountOpened + %d transactions, ~%d%% redemptions, 1 earn in %d with an expiry) in %s; AppendMulti of %d accounts by %d loaders",
			seeded, cfg.loyaltyAccounts, cfg.loyaltyAccounts, cfg.loyaltyTransactions, 100/loyaltyRedeemEvery, loyaltyExpiringOf,
			seedTook.Round(time.Millisecond), loyaltySeedBatch, loyaltySeedLoaders)})
	res.add(figure{name: "loyalty live projection catch-up, events/s", value: rate(seeded, loyaltyAt), unit: "events/s",
		detail: fmt.Sprintf("seeded events / (seeding start -> the loyalty projection of cms serve at the last seeded event) = %s; "+
			"every projection there after %s; after the seeding ended each reached it at: %s",
			loyaltyAt.Round(time.Millisecond), allAt.Round(time.Millisecond), strings.Join(each, ", "))})

	// 2. Earn over HTTP.
	progressf("loyalty: %d earns over HTTP by %d clients; %d other active sessions on the server", cfg.loyaltyEarns, loyaltyClients, otherSessions(ctx, pool))
	cpu0 := srv.cpuSeconds()
	st, err := runFixed(ctx, loyaltyClients, cfg.loyaltyEarns, func(ctx context.Context, r *rand.Rand) error {
		return b.earn(ctx, b.accounts[r.IntN(len(b.accounts))], 1+r.Int64N(100))
	})
	if err != nil {
		return fmt.Errorf("earn: %w", err)
	}
	res.add(figure{name: "loyalty earn over HTTP, commands/s", value: st.rate(), unit: "commands/s",
		detail: fmt.Sprintf("%d POST .../earn (201 each, own idempotencyKey, random accounts) by %d clients in %.1fs; latency p50 %s, p99 %s, max %s; server CPU %.2f cores",
			st.ops, loyaltyClients, st.elapsed.Seconds(), ms2(st.pct(0.5)), ms2(st.pct(0.99)), ms2(st.pct(1)),
			(srv.cpuSeconds()-cpu0)/st.elapsed.Seconds())})
	res.add(figure{name: "loyalty earn p99 ms", value: ms(st.pct(0.99)), unit: "ms", decimals: 1,
		detail: fmt.Sprintf("p50 %s", ms2(st.pct(0.5)))})

	// 3. self under load.
	tokens, err := b.signIn(ctx, app.ClientID, app.ClientSecret)
	if err != nil {
		return err
	}
	for _, withWrites := range []bool{false, true} {
		if err := b.measureSelf(ctx, srv, pool, tokens, withWrites, res); err != nil {
			return err
		}
	}

	// 4. Correctness against the bench's sums, once the loyalty projection
	// has applied every event (a write answers after at most
	// CMS_READ_YOUR_WRITES_TIMEOUT even when it lags).
	head, err := store.Last(ctx)
	if err != nil {
		return err
	}
	t1 := time.Now()
	if _, err := waitProjections(ctx, pool, head); err != nil {
		return err
	}
	progressf("loyalty: the projections reached the log's last event %s after %s", head, time.Since(t1).Round(time.Millisecond))
	sample := b.sample()
	before, err := b.verify(ctx, pool, sample)
	if err != nil {
		return fmt.Errorf("before the rebuild: %w", err)
	}
	progressf("loyalty: %d sampled accounts' balances equal the bench's sums", len(sample))

	// 5. Rebuild with the binary, beside the running server.
	if err := b.rebuild(ctx, srv, dbURL, tmp, pool, res); err != nil {
		return err
	}
	after, err := b.verify(ctx, pool, sample)
	if err != nil {
		return fmt.Errorf("after the rebuild: %w", err)
	}
	same, diff := 0, ""
	for id, body := range before {
		if jsonEqual(body, after[id]) {
			same++
		} else if diff == "" {
			diff = fmt.Sprintf("; e.g. %s before %s, after %s", id, snippet(body, 300), snippet(after[id], 300))
		}
	}
	progressf("loyalty: after the rebuild the %d sampled balances still equal the bench's sums; %d of %d GET bodies equal to before%s",
		len(sample), same, len(sample), diff)
	res.header = append(res.header, fmt.Sprintf("loyalty check: %d sampled accounts (GET /api/loyalty/user/{id}): balance, earned, redeemed and transactionCount equal the bench's sums before and after the rebuild; %d of %d answers equal as JSON before and after%s",
		len(sample), same, len(sample), diff))
	return nil
}

// ---- seeding ----

// seed appends every account's identified user, email claim and loyalty
// stream; it returns the events written and the position of the last
// one.
func (b *loyaltyBench) seed(ctx context.Context, store *postgres.EventStore, app string) (int64, event.Position, error) {
	hash, err := password.Bcrypt{Cost: 4}.Hash(loyaltyPassword) // the server checks at the hash's cost
	if err != nil {
		return 0, event.Position{}, err
	}
	n := b.cfg.loyaltyAccounts
	b.accounts = make([]*loyaltyAccount, n)
	for i := range b.accounts {
		b.accounts[i] = &loyaltyAccount{id: benchIdentifiedID(i), email: fmt.Sprintf("loyalty-bench-%06d@example.com", i)}
	}
	var (
		written atomic.Int64
		mu      sync.Mutex
		last    event.Position
	)
	expiryBase := time.Now().UTC().Add(365 * 24 * time.Hour).Truncate(time.Second)
	stop := progressLoop(ctx, "loyalty seed", func() (int64, int64) {
		return written.Load(), int64(3*n + b.cfg.loyaltyTransactions)
	})
	defer stop()
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(loyaltySeedLoaders)
	gen := ids.Generator{}
	for from := 0; from < n; from += loyaltySeedBatch {
		to := min(from+loyaltySeedBatch, n)
		g.Go(func() error {
			var users, accounts []event.StreamAppend
			events := 0
			for i := from; i < to; i++ {
				acc := b.accounts[i]
				meta := event.Metadata{Actor: "system", App: app}
				users = append(users,
					event.StreamAppend{Stream: appuser.IdentifiedStream(acc.id), ExpectedVersion: event.NoStream, Events: []event.Event{{
						Data: appuser.IdentifiedRegistered{IdentifiedID: acc.id, App: app, Email: acc.email, PasswordHash: hash,
							Network: appuser.NetworkHalo, Profile: appuser.UserProfile{Name: "Bench", Surname: fmt.Sprintf("User %06d", i),
								DisplayName: fmt.Sprintf("Bench User %06d", i)}},
						Meta: meta}}},
					event.StreamAppend{Stream: appuser.IdentifiedEmailStream(app, acc.email), ExpectedVersion: event.NoStream, Events: []event.Event{{
						Data: appuser.IdentifiedEmailClaimed{App: app, Email: acc.email, IdentifiedID: acc.id}, Meta: meta}}})
				evs := accountHistory(acc, app, i, transactionsOf(i, n, b.cfg.loyaltyTransactions), expiryBase, gen.NewID)
				for k := range evs {
					evs[k].Meta = meta
				}
				accounts = append(accounts, event.StreamAppend{Stream: loyalty.AccountStream(acc.id), ExpectedVersion: event.NoStream, Events: evs})
				events += 2 + len(evs)
			}
			// The loyalty streams last: the batch's last position is a loyalty event.
			r, err := store.AppendMulti(gctx, append(users, accounts...)...)
			if err != nil {
				return err
			}
			written.Add(int64(events))
			mu.Lock()
			if last.Less(r.Last) {
				last = r.Last
			}
			mu.Unlock()
			return nil
		})
	}
	err = g.Wait()
	return written.Load(), last, err
}

// accountHistory is account i's loyalty stream: AccountOpened and t points
// transactions with exact running balances and lot uses; it records the
// sums in acc.
func accountHistory(acc *loyaltyAccount, app string, i, t int, expiryBase time.Time, newID func() string) []event.Event {
	r := rand.New(rand.NewPCG(uint64(i), 0x10_7a17))
	type lot struct {
		id   string
		left int64
	}
	// Expiring lots expire in earn order (their expiries increase), so
	// both queues are consumed from the front.
	var expiring, plain []lot
	take := func(q []lot, need int64, uses []loyalty.LotUse) ([]lot, int64, []loyalty.LotUse) {
		for need > 0 && len(q) > 0 {
			n := min(need, q[0].left)
			uses = append(uses, loyalty.LotUse{Lot: q[0].id, Amount: n})
			q[0].left -= n
			need -= n
			if q[0].left == 0 {
				q = q[1:]
			}
		}
		return q, need, uses
	}
	evs := make([]event.Event, 0, t+1)
	evs = append(evs, event.Event{Data: loyalty.AccountOpened{Account: acc.id, App: app}})
	var balance, earned, redeemed int64
	for k := 0; k < t; k++ {
		tx := newID()
		if k%loyaltyRedeemEvery == loyaltyRedeemEvery-1 && balance > 0 {
			amount := min(balance, 1+r.Int64N(300))
			var uses []loyalty.LotUse
			var need int64
			expiring, need, uses = take(expiring, amount, uses)
			plain, _, uses = take(plain, need, uses)
			balance -= amount
			redeemed += amount
			evs = append(evs, event.Event{Data: loyalty.PointsRedeemed{Account: acc.id, App: app, Transaction: tx, Amount: amount,
				Balance: balance, Reason: "bench redemption", Reference: "order-" + strconv.Itoa(k), IdempotencyKey: tx, Lots: uses}})
			continue
		}
		amount := 1 + r.Int64N(100)
		e := loyalty.PointsEarned{Account: acc.id, App: app, Transaction: tx, Amount: amount, Reason: "bench purchase",
			Reference: "receipt-" + strconv.Itoa(k), IdempotencyKey: tx}
		if k%loyaltyExpiringOf == 0 {
			at := expiryBase.Add(time.Duration(k) * time.Hour).Add(time.Duration(r.IntN(3600)) * time.Second)
			e.ExpiresAt = &at
			expiring = append(expiring, lot{tx, amount})
		} else {
			plain = append(plain, lot{tx, amount})
		}
		balance += amount
		earned += amount
		e.Balance = balance
		evs = append(evs, event.Event{Data: e})
	}
	acc.balance.Store(balance)
	acc.earned.Store(earned)
	acc.redeemed.Store(redeemed)
	acc.count.Store(int64(t))
	return evs
}

// waitProjections waits until every projection's checkpoint has reached
// pos; it returns when each got there (from the call).
func waitProjections(ctx context.Context, pool *pgxpool.Pool, pos event.Position) (map[string]time.Duration, error) {
	start := time.Now()
	deadline := start.Add(loyaltyCatchUpWait)
	lastReport := start
	reached := map[string]time.Duration{}
	for {
		rows, err := pool.Query(ctx, `SELECT name, tx_id::text::bigint, position FROM projection_checkpoints
			WHERE name NOT LIKE '%@%' ORDER BY name`)
		if err != nil {
			return nil, err
		}
		var behind, names []string
		for rows.Next() {
			var name string
			var tx, p int64
			if err := rows.Scan(&name, &tx, &p); err != nil {
				rows.Close()
				return nil, err
			}
			names = append(names, name)
			if (event.Position{TxID: uint64(tx), Pos: p}).Less(pos) {
				behind = append(behind, fmt.Sprintf("%s at %d/%d", name, tx, p))
			} else if _, ok := reached[name]; !ok {
				reached[name] = time.Since(start)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if !slices.Contains(names, "loyalty") {
			return nil, fmt.Errorf("no checkpoint of a projection named loyalty (projections: %s): does cms serve run it?", strings.Join(names, ", "))
		}
		if len(behind) == 0 {
			return reached, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("after %s these projections are still behind %s: %s", loyaltyCatchUpWait, pos, strings.Join(behind, "; "))
		}
		if time.Since(lastReport) > 10*time.Second {
			progressf("loyalty: waiting for %s", strings.Join(behind, "; "))
			lastReport = time.Now()
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// ---- HTTP ----

type loyaltyTxView struct {
	ID     string `json:"id"`
	Type   string `json:"type"`
	Amount int64  `json:"amount"`
}

type loyaltyUserView struct {
	ID               string `json:"id"`
	Balance          int64  `json:"balance"`
	Earned           int64  `json:"earned"`
	Redeemed         int64  `json:"redeemed"`
	TransactionCount int64  `json:"transactionCount"`
}

// earn posts one earn with a key of its own and adds it to acc's sums
// once the server accepted it (201).
func (b *loyaltyBench) earn(ctx context.Context, acc *loyaltyAccount, amount int64) error {
	ctx, cancel := context.WithTimeout(ctx, loyaltyRequestLimit)
	defer cancel()
	key := fmt.Sprintf("bench-%s-%d", b.run, b.keys.Add(1))
	var out struct {
		Balance     int64         `json:"balance"`
		Transaction loyaltyTxView `json:"transaction"`
	}
	err := b.api.call(ctx, http.MethodPost, "/api/loyalty/user/"+acc.id+"/earn", b.admin,
		map[string]any{"amount": amount, "reason": "bench earn", "idempotencyKey": key}, http.StatusCreated, &out)
	if err != nil {
		return err
	}
	if out.Transaction.Amount != amount || out.Transaction.ID == "" || out.Balance < amount {
		return fmt.Errorf("earn %d on %s: answer balance %d, transaction %+v", amount, acc.id, out.Balance, out.Transaction)
	}
	acc.earn(amount)
	return nil
}

// signedIn is an identified user's token and loyalty account.
type signedIn struct {
	token string
	acc   *loyaltyAccount
}

// signIn signs loyaltyLogins identified users in with the app's token and
// checks that each token's self is its own account.
func (b *loyaltyBench) signIn(ctx context.Context, clientID, secret string) ([]signedIn, error) {
	appToken, err := b.api.token(ctx, url.Values{"grant_type": {"client_credentials"}, "client_id": {clientID}, "client_secret": {secret}})
	if err != nil {
		return nil, fmt.Errorf("app token: %w", err)
	}
	t0 := time.Now()
	tokens := make([]signedIn, loyaltyLogins)
	step := len(b.accounts) / loyaltyLogins
	for k := range tokens {
		acc := b.accounts[k*step]
		var login struct {
			User struct {
				ID string `json:"id"`
			} `json:"user"`
			Token struct {
				AccessToken string `json:"access_token"`
			} `json:"token"`
		}
		err := b.api.call(ctx, http.MethodPost, "/api/segmentation/identified/login", appToken,
			url.Values{"network": {"halo"}, "email": {acc.email}, "password": {loyaltyPassword}}, http.StatusOK, &login)
		if err != nil {
			return nil, fmt.Errorf("sign in %s: %w", acc.email, err)
		}
		if login.User.ID != acc.id || login.Token.AccessToken == "" {
			return nil, fmt.Errorf("sign in %s: user %q, token %q", acc.email, login.User.ID, login.Token.AccessToken)
		}
		tokens[k] = signedIn{token: login.Token.AccessToken, acc: acc}
		var self loyaltyUserView
		if err := b.api.call(ctx, http.MethodGet, "/api/loyalty/user/self", tokens[k].token, nil, http.StatusOK, &self); err != nil {
			return nil, fmt.Errorf("self of %s: %w", acc.id, err)
		}
		if self.ID != acc.id || self.Balance != acc.balance.Load() {
			return nil, fmt.Errorf("self of %s: id %s, balance %d, want %d", acc.id, self.ID, self.Balance, acc.balance.Load())
		}
	}
	progressf("loyalty: %d identified users signed in in %s; each self answers its own account and balance", loyaltyLogins, time.Since(t0).Round(time.Millisecond))
	return tokens, nil
}

// measureSelf measures GET self by loyaltyClients clients, with as many
// earning clients beside them when withWrites.
func (b *loyaltyBench) measureSelf(ctx context.Context, srv *cmsServer, pool *pgxpool.Pool, tokens []signedIn, withWrites bool, res *results) error {
	var next atomic.Uint64
	var received atomic.Int64
	writers := make([]writer, loyaltyClients)
	for i := range writers {
		writers[i] = b.selfReader(tokens, &next, &received)
	}
	what := "self (read load)"
	if withWrites {
		what = "self (under write load)"
	}
	progressf("loyalty: %s: %d clients, %s (+%s warm-up); %d other active sessions on the server",
		what, loyaltyClients, b.cfg.loyaltyDuration, loyaltyWarmup, otherSessions(ctx, pool))

	// The earning clients stop between requests, never in the middle of
	// one: an earn the server recorded must be in the bench's sums.
	var stopWrites atomic.Bool
	var wg sync.WaitGroup
	var werrMu sync.Mutex
	var werr error
	earnLats := make([][]time.Duration, loyaltyClients)
	if withWrites {
		for w := range loyaltyClients {
			wg.Add(1)
			go func() {
				defer wg.Done()
				r := rand.New(rand.NewPCG(uint64(w), 0xea51))
				for !stopWrites.Load() && ctx.Err() == nil {
					t0 := time.Now()
					if err := b.earn(ctx, b.accounts[r.IntN(len(b.accounts))], 1+r.Int64N(100)); err != nil {
						werrMu.Lock()
						werr = errors.Join(werr, err)
						werrMu.Unlock()
						return
					}
					earnLats[w] = append(earnLats[w], time.Since(t0))
				}
			}()
		}
	}
	srvCPU0, selfCPU0 := srv.cpuSeconds(), selfCPUSeconds()
	mach0 := machineCPU()
	hits0, misses0 := b.viewLookups(ctx)
	t0 := time.Now()
	st, err := measure(ctx, writers, loyaltyWarmup, b.cfg.loyaltyDuration)
	wall := time.Since(t0)
	hits1, misses1 := b.viewLookups(ctx)
	stopWrites.Store(true)
	wg.Wait()
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if werr != nil {
		return fmt.Errorf("%s: an earning client failed: %w", what, werr)
	}
	cpu := fmt.Sprintf("CPU during the run (incl. warm-up): server %.2f cores, bench client %.2f cores%s",
		(srv.cpuSeconds()-srvCPU0)/wall.Seconds(), (selfCPUSeconds()-selfCPU0)/wall.Seconds(), machineCPU().since(mach0))
	writes := ""
	if withWrites {
		var all []time.Duration
		for _, l := range earnLats {
			all = append(all, l...)
		}
		slices.Sort(all)
		es := appendStats{ops: int64(len(all)), latencies: all}
		writes = fmt.Sprintf("; meanwhile %d other clients earned %d times (%s commands/s over the whole run, earn latency p50 %s, p99 %s, max %s)",
			loyaltyClients, es.ops, thousands(rate(es.ops, wall)), ms2(es.pct(0.5)), ms2(es.pct(0.99)), ms2(es.pct(1)))
	}
	cached := "; the server keeps no account views in memory"
	if looked := (hits1 - hits0) + (misses1 - misses0); hits1+misses1 > 0 && looked > 0 {
		cached = fmt.Sprintf("; %.1f%% of the account views (incl. warm-up) answered from the server's memory", 100*float64(hits1-hits0)/float64(looked))
	}
	detail := fmt.Sprintf("%d GET /api/loyalty/user/self in %s by %d clients with %d identified tokens in turn (%s req/s); latency p50 %s, p99 %s, max %s; %s bytes/answer on average, each balance at least the sum of the earns acknowledged before it was asked%s%s; %s",
		st.ops, b.cfg.loyaltyDuration, loyaltyClients, len(tokens), thousands(st.rate()), ms2(st.pct(0.5)), ms2(st.pct(0.99)), ms2(st.pct(1)),
		thousands(float64(received.Load())/float64(max(next.Load(), 1))), cached, writes, cpu)
	res.add(figure{name: "loyalty " + what + " p99 ms", value: ms(st.pct(0.99)), unit: "ms", decimals: 2,
		target: targetLoyaltySelfP99, atMost: true, detail: detail})
	res.add(figure{name: "loyalty " + what + " req/s", value: st.rate(), unit: "req/s", detail: fmt.Sprintf("p50 %s", ms2(st.pct(0.5)))})
	return nil
}

// selfReader GETs self with the tokens in turn, wants 200 and a balance
// no lower than the earns acknowledged before the request (read-your-
// writes, whoever wrote).
func (b *loyaltyBench) selfReader(tokens []signedIn, next *atomic.Uint64, received *atomic.Int64) writer {
	const path = "/api/loyalty/user/self"
	var bufs sync.Pool
	return func(ctx context.Context) error {
		ctx, cancel := context.WithTimeout(ctx, loyaltyRequestLimit)
		defer cancel()
		tok := tokens[(next.Add(1)-1)%uint64(len(tokens))]
		acked := tok.acc.balance.Load()
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, b.api.base+path, nil)
		if err != nil {
			return err
		}
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+tok.token)
		resp, err := b.api.hc.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 1000))
			return &statusError{method: http.MethodGet, path: path, status: resp.StatusCode, body: snippet(body, 500)}
		}
		buf, _ := bufs.Get().(*bytes.Buffer)
		if buf == nil {
			buf = &bytes.Buffer{}
		}
		defer bufs.Put(buf)
		buf.Reset()
		n, err := buf.ReadFrom(resp.Body)
		received.Add(n)
		if err != nil {
			return err
		}
		// The answer's first "balance" is the account's (the user's
		// fields come before the transactions); no JSON decoding, which
		// would take the server's CPU.
		balance, ok := firstInt(buf.Bytes(), `"balance":`)
		if !ok || balance < acked {
			return fmt.Errorf("self of %s: balance %d (found: %v), but the earns acknowledged before it was asked add up to %d: %s",
				tok.acc.id, balance, ok, acked, snippet(buf.Bytes(), 300))
		}
		return nil
	}
}

// firstInt reads the integer after the first key in body.
func firstInt(body []byte, key string) (int64, bool) {
	i := bytes.Index(body, []byte(key))
	if i < 0 {
		return 0, false
	}
	rest := body[i+len(key):]
	end := 0
	for end < len(rest) && (rest[end] == '-' || rest[end] >= '0' && rest[end] <= '9') {
		end++
	}
	v, err := strconv.ParseInt(string(rest[:end]), 10, 64)
	return v, err == nil
}

// viewLookups reads the server's account view cache counters (zeros when
// it has none).
func (b *loyaltyBench) viewLookups(ctx context.Context) (hits, misses uint64) {
	var raw []byte
	if err := b.api.call(ctx, http.MethodGet, "/metrics", "", nil, http.StatusOK, &raw); err != nil {
		return 0, 0
	}
	for _, line := range strings.Split(string(raw), "\n") {
		name, value, ok := strings.Cut(line, " ")
		if !ok {
			continue
		}
		v, err := strconv.ParseFloat(value, 64)
		if err != nil {
			continue
		}
		switch name {
		case `cms_loyalty_view_cache_lookups_total{result="hit"}`:
			hits = uint64(v)
		case `cms_loyalty_view_cache_lookups_total{result="miss"}`:
			misses = uint64(v)
		}
	}
	return hits, misses
}

// sample picks loyaltySample accounts (the same ones every run of a size).
func (b *loyaltyBench) sample() []*loyaltyAccount {
	r := rand.New(rand.NewPCG(42, 0x5a3b1e))
	perm := r.Perm(len(b.accounts))
	out := make([]*loyaltyAccount, 0, loyaltySample)
	for _, i := range perm[:min(loyaltySample, len(perm))] {
		out = append(out, b.accounts[i])
	}
	return out
}

// verify GETs each sampled account as admin and compares it with the
// bench's sums; it returns the answers by account.
func (b *loyaltyBench) verify(ctx context.Context, pool *pgxpool.Pool, sample []*loyaltyAccount) (map[string][]byte, error) {
	bodies := make(map[string][]byte, len(sample))
	var bad []string
	for _, acc := range sample {
		var raw []byte
		if err := b.api.call(ctx, http.MethodGet, "/api/loyalty/user/"+acc.id, b.admin, nil, http.StatusOK, &raw); err != nil {
			return nil, err
		}
		var u loyaltyUserView
		if err := json.Unmarshal(raw, &u); err != nil {
			return nil, fmt.Errorf("GET /api/loyalty/user/%s: %w (%s)", acc.id, err, snippet(raw, 300))
		}
		want := loyaltyUserView{ID: acc.id, Balance: acc.balance.Load(), Earned: acc.earned.Load(), Redeemed: acc.redeemed.Load(), TransactionCount: acc.count.Load()}
		if u != want {
			// What the log holds tells a lost write from a wrong read model.
			var logged, sum int64
			_ = pool.QueryRow(ctx, `SELECT count(*), coalesce(sum(CASE event_type WHEN 'loyalty.points_earned' THEN (data->>'Amount')::bigint
				ELSE -(data->>'Amount')::bigint END), 0) FROM events WHERE stream_id = $1 AND event_type IN ('loyalty.points_earned', 'loyalty.points_redeemed')`,
				loyalty.AccountStream(acc.id)).Scan(&logged, &sum)
			bad = append(bad, fmt.Sprintf("%+v, want %+v (the log has %d points events adding up to %d)", u, want, logged, sum))
		}
		bodies[acc.id] = raw
	}
	if len(bad) > 0 {
		return nil, fmt.Errorf("%d of %d sampled accounts differ from the bench's sums, e.g. %s", len(bad), len(sample), strings.Join(bad[:min(3, len(bad))], "; "))
	}
	return bodies, nil
}

func jsonEqual(a, b []byte) bool {
	var x, y bytes.Buffer
	if json.Compact(&x, a) != nil || json.Compact(&y, b) != nil {
		return false
	}
	return bytes.Equal(x.Bytes(), y.Bytes())
}

// ---- rebuild ----

var rebuiltLine = regexp.MustCompile(`rebuilt (\S+): (\d+) events in (\S+) \((\d+) events/s\)`)

// rebuild runs `cms projections rebuild loyalty` with the server's binary
// against the bench database while the server runs, bounded by
// -phase-budget.
func (b *loyaltyBench) rebuild(ctx context.Context, srv *cmsServer, dbURL, dir string, pool *pgxpool.Pool, res *results) error {
	var logEvents int64
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM events`).Scan(&logEvents); err != nil {
		return err
	}
	progressf("loyalty: %s projections rebuild loyalty over %d events (budget %s); %d other active sessions on the server",
		filepath.Base(srv.cmd.Path), logEvents, b.cfg.phaseBudget, otherSessions(ctx, pool))
	rctx, cancel := context.WithTimeout(ctx, b.cfg.phaseBudget)
	defer cancel()
	cmd := exec.CommandContext(rctx, srv.cmd.Path, "projections", "rebuild", "loyalty")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DATABASE_URL="+dbURL, "CMS_LOG_LEVEL=warn", "CMS_DATA_DIR="+filepath.Join(dir, "data"))
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	t0 := time.Now()
	err := cmd.Run()
	took := time.Since(t0)
	peak := ""
	var peakKiB float64
	if cmd.ProcessState != nil {
		if ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage); ok {
			peakKiB = float64(ru.Maxrss) // KiB on Linux
			peak = fmt.Sprintf("%.1f MiB", peakKiB/1024)
		}
	}
	if err != nil && ctx.Err() == nil && rctx.Err() != nil {
		// Over budget: the rate of the part done, from its private checkpoint.
		var done int64
		qerr := pool.QueryRow(ctx, `SELECT count(*) FROM events e, projection_checkpoints c
			WHERE c.name = 'loyalty@rebuild' AND (e.transaction_id::text::bigint, e.global_position) <= (c.tx_id::text::bigint, c.position)`).Scan(&done)
		if qerr != nil {
			return fmt.Errorf("rebuild stopped by -phase-budget %s; its progress is unknown: %w", b.cfg.phaseBudget, qerr)
		}
		res.add(figure{name: "loyalty rebuild (cms projections rebuild loyalty), events/s", value: rate(done, took), unit: "events/s", target: targetRebuildRate,
			detail: fmt.Sprintf("PARTIAL (killed after -phase-budget %s): %d of %d events in %.1fs; peak RSS %s", b.cfg.phaseBudget, done, logEvents, took.Seconds(), peak)})
		return fmt.Errorf("rebuild did not finish within -phase-budget %s (the sample is not checked after it)", b.cfg.phaseBudget)
	}
	if err != nil {
		return fmt.Errorf("cms projections rebuild loyalty: %w\nstdout: %s\nstderr (end): %s", err, snippet(stdout.Bytes(), 1000), tailOf(stderr.Bytes(), 1000))
	}
	m := rebuiltLine.FindStringSubmatch(stdout.String())
	if m == nil || m[1] != "loyalty" {
		return fmt.Errorf("cms projections rebuild loyalty: unexpected output %q", snippet(stdout.Bytes(), 500))
	}
	events, _ := strconv.ParseInt(m[2], 10, 64)
	res.add(figure{name: "loyalty rebuild (cms projections rebuild loyalty), events/s", value: rate(events, took), unit: "events/s", target: targetRebuildRate,
		detail: fmt.Sprintf("%d events (the log had %d when it started) in %s, the command's wall time with its start-up; it reported %s in %s (%s events/s); beside the running server",
			events, logEvents, took.Round(time.Millisecond), m[2], m[3], m[4])})
	res.add(figure{name: "loyalty rebuild peak RSS, MiB", value: peakKiB / 1024, unit: "MiB", decimals: 1,
		detail: "ru_maxrss of the cms projections rebuild process"})
	return nil
}

// tailOf is the last n bytes of b (progress bars end with the news).
func tailOf(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return strings.TrimSpace(string(b))
}

// ---- load helpers ----

// runFixed makes n calls of f by clients concurrent clients (each with
// its own random source) and times each; the first error stops them all.
func runFixed(ctx context.Context, clients, n int, f func(ctx context.Context, r *rand.Rand) error) (appendStats, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var (
		next     atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
		lats     = make([][]time.Duration, clients)
	)
	start := time.Now()
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := rand.New(rand.NewPCG(uint64(c), 0xea2))
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				t0 := time.Now()
				if err := f(ctx, r); err != nil {
					mu.Lock()
					if firstErr == nil && ctx.Err() == nil {
						firstErr = fmt.Errorf("client %d: %w", c, err)
					}
					mu.Unlock()
					cancel()
					return
				}
				lats[c] = append(lats[c], time.Since(t0))
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if firstErr != nil {
		return appendStats{}, firstErr
	}
	if err := ctx.Err(); err != nil {
		return appendStats{}, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	slices.Sort(all)
	return appendStats{writers: clients, ops: int64(len(all)), elapsed: elapsed, latencies: all}, nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }
