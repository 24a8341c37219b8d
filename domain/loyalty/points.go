package loyalty

import (
	"errors"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/halocms/halocms/domain/fault"
)

// Limits of the loyalty context.
const (
	MaxAmount       int64 = 1_000_000_000         // points of one transaction
	MaxBalance      int64 = 1_000_000_000_000_000 // points an account may hold
	MaxReason             = 500                   // bytes
	MaxReference          = 255                   // bytes
	MaxKey                = 255                   // bytes of an idempotency key
	MaxStamps             = 1000                  // stamps added at once
	expiryPrecision       = time.Millisecond      // expiries are kept to the wire's precision
)

// Messages of the conflicts clients act on.
const (
	MsgInsufficient = "insufficient points"
	MsgKeyReused    = "idempotency key already used for a different request"
)

// Points is a points transaction's input.
type Points struct {
	Amount         int64  // signed for adjustments
	Reason         string // required: why the points move
	Reference      string
	IdempotencyKey string     // "": the transaction's id (not deduplicated)
	ExpiresAt      *time.Time // earn and positive adjustments only
}

// Decision is what a decider decided: the events to append (none for a
// replay or when there is nothing to do) and the transaction they record.
type Decision struct {
	Events      []any
	Transaction string // the new transaction, or the original one when Replayed
	Replayed    bool
	Expired     int      // lots expired (by ExpireDue, or ahead of a debit)
	UserCards   []string // AddStamps: the cards that got stamps, in order
	Completed   []string // AddStamps: the cards completed
}

func invalid(field, format string, args ...any) *fault.Error {
	return fault.Invalidf(format, args...).With("field", field)
}

// checkText refuses text longer than max bytes, and text that is not
// valid UTF-8 or holds NUL characters (the log could not store it as
// given).
func checkText(field, v string, max int) error {
	if len(v) > max {
		return invalid(field, "%s must be at most %d bytes", field, max)
	}
	if !utf8.ValidString(v) || strings.ContainsRune(v, 0) {
		return invalid(field, "%s must be UTF-8 text without NUL characters", field)
	}
	return nil
}

func checkTexts(reason, reference, key string) error {
	if err := checkText("reason", reason, MaxReason); err != nil {
		return err
	}
	if err := checkText("reference", reference, MaxReference); err != nil {
		return err
	}
	return checkText("idempotencyKey", key, MaxKey)
}

// check validates a points input of kind k and returns the request it
// makes (the expiry cut to milliseconds).
func (p Points) check(k kind) (request, error) {
	switch {
	case k == kindAdjust && (p.Amount == 0 || p.Amount < -MaxAmount || p.Amount > MaxAmount):
		return request{}, invalid("amount", "amount must be a non-zero number of points from -%d to %d", MaxAmount, MaxAmount)
	case k != kindAdjust && (p.Amount < 1 || p.Amount > MaxAmount):
		return request{}, invalid("amount", "amount must be from 1 to %d points", MaxAmount)
	case p.ExpiresAt != nil && (k == kindRedeem || p.Amount < 0):
		return request{}, invalid("expiresAt", "expiresAt applies only to points credited (earned or adjusted up)")
	case strings.TrimSpace(p.Reason) == "":
		return request{}, invalid("reason", "reason is required")
	}
	if err := checkTexts(p.Reason, p.Reference, p.IdempotencyKey); err != nil {
		return request{}, err
	}
	r := request{kind: k, amount: p.Amount, reason: p.Reason, reference: p.Reference}
	if p.ExpiresAt != nil {
		r.expiresAt = p.ExpiresAt.Truncate(expiryPrecision)
	}
	return r, nil
}

var errNoAccount = errors.New("loyalty: account without id or app (use NewAccount)")

// begin starts a decision: it refuses an account it cannot open, and
// answers a known idempotency key: a replay (Decision.Replayed) for the
// same request, a conflict for another one. For a new transaction it
// returns its id and key and the opening event when the account needs one.
func (a *Account) begin(key string, r request, newID func() string) (d Decision, evs []any, k string, done bool, err error) {
	if a.id == "" || a.app == "" {
		return Decision{}, nil, "", true, errNoAccount
	}
	if key != "" {
		if prev, ok := a.keys[key]; ok {
			if !prev.req.same(r) {
				return Decision{}, nil, "", true, fault.Conflictf(MsgKeyReused).
					With("idempotencyKey", key).With("transaction", prev.transaction)
			}
			// Copies: the account keeps these, and callers own what they get.
			return Decision{Transaction: prev.transaction, Replayed: true,
				UserCards: slices.Clone(prev.userCards), Completed: slices.Clone(prev.completed)}, nil, key, true, nil
		}
	}
	d.Transaction = newID()
	if key == "" {
		key = d.Transaction
	}
	if !a.opened {
		evs = append(evs, AccountOpened{Account: a.id, App: a.app})
	}
	return d, evs, key, false, nil
}

// Earn decides the credit of points (a new lot).
func (a *Account) Earn(p Points, now time.Time, newID func() string) (Decision, error) {
	return a.credit(kindEarn, p, now, newID)
}

// Redeem decides the spending of points: the account's due lots expire
// first (in the same decision, after the correction of a damaged balance;
// see due), then the points come from the lots with an expiry, soonest
// first, then from the others, oldest first. Spending more than the
// balance is a conflict.
func (a *Account) Redeem(p Points, now time.Time, newID func() string) (Decision, error) {
	return a.debit(kindRedeem, p, now, newID)
}

