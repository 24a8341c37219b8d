// Package loyalty holds the loyalty commands: points transactions (earn,
// redeem, adjust, expire, rebalance), stamps and stamp card redemptions on
// an identified user's account, stamp card definitions, and the expirer
// that records expiries on time without a request.
//
// Writers of one account are serialised inside the process and append
// with the stream version they read (retrying on a conflict with another
// process), so concurrent redemptions never overdraw an account. Account
// states are cached, so a command reads only the events appended since
// the state it last saw.
package loyalty

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/halocms/halocms/commands"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
	"github.com/halocms/halocms/domain/loyalty"
	"github.com/halocms/halocms/domain/rights"
)

// IDs generates identifiers (transactions, stamp cards).
type IDs interface{ NewID() string }

// Authorizer checks the caller's rights: on a resource, or
// (AuthorizeAnyApp) on some app at all.
type Authorizer interface {
	Authorize(ctx context.Context, actor access.Actor, p rights.Permission, res rights.Resource) error
	AuthorizeAnyApp(ctx context.Context, actor access.Actor, p rights.Permission) error
}

// Projections this service's responses and the caller's next reads depend on.
var Projections = []string{"loyalty"}

// Snapshots keeps accounts' folded states beside their streams, so that a
// command on an account that is not cached reads its snapshot and only
// the events after it, instead of the whole history. A snapshot is a
// cache of the log: losing one, or finding an older one, costs a longer
// read, never a different decision.
type Snapshots interface {
	// LoadSnapshot returns the account's stored snapshot of layout
	// loyalty.SnapshotLayout; ok is false when there is none.
	LoadSnapshot(ctx context.Context, account string) (s Snapshot, ok bool, err error)
	// SaveSnapshot stores s unless the account has a newer one of the
	// same layout, or one of a later layout.
	SaveSnapshot(ctx context.Context, s Snapshot) error
}

// Snapshot is an account's state at a version of its stream, with the
// position of the event that version names.
type Snapshot struct {
	Account string
	Version int64
	Last    event.Position
	State   loyalty.Snapshot
}

// Options tune the service.
type Options struct {
	// CacheEntries is the number of account states kept (0:
	// DefaultCacheEntries; negative: none, every command folds the
	// account's events since its snapshot, or its whole stream).
	CacheEntries int
	// CacheBytes bounds what the kept states take, by their footprints
	// (loyalty.Account.Footprint; 0: DefaultCacheBytes).
	CacheBytes int64
	// Snapshots, if set, stores account states every SnapshotEvery
	// events (0: DefaultSnapshotEvery), in the background.
	Snapshots     Snapshots
	SnapshotEvery int
	// Log receives the snapshots that failed to load or to save (nil:
	// discarded).
	Log *slog.Logger
}

// DefaultSnapshotEvery is how many events an account's state folds
// between two snapshots when Options leave it 0.
const DefaultSnapshotEvery = 50

// snapshotSavers bounds the snapshots being saved at once; when that many
// are in flight, the next account due waits for its next command.
const snapshotSavers = 2

// maxAttempts bounds the appends of one command that another process
// keeps beating to the account's stream.
const maxAttempts = 30

// Service runs the loyalty commands.
type Service struct {
	store commands.EventStore
	ids   IDs
	authz Authorizer
	wait  commands.Waiter
	now   func() time.Time
	cache *accountCache
	apps  *lru.Cache[string, string] // account → its app (never changes)
	locks keyedMutex

	snaps     Snapshots // nil: none
	snapEvery int64
	log       *slog.Logger
	savers    chan struct{} // a token per snapshot being saved
	saveMu    sync.Mutex    // guards stopped, and saving's Add against StopSnapshots' Wait
	stopped   bool
	saving    sync.WaitGroup
}

// NewService wires the service; every dependency is required.
func NewService(store commands.EventStore, ids IDs, authz Authorizer, wait commands.Waiter, opts Options) *Service {
	if store == nil || ids == nil || authz == nil || wait == nil {
		panic("loyalty.NewService: nil dependency")
	}
	apps, _ := lru.New[string, string](max(opts.CacheEntries, DefaultCacheEntries))
	every := opts.SnapshotEvery
	if every <= 0 {
		every = DefaultSnapshotEvery
	}
	s := &Service{store: store, ids: ids, authz: authz, wait: wait, now: time.Now,
		cache: newAccountCache(opts.CacheEntries, opts.CacheBytes), apps: apps,
		snaps: opts.Snapshots, snapEvery: int64(every), savers: make(chan struct{}, snapshotSavers), log: opts.Log}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	return s
}

