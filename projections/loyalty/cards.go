package loyalty

import (
	"context"
	"fmt"
	"time"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
)

// writeCards folds the batch's stamp card and definition events into the
// rows they touch (read first: they are few) and writes them back. It
// counts each account's change of active cards (see active), those of
// accounts whose open cards' definition this batch retired included.
func (b *batch) writeCards(ctx context.Context) error {
	if len(b.cardEvents) == 0 {
		return nil
	}
	users := map[string]*userCard{}
	defs := map[string]*cardDef{}
	var userIDs, defIDs []string
	for _, r := range b.cardEvents {
		switch e := r.Data.(type) {
		case loyalty.StampsAdded:
			userIDs = appendNew(users, userIDs, e.UserCard)
		case loyalty.CardCompleted:
			userIDs = appendNew(users, userIDs, e.UserCard)
		case loyalty.CardRedeemed:
			userIDs = appendNew(users, userIDs, e.UserCard)
		case loyalty.CardDefined:
			defIDs = appendNew(defs, defIDs, e.Card)
		case loyalty.CardChanged:
			defIDs = appendNew(defs, defIDs, e.Card)
		case loyalty.CardRetired:
			defIDs = appendNew(defs, defIDs, e.Card)
		}
	}
	if err := b.loadUserCards(ctx, userIDs, users); err != nil {
		return err
	}
	// The definitions of the user cards too: whether a card is active
	// depends on its definition's retirement. Only defIDs are written back.
	loadIDs := defIDs
	for _, id := range userIDs {
		if c := users[id]; c != nil {
			loadIDs = appendNew(defs, loadIDs, c.card)
		}
	}
	for _, r := range b.cardEvents {
		if e, ok := r.Data.(loyalty.StampsAdded); ok {
			loadIDs = appendNew(defs, loadIDs, e.Card)
		}
	}
	if err := b.loadCardDefs(ctx, loadIDs, defs); err != nil {
		return err
	}
	for _, c := range users {
		if c != nil {
			c.wasActive = c.active(defs[c.card].retiredBefore())
		}
	}
	for _, r := range b.cardEvents {
		foldCard(r, users, defs)
	}
	if err := b.writeUserCards(ctx, userIDs, users, defs); err != nil {
		return err
	}
	if err := b.retireOpenCards(ctx, defIDs, defs, userIDs); err != nil {
		return err
	}
	return b.writeCardDefs(ctx, defIDs, defs)
}

// retireOpenCards takes from their accounts' active_cards the open cards,
// stored before this batch and untouched by it, of the definitions this
// batch retired (the cards the batch touched are counted in
// writeUserCards).
func (b *batch) retireOpenCards(ctx context.Context, defIDs []string, defs map[string]*cardDef, touched []string) error {
	var retired []string
	for _, id := range defIDs {
		if d := defs[id]; d != nil && d.retired && !d.wasRetired {
			retired = append(retired, id)
		}
	}
	if len(retired) == 0 {
		return nil
	}
	if touched == nil {
		touched = []string{} // not NULL: id <> ALL(NULL) holds for no row
	}
	if _, err := b.db.Exec(ctx, `UPDATE `+b.t("loyalty_accounts")+` a SET active_cards = a.active_cards - x.n
		FROM (SELECT account, count(*) AS n FROM `+b.t("loyalty_user_cards")+`
			WHERE card = ANY($1) AND completed_at IS NULL AND redeemed_at IS NULL AND id <> ALL($2)
			GROUP BY account) x
		WHERE a.id = x.account`, retired, touched); err != nil {
		return fmt.Errorf("loyalty projection, retire open stamp cards: %w", err)
	}
	return nil
}

func appendNew[T any](m map[string]*T, order []string, id string) []string {
	if _, ok := m[id]; ok {
		return order
	}
	m[id] = nil
	return append(order, id)
}

func foldCard(r event.Recorded, users map[string]*userCard, defs map[string]*cardDef) {
	at := r.RecordedAt
	switch e := r.Data.(type) {
	case loyalty.StampsAdded:
		c := users[e.UserCard]
		if c == nil {
			c = &userCard{id: e.UserCard, account: e.Account, card: e.Card, app: e.App, reward: e.Reward,
				needed: e.Needed, created: at}
			users[e.UserCard] = c
		}
		c.stamps, c.updated = e.Total, at
	case loyalty.CardCompleted:
		if c := users[e.UserCard]; c != nil {
			c.completed, c.updated = &at, at
		}
	case loyalty.CardRedeemed:
		if c := users[e.UserCard]; c != nil {
			c.redeemed, c.updated = &at, at
		}
	case loyalty.CardDefined:
		defs[e.Card] = &cardDef{id: e.Card, app: e.App, name: e.Name, description: e.Description, reward: e.Reward,
			needed: e.StampsNeeded, created: at, updated: at, seen: true}
	case loyalty.CardChanged:
		if d := defs[e.Card]; d != nil {
			d.name, d.description, d.reward, d.needed, d.updated = e.Name, e.Description, e.Reward, e.StampsNeeded, at
		}
	case loyalty.CardRetired:
		if d := defs[e.Card]; d != nil {
			d.retired, d.updated = true, at
		}
	}
}

