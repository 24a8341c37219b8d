package main

import (
	"fmt"
	"regexp"
	"testing"
	"time"

	"github.com/halocms/halocms/domain/loyalty"
)

// The seeded histories must be ones the domain could have recorded: the
// server folds them before its next command on the account.
func TestAccountHistoryIsConsistent(t *testing.T) {
	base := time.Now().Add(365 * 24 * time.Hour)
	for i := range 50 {
		acc := &loyaltyAccount{id: benchIdentifiedID(i)}
		n := 0
		evs := accountHistory(acc, "app", i, 100+i, base, func() string { n++; return fmt.Sprintf("tx%04d", n) })
		if _, ok := evs[0].Data.(loyalty.AccountOpened); !ok || len(evs) != 101+i {
			t.Fatalf("account %d: %d events, first %T", i, len(evs), evs[0].Data)
		}
		type lot struct {
			left    int64
			expires *time.Time
			order   int
		}
		lots := map[string]*lot{}
		var balance, earned, redeemed int64
		redeems := 0
		for k, ev := range evs[1:] {
			switch e := ev.Data.(type) {
			case loyalty.PointsEarned:
				balance += e.Amount
				earned += e.Amount
				lots[e.Transaction] = &lot{e.Amount, e.ExpiresAt, k}
				if e.Balance != balance || e.Amount <= 0 || e.IdempotencyKey == "" {
					t.Fatalf("account %d event %d: %+v, running balance %d", i, k, e, balance)
				}
			case loyalty.PointsRedeemed:
				redeems++
				balance -= e.Amount
				redeemed += e.Amount
				var taken int64
				for _, u := range e.Lots {
					l := lots[u.Lot]
					if l == nil || u.Amount <= 0 || u.Amount > l.left {
						t.Fatalf("account %d event %d: use %+v of lot %+v", i, k, u, l)
					}
					// No lot that comes first (expiring before plain,
					// sooner expiry, earlier earn) may keep points.
					for id, o := range lots {
						if id != u.Lot && o.left > 0 && before(o.expires, o.order, l.expires, l.order) {
							t.Fatalf("account %d event %d: took lot %s while %s comes first", i, k, u.Lot, id)
						}
					}
					l.left -= u.Amount
					taken += u.Amount
				}
				if taken != e.Amount || e.Balance != balance || balance < 0 {
					t.Fatalf("account %d event %d: %+v takes %d, running balance %d", i, k, e, taken, balance)
				}
			default:
				t.Fatalf("account %d event %d: %T", i, k, ev.Data)
			}
		}
		if redeems == 0 || acc.balance.Load() != balance || acc.earned.Load() != earned || acc.redeemed.Load() != redeemed || acc.count.Load() != int64(100+i) {
			t.Errorf("account %d: %d redemptions; sums %d/%d/%d/%d, replayed %d/%d/%d", i, redeems,
				acc.balance.Load(), acc.earned.Load(), acc.redeemed.Load(), acc.count.Load(), balance, earned, redeemed)
		}
	}
}

// before reports whether lot a is consumed before lot b.
func before(aExp *time.Time, aOrder int, bExp *time.Time, bOrder int) bool {
	switch {
	case aExp != nil && bExp == nil:
		return true
	case aExp == nil && bExp != nil:
		return false
	case aExp != nil && !aExp.Equal(*bExp):
		return aExp.Before(*bExp)
	}
	return aOrder < bOrder
}

func TestBenchIdentifiedIDs(t *testing.T) {
	re := regexp.MustCompile(`^identified-[a-z2-7]{26}$`)
	seen := map[string]bool{}
	for _, i := range []int{0, 1, 31, 32, 9999, 1 << 20} {
		id := benchIdentifiedID(i)
		if !re.MatchString(id) || seen[id] {
			t.Errorf("%d: %q", i, id)
		}
		seen[id] = true
	}
}
