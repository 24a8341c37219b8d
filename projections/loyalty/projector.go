package loyalty

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
	"github.com/halocms/halocms/projections"
)

// Apply folds a batch in memory and writes each table set-wise: the
// accounts' changes are summed per account and written by one statement
// (two when accounts are new), the transactions copied in by one, the
// lots changed by at most three; stamp cards and definitions (few) are
// read, folded and written back. A batch of thousands of points events
// costs a handful of statements whatever its size.
func (Projector) Apply(ctx context.Context, db projections.DB, schema string, events []event.Recorded) error {
	b := newBatch(db, schema)
	for _, r := range events {
		b.add(r)
	}
	return b.write(ctx)
}

// Changed names the accounts whose rows (the account, its transactions,
// lots and cards) a batch changes: those Apply's fold of the batch
// touches; all when a card definition changes or retires, since its name
// and whether its cards are active show in every account holding one.
func (Projector) Changed(events []event.Recorded) (keys []string, all bool) {
	b := newBatch(nil, "")
	for _, r := range events {
		switch r.Data.(type) {
		case loyalty.CardChanged, loyalty.CardRetired:
			return nil, true
		}
		b.add(r)
	}
	return b.accOrder, false
}

// account is what a batch changes in one account row: the recorded
// balance (if a points event or a correction set it) and the sums to add.
type account struct {
	id, app                             string
	number                              int32 // set by writeAccounts
	balanceSet                          bool
	balance                             int64
	earned, redeemed, expired, adjusted int64
	transactions, activeCards           int
	updated                             time.Time
}

// transactions are the rows for loyalty_transactions, column by column.
type transactions struct {
	account                              []*account
	version                              []int32
	id, kind, reason, reference, key, by []string
	amount, balance                      []int64
	previous                             []*int64
	expires                              []*time.Time
	at                                   []time.Time
}

type lotKey struct{ account, lot string }

// lot is a lot with an expiry formed in this batch.
type lot struct {
	remaining int64
	expires   time.Time
	gone      bool
}

// userCard is one loyalty_user_cards row; cardDef one loyalty_cards row.
type userCard struct {
	id, account, card, app, reward string
	stamps, needed                 int
	completed, redeemed            *time.Time
	created, updated               time.Time
	existed, wasActive             bool
}

type cardDef struct {
	id, app, name, description, reward string
	needed                             int
	retired, wasRetired                bool // now; before the batch
	created, updated                   time.Time
	seen                               bool // the row exists or this batch defined it
}

// active tells whether a user card counts in its account's active_cards:
// it is not redeemed, and it is completed (its reward waits) or its
// definition is not retired (it can still take stamps).
func (c *userCard) active(retired bool) bool {
	return c.redeemed == nil && (c.completed != nil || !retired)
}

// isRetired and retiredBefore (the batch) are false for a definition this
// projection never saw (nil).
func (d *cardDef) isRetired() bool     { return d != nil && d.retired }
func (d *cardDef) retiredBefore() bool { return d != nil && d.wasRetired }

type batch struct {
	db     projections.DB
	schema string

	accounts map[string]*account
	accOrder []string
	txs      transactions

	newLots  map[lotKey]*lot // formed in this batch
	newOrder []lotKey
	debits   map[lotKey]int64 // points taken from lots formed earlier
	debOrder []lotKey
	gone     map[lotKey]bool // lots formed earlier that expired
	goneOrd  []lotKey

	cardEvents []event.Recorded // stamp cards and definitions, folded after loading
}

func newBatch(db projections.DB, schema string) *batch {
	return &batch{db: db, schema: schema, accounts: map[string]*account{},
		newLots: map[lotKey]*lot{}, debits: map[lotKey]int64{}, gone: map[lotKey]bool{}}
}

func (b *batch) t(name string) string { return b.schema + "." + name }

func (b *batch) account(id, app string, at time.Time) *account {
	a := b.accounts[id]
	if a == nil {
		a = &account{id: id, app: app}
		b.accounts[id] = a
		b.accOrder = append(b.accOrder, id)
	}
	a.updated = at
	return a
}

func (b *batch) transaction(r event.Recorded, a *account, id, kind string, amount, balance int64) {
	t := &b.txs
	t.account = append(t.account, a)
	t.version = append(t.version, int32(r.StreamVersion))
	t.id = append(t.id, id)
	t.kind = append(t.kind, kind)
	t.amount = append(t.amount, amount)
	t.balance = append(t.balance, balance)
	t.previous = append(t.previous, nil)
	t.reason = append(t.reason, "")
	t.reference = append(t.reference, "")
	t.key = append(t.key, "")
	t.expires = append(t.expires, nil)
	t.by = append(t.by, r.Meta.Actor)
	t.at = append(t.at, r.RecordedAt)
}

