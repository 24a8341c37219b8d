// Package loyaltytest writes loyalty histories for tests: a small model of
// accounts, lots and stamp cards that records the events the loyalty
// domain would, and keeps the figures a read model must then show.
package loyaltytest

import (
	"fmt"
	"slices"
	"time"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
)

// Append is one atomic append: events of one stream, with their metadata.
type Append struct {
	Stream string
	Events []any
	Meta   event.Metadata
	At     time.Time
}

// Lot is a lot with points left.
type Lot struct {
	ID        string
	Remaining int64
	ExpiresAt *time.Time
}

// UserCard is an account's stamp card.
type UserCard struct {
	ID, Card, Reward      string
	Stamps, Needed        int
	Completed, Redeemed   bool
	CompletedAt, RedeemAt time.Time
	CreatedAt, UpdatedAt  time.Time
	def                   *Card
}

// Active reports whether the card can still take stamps or give its
// reward: not redeemed, and completed or of a definition not retired.
func (c *UserCard) Active() bool { return !c.Redeemed && (c.Completed || !c.def.Retired) }

// Account is the expected state of an account.
type Account struct {
	ID, App                             string
	Balance                             int64 // recorded
	Earned, Redeemed, Expired, Adjusted int64
	Transactions                        int // points transactions and corrections
	Lots                                []Lot
	Cards                               []*UserCard
	UpdatedAt                           time.Time
	opened                              bool
}

// Card is a stamp card definition.
type Card struct {
	ID, App, Name, Description, Reward string
	Needed                             int
	Retired                            bool
}

// Sim records histories. Now advances by a millisecond per append.
type Sim struct {
	Now      time.Time
	Actor    string
	ClientIP string
	Log      []Append
	Accounts map[string]*Account
	Cards    map[string]*Card
	ids      int
}

// New returns a simulation starting at now.
func New(now time.Time) *Sim {
	return &Sim{Now: now, Actor: "user:cms", ClientIP: "192.0.2.1", Accounts: map[string]*Account{}, Cards: map[string]*Card{}}
}

// NewID returns the next id ("tx000001"...).
func (s *Sim) NewID(prefix string) string {
	s.ids++
	return fmt.Sprintf("%s%06d", prefix, s.ids)
}

func (s *Sim) append(stream string, evs ...any) {
	s.Now = s.Now.Add(time.Millisecond)
	s.Log = append(s.Log, Append{Stream: stream, Events: evs, At: s.Now,
		Meta: event.Metadata{Actor: s.Actor, ClientIP: s.ClientIP, CorrelationID: s.NewID("corr")}})
}

// account returns the account, with AccountOpened as the first of evs
// when it is new.
func (s *Sim) account(id, app string) (*Account, []any) {
	a := s.Accounts[id]
	if a == nil {
		a = &Account{ID: id, App: app}
		s.Accounts[id] = a
	}
	if !a.opened {
		a.opened = true
		return a, []any{loyalty.AccountOpened{Account: id, App: a.App}}
	}
	return a, nil
}

func (s *Sim) touch(a *Account) { a.UpdatedAt = s.Now }

// Earn credits amount; expires (may be nil) makes an expiring lot.
func (s *Sim) Earn(account, app string, amount int64, expires *time.Time) string {
	a, evs := s.account(account, app)
	evs = append(evs, s.expireDue(a)...)
	tx := s.NewID("tx")
	a.Balance += amount
	a.Earned += amount
	a.Transactions++
	a.Lots = append(a.Lots, Lot{ID: tx, Remaining: amount, ExpiresAt: expires})
	evs = append(evs, loyalty.PointsEarned{Account: account, App: a.App, Transaction: tx, Amount: amount, Balance: a.Balance,
		Reason: "purchase " + tx, Reference: "order-" + tx, IdempotencyKey: "key-" + tx, ExpiresAt: expires})
	s.append(loyalty.AccountStream(account), evs...)
	s.touch(a)
	return tx
}

// Redeem spends amount (the caller keeps it within the balance).
func (s *Sim) Redeem(account string, amount int64) string {
	a, evs := s.account(account, "")
	evs = append(evs, s.expireDue(a)...)
	if amount > a.Balance {
		panic(fmt.Sprintf("loyaltytest: redeem %d of %d", amount, a.Balance))
	}
	tx := s.NewID("tx")
	a.Balance -= amount
	a.Redeemed += amount
	a.Transactions++
	evs = append(evs, loyalty.PointsRedeemed{Account: account, App: a.App, Transaction: tx, Amount: amount, Balance: a.Balance,
		Reason: "reward", IdempotencyKey: "key-" + tx, Lots: s.consume(a, amount)})
	s.append(loyalty.AccountStream(account), evs...)
	s.touch(a)
	return tx
}

