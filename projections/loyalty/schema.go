// Package loyalty projects the loyalty context's events into the tables the
// loyalty read model queries: accounts with their balances and totals, the
// points transactions, the lots that will expire, stamp card definitions
// and the users' stamp cards.
package loyalty

import (
	"context"
	"fmt"
	"strings"

	"github.com/halocms/halocms/projections"
)

// Projector writes loyalty_accounts, loyalty_transactions, loyalty_lots,
// loyalty_cards and loyalty_user_cards.
//
// loyalty_accounts holds one row per account that has events: the
// recorded balance (that of the last points event, or the New of a
// correction), the totals earned, redeemed, expired and adjusted (net),
// the number of transactions (the rows of loyalty_transactions), the
// active stamp cards (not redeemed, and completed or of a definition not
// retired: a card that can still take stamps or give its reward), and when
// the last loyalty event happened.
// Each account gets a number (1, 2, 3... in the order the log opened
// them) that keys its rows in loyalty_transactions and loyalty_lots:
// integer keys keep those tables' indexes small, which is what a rebuild
// of millions of transactions spends its time on. Profiles are not
// copied: the read model joins appuser_identified.
//
// loyalty_transactions has one row per points event and correction,
// keyed by account number and stream version, so that an account's
// newest transactions are one backward index range. Amounts are signed:
// earn +, redeem −, adjust ±, expire −, correction 0 (balance: New,
// previous_balance: Old). A correction's id is its event's id.
//
// loyalty_lots holds only lots with an expiry and points left (what the
// expirer looks for, and an account's next expiry); lots without expiry
// are never needed by a query.
//
// Rebuilding from a log of a million events is the case the design
// serves: few and small indexes, and Apply writes every table set-wise.
// Nearly every batch updates many accounts: their pages keep room
// (fillfactor) so that the updates stay HOT (no index writes).
type Projector struct{}

var _ projections.Projector = Projector{}
var _ projections.Selective = Projector{}
var _ projections.Layouter = Projector{}
var _ projections.Announcer = Projector{}

// Layout: active_cards leaves out the open cards of retired definitions
// (it counted every card not redeemed). Versions made before are paused
// until rebuilt.
func (Projector) Layout() string {
	return "loyalty_accounts.active_cards: open cards of retired definitions left out"
}

// Handles reports that the projector uses the loyalty context's events
// only.
func (Projector) Handles(eventType string) bool { return strings.HasPrefix(eventType, "loyalty.") }

func (Projector) Name() string { return "loyalty" }

func (Projector) Tables() []string {
	return []string{"loyalty_accounts", "loyalty_transactions", "loyalty_lots", "loyalty_cards", "loyalty_user_cards"}
}

func (Projector) Create(ctx context.Context, db projections.DB, schema string) error {
	_, err := db.Exec(ctx, fmt.Sprintf(`
CREATE TABLE %[1]s.loyalty_accounts (
    id           text        PRIMARY KEY,
    number       integer     NOT NULL UNIQUE,
    app          text        NOT NULL,
    balance      bigint      NOT NULL,
    earned       bigint      NOT NULL,
    redeemed     bigint      NOT NULL,
    expired      bigint      NOT NULL,
    adjusted     bigint      NOT NULL,
    transactions integer     NOT NULL,
    active_cards integer     NOT NULL,
    updated_at   timestamptz NOT NULL
) WITH (fillfactor = 70);
CREATE TABLE %[1]s.loyalty_transactions (
    account          integer     NOT NULL,
    version          integer     NOT NULL,
    id               text        NOT NULL,
    kind             text        NOT NULL,
    amount           bigint      NOT NULL,
    balance          bigint      NOT NULL,
    previous_balance bigint,
    reason           text        NOT NULL,
    reference        text        NOT NULL,
    idempotency_key  text        NOT NULL,
    expires_at       timestamptz,
    created_by       text        NOT NULL,
    created_at       timestamptz NOT NULL,
    PRIMARY KEY (account, version)
);
CREATE TABLE %[1]s.loyalty_lots (
    account    integer     NOT NULL,
    lot        text        NOT NULL,
    remaining  bigint      NOT NULL,
    expires_at timestamptz NOT NULL,
    PRIMARY KEY (account, lot)
) WITH (fillfactor = 90);
CREATE INDEX ON %[1]s.loyalty_lots (expires_at, account);
CREATE TABLE %[1]s.loyalty_cards (
    id            text        PRIMARY KEY,
    app           text        NOT NULL,
    name          text        NOT NULL,
    description   text        NOT NULL,
    stamps_needed integer     NOT NULL,
    reward        text        NOT NULL,
    retired       boolean     NOT NULL,
    created_at    timestamptz NOT NULL,
    updated_at    timestamptz NOT NULL
);
CREATE INDEX ON %[1]s.loyalty_cards (app, name);
CREATE TABLE %[1]s.loyalty_user_cards (
    id           text        PRIMARY KEY,
    account      text        NOT NULL,
    card         text        NOT NULL,
    app          text        NOT NULL,
    reward       text        NOT NULL,
    stamps       integer     NOT NULL,
    needed       integer     NOT NULL,
    completed_at timestamptz,
    redeemed_at  timestamptz,
    created_at   timestamptz NOT NULL,
    updated_at   timestamptz NOT NULL
);
CREATE INDEX ON %[1]s.loyalty_user_cards (account);`, schema))
	return err
}
