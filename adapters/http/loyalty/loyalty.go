package loyalty

import (
	"context"
	"net/http"
	"slices"

	httpapi "github.com/halocms/halocms/adapters/http"

	"github.com/go-chi/chi/v5"

	cmdloyalty "github.com/halocms/halocms/commands/loyalty"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
	rmaudit "github.com/halocms/halocms/readmodels/audit"
	rmloyalty "github.com/halocms/halocms/readmodels/loyalty"
)

// Commands records points, stamps and card redemptions, rebalances
// accounts and defines stamp cards. It checks the caller's rights.
type Commands interface {
	Earn(ctx context.Context, account string, p cmdloyalty.Points) (cmdloyalty.Result, error)
	Redeem(ctx context.Context, account string, p cmdloyalty.Points) (cmdloyalty.Result, error)
	Adjust(ctx context.Context, account string, p cmdloyalty.Points) (cmdloyalty.Result, error)
	Rebalance(ctx context.Context, account string) (cmdloyalty.Rebalanced, error)
	AddStamps(ctx context.Context, account string, st cmdloyalty.Stamps) (cmdloyalty.StampsResult, error)
	RedeemCard(ctx context.Context, account, userCard, idempotencyKey string) (cmdloyalty.Result, error)
	DefineCard(ctx context.Context, app string, d cmdloyalty.CardDefinition) (string, event.Position, error)
	ChangeCard(ctx context.Context, id string, d cmdloyalty.CardDefinition) (event.Position, error)
	RetireCard(ctx context.Context, id string) (event.Position, error)
	// Check returns the refusal the caller gets for op whatever the
	// request holds (nil: it depends on the account's or card's app).
	Check(ctx context.Context, account string, op cmdloyalty.Op) error
}

// Queries answers the reads of loyalty data for the caller (see
// rmloyalty.Queries: it checks who may read what).
type Queries interface {
	Account(ctx context.Context, id string) (rmloyalty.AccountView, error)
	Transactions(ctx context.Context, req rmloyalty.TransactionsRequest) (rmloyalty.TransactionPage, error)
	Search(ctx context.Context, req rmloyalty.SearchRequest) (rmloyalty.AccountPage, error)
	Cards(ctx context.Context, req rmloyalty.CardsRequest) ([]rmloyalty.Card, error)
	Card(ctx context.Context, id string) (rmloyalty.Card, error)
	// ReadBackAccount, ReadBackTransaction and ReadBackCard read what a
	// command wrote, to answer the write.
	ReadBackAccount(ctx context.Context, id string) (rmloyalty.AccountView, error)
	ReadBackTransaction(ctx context.Context, account, id string, within [2]int64) (rmloyalty.Transaction, error)
	ReadBackCard(ctx context.Context, id string) (rmloyalty.Card, error)
}

// Auditor replays a loyalty account from the event log (it checks
// the auditor's right).
type Auditor interface {
	Loyalty(ctx context.Context, q rmaudit.LoyaltyQuery) (rmaudit.LoyaltyReport, error)
}

// checkedFirst is Kit.RefusedFirst for a loyalty command: the refusal the
// command gives whatever the request holds (Commands.Check, which
// also knows that identified users redeem from their own account) comes
// before the request's own faults.
func (s *API) checkedFirst(ctx context.Context, account string, op cmdloyalty.Op, err error) error {
	if err == nil || !httpapi.RequestFault(err) {
		return err
	}
	if refused := s.Commands.Check(ctx, account, op); refused != nil {
		return refused
	}
	return err
}

// pointsKind says which points command a path records.
type pointsKind int

const (
	earnPoints pointsKind = iota
	redeemPoints
	adjustPoints
)

func (k pointsKind) String() string { return [...]string{"earn", "redeem", "adjust"}[k] }

func (k pointsKind) op() cmdloyalty.Op {
	return [...]cmdloyalty.Op{cmdloyalty.OpEarn, cmdloyalty.OpRedeem, cmdloyalty.OpAdjust}[k]
}

// loyaltyAccount resolves a path's {id}: "self" (or the /self path) is the
// account of the identified user whose token calls; everyone else names
// the user.
func loyaltyAccount(r *http.Request) (string, error) {
	id := chi.URLParam(r, "id")
	if id != "" && id != "self" {
		return id, nil
	}
	a := access.From(r.Context())
	if a.Kind != access.Identified {
		return "", fault.Forbiddenf("self is the account of the identified user signed in; CMS users name the user")
	}
	return a.ID, nil
}

