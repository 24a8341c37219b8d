package loyalty

import (
	"slices"
	"time"
)

// Lot is an open lot: the unspent points of one earn or positive
// adjustment, named by its transaction id.
type Lot struct {
	ID        string
	Points    int64      // left, > 0
	ExpiresAt *time.Time // nil: never expires
}

// UserCard is one of the account's stamp cards. It keeps the stamps it
// needs and the reward it promises from when it was started.
type UserCard struct {
	ID        string
	Card      string // the definition
	Reward    string
	Stamps    int
	Needed    int
	Completed bool
	Redeemed  bool
}

// kind of a transaction, as idempotency compares requests.
type kind string

const (
	kindEarn       kind = "earn"
	kindRedeem     kind = "redeem"
	kindAdjust     kind = "adjust"
	kindStamps     kind = "stamps"
	kindCardRedeem kind = "card_redeem"
)

// request is what makes two requests with one idempotency key the same.
type request struct {
	kind      kind
	amount    int64
	reason    string
	reference string
	expiresAt time.Time // zero: none
	card      string    // stamps: the definition; card redemption: the user card
	stamps    int
}

// same reports whether two requests are the same request.
func (r request) same(o request) bool {
	return r.kind == o.kind && r.amount == o.amount && r.reason == o.reason && r.reference == o.reference &&
		r.expiresAt.Equal(o.expiresAt) && r.card == o.card && r.stamps == o.stamps
}

// keyed is what the account remembers of an idempotency key: the
// transaction it recorded and the request it answered.
type keyed struct {
	transaction string
	req         request
	userCards   []string // stamps: the cards that got stamps, in order
	completed   []string // stamps: the cards completed
}

// Account is a loyalty account folded from its stream. It is a mutable
// fold: Apply changes it in place, because an account keeps every
// idempotency key it recorded and copying them per event would make
// loading an account with thousands of transactions quadratic. The
// deciders (Earn, Redeem, ...) never change it.
type Account struct {
	id, app  string
	opened   bool
	recorded int64 // the balance the last points event (or correction) recorded
	sum      int64 // what the points transactions' amounts add up to
	txs      int   // points transactions
	lots     []Lot // open lots, in consumption order
	keys     map[string]*keyed
	cards    map[string]*UserCard
	open     map[string]string // definition → its card not completed yet
	stamping *keyed            // the key of the last StampsAdded (its CardCompleted follow it)
	keyBytes int64             // the lengths of the keys' strings (see Footprint)
}

// NewAccount is the state of the account of identified user id of app
// before its stream is read. Decisions on an account that is not opened
// yet open it (AccountOpened goes first, in the same append).
func NewAccount(id, app string) *Account {
	return &Account{id: id, app: app, keys: map[string]*keyed{}, cards: map[string]*UserCard{}, open: map[string]string{}}
}

// ID is the account's (the identified user's) id.
func (a *Account) ID() string { return a.id }

// App is the account's app (the identified user's).
func (a *Account) App() string { return a.app }

// Opened reports whether the account's stream holds its opening.
func (a *Account) Opened() bool { return a.opened }

// Balance is the balance the account recorded last.
func (a *Account) Balance() int64 { return a.recorded }

// Sum is what the account's points transactions add up to (the balance a
// rebalance sets).
func (a *Account) Sum() int64 { return a.sum }

// Transactions is the number of points transactions recorded.
func (a *Account) Transactions() int { return a.txs }

// Lots returns the open lots in the order debits consume them: lots with
// an expiry first, soonest first, then the others in earn order.
func (a *Account) Lots() []Lot { return slices.Clone(a.lots) }

// UserCard returns one of the account's stamp cards.
func (a *Account) UserCard(id string) (UserCard, bool) {
	c, ok := a.cards[id]
	if !ok {
		return UserCard{}, false
	}
	return *c, true
}

// OpenCard returns the account's card of definition card that is not
// completed yet, if any.
func (a *Account) OpenCard(card string) (UserCard, bool) {
	id, ok := a.open[card]
	if !ok {
		return UserCard{}, false
	}
	return a.UserCard(id)
}

// Transaction returns the transaction recorded with an idempotency key.
func (a *Account) Transaction(key string) (string, bool) {
	k, ok := a.keys[key]
	if !ok {
		return "", false
	}
	return k.transaction, true
}

// What the parts of an Account take in memory besides their strings'
// bytes, as measured on amd64 with Go 1.26 (TestFootprint): a key with
// its map slot, its keyed and its strings' allocations; an open lot; a
// stamp card with its map slot; an entry of open.
const (
	accountBytes = 512
	keyBytes     = 232
	lotBytes     = 72
	cardBytes    = 240
	openBytes    = 64
)

// Footprint estimates the bytes the account holds in memory, so that a
// cache of accounts can be bounded by memory: an account remembers every
// idempotency key it recorded (see Account), so its state grows with its
// history, by about 300 bytes per transaction (on 64-bit platforms).
func (a *Account) Footprint() int64 {
	return accountBytes + int64(len(a.keys))*keyBytes + a.keyBytes + int64(len(a.lots))*lotBytes +
		int64(len(a.cards))*cardBytes + int64(len(a.open))*openBytes
}

// keyed's strings, for Footprint.
func (k *keyed) strings(key string) int64 {
	n := int64(len(key) + len(k.transaction) + len(k.req.reason) + len(k.req.reference) + len(k.req.card))
	for _, c := range k.userCards {
		n += listed(c)
	}
	for _, c := range k.completed {
		n += listed(c)
	}
	return n
}

