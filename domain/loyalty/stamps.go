package loyalty

import "github.com/halocms/halocms/domain/fault"

// Stamps is the input of AddStamps.
type Stamps struct {
	Count          int
	Reason         string
	Reference      string
	IdempotencyKey string // "": the transaction's id (not deduplicated)
}

// AddStamps decides stamps on the account's card of definition card: they
// fill the card not completed yet (one is started when there is none);
// a card that reaches its needed stamps is completed and the rest goes on
// a new card, as many as it takes. A retired definition takes no stamps,
// and a definition of another app is not found.
func (a *Account) AddStamps(card Card, s Stamps, newID func() string) (Decision, error) {
	if s.Count < 1 || s.Count > MaxStamps {
		return Decision{}, invalid("stamps", "stamps must be from 1 to %d", MaxStamps)
	}
	if err := checkTexts(s.Reason, s.Reference, s.IdempotencyKey); err != nil {
		return Decision{}, err
	}
	r := request{kind: kindStamps, card: card.ID, stamps: s.Count, reason: s.Reason, reference: s.Reference}
	d, evs, key, done, err := a.begin(s.IdempotencyKey, r, newID)
	if done {
		return d, err
	}
	switch {
	case !card.exists || card.App != a.app:
		return Decision{}, ErrCardNotFound
	case card.Retired:
		return Decision{}, fault.Conflictf("stamp card %s is retired and takes no stamps", card.ID).With("card", card.ID)
	}
	current, ok := a.OpenCard(card.ID)
	for left := s.Count; left > 0; {
		if !ok || current.Stamps >= current.Needed {
			current = UserCard{ID: newID(), Card: card.ID, Needed: card.StampsNeeded, Reward: card.Reward}
		}
		n := min(left, current.Needed-current.Stamps)
		current.Stamps += n
		left -= n
		evs = append(evs, StampsAdded{Account: a.id, App: a.app, Transaction: d.Transaction, Card: card.ID,
			UserCard: current.ID, Stamps: n, Total: current.Stamps, Needed: current.Needed, Reward: current.Reward,
			Reason: s.Reason, Reference: s.Reference, IdempotencyKey: key})
		d.UserCards = append(d.UserCards, current.ID)
		ok = current.Stamps < current.Needed
		if !ok {
			evs = append(evs, CardCompleted{Account: a.id, App: a.app, Transaction: d.Transaction, Card: card.ID,
				UserCard: current.ID})
			d.Completed = append(d.Completed, current.ID)
		}
	}
	d.Events = evs
	return d, nil
}

// RedeemCard decides the redemption of a completed card's reward. A card
// not completed, or redeemed already, is a conflict; cards of retired
// definitions can still be redeemed.
func (a *Account) RedeemCard(userCard, idempotencyKey string, newID func() string) (Decision, error) {
	if err := checkText("idempotencyKey", idempotencyKey, MaxKey); err != nil {
		return Decision{}, err
	}
	d, evs, key, done, err := a.begin(idempotencyKey, request{kind: kindCardRedeem, card: userCard}, newID)
	if done {
		return d, err
	}
	c, ok := a.cards[userCard]
	switch {
	case !ok:
		return Decision{}, ErrCardNotFound
	case c.Redeemed:
		return Decision{}, fault.Conflictf("stamp card %s was redeemed already", userCard).With("stampCard", userCard)
	case !c.Completed:
		return Decision{}, fault.Conflictf("stamp card %s is not completed: %d of %d stamps", userCard, c.Stamps, c.Needed).
			With("stampCard", userCard).With("stamps", c.Stamps).With("needed", c.Needed)
	}
	d.Events = append(evs, CardRedeemed{Account: a.id, App: a.app, Transaction: d.Transaction, Card: c.Card,
		UserCard: c.ID, Reward: c.Reward, IdempotencyKey: key})
	return d, nil
}