// Adjust changes the points by amount (signed).
func (s *Sim) Adjust(account string, amount int64, expires *time.Time) string {
	a, evs := s.account(account, "")
	evs = append(evs, s.expireDue(a)...)
	tx := s.NewID("tx")
	a.Balance += amount
	a.Adjusted += amount
	a.Transactions++
	e := loyalty.PointsAdjusted{Account: account, App: a.App, Transaction: tx, Amount: amount, Balance: a.Balance,
		Reason: "goodwill", Reference: "ticket-" + tx, IdempotencyKey: "key-" + tx}
	if amount > 0 {
		e.ExpiresAt = expires
		a.Lots = append(a.Lots, Lot{ID: tx, Remaining: amount, ExpiresAt: expires})
	} else {
		e.Lots = s.consume(a, -amount)
	}
	s.append(loyalty.AccountStream(account), append(evs, e)...)
	s.touch(a)
	return tx
}

// ExpireDue records the expiry of the account's lots due at Now; it
// returns the number of lots expired.
func (s *Sim) ExpireDue(account string) int {
	a := s.Accounts[account]
	evs := s.expireDue(a)
	if len(evs) > 0 {
		s.append(loyalty.AccountStream(account), evs...)
		s.touch(a)
	}
	n := 0
	for _, e := range evs {
		if _, ok := e.(loyalty.PointsExpired); ok {
			n++
		}
	}
	return n
}

// expireDue expires the lots due at Now as the domain does: on a damaged
// balance a correction to the sum comes first, and an expiry never takes
// the balance below zero.
func (s *Sim) expireDue(a *Account) []any {
	var evs []any
	kept := a.Lots[:0]
	for _, l := range a.Lots {
		if l.ExpiresAt == nil || l.ExpiresAt.After(s.Now) {
			kept = append(kept, l)
			continue
		}
		if len(evs) == 0 && a.Balance != a.Sum() {
			evs = append(evs, loyalty.BalanceCorrected{Account: a.ID, App: a.App, Old: a.Balance, New: a.Sum()})
			a.Balance = a.Sum()
			a.Transactions++
		}
		amount := max(0, min(l.Remaining, a.Balance))
		a.Balance -= amount
		a.Expired += amount
		a.Transactions++
		evs = append(evs, loyalty.PointsExpired{Account: a.ID, App: a.App, Transaction: s.NewID("tx"), Lot: l.ID,
			Amount: amount, Balance: a.Balance, ExpiresAt: *l.ExpiresAt})
	}
	a.Lots = kept
	return evs
}

// consume takes amount from the lots: expiring ones first, soonest first,
// then the others in earn order.
func (s *Sim) consume(a *Account, amount int64) []loyalty.LotUse {
	order := make([]int, len(a.Lots))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(i, j int) int {
		x, y := a.Lots[i].ExpiresAt, a.Lots[j].ExpiresAt
		switch {
		case x != nil && y != nil:
			return x.Compare(*y)
		case x != nil:
			return -1
		case y != nil:
			return 1
		}
		return 0
	})
	var uses []loyalty.LotUse
	for _, i := range order {
		if amount == 0 {
			break
		}
		take := min(amount, a.Lots[i].Remaining)
		if take == 0 {
			continue
		}
		a.Lots[i].Remaining -= take
		amount -= take
		uses = append(uses, loyalty.LotUse{Lot: a.Lots[i].ID, Amount: take})
	}
	kept := a.Lots[:0]
	for _, l := range a.Lots {
		if l.Remaining > 0 {
			kept = append(kept, l)
		}
	}
	a.Lots = kept
	return uses
}

// Damage records an earn whose Balance is off by delta: the recorded
// balance no longer equals the sum of the amounts (as an import bug
// would leave it).
func (s *Sim) Damage(account string, amount, delta int64) string {
	a := s.Accounts[account]
	tx := s.NewID("tx")
	a.Balance += amount + delta
	a.Earned += amount
	a.Transactions++
	a.Lots = append(a.Lots, Lot{ID: tx, Remaining: amount})
	s.append(loyalty.AccountStream(account), loyalty.PointsEarned{Account: account, App: a.App, Transaction: tx, Amount: amount,
		Balance: a.Balance, Reason: "import", IdempotencyKey: "key-" + tx})
	s.touch(a)
	return tx
}