// listed is what a string in a keyed's list of cards takes: its bytes and
// its header in the list.
func listed(id string) int64 { return int64(len(id)) + 16 }

// setKey remembers k under key, in place of what key held.
func (a *Account) setKey(key string, k *keyed) {
	if old := a.keys[key]; old != nil {
		a.keyBytes -= old.strings(key)
	}
	a.keys[key] = k
	a.keyBytes += k.strings(key)
}

// Apply folds one event into the account (in place; see Account).
func (a *Account) Apply(ev any) {
	if a.keys == nil {
		a.keys, a.cards, a.open = map[string]*keyed{}, map[string]*UserCard{}, map[string]string{}
	}
	switch e := ev.(type) {
	case AccountOpened:
		a.id, a.app, a.opened = e.Account, e.App, true
	case PointsEarned:
		a.points(e.Amount, e.Balance)
		a.addLot(e.Transaction, e.Amount, e.ExpiresAt)
		a.remember(e.IdempotencyKey, e.Transaction, request{kind: kindEarn, amount: e.Amount,
			reason: e.Reason, reference: e.Reference, expiresAt: timeOf(e.ExpiresAt)})
	case PointsRedeemed:
		a.points(-e.Amount, e.Balance)
		a.consume(e.Lots)
		a.remember(e.IdempotencyKey, e.Transaction, request{kind: kindRedeem, amount: e.Amount,
			reason: e.Reason, reference: e.Reference})
	case PointsAdjusted:
		a.points(e.Amount, e.Balance)
		if e.Amount > 0 {
			a.addLot(e.Transaction, e.Amount, e.ExpiresAt)
		} else {
			a.consume(e.Lots)
		}
		a.remember(e.IdempotencyKey, e.Transaction, request{kind: kindAdjust, amount: e.Amount,
			reason: e.Reason, reference: e.Reference, expiresAt: timeOf(e.ExpiresAt)})
	case PointsExpired:
		a.points(-e.Amount, e.Balance)
		if i := a.lot(e.Lot); i >= 0 {
			a.lots = slices.Delete(a.lots, i, i+1)
		}
	case BalanceCorrected:
		a.recorded = e.New
	case StampsAdded:
		c, ok := a.cards[e.UserCard]
		if !ok {
			c = &UserCard{ID: e.UserCard, Card: e.Card, Needed: e.Needed, Reward: e.Reward}
			a.cards[e.UserCard] = c
		}
		c.Stamps = e.Total
		if !c.Completed {
			a.open[e.Card] = e.UserCard
		}
		key := e.IdempotencyKey
		if key == "" {
			key = e.Transaction
		}
		k := a.keys[key]
		if k == nil || k.transaction != e.Transaction {
			k = &keyed{transaction: e.Transaction, req: request{kind: kindStamps, card: e.Card,
				reason: e.Reason, reference: e.Reference}}
			a.setKey(key, k)
		}
		k.req.stamps += e.Stamps
		k.userCards = append(k.userCards, e.UserCard)
		a.keyBytes += listed(e.UserCard)
		a.stamping = k
	case CardCompleted:
		if c, ok := a.cards[e.UserCard]; ok {
			c.Completed = true
		}
		if a.open[e.Card] == e.UserCard {
			delete(a.open, e.Card)
		}
		if k := a.stamping; k != nil && k.transaction == e.Transaction {
			k.completed = append(k.completed, e.UserCard)
			a.keyBytes += listed(e.UserCard)
		}
	case CardRedeemed:
		if c, ok := a.cards[e.UserCard]; ok {
			c.Redeemed = true
		}
		a.remember(e.IdempotencyKey, e.Transaction, request{kind: kindCardRedeem, card: e.UserCard})
	}
}

func (a *Account) points(amount, balance int64) {
	a.sum += amount
	a.recorded = balance
	a.txs++
}

func (a *Account) remember(key, transaction string, r request) {
	if key == "" {
		key = transaction
	}
	a.setKey(key, &keyed{transaction: transaction, req: r})
}

// addLot inserts a lot at its place in consumption order.
func (a *Account) addLot(id string, points int64, expiresAt *time.Time) {
	if points <= 0 {
		return
	}
	l := Lot{ID: id, Points: points, ExpiresAt: expiresAt}
	if expiresAt == nil {
		a.lots = append(a.lots, l)
		return
	}
	i := 0
	for i < len(a.lots) && a.lots[i].ExpiresAt != nil && !a.lots[i].ExpiresAt.After(*expiresAt) {
		i++
	}
	a.lots = slices.Insert(a.lots, i, l)
}

// consume takes a debit's points from the lots it names (lots it does not
// know, as a damaged history may hold, are passed over).
func (a *Account) consume(uses []LotUse) {
	for _, u := range uses {
		i := a.lot(u.Lot)
		if i < 0 {
			continue
		}
		a.lots[i].Points -= u.Amount
		if a.lots[i].Points <= 0 {
			a.lots = slices.Delete(a.lots, i, i+1)
		}
	}
}

func (a *Account) lot(id string) int {
	for i, l := range a.lots {
		if l.ID == id {
			return i
		}
	}
	return -1
}

func timeOf(t *time.Time) time.Time {
	if t == nil {
		return time.Time{}
	}
	return *t
}
