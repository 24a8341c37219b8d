package loyalty

import "time"

// Events of the loyalty context. Type names are stable: never rename them.
// Every event names its account (the identified user's id) and its app, so
// that projections and audits never need another stream to place it. Who
// recorded an event, when and from where is in its metadata.
//
// Points events carry Balance, the account's running balance after them as
// the account recorded it. Replaying the amounts from zero gives the same
// figure unless the history was damaged (an import, a bug of an earlier
// version); a rebalance then records BalanceCorrected, and so does the
// expiry of a lot on such a history, before the expiry.

// AccountOpened: the identified user's loyalty account exists. It is the
// first event of every account stream, appended with its first transaction.
type AccountOpened struct {
	Account string
	App     string
}

// LotUse says how many points of one lot (an earn or a positive
// adjustment, named by its transaction id) a debit consumed.
type LotUse struct {
	Lot    string
	Amount int64
}

// PointsEarned: points were credited. The transaction's id names the lot
// its points form; ExpiresAt, if set, is when the unspent part of the lot
// expires.
type PointsEarned struct {
	Account        string
	App            string
	Transaction    string
	Amount         int64 // > 0
	Balance        int64
	Reason         string
	Reference      string
	IdempotencyKey string
	ExpiresAt      *time.Time
}

// PointsRedeemed: points were spent. Lots lists the points taken from each
// lot, soonest-expiring first.
type PointsRedeemed struct {
	Account        string
	App            string
	Transaction    string
	Amount         int64 // > 0, the points taken
	Balance        int64
	Reason         string
	Reference      string
	IdempotencyKey string
	Lots           []LotUse
}

// PointsAdjusted: a CMS user corrected the points by hand. A positive
// Amount forms a lot (with ExpiresAt, if set); a negative one consumes
// lots as a redemption does.
type PointsAdjusted struct {
	Account        string
	App            string
	Transaction    string
	Amount         int64 // != 0
	Balance        int64
	Reason         string
	Reference      string
	IdempotencyKey string
	ExpiresAt      *time.Time
	Lots           []LotUse
}

// PointsExpired: the unspent points of a lot reached its expiry date. The
// lot is gone. On a damaged history a BalanceCorrected precedes it (in the
// same decision). Amount is never more than the balance held: when the
// lots hold more points than the transactions add up to, it can be less
// than the lot's points, down to 0.
type PointsExpired struct {
	Account     string
	App         string
	Transaction string
	Lot         string
	Amount      int64 // >= 0, the points that expired
	Balance     int64
	ExpiresAt   time.Time
}

// BalanceCorrected: a rebalance, or the expiry of a due lot, found the
// recorded balance (Old) differing from the one the transactions add up
// to (New), and set it to New.
type BalanceCorrected struct {
	Account string
	App     string
	Old     int64
	New     int64
}

// StampsAdded: stamps went onto one of the account's stamp cards (a card
// of the definition Card, started when the previous one filled up). Total
// is the card's stamps after, Needed the stamps that complete it.
type StampsAdded struct {
	Account        string
	App            string
	Transaction    string
	Card           string
	UserCard       string
	Stamps         int
	Total          int
	Needed         int
	Reward         string
	Reason         string
	Reference      string
	IdempotencyKey string
}

// CardCompleted: a stamp card reached its needed stamps; its reward can be
// redeemed.
type CardCompleted struct {
	Account     string
	App         string
	Transaction string
	Card        string
	UserCard    string
}

// CardRedeemed: a completed stamp card's reward was given.
type CardRedeemed struct {
	Account        string
	App            string
	Transaction    string
	Card           string
	UserCard       string
	Reward         string
	IdempotencyKey string
}

// CardDefined: a stamp card definition was created for an app (stream
// CardStream).
type CardDefined struct {
	Card         string
	App          string
	Name         string
	Description  string
	StampsNeeded int
	Reward       string
}

// CardChanged: the definition changed; the event holds it in full. Cards
// already started keep the stamps they need and the reward they promise.
type CardChanged struct {
	Card         string
	App          string
	Name         string
	Description  string
	StampsNeeded int
	Reward       string
}

// CardRetired: the definition takes no more stamps. Completed cards can
// still be redeemed.
type CardRetired struct {
	Card string
	App  string
}

func (AccountOpened) EventType() string    { return "loyalty.account_opened" }
func (PointsEarned) EventType() string     { return "loyalty.points_earned" }
func (PointsRedeemed) EventType() string   { return "loyalty.points_redeemed" }
func (PointsAdjusted) EventType() string   { return "loyalty.points_adjusted" }
func (PointsExpired) EventType() string    { return "loyalty.points_expired" }
func (BalanceCorrected) EventType() string { return "loyalty.balance_corrected" }
func (StampsAdded) EventType() string      { return "loyalty.stamps_added" }
func (CardCompleted) EventType() string    { return "loyalty.card_completed" }
func (CardRedeemed) EventType() string     { return "loyalty.card_redeemed" }
func (CardDefined) EventType() string      { return "loyalty.card_defined" }
func (CardChanged) EventType() string      { return "loyalty.card_changed" }
func (CardRetired) EventType() string      { return "loyalty.card_retired" }

// Events lists a zero value of every event type of this context.
func Events() []interface{ EventType() string } {
	return []interface{ EventType() string }{
		AccountOpened{}, PointsEarned{}, PointsRedeemed{}, PointsAdjusted{}, PointsExpired{},
		BalanceCorrected{}, StampsAdded{}, CardCompleted{}, CardRedeemed{},
		CardDefined{}, CardChanged{}, CardRetired{},
	}
}

// AccountStream is the stream of an identified user's loyalty account.
func AccountStream(identifiedID string) string { return "loyalty-" + identifiedID }

// CardStream is the stream of a stamp card definition.
func CardStream(id string) string { return "loyaltycard-" + id }
