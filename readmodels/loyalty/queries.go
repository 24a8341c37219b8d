package loyalty

import (
	"context"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/rights"
	"github.com/halocms/halocms/readmodels/internal/guard"
)

// Authorizer answers the read side's permission questions from the
// effective-rights projection.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
	AuthorizeAnywhere(ctx context.Context, actor access.Actor, p rights.Permission, kinds ...rights.ScopeKind) error
}

// ReadLine bounds the hot reads that run in PostgreSQL at once: Enter
// waits, first come first served, for weight places and returns what gives
// them back.
type ReadLine interface {
	Enter(ctx context.Context, weight int64) (leave func(), err error)
}

// Queries answers the reads of loyalty data for the actor in the context:
// accounts and their transactions for their owner or a CMS user holding
// read on their app, listings for CMS users, stamp cards for their app's
// tokens too. Account reads wait in the read line.
type Queries struct {
	store *Store
	authz Authorizer
	line  ReadLine
}

// NewQueries returns the loyalty query service over store.
func NewQueries(store *Store, authz Authorizer, line ReadLine) *Queries {
	if store == nil || authz == nil || line == nil {
		panic("loyalty.NewQueries: nil dependency")
	}
	return &Queries{store: store, authz: authz, line: line}
}

// refusedFirst puts the caller's refusal of read on every app before err,
// a fault of the request (see guard.RefusedFirst).
func (q *Queries) refusedFirst(ctx context.Context, err error) error {
	return guard.RefusedFirst(ctx, q.authz, rights.Read, err)
}

// malformed is refusedFirst for what was wrong with the request as sent.
func (q *Queries) malformed(ctx context.Context, err error) error {
	return guard.Malformed(ctx, q.authz, rights.Read, err, rights.AppScope)
}

// canReadAccount refuses callers that may not read a loyalty account
// before it is loaded: app tokens (a device has no business with the
// others' points) and identified users other than its owner.
func canReadAccount(a access.Actor, id string) error {
	switch a.Kind {
	case access.Anonymous:
		return access.ErrUnauthenticated
	case access.App:
		return fault.Forbiddenf("app tokens may not read loyalty accounts; sign the user in").With("permission", rights.Read.String())
	case access.Identified:
		if id != a.ID {
			return fault.Forbiddenf("an identified user may read their own loyalty account only")
		}
	}
	return nil
}

// mayReadAccountOf finishes canReadAccount once the account's app is
// known: its owner may read it, a CMS user needs read on the app.
func (q *Queries) mayReadAccountOf(ctx context.Context, a access.Actor, app string) error {
	if a.Kind == access.Identified {
		return nil // canReadAccount checked it is theirs
	}
	return q.authz.Authorize(ctx, a, rights.Read, rights.Resource{App: app})
}

// Account reads an account for the caller: its owner, or a CMS user
// holding read on its app.
func (q *Queries) Account(ctx context.Context, id string) (AccountView, error) {
	leave, err := q.line.Enter(ctx, 1)
	if err != nil {
		return AccountView{}, err
	}
	defer leave()
	a := access.From(ctx)
	if err := canReadAccount(a, id); err != nil {
		return AccountView{}, err
	}
	v, err := q.store.Account(ctx, id)
	if err != nil {
		return v, q.refusedFirst(ctx, err)
	}
	return v, q.mayReadAccountOf(ctx, a, v.App)
}

// TransactionsRequest asks for a page of an account's transactions.
type TransactionsRequest struct {
	Account     string
	Page, Limit int
	// Malformed is what was wrong with the request as sent: it is
	// reported once the caller may read accounts at all.
	Malformed error
}

// Transactions reads a page of an account's transactions, newest first,
// for the caller Account allows.
func (q *Queries) Transactions(ctx context.Context, req TransactionsRequest) (TransactionPage, error) {
	a := access.From(ctx)
	if err := canReadAccount(a, req.Account); err != nil {
		return TransactionPage{}, err
	}
	if req.Malformed != nil {
		return TransactionPage{}, q.refusedFirst(ctx, req.Malformed)
	}
	leave, err := q.line.Enter(ctx, 1)
	if err != nil {
		return TransactionPage{}, err
	}
	defer leave()
	res, err := q.store.Transactions(ctx, req.Account, req.Page, req.Limit)
	if err != nil {
		return res, q.refusedFirst(ctx, err)
	}
	return res, q.mayReadAccountOf(ctx, a, res.App)
}