// details sets the last transaction's texts and expiry.
func (b *batch) details(reason, reference, key string, expires *time.Time) {
	t, n := &b.txs, len(b.txs.id)-1
	t.reason[n], t.reference[n], t.key[n] = reason, reference, key
	if expires != nil {
		e := *expires
		t.expires[n] = &e
	}
}

func (b *batch) add(r event.Recorded) {
	at := r.RecordedAt
	switch e := r.Data.(type) {
	case loyalty.AccountOpened:
		b.account(e.Account, e.App, at)
	case loyalty.PointsEarned:
		a := b.account(e.Account, e.App, at)
		a.balanceSet, a.balance = true, e.Balance
		a.earned += e.Amount
		a.transactions++
		b.transaction(r, a, e.Transaction, "earn", e.Amount, e.Balance)
		b.details(e.Reason, e.Reference, e.IdempotencyKey, e.ExpiresAt)
		b.formLot(e.Account, e.Transaction, e.Amount, e.ExpiresAt)
	case loyalty.PointsRedeemed:
		a := b.account(e.Account, e.App, at)
		a.balanceSet, a.balance = true, e.Balance
		a.redeemed += e.Amount
		a.transactions++
		b.transaction(r, a, e.Transaction, "redeem", -e.Amount, e.Balance)
		b.details(e.Reason, e.Reference, e.IdempotencyKey, nil)
		b.useLots(e.Account, e.Lots)
	case loyalty.PointsAdjusted:
		a := b.account(e.Account, e.App, at)
		a.balanceSet, a.balance = true, e.Balance
		a.adjusted += e.Amount
		a.transactions++
		b.transaction(r, a, e.Transaction, "adjust", e.Amount, e.Balance)
		b.details(e.Reason, e.Reference, e.IdempotencyKey, e.ExpiresAt)
		if e.Amount > 0 {
			b.formLot(e.Account, e.Transaction, e.Amount, e.ExpiresAt)
		}
		b.useLots(e.Account, e.Lots)
	case loyalty.PointsExpired:
		a := b.account(e.Account, e.App, at)
		a.balanceSet, a.balance = true, e.Balance
		a.expired += e.Amount
		a.transactions++
		b.transaction(r, a, e.Transaction, "expire", -e.Amount, e.Balance)
		b.details("", "", "", &e.ExpiresAt)
		b.expireLot(lotKey{e.Account, e.Lot})
	case loyalty.BalanceCorrected:
		a := b.account(e.Account, e.App, at)
		a.balanceSet, a.balance = true, e.New
		a.transactions++
		b.transaction(r, a, r.Meta.EventID, "correction", 0, e.New)
		old := e.Old
		b.txs.previous[len(b.txs.previous)-1] = &old
	case loyalty.StampsAdded:
		b.account(e.Account, e.App, at)
		b.cardEvents = append(b.cardEvents, r)
	case loyalty.CardCompleted:
		b.account(e.Account, e.App, at)
		b.cardEvents = append(b.cardEvents, r)
	case loyalty.CardRedeemed:
		b.account(e.Account, e.App, at)
		b.cardEvents = append(b.cardEvents, r)
	case loyalty.CardDefined, loyalty.CardChanged, loyalty.CardRetired:
		b.cardEvents = append(b.cardEvents, r)
	}
}

// formLot records a lot with an expiry; lots without one are never read.
func (b *batch) formLot(account, id string, amount int64, expires *time.Time) {
	if expires == nil {
		return
	}
	k := lotKey{account, id}
	if _, ok := b.newLots[k]; !ok {
		b.newOrder = append(b.newOrder, k)
	}
	b.newLots[k] = &lot{remaining: amount, expires: *expires}
}

// useLots takes points from lots. Uses of lots without an expiry change
// nothing: they have no rows (the update finds none).
func (b *batch) useLots(account string, uses []loyalty.LotUse) {
	for _, u := range uses {
		k := lotKey{account, u.Lot}
		if l := b.newLots[k]; l != nil {
			l.remaining -= u.Amount
			continue
		}
		if b.gone[k] {
			continue
		}
		if _, ok := b.debits[k]; !ok {
			b.debOrder = append(b.debOrder, k)
		}
		b.debits[k] += u.Amount
	}
}

// expireLot drops a lot: whatever it held expired.
func (b *batch) expireLot(k lotKey) {
	if l := b.newLots[k]; l != nil {
		l.gone = true
		return
	}
	if !b.gone[k] {
		b.gone[k] = true
		b.goneOrd = append(b.goneOrd, k)
	}
	delete(b.debits, k)
}