func (b *batch) loadUserCards(ctx context.Context, ids []string, into map[string]*userCard) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := b.db.Query(ctx, `SELECT id, account, card, app, reward, stamps, needed, completed_at, redeemed_at,
		created_at, updated_at FROM `+b.t("loyalty_user_cards")+` WHERE id = ANY($1)`, ids)
	if err != nil {
		return fmt.Errorf("loyalty projection, read stamp cards: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		c := &userCard{existed: true}
		if err := rows.Scan(&c.id, &c.account, &c.card, &c.app, &c.reward, &c.stamps, &c.needed, &c.completed,
			&c.redeemed, &c.created, &c.updated); err != nil {
			return err
		}
		into[c.id] = c
	}
	return rows.Err()
}

func (b *batch) loadCardDefs(ctx context.Context, ids []string, into map[string]*cardDef) error {
	if len(ids) == 0 {
		return nil
	}
	rows, err := b.db.Query(ctx, `SELECT id, app, name, description, reward, stamps_needed, retired, created_at, updated_at
		FROM `+b.t("loyalty_cards")+` WHERE id = ANY($1)`, ids)
	if err != nil {
		return fmt.Errorf("loyalty projection, read stamp card definitions: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		d := &cardDef{seen: true}
		if err := rows.Scan(&d.id, &d.app, &d.name, &d.description, &d.reward, &d.needed, &d.retired, &d.created, &d.updated); err != nil {
			return err
		}
		d.wasRetired = d.retired
		into[d.id] = d
	}
	return rows.Err()
}

func (b *batch) writeUserCards(ctx context.Context, order []string, cards map[string]*userCard, cardDefs map[string]*cardDef) error {
	var (
		ids, accounts, defs, apps, rewards []string
		stamps, needed                     []int32
		completed, redeemed                []*time.Time
		created, updated                   []time.Time
	)
	for _, id := range order {
		c := cards[id]
		if c == nil {
			continue // stamps of a card this projection never saw started
		}
		if d := boolInt(c.active(cardDefs[c.card].isRetired())) - boolInt(c.existed && c.wasActive); d != 0 {
			if a := b.accounts[c.account]; a != nil {
				a.activeCards += d
			}
		}
		ids, accounts, defs, apps, rewards = append(ids, c.id), append(accounts, c.account), append(defs, c.card),
			append(apps, c.app), append(rewards, c.reward)
		stamps, needed = append(stamps, int32(c.stamps)), append(needed, int32(c.needed))
		completed, redeemed = append(completed, c.completed), append(redeemed, c.redeemed)
		created, updated = append(created, c.created), append(updated, c.updated)
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := b.db.Exec(ctx, `INSERT INTO `+b.t("loyalty_user_cards")+` (id, account, card, app, reward, stamps, needed,
		completed_at, redeemed_at, created_at, updated_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::int[],
			$8::timestamptz[], $9::timestamptz[], $10::timestamptz[], $11::timestamptz[])
		ON CONFLICT (id) DO UPDATE SET stamps = excluded.stamps, completed_at = excluded.completed_at,
			redeemed_at = excluded.redeemed_at, updated_at = excluded.updated_at`,
		ids, accounts, defs, apps, rewards, stamps, needed, completed, redeemed, created, updated); err != nil {
		return fmt.Errorf("loyalty projection, write stamp cards: %w", err)
	}
	return nil
}

func (b *batch) writeCardDefs(ctx context.Context, order []string, defs map[string]*cardDef) error {
	var (
		ids, apps, names, descs, rewards []string
		needed                           []int32
		retired                          []bool
		created, updated                 []time.Time
	)
	for _, id := range order {
		d := defs[id]
		if d == nil || !d.seen {
			continue // a change of a definition this projection never saw defined
		}
		ids, apps, names, descs, rewards = append(ids, d.id), append(apps, d.app), append(names, d.name),
			append(descs, d.description), append(rewards, d.reward)
		needed, retired = append(needed, int32(d.needed)), append(retired, d.retired)
		created, updated = append(created, d.created), append(updated, d.updated)
	}
	if len(ids) == 0 {
		return nil
	}
	if _, err := b.db.Exec(ctx, `INSERT INTO `+b.t("loyalty_cards")+` (id, app, name, description, reward, stamps_needed,
		retired, created_at, updated_at)
		SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::int[], $7::bool[],
			$8::timestamptz[], $9::timestamptz[])
		ON CONFLICT (id) DO UPDATE SET name = excluded.name, description = excluded.description, reward = excluded.reward,
			stamps_needed = excluded.stamps_needed, retired = excluded.retired, updated_at = excluded.updated_at`,
		ids, apps, names, descs, rewards, needed, retired, created, updated); err != nil {
		return fmt.Errorf("loyalty projection, write stamp card definitions: %w", err)
	}
	return nil
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