// Points is the input of Earn, Redeem and Adjust. Reason is required
// (not empty, not only spaces); Reference and IdempotencyKey are optional.
type Points struct {
	Amount                            int64 // signed for Adjust
	Reason, Reference, IdempotencyKey string
	ExpiresAt                         *time.Time // earn and positive adjust only
}

// Result is the outcome of a transaction.
type Result struct {
	Account, App string
	Transaction  string // the new transaction's id, or the original one when Replayed
	Replayed     bool
	Balance      int64 // the account's recorded balance after
	Position     event.Position
	// Versions are the first and last versions of the account's stream
	// the command wrote (zero when it wrote nothing): the transaction is
	// among them, so that reading it back costs no scan of the account's
	// history.
	Versions [2]int64
}

// Rebalanced is the outcome of a rebalance: the recorded balance before
// (Old) and the one the transactions add up to (New).
type Rebalanced struct {
	Account, App string
	Old, New     int64
	Corrected    bool
	Position     event.Position
}

// Stamps is the input of AddStamps.
type Stamps struct {
	Card                              string
	Count                             int
	Reason, Reference, IdempotencyKey string
}

// StampsResult is the outcome of AddStamps.
type StampsResult struct {
	Result
	UserCards []string // cards that got stamps, in order
	Completed []string
}

// Messages of refusals.
const (
	msgAppToken     = "app tokens may not change loyalty accounts: they ship inside every copy of the app; use a CMS user's token"
	msgOwnOnly      = "an app user may only redeem from their own loyalty account"
	msgCMSOnly      = "only CMS users may do this"
	msgUnknownUser  = "unknown loyalty user"
	msgCardRequired = "the stamp card is required"
)

// Op names a command by who may do it: CMS users with permission perm on
// the account's (or the stamp card's) app, and (own) the identified user
// on their own account.
type Op struct {
	perm rights.Permission
	own  bool
}

// The commands, for Check.
var (
	OpEarn       = Op{perm: rights.Write}
	OpRedeem     = Op{perm: rights.Write, own: true}
	OpAdjust     = Op{perm: rights.Update}
	OpRebalance  = Op{perm: rights.Update}
	OpAddStamps  = Op{perm: rights.Write}
	OpRedeemCard = Op{perm: rights.Write, own: true}
	OpDefineCard = Op{perm: rights.Write}
	OpChangeCard = Op{perm: rights.Update}
	OpRetireCard = Op{perm: rights.Delete}
	opExpire     = Op{perm: rights.Update} // admins and the system only (ExpireDue checks)
)

// Check returns the refusal the caller gets for op whatever the request
// holds, without reading anything of the account or card: 401 for
// anonymous callers; 403 for app tokens, identified users on another
// account (account: the account named, "" for stamp card commands) or on
// a command that is not theirs, and CMS users who hold op's permission on
// no app at all. nil: the caller may be allowed, depending on the app of
// the account or card. The commands check the same first; handlers call
// Check before reporting a request's own faults (a malformed body), so
// that a caller who may do nothing learns nothing from the request.
func (s *Service) Check(ctx context.Context, account string, op Op) error {
	a := access.From(ctx)
	if err := precheck(a, account, op); err != nil {
		return err
	}
	return s.anyApp(ctx, a, op.perm)
}

// anyApp refuses a CMS user who holds perm on no app at all. It costs a
// query: the commands call it only before answering that an account or
// card does not exist, or that the request lacks its app or card, so that
// such a user cannot probe ids; with any right they may learn it.
func (s *Service) anyApp(ctx context.Context, a access.Actor, perm rights.Permission) error {
	if a.Kind != access.User || a.IsAdmin() {
		return nil
	}
	return s.authz.AuthorizeAnyApp(ctx, a, perm)
}