// Adjust decides a manual correction: a positive amount is credited as a
// new lot, a negative one is debited as a redemption is.
func (a *Account) Adjust(p Points, now time.Time, newID func() string) (Decision, error) {
	if p.Amount < 0 {
		return a.debit(kindAdjust, p, now, newID)
	}
	return a.credit(kindAdjust, p, now, newID)
}

func (a *Account) credit(k kind, p Points, now time.Time, newID func() string) (Decision, error) {
	r, err := p.check(k)
	if err != nil {
		return Decision{}, err
	}
	d, evs, key, done, err := a.begin(p.IdempotencyKey, r, newID)
	if done {
		return d, err
	}
	var expires *time.Time
	if p.ExpiresAt != nil {
		if !r.expiresAt.After(now) {
			return Decision{}, invalid("expiresAt", "expiresAt must be in the future")
		}
		t := r.expiresAt
		expires = &t
	}
	balance := a.recorded + p.Amount
	if balance > MaxBalance {
		return Decision{}, invalid("amount", "a balance may not exceed %d points", MaxBalance).
			With("balance", a.recorded)
	}
	if k == kindEarn {
		evs = append(evs, PointsEarned{Account: a.id, App: a.app, Transaction: d.Transaction, Amount: p.Amount,
			Balance: balance, Reason: p.Reason, Reference: p.Reference, IdempotencyKey: key, ExpiresAt: expires})
	} else {
		evs = append(evs, PointsAdjusted{Account: a.id, App: a.app, Transaction: d.Transaction, Amount: p.Amount,
			Balance: balance, Reason: p.Reason, Reference: p.Reference, IdempotencyKey: key, ExpiresAt: expires})
	}
	d.Events = evs
	return d, nil
}

func (a *Account) debit(k kind, p Points, now time.Time, newID func() string) (Decision, error) {
	r, err := p.check(k)
	if err != nil {
		return Decision{}, err
	}
	d, evs, key, done, err := a.begin(p.IdempotencyKey, r, newID)
	if done {
		return d, err
	}
	expired, n, balance, lots := a.due(now, newID)
	amount := p.Amount
	if amount < 0 {
		amount = -amount
	}
	if amount > balance {
		return Decision{}, fault.Conflictf(MsgInsufficient).With("balance", balance).With("requested", amount)
	}
	var uses []LotUse
	left := amount
	for _, l := range lots {
		if left == 0 {
			break
		}
		take := min(l.Points, left)
		uses = append(uses, LotUse{Lot: l.ID, Amount: take})
		left -= take
	}
	evs = append(evs, expired...)
	balance -= amount
	if k == kindRedeem {
		evs = append(evs, PointsRedeemed{Account: a.id, App: a.app, Transaction: d.Transaction, Amount: amount,
			Balance: balance, Reason: p.Reason, Reference: p.Reference, IdempotencyKey: key, Lots: uses})
	} else {
		evs = append(evs, PointsAdjusted{Account: a.id, App: a.app, Transaction: d.Transaction, Amount: -amount,
			Balance: balance, Reason: p.Reason, Reference: p.Reference, IdempotencyKey: key, Lots: uses})
	}
	d.Events, d.Expired = evs, n
	return d, nil
}

// due returns the events of the expiry of the lots due at now (they lead
// the consumption order), the number of lots expired, the balance after
// it and the lots left. When a lot is due on a damaged history (the
// recorded balance differs from what the transactions add up to), the
// balance is corrected first (BalanceCorrected, as Rebalance records it):
// expiring from a wrong balance would leave the expired points for a later
// rebalance to hand back. Each due lot then expires its whole remainder,
// but never more than the balance holds (the lots of a damaged history can
// hold more than it): a lot with nothing left to take still expires
// (Amount 0), so that it does not come due again.
func (a *Account) due(now time.Time, newID func() string) (evs []any, expired int, balance int64, rest []Lot) {
	balance = a.recorded
	for expired < len(a.lots) && a.lots[expired].ExpiresAt != nil && !now.Before(*a.lots[expired].ExpiresAt) {
		expired++
	}
	if expired == 0 {
		return nil, 0, balance, a.lots
	}
	if balance != a.sum {
		evs = append(evs, BalanceCorrected{Account: a.id, App: a.app, Old: balance, New: a.sum})
		balance = a.sum
	}
	for _, l := range a.lots[:expired] {
		amount := max(0, min(l.Points, balance))
		balance -= amount
		evs = append(evs, PointsExpired{Account: a.id, App: a.app, Transaction: newID(), Lot: l.ID,
			Amount: amount, Balance: balance, ExpiresAt: *l.ExpiresAt})
	}
	return evs, expired, balance, a.lots[expired:]
}

// NextExpiry returns when the account's next lot expires (false: none).
func (a *Account) NextExpiry() (time.Time, bool) {
	if len(a.lots) == 0 || a.lots[0].ExpiresAt == nil {
		return time.Time{}, false
	}
	return *a.lots[0].ExpiresAt, true
}

// ExpireDue decides the expiry of the lots due at now: one PointsExpired
// per lot, with its unspent points (no more than the balance holds),
// after a BalanceCorrected when the recorded balance differs from the
// transactions' sum (Decision.Expired counts the lots, not the
// correction). Nothing when none is due.
func (a *Account) ExpireDue(now time.Time, newID func() string) Decision {
	evs, n, _, _ := a.due(now, newID)
	return Decision{Events: evs, Expired: n}
}

// Rebalance decides the correction of the recorded balance to what the
// points transactions add up to; nothing when they agree.
func (a *Account) Rebalance() Decision {
	if !a.opened || a.recorded == a.sum {
		return Decision{}
	}
	return Decision{Events: []any{BalanceCorrected{Account: a.id, App: a.app, Old: a.recorded, New: a.sum}}}
}