func (b *batch) write(ctx context.Context) error {
	// Cards first: they give the accounts their active-card changes.
	if err := b.writeCards(ctx); err != nil {
		return err
	}
	// Then the accounts: they give the other tables the accounts' numbers.
	if err := b.writeAccounts(ctx); err != nil {
		return err
	}
	if err := b.writeTransactions(ctx); err != nil {
		return err
	}
	return b.writeLots(ctx)
}

// writeAccounts adds the batch's sums to the rows of the accounts that
// have one and inserts the others' rows (numbered in the order the batch
// met them), learning every account's number.
func (b *batch) writeAccounts(ctx context.Context) error {
	if len(b.accOrder) == 0 {
		return nil
	}
	table := b.t("loyalty_accounts")
	touched := make([]*account, len(b.accOrder))
	for i, id := range b.accOrder {
		touched[i] = b.accounts[id]
	}
	rows, err := b.db.Query(ctx, `UPDATE `+table+` a SET
			balance = CASE WHEN x.balance_set THEN x.balance ELSE a.balance END,
			earned = a.earned + x.earned, redeemed = a.redeemed + x.redeemed, expired = a.expired + x.expired,
			adjusted = a.adjusted + x.adjusted, transactions = a.transactions + x.transactions,
			active_cards = a.active_cards + x.active_cards, updated_at = x.updated_at
		FROM `+accountRows+` AS x(id, app, balance_set, balance, earned, redeemed, expired, adjusted,
			transactions, active_cards, updated_at)
		WHERE a.id = x.id
		RETURNING a.id, a.number`, accountColumns(touched)...)
	if err != nil {
		return fmt.Errorf("loyalty projection, update accounts: %w", err)
	}
	if err := b.scanNumbers(rows); err != nil {
		return fmt.Errorf("loyalty projection, update accounts: %w", err)
	}
	var fresh []*account
	for _, a := range touched {
		if a.number == 0 {
			fresh = append(fresh, a)
		}
	}
	if len(fresh) == 0 {
		return nil
	}
	rows, err = b.db.Query(ctx, `INSERT INTO `+table+` (id, number, app, balance, earned, redeemed, expired,
			adjusted, transactions, active_cards, updated_at)
		SELECT id, (SELECT coalesce(max(number), 0) FROM `+table+`) + o::int, app, balance, earned, redeemed, expired,
			adjusted, transactions, active_cards, updated_at
		FROM `+accountRows+` WITH ORDINALITY AS x(id, app, balance_set, balance, earned, redeemed, expired, adjusted,
			transactions, active_cards, updated_at, o)
		RETURNING id, number`, accountColumns(fresh)...)
	if err != nil {
		return fmt.Errorf("loyalty projection, insert accounts: %w", err)
	}
	if err := b.scanNumbers(rows); err != nil {
		return fmt.Errorf("loyalty projection, insert accounts: %w", err)
	}
	return nil
}

func (b *batch) scanNumbers(rows pgx.Rows) error {
	defer rows.Close()
	var (
		id     string
		number int32
	)
	for rows.Next() {
		if err := rows.Scan(&id, &number); err != nil {
			return err
		}
		b.accounts[id].number = number
	}
	return rows.Err()
}

// accountRows turns accountColumns' arrays into rows.
const accountRows = `unnest($1::text[], $2::text[], $3::bool[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[],
	$8::bigint[], $9::int[], $10::int[], $11::timestamptz[])`

func accountColumns(accs []*account) []any {
	n := len(accs)
	var (
		ids, apps                           = make([]string, n), make([]string, n)
		set                                 = make([]bool, n)
		balance, earned, redeemed, exp, adj = make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n), make([]int64, n)
		txs, cards                          = make([]int32, n), make([]int32, n)
		updated                             = make([]time.Time, n)
	)
	for i, a := range accs {
		ids[i], apps[i], set[i], balance[i] = a.id, a.app, a.balanceSet, a.balance
		earned[i], redeemed[i], exp[i], adj[i] = a.earned, a.redeemed, a.expired, a.adjusted
		txs[i], cards[i], updated[i] = int32(a.transactions), int32(a.activeCards), a.updated
	}
	return []any{ids, apps, set, balance, earned, redeemed, exp, adj, txs, cards, updated}
}

// copier is what a pgx transaction offers for COPY FROM.
type copier interface {
	CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, rows pgx.CopyFromSource) (int64, error)
}

var txColumns = []string{"account", "version", "id", "kind", "amount", "balance", "previous_balance", "reason", "reference",
	"idempotency_key", "expires_at", "created_by", "created_at"}

// copyFrom is the number of transactions from which writeTransactions
// copies (COPY costs one more round trip than an INSERT, and pays off on
// the big batches of a rebuild or a catch-up).
const copyFrom = 200