// precheck refuses, before anything is read, callers who may not do the
// command whatever the account: anonymous (401), app tokens, identified
// users on another account or on a command that is not theirs (403).
func precheck(a access.Actor, account string, w Op) error {
	switch a.Kind {
	case access.Anonymous:
		return access.ErrUnauthenticated
	case access.App:
		return fault.Forbiddenf(msgAppToken)
	case access.Identified:
		if !w.own {
			return fault.Forbiddenf(msgCMSOnly)
		}
		if a.ID != account {
			return fault.Forbiddenf(msgOwnOnly)
		}
	case access.User, access.System:
		return nil
	default:
		return fault.Forbiddenf(msgCMSOnly)
	}
	return nil
}

// authorize checks the caller against the account's app.
func (s *Service) authorize(ctx context.Context, a access.Actor, w Op, app string) error {
	if a.Kind == access.Identified {
		if a.App != app {
			return fault.Forbiddenf(msgOwnOnly)
		}
		return nil
	}
	return s.authz.Authorize(ctx, a, w.perm, rights.Resource{App: app})
}

// appOf returns the app of the identified user account (fault.NotFound
// when there is none).
func (s *Service) appOf(ctx context.Context, account string) (string, error) {
	if account == "" {
		return "", fault.NotFoundf(msgUnknownUser)
	}
	if app, ok := s.apps.Get(account); ok {
		return app, nil
	}
	u, _, err := commands.Load(ctx, s.store, appuser.IdentifiedStream(account), appuser.Identified{},
		func(i appuser.Identified, ev any) appuser.Identified { return i.Apply(ev) })
	if err != nil {
		return "", err
	}
	if !u.Exists() {
		return "", fault.NotFoundf(msgUnknownUser).With("user", account)
	}
	s.apps.Add(account, u.App)
	return u.App, nil
}

// outcome is what an account command did.
type outcome struct {
	app     string
	d       loyalty.Decision
	balance int64 // recorded, after
	old     int64 // recorded, before
	sum     int64 // the transactions' sum, before
	pos     event.Position
	written [2]int64 // the stream versions the events took (see Result.Versions)
}

// state returns the account's state caught up with its stream: the cached
// one plus the events appended since, or the whole stream folded.
func (s *Service) state(ctx context.Context, account, app string) (*loaded, error) {
	l, ok := s.cache.get(account)
	if !ok {
		var err error
		if l, err = s.restore(ctx, account, app); err != nil {
			return nil, err
		}
	}
	recs, err := s.store.ReadStream(ctx, loyalty.AccountStream(account), l.version)
	if err != nil {
		s.cache.drop(account)
		return nil, err
	}
	for _, r := range recs {
		l.account.Apply(r.Data)
		l.version, l.last = r.StreamVersion, r.Position
	}
	s.cache.put(account, l)
	s.snapshot(account, l)
	return l, nil
}

// restore is an account's state from its snapshot, or before its first
// event when it has none.
func (s *Service) restore(ctx context.Context, account, app string) (*loaded, error) {
	if s.snaps != nil {
		snap, ok, err := s.snaps.LoadSnapshot(ctx, account)
		if err != nil {
			// A cache: an unreadable snapshot (damaged, or of a layout
			// not raised when it should have been) costs the whole
			// stream, and the next save replaces it.
			s.log.Warn("loyalty: loading an account snapshot failed; folding the whole stream", "account", account, "err", err)
			ok = false
		}
		if ok {
			return &loaded{account: loyalty.RestoreAccount(snap.State), version: snap.Version, last: snap.Last,
				snapped: snap.Version}, nil
		}
	}
	return &loaded{account: loyalty.NewAccount(account, app)}, nil
}

// CacheFootprint is what the cached account states take, by their
// estimated footprints, and how many there are.
func (s *Service) CacheFootprint() (bytes int64, accounts int) { return s.cache.footprint() }

// StopSnapshots stops saving snapshots and waits for those being saved
// (each gives up after ten seconds): call it before closing the snapshot
// store's pool. The service goes on running commands, and loading
// snapshots.
func (s *Service) StopSnapshots() {
	s.saveMu.Lock()
	s.stopped = true
	s.saveMu.Unlock()
	s.saving.Wait()
}

