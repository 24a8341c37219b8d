package appuser

import (
	"context"
	"math"
	"net/netip"
	"strings"
	"time"

	"github.com/halocms/halocms/commands"
	cmdsession "github.com/halocms/halocms/commands/session"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/appuser"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/fault"
)

// Passwords hashes and checks identified users' passwords.
type Passwords interface {
	Hash(password string) (string, error)
	Verify(hash, password string) bool
	// DummyVerify costs what Verify costs, for unknown emails.
	DummyVerify(password string)
}

// Throttle slows guessing (the one the CMS password grant uses; see
// cmdsession.Throttle).
type Throttle interface {
	// Attempt decides on an attempt (keys[0] its own key, then the
	// address's), as cmdsession.Throttle's: a wait when held back.
	Attempt(ctx context.Context, keys ...string) (time.Duration, error)
	// Forgive takes an attempt back (it was right).
	Forgive(ctx context.Context, keys ...string) error
	Reset(ctx context.Context, keys ...string) error
}

// Tokens issues identified users' tokens.
type Tokens interface {
	IdentifiedGrant(ctx context.Context, app, identifiedID string, ip netip.Addr) (cmdsession.Token, error)
}

// Messages the SDKs show.
const (
	MsgBadCredentials   = "Credentials are not valid"
	MsgNetwork          = "network not supported: only halo (email and password) sign-in is available"
	msgTooManyAttempts  = "Too many failed attempts, try again later"
	msgAppTokenRequired = "identified users sign up and in through an app's token"
)

// clientApp returns the app of an app token or identified user's token;
// anyone else is refused.
func clientApp(a access.Actor) (string, error) {
	switch {
	case a.Kind == access.Anonymous:
		return "", access.ErrUnauthenticated
	case a.ClientApp() == "":
		return "", fault.Forbiddenf(msgAppTokenRequired)
	}
	return a.ClientApp(), nil
}

// checkNetwork accepts HALO's own network ("" means halo). Facebook and
// Google sign-ins send a provider token this server cannot verify offline.
func checkNetwork(network string) error {
	switch strings.ToLower(network) {
	case "", appuser.NetworkHalo:
		return nil
	case appuser.NetworkFacebook, appuser.NetworkGoogle:
		return fault.Invalidf(MsgNetwork).With("network", network)
	}
	return appuser.Problems{"network": appuser.CodeInvalid}.Err()
}

// Registration is a sign-up: the credentials, the alias of the device it
// happens on (linked to the new user when it names an app user of the
// app) and the profile.
type Registration struct {
	Network  string
	Email    string
	Password string
	DeviceID string
	Profile  appuser.UserProfile
}

func applyIdentified(i appuser.Identified, ev any) appuser.Identified { return i.Apply(ev) }
func applyClaim(c appuser.EmailClaim, ev any) appuser.EmailClaim      { return c.Apply(ev) }

// Register signs an identified user up with an app's token; the email is
// unique within the app (case-insensitively). It answers once the read
// model has the new user.
//
// Sign-ups count against the caller's address as failed sign-ins do, and
// a successful one is taken back: so one address can neither probe which
// emails are registered (each taken email counts) nor keep the password
// hasher busy beyond the address limit. A taken email is refused before
// any hashing.
func (s *Service) Register(ctx context.Context, in Registration) (appuser.Identified, error) {
	a := access.From(ctx)
	app, err := clientApp(a)
	if err != nil {
		return appuser.Identified{}, err
	}
	if err := checkNetwork(in.Network); err != nil {
		return appuser.Identified{}, err
	}
	in.Email = strings.TrimSpace(in.Email)
	if err := appuser.CheckCredentials(in.Email, in.Password); err != nil {
		return appuser.Identified{}, err
	}
	var keys []string
	if ip, _ := netip.ParseAddr(a.ClientIP); ip.IsValid() {
		keys = append(keys, cmdsession.IPKey(ip))
	}
	if err := s.attempt(ctx, keys); err != nil {
		return appuser.Identified{}, err
	}
	user, err := s.register(ctx, app, in)
	if err != nil {
		return user, err
	}
	return user, s.throttle.Forgive(ctx, keys...)
}

// attempt counts an attempt against keys and refuses it (429) when one of
// them is over its limit.
func (s *Service) attempt(ctx context.Context, keys []string) error {
	if len(keys) == 0 {
		return nil
	}
	wait, err := s.throttle.Attempt(ctx, keys...)
	if err != nil {
		return err
	}
	if wait > 0 { // held back: not counted
		return fault.New(fault.TooManyRequests, msgTooManyAttempts).With("retryAfter", int(math.Ceil(wait.Seconds())))
	}
	return nil
}

func (s *Service) register(ctx context.Context, app string, in Registration) (appuser.Identified, error) {
	emailStream := appuser.IdentifiedEmailStream(app, in.Email)
	id := randomName(appuser.IdentifiedPrefix)
	var (
		hash string
		evs  []any
	)
	res, err := commands.UpdateMany(ctx, s.store, func() ([]event.StreamAppend, error) {
		claim, cv, err := commands.Load(ctx, s.store, emailStream, appuser.EmailClaim{}, applyClaim)
		if err != nil {
			return nil, err
		}
		if hash == "" { // hashing is costly: only once the sign-up is otherwise acceptable
			if _, err := appuser.Register(appuser.Identified{}, claim, id, app, in.Email, "", in.Profile); err != nil {
				return nil, err
			}
			if hash, err = s.passwords.Hash(in.Password); err != nil {
				return nil, err
			}
		}
		if evs, err = appuser.Register(appuser.Identified{}, claim, id, app, in.Email, hash, in.Profile); err != nil {
			return nil, err
		}
		appends := []event.StreamAppend{
			{Stream: appuser.IdentifiedStream(id), ExpectedVersion: event.NoStream, Events: commands.WithApp(commands.Wrap(ctx, evs[0]), app)},
			{Stream: emailStream, ExpectedVersion: cv, Events: commands.WithApp(commands.Wrap(ctx, evs[1]), app)},
		}
		link, err := s.linkAppend(ctx, app, in.DeviceID, id)
		if err != nil {
			return nil, err
		}
		if link != nil {
			appends = append(appends, *link)
		}
		return appends, nil
	})
	if err != nil {
		return appuser.Identified{}, conflict(err)
	}
	s.settle(ctx, res.Last)
	return appuser.Identified{}.Apply(evs[0]), nil
}