// getLoyaltyUser serves GET /api/loyalty/user/{id} and /self: the
// balance, figures, newest transactions and stamp cards.
func (s *API) getLoyaltyUser(w http.ResponseWriter, r *http.Request) error {
	id, err := loyaltyAccount(r)
	if err != nil {
		return err
	}
	v, err := s.Queries.Account(r.Context(), id)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, loyaltyUserDetailJSONOf(v, s.kit.AppNumber(r.Context(), v.App)))
	return nil
}

// loyaltyTransactions serves GET /api/loyalty/user/{id|self}/transactions,
// newest first.
func (s *API) loyaltyTransactions(w http.ResponseWriter, r *http.Request) error {
	id, err := loyaltyAccount(r)
	if err != nil {
		return err
	}
	req := rmloyalty.TransactionsRequest{Account: id}
	req.Page, req.Limit, req.Malformed = httpapi.PageParams(r)
	res, err := s.Queries.Transactions(r.Context(), req)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, transactionPageJSON{Pagination: httpapi.Pagination(req.Page, req.Limit, res.Total), Items: transactionsJSON(res.Items)})
	return nil
}

// searchLoyaltyUsers serves POST /api/loyalty/user/search: an app's
// loyalty users, for CMS users holding read on the app.
func (s *API) searchLoyaltyUsers(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	req := rmloyalty.SearchRequest{}
	req.Query, req.Malformed = s.loyaltySearch(r)
	res, err := s.Queries.Search(ctx, req)
	if err != nil {
		return err
	}
	n := s.kit.AppNumber(ctx, req.Query.App)
	out := loyaltyPageJSON{Pagination: httpapi.Pagination(req.Query.Page, req.Query.Limit, res.Total), Items: make([]loyaltyUserJSON, len(res.Items))}
	for i, a := range res.Items {
		out.Items[i] = loyaltyUserJSONOf(a, n)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// loyaltySearch maps a loyalty search body to the query, its app resolved.
func (s *API) loyaltySearch(r *http.Request) (rmloyalty.SearchQuery, error) {
	var b loyaltySearchBody
	if err := httpapi.Decode(r, &b); err != nil {
		return rmloyalty.SearchQuery{}, err
	}
	q, err := b.query()
	if err != nil {
		return q, err
	}
	appID, err := b.app()
	if err != nil {
		return q, err
	}
	if appID == nil {
		return q, fault.Invalidf("app is required").With("field", "app")
	}
	q.App, err = s.kit.AppOfField(r.Context(), appID, "app")
	return q, err
}

// loyaltyPoints serves earn, redeem and adjust. A new transaction is a
// 201; a replay of an idempotency key with the same request is a 200 with
// Idempotent-Replayed: true and the original transaction.
func (s *API) loyaltyPoints(kind pointsKind) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		account, err := loyaltyAccount(r)
		if err != nil {
			return err
		}
		var b pointsBody
		if err := httpapi.Decode(r, &b); err != nil {
			return s.checkedFirst(ctx, account, kind.op(), err)
		}
		p, err := b.points(r)
		if err != nil {
			return s.checkedFirst(ctx, account, kind.op(), err)
		}
		var res cmdloyalty.Result
		switch kind {
		case earnPoints:
			res, err = s.Commands.Earn(ctx, account, p)
		case redeemPoints:
			res, err = s.Commands.Redeem(ctx, account, p)
		case adjustPoints:
			res, err = s.Commands.Adjust(ctx, account, p)
		}
		s.kit.Metrics.Command("loyalty."+kind.String(), err)
		if err != nil {
			return err
		}
		out := pointsResultJSON{User: res.Account, Balance: res.Balance, Transaction: s.transactionView(ctx, res, kind, p)}
		httpapi.WriteJSON(w, replayStatus(w, res.Replayed), out)
		return nil
	}
}

// replayStatus marks a replayed answer and returns its status: 200 for a
// replay, 201 for something new.
func replayStatus(w http.ResponseWriter, replayed bool) int {
	if replayed {
		w.Header().Set("Idempotent-Replayed", "true")
		return http.StatusOK
	}
	return http.StatusCreated
}

// transactionView reads a recorded transaction back (the command waited
// for the projection); if the read model has not caught up within its
// bound, the command's own result answers.
func (s *API) transactionView(ctx context.Context, res cmdloyalty.Result, kind pointsKind, p cmdloyalty.Points) loyaltyTransactionJSON {
	if t, err := s.Queries.ReadBackTransaction(ctx, res.Account, res.Transaction, res.Versions); err == nil {
		return transactionJSONOf(t)
	}
	amount := p.Amount
	if kind == redeemPoints {
		amount = -amount // signed, as the read model keeps it
	}
	t := rmloyalty.Transaction{ID: res.Transaction, Account: res.Account, App: res.App, Kind: kind.String(),
		Amount: amount, Balance: res.Balance, Reason: p.Reason, Reference: p.Reference, IdempotencyKey: p.IdempotencyKey,
		ExpiresAt: p.ExpiresAt, By: access.From(ctx).Label()}
	if t.IdempotencyKey == "" {
		t.IdempotencyKey = res.Transaction
	}
	return transactionJSONOf(t)
}