// snapshot saves l's state in the background when it has folded
// SnapshotEvery events since the last snapshot. The caller holds the
// account's lock: the snapshot is taken here, and saved while the account
// goes on.
func (s *Service) snapshot(account string, l *loaded) {
	if s.snaps == nil || l.version-l.snapped < s.snapEvery {
		return
	}
	s.saveMu.Lock()
	defer s.saveMu.Unlock()
	if s.stopped {
		return
	}
	select {
	case s.savers <- struct{}{}:
	default:
		return // enough being saved: this one at the account's next command
	}
	snap := Snapshot{Account: account, Version: l.version, Last: l.last, State: l.account.Snapshot()}
	l.snapped = l.version
	s.saving.Add(1)
	go func() {
		defer func() { <-s.savers; s.saving.Done() }()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		// A failed save leaves the last snapshot, which stays right: the
		// next load reads more events after it.
		if err := s.snaps.SaveSnapshot(ctx, snap); err != nil {
			s.log.Warn("loyalty: saving an account snapshot failed", "account", account, "version", snap.Version, "err", err)
		}
	}()
}

// run runs one account command: it authorizes, runs prepare (loading what
// the decision needs besides the account), takes the account's lock,
// decides on the state caught up with the stream, appends with the version
// it read (on a conflict with another process it reads the newer events
// and decides again), and waits for the read model once the lock is
// released.
func (s *Service) run(ctx context.Context, account string, w Op,
	decide func(a *loyalty.Account, now time.Time) (loyalty.Decision, error), prepare ...func(context.Context) error) (outcome, error) {
	actor := access.From(ctx)
	if err := precheck(actor, account, w); err != nil {
		return outcome{}, err
	}
	app, err := s.appOf(ctx, account)
	if fault.Is(err, fault.NotFound) {
		if rerr := s.anyApp(ctx, actor, w.perm); rerr != nil {
			return outcome{}, rerr // not whether the account exists
		}
	}
	if err != nil {
		return outcome{}, err
	}
	if err := s.authorize(ctx, actor, w, app); err != nil {
		return outcome{}, err
	}
	for _, p := range prepare {
		if err := p(ctx); err != nil {
			return outcome{}, err
		}
	}
	out, err := s.locked(ctx, account, app, decide)
	if err != nil {
		return out, err
	}
	if !out.pos.IsZero() {
		s.wait.WaitFor(ctx, out.pos, Projections...)
	}
	return out, nil
}

func (s *Service) locked(ctx context.Context, account, app string,
	decide func(a *loyalty.Account, now time.Time) (loyalty.Decision, error)) (outcome, error) {
	unlock, err := s.locks.lock(ctx, account)
	if err != nil {
		return outcome{}, err
	}
	defer unlock()
	stream := loyalty.AccountStream(account)
	var out outcome
	err = commands.Retry{Attempts: maxAttempts}.Run(ctx, func(int) error {
		l, err := s.state(ctx, account, app)
		if err != nil {
			return err
		}
		a := l.account
		out = outcome{app: app, old: a.Balance(), sum: a.Sum()}
		if out.d, err = decide(a, s.now()); err != nil {
			return err
		}
		if len(out.d.Events) == 0 {
			out.balance = a.Balance()
			if out.d.Replayed {
				out.pos = l.last
			}
			return nil
		}
		res, err := s.store.Append(ctx, stream, l.version, commands.WithApp(commands.Wrap(ctx, out.d.Events...), app)...)
		if errors.Is(err, event.ErrVersionConflict) {
			return err // l stays valid at its version: the next round reads what came after
		}
		if err != nil {
			s.cache.drop(account) // the append may have landed after all
			return fmt.Errorf("append %s: %w", stream, err)
		}
		for _, e := range out.d.Events {
			a.Apply(e)
		}
		out.written = [2]int64{l.version + 1, res.Version}
		l.version, l.last = res.Version, res.Last
		s.cache.put(account, l) // its footprint with the new events
		out.balance, out.pos = a.Balance(), res.Last
		return nil
	})
	if errors.Is(err, event.ErrVersionConflict) {
		s.cache.drop(account) // the last append may have landed after all
		return outcome{}, fault.Conflictf("loyalty account %s changed concurrently; try again", account)
	}
	if err != nil {
		return outcome{}, err
	}
	return out, nil
}

func (o outcome) result(account string) Result {
	return Result{Account: account, App: o.app, Transaction: o.d.Transaction, Replayed: o.d.Replayed,
		Balance: o.balance, Position: o.pos, Versions: o.written}
}

