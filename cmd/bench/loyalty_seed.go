package main

// The loyalty phase's seeding: identified users and their loyalty
// streams written straight into the event store, with the sums the server
// must show, and the wait for the server's projections to apply them.

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/errgroup"

	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/password"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
)

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

// seedAndCatchUp seeds the log and waits until the server's live
// projections have applied it; it reports the seeding rate and the
// loyalty projection's catch-up.
func (b *loyaltyBench) seedAndCatchUp(ctx context.Context, store *postgres.EventStore, pool *pgxpool.Pool, app string, res *results) error {
	cfg := b.cfg
	progressf("loyalty: seeding %d accounts and %d transactions (AppendMulti, %d accounts per transaction, %d loaders); %d other active sessions on the server",
		cfg.loyaltyAccounts, cfg.loyaltyTransactions, loyaltySeedBatch, loyaltySeedLoaders, otherSessions(ctx, pool))
	seedStart := time.Now()
	seeded, last, err := b.seed(ctx, store, app)
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
	return nil
}

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