// userCards picks the account's cards with these ids, in their order.
func (s *API) userCards(ctx context.Context, account string, ids []string) []userCardJSON {
	out := make([]userCardJSON, 0, len(ids))
	v, err := s.Queries.ReadBackAccount(ctx, account)
	if err != nil {
		return out
	}
	for _, id := range ids {
		if i := slices.IndexFunc(v.Cards, func(c rmloyalty.UserCard) bool { return c.ID == id }); i >= 0 {
			out = append(out, userCardJSONOf(v.Cards[i]))
		}
	}
	return out
}

// addStamps serves POST /api/loyalty/user/{id}/stamps.
func (s *API) addStamps(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	account, err := loyaltyAccount(r)
	if err != nil {
		return err
	}
	var b stampsBody
	if err := httpapi.Decode(r, &b); err != nil {
		return s.checkedFirst(ctx, account, cmdloyalty.OpAddStamps, err)
	}
	st, err := b.stamps(r)
	if err != nil {
		return s.checkedFirst(ctx, account, cmdloyalty.OpAddStamps, err)
	}
	res, err := s.Commands.AddStamps(ctx, account, st)
	s.kit.Metrics.Command("loyalty.stamps", err)
	if err != nil {
		return err
	}
	completed := res.Completed
	if completed == nil {
		completed = []string{}
	}
	httpapi.WriteJSON(w, replayStatus(w, res.Replayed), stampsResultJSON{User: res.Account,
		StampCards: s.userCards(ctx, res.Account, res.UserCards), Completed: completed})
	return nil
}

// redeemStampCard serves POST /api/loyalty/user/{id|self}/stampcards/{card}/redeem.
func (s *API) redeemStampCard(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	account, err := loyaltyAccount(r)
	if err != nil {
		return err
	}
	var b cardRedeemBody
	if err := httpapi.DecodeOptional(r, &b); err != nil {
		return s.checkedFirst(ctx, account, cmdloyalty.OpRedeemCard, err)
	}
	key, err := idempotencyKey(r, b.IdempotencyKey)
	if err != nil {
		return s.checkedFirst(ctx, account, cmdloyalty.OpRedeemCard, err)
	}
	card := chi.URLParam(r, "card")
	res, err := s.Commands.RedeemCard(ctx, account, card, key)
	s.kit.Metrics.Command("loyalty.redeem_card", err)
	if err != nil {
		return err
	}
	out := cardRedeemedJSON{User: res.Account, StampCard: userCardJSON{ID: card, Redeemed: true}}
	if cs := s.userCards(ctx, res.Account, []string{card}); len(cs) == 1 {
		out.StampCard = cs[0]
	}
	httpapi.WriteJSON(w, replayStatus(w, res.Replayed), out)
	return nil
}

// rebalanceLoyalty serves POST /api/loyalty/user/rebalance.
func (s *API) rebalanceLoyalty(w http.ResponseWriter, r *http.Request) error {
	var b rebalanceBody
	if err := httpapi.Decode(r, &b); err != nil {
		return s.checkedFirst(r.Context(), "", cmdloyalty.OpRebalance, err)
	}
	if b.User == "" {
		return s.checkedFirst(r.Context(), "", cmdloyalty.OpRebalance, fault.Invalidf("user is required").With("field", "user"))
	}
	res, err := s.Commands.Rebalance(r.Context(), b.User)
	s.kit.Metrics.Command("loyalty.rebalance", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, rebalancedJSON{User: res.Account, PreviousBalance: res.Old, Balance: res.New, Corrected: res.Corrected})
	return nil
}