func (p Points) domain() loyalty.Points {
	return loyalty.Points{Amount: p.Amount, Reason: p.Reason, Reference: p.Reference,
		IdempotencyKey: p.IdempotencyKey, ExpiresAt: p.ExpiresAt}
}

// Earn credits points to an identified user's account (CMS users with
// write on its app). The first transaction opens the account.
func (s *Service) Earn(ctx context.Context, account string, p Points) (Result, error) {
	out, err := s.run(ctx, account, OpEarn, func(a *loyalty.Account, now time.Time) (loyalty.Decision, error) {
		return a.Earn(p.domain(), now, s.ids.NewID)
	})
	return out.result(account), err
}

// Redeem spends points (CMS users with write on the app, or the identified
// user on their own account); more than the balance is a conflict.
func (s *Service) Redeem(ctx context.Context, account string, p Points) (Result, error) {
	out, err := s.run(ctx, account, OpRedeem, func(a *loyalty.Account, now time.Time) (loyalty.Decision, error) {
		return a.Redeem(p.domain(), now, s.ids.NewID)
	})
	return out.result(account), err
}

// Adjust corrects points by hand, up or down (CMS users with update on the
// app).
func (s *Service) Adjust(ctx context.Context, account string, p Points) (Result, error) {
	out, err := s.run(ctx, account, OpAdjust, func(a *loyalty.Account, now time.Time) (loyalty.Decision, error) {
		return a.Adjust(p.domain(), now, s.ids.NewID)
	})
	return out.result(account), err
}

// Rebalance recomputes the balance from the whole history and records a
// correction when the recorded one differs (CMS users with update on the
// app).
func (s *Service) Rebalance(ctx context.Context, account string) (Rebalanced, error) {
	out, err := s.run(ctx, account, OpRebalance, func(a *loyalty.Account, _ time.Time) (loyalty.Decision, error) {
		return a.Rebalance(), nil
	})
	if err != nil {
		return Rebalanced{Account: account}, err
	}
	return Rebalanced{Account: account, App: out.app, Old: out.old, New: out.sum,
		Corrected: len(out.d.Events) > 0, Position: out.pos}, nil
}

func applyCard(c loyalty.Card, ev any) loyalty.Card { return c.Apply(ev) }

// AddStamps puts stamps on the account's card of a definition of its app
// (CMS users with write on the app); full cards complete and the rest
// goes on new cards.
func (s *Service) AddStamps(ctx context.Context, account string, st Stamps) (StampsResult, error) {
	var card loyalty.Card
	out, err := s.run(ctx, account, OpAddStamps, func(a *loyalty.Account, _ time.Time) (loyalty.Decision, error) {
		return a.AddStamps(card, loyalty.Stamps{Count: st.Count, Reason: st.Reason, Reference: st.Reference,
			IdempotencyKey: st.IdempotencyKey}, s.ids.NewID)
	}, func(ctx context.Context) error {
		if st.Card == "" {
			return fault.Invalidf(msgCardRequired).With("field", "card")
		}
		c, _, err := commands.Load(ctx, s.store, loyalty.CardStream(st.Card), loyalty.Card{}, applyCard)
		card = c
		return err
	})
	return StampsResult{Result: out.result(account), UserCards: out.d.UserCards, Completed: out.d.Completed}, err
}

// RedeemCard gives a completed stamp card's reward (CMS users with write
// on the app, or the identified user on their own account).
func (s *Service) RedeemCard(ctx context.Context, account, userCard, idempotencyKey string) (Result, error) {
	out, err := s.run(ctx, account, OpRedeemCard, func(a *loyalty.Account, _ time.Time) (loyalty.Decision, error) {
		return a.RedeemCard(userCard, idempotencyKey, s.ids.NewID)
	})
	return out.result(account), err
}

// ExpireDue records the expiry of the account's lots due at now (system
// work: admins and the system). It returns the number of lots expired.
func (s *Service) ExpireDue(ctx context.Context, account string, now time.Time) (int, error) {
	if err := access.RequireAdmin(access.From(ctx)); err != nil {
		return 0, err
	}
	out, err := s.run(ctx, account, opExpire, func(a *loyalty.Account, _ time.Time) (loyalty.Decision, error) {
		return a.ExpireDue(now, s.ids.NewID), nil
	})
	return out.d.Expired, err
}

// CardDefinition is what a stamp card is defined or changed with.
type CardDefinition struct {
	Name, Description, Reward string
	StampsNeeded              int
}