// DamageLots records a redemption of amount that names none of the lots
// (as an import bug would leave it): the balances agree, but the lots
// hold more points than they do.
func (s *Sim) DamageLots(account string, amount int64) string {
	a := s.Accounts[account]
	tx := s.NewID("tx")
	a.Balance -= amount
	a.Redeemed += amount
	a.Transactions++
	s.append(loyalty.AccountStream(account), loyalty.PointsRedeemed{Account: account, App: a.App, Transaction: tx, Amount: amount,
		Balance: a.Balance, Reason: "import", IdempotencyKey: "key-" + tx})
	s.touch(a)
	return tx
}

// Sum is the balance the account's amounts add up to.
func (a *Account) Sum() int64 { return a.Earned - a.Redeemed - a.Expired + a.Adjusted }

// Rebalance records a correction if the recorded balance differs from
// the sum of the amounts.
func (s *Sim) Rebalance(account string) bool {
	a := s.Accounts[account]
	if a.Balance == a.Sum() {
		return false
	}
	e := loyalty.BalanceCorrected{Account: account, App: a.App, Old: a.Balance, New: a.Sum()}
	a.Balance = a.Sum()
	a.Transactions++
	s.append(loyalty.AccountStream(account), e)
	s.touch(a)
	return true
}

// DefineCard records a stamp card definition.
func (s *Sim) DefineCard(app, name string, needed int, reward string) string {
	id := s.NewID("card")
	s.Cards[id] = &Card{ID: id, App: app, Name: name, Description: "About " + name, Reward: reward, Needed: needed}
	s.append(loyalty.CardStream(id), loyalty.CardDefined{Card: id, App: app, Name: name, Description: "About " + name,
		StampsNeeded: needed, Reward: reward})
	return id
}

// ChangeCard renames a definition and changes its needed stamps.
func (s *Sim) ChangeCard(id, name string, needed int) {
	c := s.Cards[id]
	c.Name, c.Needed = name, needed
	s.append(loyalty.CardStream(id), loyalty.CardChanged{Card: id, App: c.App, Name: name, Description: c.Description,
		StampsNeeded: needed, Reward: c.Reward})
}

// RetireCard retires a definition.
func (s *Sim) RetireCard(id string) {
	c := s.Cards[id]
	c.Retired = true
	s.append(loyalty.CardStream(id), loyalty.CardRetired{Card: id, App: c.App})
}

// AddStamps puts n stamps on the account's open card of the definition,
// completing and starting cards as they fill.
func (s *Sim) AddStamps(account, app, card string, n int) {
	a, evs := s.account(account, app)
	def := s.Cards[card]
	tx := s.NewID("tx")
	at := s.Now.Add(time.Millisecond)
	for n > 0 {
		var open *UserCard
		for _, c := range a.Cards {
			if c.Card == card && !c.Completed {
				open = c
			}
		}
		if open == nil {
			open = &UserCard{ID: s.NewID("uc"), Card: card, Reward: def.Reward, Needed: def.Needed, CreatedAt: at, def: def}
			a.Cards = append(a.Cards, open)
		}
		k := min(n, open.Needed-open.Stamps)
		open.Stamps += k
		open.UpdatedAt = at
		n -= k
		evs = append(evs, loyalty.StampsAdded{Account: account, App: a.App, Transaction: tx, Card: card, UserCard: open.ID,
			Stamps: k, Total: open.Stamps, Needed: open.Needed, Reward: open.Reward, IdempotencyKey: "key-" + tx})
		if open.Stamps == open.Needed {
			open.Completed, open.CompletedAt = true, at
			evs = append(evs, loyalty.CardCompleted{Account: account, App: a.App, Transaction: tx, Card: card, UserCard: open.ID})
		}
	}
	s.append(loyalty.AccountStream(account), evs...)
	s.touch(a)
}

// RedeemCard redeems a completed card.
func (s *Sim) RedeemCard(account, userCard string) {
	a := s.Accounts[account]
	for _, c := range a.Cards {
		if c.ID == userCard {
			tx := s.NewID("tx")
			s.append(loyalty.AccountStream(account), loyalty.CardRedeemed{Account: account, App: a.App, Transaction: tx,
				Card: c.Card, UserCard: c.ID, Reward: c.Reward, IdempotencyKey: "key-" + tx})
			c.Redeemed, c.RedeemAt, c.UpdatedAt = true, s.Now, s.Now
			s.touch(a)
			return
		}
	}
	panic("loyaltytest: no card " + userCard)
}

// ActiveCards counts the account's active cards (UserCard.Active).
func (a *Account) ActiveCards() int {
	n := 0
	for _, c := range a.Cards {
		if c.Active() {
			n++
		}
	}
	return n
}