// SearchRequest is a listing of an app's loyalty users.
type SearchRequest struct {
	Query SearchQuery // with the app resolved
	// Malformed is what was wrong with the request as sent (its app
	// included): it is reported once the caller may list at all.
	Malformed error
}

// Search lists an app's loyalty users, for CMS users holding read on the
// app.
func (q *Queries) Search(ctx context.Context, req SearchRequest) (AccountPage, error) {
	a := access.From(ctx)
	if a.ClientApp() != "" {
		return AccountPage{}, fault.Forbiddenf("searching loyalty users is for CMS users").With("permission", rights.Read.String())
	}
	if req.Malformed != nil {
		return AccountPage{}, q.malformed(ctx, req.Malformed)
	}
	if err := q.authz.Authorize(ctx, a, rights.Read, rights.Resource{App: req.Query.App}); err != nil {
		return AccountPage{}, err
	}
	return q.store.Search(ctx, req.Query)
}

// CardsRequest lists an app's stamp cards.
type CardsRequest struct {
	// Named says whether the request names an app; App is the app it
	// names, or Malformed what is wrong with how it names it.
	Named     bool
	App       string
	Malformed error
}

// Cards lists the stamp cards that take stamps, by name, of an app: an
// app's token, or an identified user's, lists its own app's (the app
// shows them); CMS users name the app and need read on it.
func (q *Queries) Cards(ctx context.Context, req CardsRequest) ([]Card, error) {
	app, err := q.cardsApp(ctx, req)
	if err != nil {
		return nil, q.refusedFirst(ctx, err)
	}
	return q.store.Cards(ctx, app)
}

func (q *Queries) cardsApp(ctx context.Context, req CardsRequest) (string, error) {
	a := access.From(ctx)
	if own := a.ClientApp(); own != "" {
		switch {
		case !req.Named:
			return own, nil
		case req.Malformed != nil:
			return "", req.Malformed
		case req.App != own:
			return "", fault.Forbiddenf("an app's token lists its own app's stamp cards only")
		}
		return req.App, nil
	}
	switch {
	case !req.Named:
		return "", fault.Invalidf("app is required").With("field", "app")
	case req.Malformed != nil:
		return "", req.Malformed
	}
	return req.App, q.authz.Authorize(ctx, a, rights.Read, rights.Resource{App: req.App})
}

// Card reads a stamp card definition for the caller: a CMS user with read
// on its app, or its app's own tokens.
func (q *Queries) Card(ctx context.Context, id string) (Card, error) {
	c, err := q.store.Card(ctx, id)
	if err != nil {
		return Card{}, q.refusedFirst(ctx, err)
	}
	a := access.From(ctx)
	if own := a.ClientApp(); own != "" {
		if own != c.App {
			return Card{}, fault.NotFoundf("stamp card not found")
		}
	} else if err := q.authz.Authorize(ctx, a, rights.Read, rights.Resource{App: c.App}); err != nil {
		return Card{}, err
	}
	return c, nil
}

// ReadBackAccount, ReadBackTransaction and ReadBackCard read what a
// command wrote, to answer the write (the command authorized it).
func (q *Queries) ReadBackAccount(ctx context.Context, id string) (AccountView, error) {
	return q.store.Account(ctx, id)
}

// ReadBackTransaction reads a transaction a command recorded, among the
// account's versions within if not zero (see Store.Transaction).
func (q *Queries) ReadBackTransaction(ctx context.Context, account, id string, within [2]int64) (Transaction, error) {
	return q.store.Transaction(ctx, account, id, within)
}

// ReadBackCard reads a stamp card a command defined or changed.
func (q *Queries) ReadBackCard(ctx context.Context, id string) (Card, error) {
	return q.store.Card(ctx, id)
}
