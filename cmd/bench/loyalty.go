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
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/adapters/postgres"
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
	p, err := openServerPhase(ctx, cfg, serverURL, loyaltySeedLoaders+2)
	if err != nil {
		return err
	}
	defer p.close(&err)
	if err := p.start(ctx, "loyalty", "cms-bench-loyalty-"); err != nil {
		return err
	}
	if err := p.signIn(ctx, 2*loyaltyClients, "loyalty bench"); err != nil {
		return err
	}
	run, err := randomHex(4)
	if err != nil {
		return err
	}
	b := &loyaltyBench{cfg: cfg, api: p.api, admin: p.admin, run: run}
	res.header = append(res.header, fmt.Sprintf("loyalty phase: database %s, %d accounts, %d seeded transactions, server pid %d",
		p.db.name, cfg.loyaltyAccounts, cfg.loyaltyTransactions, p.srv.cmd.Process.Pid))
	store := postgres.NewEventStore(p.pool, eventcodec.Default())
	defer store.Close()

	if err := b.seedAndCatchUp(ctx, store, p.pool, p.app.ID, res); err != nil {
		return err
	}
	if err := b.measureEarns(ctx, p.srv, p.pool, res); err != nil {
		return err
	}
	tokens, err := b.signIn(ctx, p.app.ClientID, p.app.ClientSecret)
	if err != nil {
		return err
	}
	for _, withWrites := range []bool{false, true} {
		if err := b.measureSelf(ctx, p.srv, p.pool, tokens, withWrites, res); err != nil {
			return err
		}
	}
	sample, before, err := b.checkSample(ctx, store, p.pool)
	if err != nil {
		return err
	}
	// The rebuild runs with the server's binary, beside the running server.
	if err := b.rebuild(ctx, p.srv, p.dbURL, p.dir, p.pool, res); err != nil {
		return err
	}
	return b.checkAfterRebuild(ctx, p.pool, sample, before, res)
}
