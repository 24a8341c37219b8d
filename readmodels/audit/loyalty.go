package audit

import (
	"context"
	"time"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/loyalty"
	"github.com/halocms/halocms/domain/rights"
)

// LoyaltyReadModel says what the loyalty read model holds of an account:
// its balance, and the stream version of the last balance-changing event
// (points event or correction) it applied (0: none).
type LoyaltyReadModel interface {
	LoyaltyBalance(ctx context.Context, account string) (balance, version int64, err error)
}

// LoyaltyQuery selects a loyalty account's history, optionally a window
// of it (zero From or To: unbounded; both inclusive). Moments compare at
// the wire's precision, milliseconds: an entry's own createdAt as From or
// To includes it, though the log records microseconds.
type LoyaltyQuery struct {
	User     string
	From, To time.Time
}

// LoyaltyEntry is one event of an account, as recorded, with the balance
// replayed up to it.
type LoyaltyEntry struct {
	EventID    string
	Position   event.Position
	RecordedAt time.Time
	// Type is "opened", "earn", "redeem", "adjust", "expire",
	// "correction", "stamps", "card_completed" or "card_redeemed".
	Type        string
	Transaction string
	Amount      int64 // signed points (earn +, redeem −, adjust ±, expire −); 0 for the others
	Balance     int64 // the running balance replayed from the amounts (corrections do not move it)
	Recorded    int64 // the balance the account recorded after the event (a correction's: New)
	Reason      string
	Reference   string
	// IdempotencyKey, and for expiries the lot, for stamps and cards the
	// definition and the user's card.
	IdempotencyKey, Lot, Card, UserCard string
	Stamps                              int
	By, ClientIP, Correlation           string
}

// LoyaltyReport is an account's history replayed from the log.
type LoyaltyReport struct {
	User, App string
	From, To  time.Time
	Opening   int64 // the replayed balance before From
	Entries   []LoyaltyEntry
	Balance   int64 // the replayed balance at To (or now)
	Recorded  int64 // the balance the account recorded at To
	// Consistent: the recorded balance is what the transactions add up to.
	Consistent bool
	// ReadModel compares the loyalty read model with the replay. Only for
	// an unbounded To (the read model holds the balance now); nil for a
	// To in the past.
	ReadModel *LoyaltyReadModelCheck
}

// LoyaltyReadModelCheck is the loyalty read model's balance of the
// account, set against the replay.
type LoyaltyReadModelCheck struct {
	Balance int64 // the read model's balance
	// Applied is the stream version of the last balance-changing event
	// (points event or correction) the read model applied, Last that of
	// the account's last one in the log (0: none).
	Applied, Last int64
	// CaughtUp: the read model applied the account's last
	// balance-changing event (else it lags: the projection is behind).
	CaughtUp bool
	// Matches: caught up, and its balance is the replayed one. A damaged
	// history not corrected yet does not match either: the read model
	// keeps the recorded balance.
	Matches bool
}

// Loyalty replays a loyalty account's stream from the event log: every
// transaction with the running balance, who recorded it, when and from
// where. Admins may audit any account, users holding the manage
// permission on the account's app that app's. An identified user without
// loyalty events has an empty history; fault.NotFound when no identified
// user has that id. A caller who holds manage on no app at all is
// refused before anything else (the query checked, the account looked
// up): they learn nothing, not even whether the user exists.
func (a *Auditor) Loyalty(ctx context.Context, q LoyaltyQuery) (LoyaltyReport, error) {
	actor := access.From(ctx)
	if actor.Kind == access.Anonymous {
		return LoyaltyReport{}, access.ErrUnauthenticated
	}
	if !actor.IsAdmin() {
		if err := a.authz.AuthorizeAnyApp(ctx, actor, rights.Manage); err != nil {
			return LoyaltyReport{}, err
		}
	}
	if q.User == "" {
		return LoyaltyReport{}, fault.Invalidf("user is required").With("field", "user")
	}
	if !q.From.IsZero() && !q.To.IsZero() && q.To.Before(q.From) {
		return LoyaltyReport{}, fault.Invalidf("to must not be before from").With("field", "to")
	}
	// The read model first, then the log: the projection applies only
	// events already committed, so it cannot be ahead of what is read next.
	var rm *LoyaltyReadModelCheck
	if q.To.IsZero() {
		rm = &LoyaltyReadModelCheck{}
		var err error
		if rm.Balance, rm.Applied, err = a.loyalty.LoyaltyBalance(ctx, q.User); err != nil {
			return LoyaltyReport{}, err
		}
	}
	recs, err := a.log.ReadStream(ctx, loyalty.AccountStream(q.User), 0)
	if err != nil {
		return LoyaltyReport{}, err
	}
	app, err := a.loyaltyApp(ctx, q.User, recs)
	if err != nil {
		return LoyaltyReport{}, err
	}
	if !actor.IsAdmin() {
		if err := a.authz.Authorize(ctx, actor, rights.Manage, rights.Resource{App: app}); err != nil {
			return LoyaltyReport{}, err
		}
	}

	rep := LoyaltyReport{User: q.User, App: app, From: q.From, To: q.To, Entries: []LoyaltyEntry{}}
	from, to := q.From.Truncate(time.Millisecond), q.To.Truncate(time.Millisecond)
	var balance, recorded, last int64
	for _, r := range recs {
		at := r.RecordedAt.Truncate(time.Millisecond)
		if !to.IsZero() && at.After(to) {
			break
		}
		e, ok := loyaltyEntry(r.Data)
		if !ok {
			continue
		}
		switch d := r.Data.(type) {
		case loyalty.BalanceCorrected:
			recorded, last = d.New, r.StreamVersion
		case loyalty.PointsEarned, loyalty.PointsRedeemed, loyalty.PointsAdjusted, loyalty.PointsExpired:
			balance += e.Amount
			recorded, last = e.Recorded, r.StreamVersion
		}
		if at.Before(from) {
			rep.Opening = balance
			continue
		}
		e.EventID, e.Position, e.RecordedAt = r.Meta.EventID, r.Position, r.RecordedAt
		e.Balance, e.Recorded = balance, recorded
		e.By, e.ClientIP, e.Correlation = r.Meta.Actor, r.Meta.ClientIP, r.Meta.CorrelationID
		rep.Entries = append(rep.Entries, e)
	}
	rep.Balance, rep.Recorded, rep.Consistent = balance, recorded, balance == recorded
	if rm != nil {
		rm.Last = last
		rm.CaughtUp = rm.Applied == last
		rm.Matches = rm.CaughtUp && rm.Balance == balance
		rep.ReadModel = rm
	}
	return rep, nil
}