// Recorded numbers the log's events as a log reader would return them:
// positions and stream versions in order, one transaction per append.
func (s *Sim) Recorded() []event.Recorded {
	var out []event.Recorded
	versions := map[string]int64{}
	var pos int64
	for i, ap := range s.Log {
		for _, d := range ap.Events {
			pos++
			versions[ap.Stream]++
			m := ap.Meta
			m.EventID = fmt.Sprintf("00000000-0000-7000-8000-%012d", pos)
			out = append(out, event.Recorded{Position: event.Position{TxID: uint64(i + 1), Pos: pos}, StreamID: ap.Stream,
				StreamVersion: versions[ap.Stream], Type: d.(interface{ EventType() string }).EventType(), SchemaVersion: 1,
				Data: d, Meta: m, RecordedAt: ap.At})
		}
	}
	return out
}

// Wrapped wraps an append's events for an event store.
func (ap Append) Wrapped() []event.Event {
	out := make([]event.Event, len(ap.Events))
	for i, d := range ap.Events {
		out[i] = event.Event{Data: d, Meta: ap.Meta}
	}
	return out
}

// Spendable is what can be spent at any time up to now: no more than the
// balance now, nor than what is left once the lots due at now have
// expired (from the corrected balance, as expireDue does).
func (a *Account) Spendable(now time.Time) int64 {
	b, corrected := a.Balance, false
	for _, l := range a.Lots {
		if l.ExpiresAt != nil && !l.ExpiresAt.After(now) {
			if !corrected {
				b, corrected = a.Sum(), true
			}
			b -= max(0, min(l.Remaining, b))
		}
	}
	return min(b, a.Balance)
}

// Random appends n random histories' steps over accounts of apps "a"
// and "b": earns (some expiring soon), redemptions, adjustments, expiries,
// stamps on three cards, card redemptions, definition changes, and now
// and then a damaged balance and its rebalance.
func (s *Sim) Random(rng interface {
	IntN(int) int
	Int64N(int64) int64
}, accounts, n int) {
	apps := []string{"a", "b"}
	var cards []string
	for i, app := range []string{"a", "a", "b"} {
		cards = append(cards, s.DefineCard(app, fmt.Sprintf("Coffee %d", i), 2+i*3, fmt.Sprintf("free drink %d", i)))
	}
	ids := make([]string, accounts)
	for i := range ids {
		ids[i] = fmt.Sprintf("user%03d", i)
	}
	appOf := func(id string) string { return apps[int(id[len(id)-1])%2] }
	for range n {
		id := ids[rng.IntN(len(ids))]
		app := appOf(id)
		a := s.Accounts[id]
		switch k := rng.IntN(20); {
		case a == nil || k < 6:
			var exp *time.Time
			if rng.IntN(2) == 0 {
				t := s.Now.Add(time.Duration(1+rng.IntN(300)) * time.Millisecond)
				exp = &t
			}
			s.Earn(id, app, 1+rng.Int64N(500), exp)
		case k < 10:
			if sp := a.Spendable(s.Now.Add(time.Millisecond)); sp > 0 {
				s.Redeem(id, 1+rng.Int64N(sp))
			}
		case k < 12:
			if sp := a.Spendable(s.Now.Add(time.Millisecond)); rng.IntN(2) == 0 && sp > 0 {
				s.Adjust(id, -1-rng.Int64N(sp), nil)
			} else {
				t := s.Now.Add(time.Duration(1+rng.IntN(300)) * time.Millisecond)
				s.Adjust(id, 1+rng.Int64N(100), &t)
			}
		case k < 14:
			s.Now = s.Now.Add(time.Duration(rng.IntN(50)) * time.Millisecond)
			s.ExpireDue(id)
		case k < 17:
			var mine []string
			for _, c := range cards {
				if s.Cards[c].App == app && !s.Cards[c].Retired {
					mine = append(mine, c)
				}
			}
			if len(mine) > 0 {
				s.AddStamps(id, app, mine[rng.IntN(len(mine))], 1+rng.IntN(12))
			}
		case k < 19:
			for _, c := range a.Cards {
				if c.Completed && !c.Redeemed {
					s.RedeemCard(id, c.ID)
					break
				}
			}
		default:
			switch rng.IntN(4) {
			case 0:
				c := cards[rng.IntN(len(cards))]
				if !s.Cards[c].Retired {
					s.ChangeCard(c, s.Cards[c].Name+"+", s.Cards[c].Needed+1)
				}
			case 1:
				if c := cards[rng.IntN(len(cards))]; !s.Cards[c].Retired && rng.IntN(3) == 0 {
					s.RetireCard(c)
				}
			case 2:
				s.Damage(id, 1+rng.Int64N(50), 1+rng.Int64N(30))
			default:
				s.Rebalance(id)
			}
		}
	}
}
