package loyalty

import (
	"maps"
	"slices"
	"time"
)

// SnapshotLayout numbers the shape and the meaning of Snapshot. Raise it
// with any change to Snapshot or to what Apply keeps of an event (a test
// pins the shape to the number): a command side ignores a stored snapshot
// of another layout, folds the account from its events instead, and
// replaces a snapshot of an earlier layout.
const SnapshotLayout = 1

// Snapshot is an Account's whole folded state as plain data, to be stored
// beside the account's stream: restored with RestoreAccount, it folds the
// events after it and decides exactly as the account it was taken from.
// It holds every idempotency key the account recorded, as the account
// does.
type Snapshot struct {
	ID       string
	App      string
	Opened   bool
	Recorded int64
	Sum      int64
	Txs      int
	Lots     []SnapshotLot // in consumption order
	Keys     map[string]SnapshotKey
	Cards    map[string]UserCard
	Open     map[string]string // definition → its card not completed yet
	// Stamping is the key of the last StampsAdded, if the account still
	// holds it under that key (see Account.stamping); "" for none (no
	// key is "": a key is the client's, else its transaction's id).
	Stamping string
}

// SnapshotLot is a Lot in a Snapshot.
type SnapshotLot struct {
	ID        string
	Points    int64
	ExpiresAt *time.Time
}

// SnapshotKey is what an account remembers of an idempotency key.
type SnapshotKey struct {
	Transaction string
	Kind        string
	Amount      int64
	Reason      string
	Reference   string
	ExpiresAt   *time.Time
	Card        string
	Stamps      int
	UserCards   []string
	Completed   []string
}

// Snapshot returns the account's state as data that shares nothing with
// the account: the account may go on folding events while the snapshot is
// encoded elsewhere.
func (a *Account) Snapshot() Snapshot {
	s := Snapshot{ID: a.id, App: a.app, Opened: a.opened, Recorded: a.recorded, Sum: a.sum, Txs: a.txs,
		Open: maps.Clone(a.open)}
	if len(a.lots) > 0 {
		s.Lots = make([]SnapshotLot, len(a.lots))
		for i, l := range a.lots {
			s.Lots[i] = SnapshotLot{ID: l.ID, Points: l.Points, ExpiresAt: cloneTime(l.ExpiresAt)}
		}
	}
	if len(a.keys) > 0 {
		s.Keys = make(map[string]SnapshotKey, len(a.keys))
		for key, k := range a.keys {
			s.Keys[key] = SnapshotKey{Transaction: k.transaction, Kind: string(k.req.kind), Amount: k.req.amount,
				Reason: k.req.reason, Reference: k.req.reference, ExpiresAt: timePtr(k.req.expiresAt),
				Card: k.req.card, Stamps: k.req.stamps, UserCards: slices.Clone(k.userCards), Completed: slices.Clone(k.completed)}
			if k == a.stamping {
				s.Stamping = key
			}
		}
	}
	if len(a.cards) > 0 {
		s.Cards = make(map[string]UserCard, len(a.cards))
		for id, c := range a.cards {
			s.Cards[id] = *c
		}
	}
	return s
}

// RestoreAccount is the account a snapshot was taken of. The account
// keeps nothing of s: s may be used again.
func RestoreAccount(s Snapshot) *Account {
	a := NewAccount(s.ID, s.App)
	a.opened, a.recorded, a.sum, a.txs = s.Opened, s.Recorded, s.Sum, s.Txs
	if len(s.Lots) > 0 {
		a.lots = make([]Lot, len(s.Lots))
		for i, l := range s.Lots {
			a.lots[i] = Lot{ID: l.ID, Points: l.Points, ExpiresAt: cloneTime(l.ExpiresAt)}
		}
	}
	for key, k := range s.Keys {
		kd := &keyed{transaction: k.Transaction, req: request{kind: kind(k.Kind), amount: k.Amount, reason: k.Reason,
			reference: k.Reference, expiresAt: timeOf(k.ExpiresAt), card: k.Card, stamps: k.Stamps},
			userCards: slices.Clone(k.UserCards), completed: slices.Clone(k.Completed)}
		a.setKey(key, kd)
		if s.Stamping != "" && key == s.Stamping {
			a.stamping = kd
		}
	}
	for id, c := range s.Cards {
		a.cards[id] = &c
	}
	maps.Copy(a.open, s.Open)
	return a
}

func cloneTime(t *time.Time) *time.Time {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// timePtr is the inverse of timeOf: nil for the zero time.
func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}