// loyaltyApp is the account's app: its events name it; an account without
// events is its identified user's.
func (a *Auditor) loyaltyApp(ctx context.Context, user string, recs []event.Recorded) (string, error) {
	for _, r := range recs {
		if o, ok := r.Data.(loyalty.AccountOpened); ok {
			return o.App, nil
		}
	}
	ids, err := a.log.ReadStream(ctx, appuser.IdentifiedStream(user), 0)
	if err != nil {
		return "", err
	}
	for _, r := range ids {
		if reg, ok := r.Data.(appuser.IdentifiedRegistered); ok {
			return reg.App, nil
		}
	}
	return "", fault.NotFoundf("unknown loyalty user").With("user", user)
}

// loyaltyEntry describes one loyalty event; Recorded holds a points
// event's recorded balance.
func loyaltyEntry(data any) (LoyaltyEntry, bool) {
	switch e := data.(type) {
	case loyalty.AccountOpened:
		return LoyaltyEntry{Type: "opened"}, true
	case loyalty.PointsEarned:
		return LoyaltyEntry{Type: "earn", Transaction: e.Transaction, Amount: e.Amount, Recorded: e.Balance, Reason: e.Reason,
			Reference: e.Reference, IdempotencyKey: e.IdempotencyKey}, true
	case loyalty.PointsRedeemed:
		return LoyaltyEntry{Type: "redeem", Transaction: e.Transaction, Amount: -e.Amount, Recorded: e.Balance, Reason: e.Reason,
			Reference: e.Reference, IdempotencyKey: e.IdempotencyKey}, true
	case loyalty.PointsAdjusted:
		return LoyaltyEntry{Type: "adjust", Transaction: e.Transaction, Amount: e.Amount, Recorded: e.Balance, Reason: e.Reason,
			Reference: e.Reference, IdempotencyKey: e.IdempotencyKey}, true
	case loyalty.PointsExpired:
		return LoyaltyEntry{Type: "expire", Transaction: e.Transaction, Amount: -e.Amount, Recorded: e.Balance, Lot: e.Lot}, true
	case loyalty.BalanceCorrected:
		return LoyaltyEntry{Type: "correction"}, true
	case loyalty.StampsAdded:
		return LoyaltyEntry{Type: "stamps", Transaction: e.Transaction, Reason: e.Reason, Reference: e.Reference,
			IdempotencyKey: e.IdempotencyKey, Card: e.Card, UserCard: e.UserCard, Stamps: e.Stamps}, true
	case loyalty.CardCompleted:
		return LoyaltyEntry{Type: "card_completed", Transaction: e.Transaction, Card: e.Card, UserCard: e.UserCard}, true
	case loyalty.CardRedeemed:
		return LoyaltyEntry{Type: "card_redeemed", Transaction: e.Transaction, IdempotencyKey: e.IdempotencyKey, Card: e.Card,
			UserCard: e.UserCard}, true
	}
	return LoyaltyEntry{}, false
}