// linkAppend is the append that links the app user with alias (of app)
// to identified user id; nil when the alias names no live app user of the
// app, or it is linked already.
func (s *Service) linkAppend(ctx context.Context, app, alias, id string) (*event.StreamAppend, error) {
	if alias == "" {
		return nil, nil
	}
	appUserID, err := s.users.AppUserIDByAlias(ctx, app, alias)
	if fault.Is(err, fault.NotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	u, v, err := commands.Load(ctx, s.store, appuser.Stream(appUserID), appuser.AppUser{}, applyUser)
	if err != nil {
		return nil, err
	}
	if !u.Live() || u.App != app {
		return nil, nil
	}
	evs, err := u.Link(id)
	if err != nil || len(evs) == 0 {
		return nil, err
	}
	return &event.StreamAppend{Stream: appuser.Stream(u.ID), ExpectedVersion: v, Events: commands.WithApp(commands.Wrap(ctx, evs...), app)}, nil
}

// link links the app user with alias (of app) to identified user id, if
// there is one, and returns where the link landed.
func (s *Service) link(ctx context.Context, app, alias, id string) (event.Position, error) {
	var res event.AppendResult
	err := commands.Retry{}.Run(ctx, func(int) error {
		res = event.AppendResult{}
		a, err := s.linkAppend(ctx, app, alias, id)
		if err != nil || a == nil {
			return err
		}
		res, err = s.store.Append(ctx, a.Stream, a.ExpectedVersion, a.Events...)
		return err
	})
	if err != nil {
		return event.Position{}, conflict(err)
	}
	return res.Last, nil
}

// Login is a sign-in: HALO network credentials and the alias of the
// device it happens on.
type Login struct {
	Network  string
	Email    string
	Password string
	DeviceID string
}

// Throttle keys of identified sign-ins.
func identifiedKey(app, email string) string {
	k := "identified:" + app + ":" + strings.ToLower(email)
	if len(k) > 200 {
		k = k[:200]
	}
	return k
}

// Login signs an identified user in with an app's token: it checks the
// credentials (failures are throttled per account-and-address pair and per address, as the
// CMS password grant's), links the device (the app user whose alias is
// DeviceID) to the user, so that pushes to the user reach it, and issues a
// token that acts for the user within the app.
func (s *Service) Login(ctx context.Context, in Login) (appuser.Identified, cmdsession.Token, error) {
	a := access.From(ctx)
	app, err := clientApp(a)
	if err != nil {
		return appuser.Identified{}, cmdsession.Token{}, err
	}
	if err := checkNetwork(in.Network); err != nil {
		return appuser.Identified{}, cmdsession.Token{}, err
	}
	in.Email = strings.TrimSpace(in.Email)
	if in.Email == "" || in.Password == "" {
		return appuser.Identified{}, cmdsession.Token{}, fault.Invalidf(MsgBadCredentials)
	}
	ip, _ := netip.ParseAddr(a.ClientIP)
	// Throttled per account-and-address pair and per address, as the CMS
	// password grant: guesses from one address never hold back the right
	// password from another. Counted before the password is checked, so
	// that parallel guesses cannot get past the limits; taken back when it
	// is right.
	keys := cmdsession.Keys(identifiedKey(app, in.Email), ip)
	if err := s.attempt(ctx, keys); err != nil {
		return appuser.Identified{}, cmdsession.Token{}, err
	}
	user, err := s.verify(ctx, app, in.Email, in.Password)
	if err != nil {
		return user, cmdsession.Token{}, err
	}
	if err := s.throttle.Reset(ctx, keys[0]); err != nil {
		return user, cmdsession.Token{}, err
	}
	if err := s.throttle.Forgive(ctx, keys[1:]...); err != nil {
		return user, cmdsession.Token{}, err
	}
	linked, err := s.link(ctx, app, in.DeviceID, user.ID)
	if err != nil {
		return user, cmdsession.Token{}, err
	}
	tok, err := s.tokens.IdentifiedGrant(ctx, app, user.ID, ip)
	if err != nil {
		return user, cmdsession.Token{}, err
	}
	s.settle(ctx, linked)
	return user, tok, nil
}

// verify checks an identified user's credentials within app.
func (s *Service) verify(ctx context.Context, app, email, password string) (appuser.Identified, error) {
	bad := fault.Invalidf(MsgBadCredentials)
	claim, _, err := commands.Load(ctx, s.store, appuser.IdentifiedEmailStream(app, email), appuser.EmailClaim{}, applyClaim)
	if err != nil {
		return appuser.Identified{}, err
	}
	if claim.IdentifiedID == "" {
		s.passwords.DummyVerify(password)
		return appuser.Identified{}, bad
	}
	user, _, err := commands.Load(ctx, s.store, appuser.IdentifiedStream(claim.IdentifiedID), appuser.Identified{}, applyIdentified)
	if err != nil {
		return user, err
	}
	if !user.Exists() || user.App != app || !s.passwords.Verify(user.PasswordHash, password) {
		return appuser.Identified{}, bad
	}
	return user, nil
}