func (d CardDefinition) spec() loyalty.CardSpec {
	return loyalty.CardSpec{Name: d.Name, Description: d.Description, Reward: d.Reward, StampsNeeded: d.StampsNeeded}
}

// cmsUser refuses everyone but CMS users and the system.
func cmsUser(a access.Actor) error {
	switch a.Kind {
	case access.Anonymous:
		return access.ErrUnauthenticated
	case access.User, access.System:
		return nil
	case access.App:
		return fault.Forbiddenf(msgAppToken)
	}
	return fault.Forbiddenf(msgCMSOnly)
}

// DefineCard defines a stamp card of app (write on the app).
func (s *Service) DefineCard(ctx context.Context, app string, d CardDefinition) (string, event.Position, error) {
	a := access.From(ctx)
	if err := cmsUser(a); err != nil {
		return "", event.Position{}, err
	}
	if app == "" {
		if err := s.anyApp(ctx, a, OpDefineCard.perm); err != nil {
			return "", event.Position{}, err
		}
		return "", event.Position{}, fault.Invalidf("the app is required").With("field", "app")
	}
	if err := s.authz.Authorize(ctx, a, rights.Write, rights.Resource{App: app}); err != nil {
		return "", event.Position{}, err
	}
	known, _, err := commands.Load(ctx, s.store, identity.AppStream(app), identity.App{},
		func(a identity.App, ev any) identity.App { return a.Apply(ev) })
	if err != nil {
		return "", event.Position{}, err
	}
	if !known.Exists() {
		return "", event.Position{}, fault.Invalidf("app %s not found", app).With("field", "app")
	}
	id := s.ids.NewID()
	evs, err := loyalty.DefineCard(loyalty.Card{}, id, app, d.spec())
	if err != nil {
		return "", event.Position{}, err
	}
	res, err := s.store.Append(ctx, loyalty.CardStream(id), event.NoStream, commands.WithApp(commands.Wrap(ctx, evs...), app)...)
	if err != nil {
		return "", event.Position{}, fmt.Errorf("append %s: %w", loyalty.CardStream(id), err)
	}
	s.wait.WaitFor(ctx, res.Last, Projections...)
	return id, res.Last, nil
}

// changeCard authorizes perm on the card's app and records decide's
// events; the position is zero when there was nothing to record. A CMS
// user who holds perm on no app is refused rather than told that a card
// does not exist.
func (s *Service) changeCard(ctx context.Context, id string, perm rights.Permission, decide func(loyalty.Card) ([]any, error)) (event.Position, error) {
	a := access.From(ctx)
	if err := cmsUser(a); err != nil {
		return event.Position{}, err
	}
	card := loyalty.Card{}
	if id != "" {
		var err error
		if card, _, err = commands.Load(ctx, s.store, loyalty.CardStream(id), loyalty.Card{}, applyCard); err != nil {
			return event.Position{}, err
		}
	}
	if !card.Exists() {
		if err := s.anyApp(ctx, a, perm); err != nil {
			return event.Position{}, err
		}
		return event.Position{}, loyalty.ErrCardNotFound
	}
	if err := s.authz.Authorize(ctx, a, perm, rights.Resource{App: card.App}); err != nil {
		return event.Position{}, err
	}
	_, res, err := commands.Update(ctx, s.store, loyalty.CardStream(id), card.App, loyalty.Card{}, applyCard, decide)
	if err != nil {
		return event.Position{}, err
	}
	if !res.Last.IsZero() {
		s.wait.WaitFor(ctx, res.Last, Projections...)
	}
	return res.Last, nil
}

// ChangeCard changes a stamp card definition (update on its app). Cards
// already started keep what they need and promise.
func (s *Service) ChangeCard(ctx context.Context, id string, d CardDefinition) (event.Position, error) {
	return s.changeCard(ctx, id, OpChangeCard.perm, func(c loyalty.Card) ([]any, error) { return c.Change(d.spec()) })
}

// RetireCard retires a stamp card definition (delete on its app): it takes
// no more stamps; its completed cards can still be redeemed.
func (s *Service) RetireCard(ctx context.Context, id string) (event.Position, error) {
	return s.changeCard(ctx, id, OpRetireCard.perm, loyalty.Card.Retire)
}