// listStampCards serves GET /api/loyalty/stampcard?app=: the app's stamp
// cards that take stamps, by name.
func (s *API) listStampCards(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	q := r.URL.Query()
	field, appID := "app", q.Get("app")
	if appID == "" {
		field, appID = "appId", q.Get("appId")
	}
	req := rmloyalty.CardsRequest{Named: appID != ""}
	if req.Named {
		req.App, req.Malformed = s.kit.AppOfField(ctx, appID, field)
	}
	cards, err := s.Queries.Cards(ctx, req)
	if err != nil {
		return err
	}
	app := req.App // the app Cards listed: the one named, or the token's own
	if !req.Named {
		app = access.From(ctx).ClientApp()
	}
	n := s.kit.AppNumber(ctx, app)
	out := make([]stampCardJSON, len(cards))
	for i, c := range cards {
		out[i] = stampCardJSONOf(c, n)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (s *API) getStampCard(w http.ResponseWriter, r *http.Request) error {
	c, err := s.Queries.Card(r.Context(), chi.URLParam(r, "id"))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, stampCardJSONOf(c, s.kit.AppNumber(r.Context(), c.App)))
	return nil
}

// defineStampCard serves POST /api/loyalty/stampcard.
func (s *API) defineStampCard(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	refused := func(err error) error { return s.checkedFirst(ctx, "", cmdloyalty.OpDefineCard, err) }
	var b stampCardBody
	if err := httpapi.Decode(r, &b); err != nil {
		return refused(err)
	}
	d, err := b.definition()
	if err != nil {
		return refused(err)
	}
	appID, err := b.app()
	if err != nil {
		return refused(err)
	}
	if appID == nil {
		return refused(fault.Invalidf("app is required").With("field", "app"))
	}
	app, err := s.kit.AppOfField(ctx, appID, "app")
	if err != nil {
		return refused(err)
	}
	id, _, err := s.Commands.DefineCard(ctx, app, d)
	s.kit.Metrics.Command("loyalty.define_card", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, s.cardView(ctx, id, stampCardJSON{ID: id, AppID: s.kit.AppNumber(ctx, app), Name: d.Name,
		Description: d.Description, StampsNeeded: d.StampsNeeded, Reward: d.Reward}))
	return nil
}

// cardView reads a card back after a write (the command waited for the
// projection); the fallback answers when it has not caught up.
func (s *API) cardView(ctx context.Context, id string, fallback stampCardJSON) stampCardJSON {
	c, err := s.Queries.ReadBackCard(ctx, id)
	if err != nil {
		return fallback
	}
	return stampCardJSONOf(c, s.kit.AppNumber(ctx, c.App))
}

// changeStampCard serves PUT /api/loyalty/stampcard/{id}: the whole
// definition; a card stays in its app (app and appId are ignored).
func (s *API) changeStampCard(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), chi.URLParam(r, "id")
	var b stampCardBody
	if err := httpapi.Decode(r, &b); err != nil {
		return s.checkedFirst(ctx, "", cmdloyalty.OpChangeCard, err)
	}
	d, err := b.definition()
	if err != nil {
		return s.checkedFirst(ctx, "", cmdloyalty.OpChangeCard, err)
	}
	_, err = s.Commands.ChangeCard(ctx, id, d)
	s.kit.Metrics.Command("loyalty.change_card", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, s.cardView(ctx, id, stampCardJSON{ID: id, Name: d.Name, Description: d.Description,
		StampsNeeded: d.StampsNeeded, Reward: d.Reward}))
	return nil
}

// retireStampCard serves DELETE /api/loyalty/stampcard/{id}: the card
// takes no more stamps; completed cards can still be redeemed.
func (s *API) retireStampCard(w http.ResponseWriter, r *http.Request) error {
	ctx, id := r.Context(), chi.URLParam(r, "id")
	_, err := s.Commands.RetireCard(ctx, id)
	s.kit.Metrics.Command("loyalty.retire_card", err)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, s.cardView(ctx, id, stampCardJSON{ID: id, Retired: true}))
	return nil
}

// auditLoyalty serves GET /api/audit/loyalty?user=&from=&to=: the
// account's events replayed from the log with the running balance.
func (s *API) auditLoyalty(w http.ResponseWriter, r *http.Request) error {
	ctx, q := r.Context(), r.URL.Query()
	from, err := httpapi.ParseMoment(q.Get("from"), "from")
	if err != nil {
		return s.kit.RefusedFirst(ctx, rights.Manage, err)
	}
	to, err := httpapi.ParseMoment(q.Get("to"), "to")
	if err != nil {
		return s.kit.RefusedFirst(ctx, rights.Manage, err)
	}
	if !from.IsZero() && !to.IsZero() && to.Before(from) {
		return s.kit.RefusedFirst(ctx, rights.Manage, fault.Invalidf("to is before from").With("field", "to"))
	}
	user := q.Get("user")
	if user == "" {
		return s.kit.RefusedFirst(ctx, rights.Manage, fault.Invalidf("user is required").With("field", "user"))
	}
	rep, err := s.Audit.Loyalty(r.Context(), rmaudit.LoyaltyQuery{User: user, From: from, To: to})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, loyaltyAuditJSONOf(rep))
	return nil
}