// writeTransactions copies the rows in (COPY, when db is a pgx
// transaction and the batch is big), else inserts them from arrays.
func (b *batch) writeTransactions(ctx context.Context) error {
	t := &b.txs
	if len(t.id) == 0 {
		return nil
	}
	if c, ok := b.db.(copier); ok && len(t.id) >= copyFrom {
		i := -1
		src := pgx.CopyFromFunc(func() ([]any, error) {
			if i++; i == len(t.id) {
				return nil, nil
			}
			return []any{t.account[i].number, t.version[i], t.id[i], t.kind[i], t.amount[i], t.balance[i], t.previous[i], t.reason[i],
				t.reference[i], t.key[i], t.expires[i], t.by[i], t.at[i]}, nil
		})
		if _, err := c.CopyFrom(ctx, pgx.Identifier{b.schema, "loyalty_transactions"}, txColumns, src); err != nil {
			return fmt.Errorf("loyalty projection, write transactions: %w", err)
		}
		return nil
	}
	numbers := make([]int32, len(t.account))
	for i, a := range t.account {
		numbers[i] = a.number
	}
	_, err := b.db.Exec(ctx, `INSERT INTO `+b.t("loyalty_transactions")+` (`+strings.Join(txColumns, ", ")+`)
		SELECT * FROM unnest($1::int[], $2::int[], $3::text[], $4::text[], $5::bigint[], $6::bigint[], $7::bigint[],
			$8::text[], $9::text[], $10::text[], $11::timestamptz[], $12::text[], $13::timestamptz[])`,
		numbers, t.version, t.id, t.kind, t.amount, t.balance, t.previous, t.reason, t.reference, t.key, t.expires, t.by, t.at)
	if err != nil {
		return fmt.Errorf("loyalty projection, write transactions: %w", err)
	}
	return nil
}

func (b *batch) lotColumns(keys []lotKey) (accounts []int32, lots []string) {
	accounts, lots = make([]int32, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		accounts[i], lots[i] = b.accounts[k.account].number, k.lot
	}
	return accounts, lots
}

// writeLots deletes the expired lots, takes the debits from the others
// (deleting those left empty) and inserts the new lots with points left.
func (b *batch) writeLots(ctx context.Context) error {
	table := b.t("loyalty_lots")
	if len(b.goneOrd) > 0 {
		accounts, lots := b.lotColumns(b.goneOrd)
		if _, err := b.db.Exec(ctx, `DELETE FROM `+table+` l USING unnest($1::int[], $2::text[]) AS x(account, lot)
			WHERE l.account = x.account AND l.lot = x.lot`, accounts, lots); err != nil {
			return fmt.Errorf("loyalty projection, delete expired lots: %w", err)
		}
	}
	var debited []lotKey
	for _, k := range b.debOrder {
		if _, ok := b.debits[k]; ok {
			debited = append(debited, k)
		}
	}
	if len(debited) > 0 {
		accounts, lots := b.lotColumns(debited)
		amounts := make([]int64, len(debited))
		for i, k := range debited {
			amounts[i] = b.debits[k]
		}
		// One statement: the lots a debit empties go, the others shrink.
		if _, err := b.db.Exec(ctx, `WITH x AS (
				SELECT * FROM unnest($1::int[], $2::text[], $3::bigint[]) AS x(account, lot, amount)
			), spent AS (
				DELETE FROM `+table+` l USING x WHERE l.account = x.account AND l.lot = x.lot AND l.remaining <= x.amount
			)
			UPDATE `+table+` l SET remaining = l.remaining - x.amount
			FROM x WHERE l.account = x.account AND l.lot = x.lot AND l.remaining > x.amount`, accounts, lots, amounts); err != nil {
			return fmt.Errorf("loyalty projection, debit lots: %w", err)
		}
	}
	var (
		accounts  []int32
		lots      []string
		remaining []int64
		expires   []time.Time
	)
	for _, k := range b.newOrder {
		if l := b.newLots[k]; !l.gone && l.remaining > 0 {
			accounts, lots = append(accounts, b.accounts[k.account].number), append(lots, k.lot)
			remaining, expires = append(remaining, l.remaining), append(expires, l.expires)
		}
	}
	if len(lots) > 0 {
		if _, err := b.db.Exec(ctx, `INSERT INTO `+table+` (account, lot, remaining, expires_at)
			SELECT * FROM unnest($1::int[], $2::text[], $3::bigint[], $4::timestamptz[])
			ON CONFLICT (account, lot) DO UPDATE SET remaining = excluded.remaining, expires_at = excluded.expires_at`,
			accounts, lots, remaining, expires); err != nil {
			return fmt.Errorf("loyalty projection, write lots: %w", err)
		}
	}
	return nil
}
