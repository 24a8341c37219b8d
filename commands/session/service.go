// Package session is the token service behind POST /api/oauth/token and
// the bearer-token check of every other request: OAuth grants (password,
// client_credentials, refresh_token with rotation and reuse detection),
// authentication of access tokens, revocation, and the throttling of failed
// sign-ins. It knows nothing of HTTP.
package session

import (
	"context"
	"crypto/sha256"
	"errors"
	"math"
	"net/netip"
	"strings"
	"time"

	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	"github.com/halocms/halocms/domain/identity"
)

// Users finds CMS users for sign-in and token checks (the identity read
// model). Both return a fault.NotFound error for an unknown user.
type Users interface {
	CredentialsByUsername(ctx context.Context, username string) (identity.Credentials, error)
	CredentialsByID(ctx context.Context, id string) (identity.Credentials, error)
}

// Apps finds apps for the client_credentials grant (fault.NotFound when
// unknown).
type Apps interface {
	AppCredentialsByClientID(ctx context.Context, clientID string) (identity.AppCredentials, error)
}

// Passwords checks passwords and client secrets against their hashes.
type Passwords interface {
	Verify(hash, password string) bool
	// DummyVerify costs what Verify costs, for unknown names.
	DummyVerify(password string)
	// VerifySecret checks a high-entropy client secret against its
	// (fast) hash.
	VerifySecret(hash, secret string) bool
}

// Secrets makes the random strings tokens are made of.
type Secrets interface {
	// Token returns n letters and digits drawn uniformly from a
	// cryptographically secure source.
	Token(n int) string
}

// Throttle slows guessing: it counts sign-in attempts per key and holds
// attempts back with growing delays, never locking the right credentials of
// someone who has not failed out. See docs/security.md.
type Throttle interface {
	// Attempt decides on an attempt. keys[0] is the attempt's own key (a
	// user-and-address pair); the others (the address) hold it back only
	// when keys[0] has failed before. It returns how long to wait when the
	// attempt is held back (then nothing is counted), else counts it
	// against every key, atomically, and returns 0.
	Attempt(ctx context.Context, keys ...string) (retryAfter time.Duration, err error)
	// Forgive takes an attempt back (it was right).
	Forgive(ctx context.Context, keys ...string) error
	Reset(ctx context.Context, keys ...string) error
	// Prune forgets keys that have been quiet long enough.
	Prune(ctx context.Context) (int64, error)
}

// SubjectKind says whom a token was issued to.
type SubjectKind string

const (
	SubjectUser       SubjectKind = "user"       // a CMS user (password grant)
	SubjectApp        SubjectKind = "app"        // an app (client credentials)
	SubjectIdentified SubjectKind = "identified" // an identified app user (an app's login endpoint)
)

// Grant is what a token stands for.
type Grant struct {
	Subject   SubjectKind
	SubjectID string // user id, app id or identified user id
	App       string // the app of an app or identified user's token
	Family    string // shared by every token descended from one sign-in
	Scope     string
}

// Pair is a new access token and refresh token to store, by hash.
type Pair struct {
	Grant
	AccessHash, RefreshHash []byte
	AccessTTL, RefreshTTL   time.Duration
	ClientIP                netip.Addr // zero when unknown
}

// Errors a TokenStore returns.
var (
	// ErrTokenNotFound: no such token of that kind, or expired, or revoked.
	ErrTokenNotFound = errors.New("session: token not found")
	// ErrTokenSpent: the refresh token was already used.
	ErrTokenSpent = errors.New("session: refresh token already used")
)

// TokenStore keeps tokens by hash. Expiry is judged by the store's clock.
type TokenStore interface {
	// Issue stores a pair atomically.
	Issue(ctx context.Context, p Pair) error
	// Access returns the grant of a live access token, or ErrTokenNotFound.
	Access(ctx context.Context, hash []byte) (Grant, error)
	// Refresh returns the grant of a live refresh token. A spent one
	// returns its grant with ErrTokenSpent; others ErrTokenNotFound.
	Refresh(ctx context.Context, hash []byte) (Grant, error)
	// Rotate spends the refresh token (once: of two concurrent calls, one
	// gets ErrTokenSpent) and stores next, in next.Family, atomically.
	Rotate(ctx context.Context, refreshHash []byte, next Pair) error
	// RevokeFamily revokes every token of a family.
	RevokeFamily(ctx context.Context, family string) error
	// RevokeFamilyOf revokes the family of the token with this hash (of
	// either kind); an unknown hash is not an error.
	RevokeFamilyOf(ctx context.Context, hash []byte) error
	// RevokeSubject revokes every token of a user or app.
	RevokeSubject(ctx context.Context, kind SubjectKind, id string) error
	// Expired returns the grant of an access token that is known, not
	// revoked, and expired no longer than within ago; any other token (a
	// live one included) is ErrTokenNotFound.
	Expired(ctx context.Context, hash []byte, within time.Duration) (Grant, error)
	// DeleteExpired deletes tokens past their expiry, except identified
	// users' unrevoked access tokens that expired less than keepIdentified
	// ago (Expired still finds them).
	DeleteExpired(ctx context.Context, keepIdentified time.Duration) (int64, error)
}

// Config sets token lifetimes.
type Config struct {
	AccessTTL  time.Duration // default 24 h
	RefreshTTL time.Duration // default 30 days
	// IdentifiedRecovery is how long after it expired an identified
	// user's access token may still stand for its app on the identified
	// login (see RecoverIdentified); default RefreshTTL.
	IdentifiedRecovery time.Duration
}

// Default lifetimes.
const (
	DefaultAccessTTL  = 24 * time.Hour
	DefaultRefreshTTL = 30 * 24 * time.Hour
)

// TokenLength is the length of access and refresh tokens (alphanumeric,
// like HALO's).
const TokenLength = 40

// Token is a grant's answer. The HTTP layer writes ExpiresIn as
// milliseconds and adds token_type "Bearer".
type Token struct {
	AccessToken  string
	RefreshToken string
	ExpiresIn    time.Duration
	Scope        string
}

// Scopes of issued tokens.
const (
	ScopeUser = "user"
	ScopeApp  = "app"
)

// Messages the SDKs and users see.
const (
	msgBadLogin       = "Invalid username or password"
	msgBadClient      = "Client not found or invalid secret"
	msgBadToken       = "Invalid or expired token"
	msgBadRefresh     = "Invalid or expired refresh token"
	msgIPSignIn       = "sign-in from this address is not allowed"
	msgIPAccess       = "access from this address is not allowed"
	msgTooManyFailure = "Too many failed attempts, try again later"
)

// Service issues, checks and revokes tokens.
type Service struct {
	users     Users
	apps      Apps
	passwords Passwords
	secrets   Secrets
	tokens    TokenStore
	throttle  Throttle
	cfg       Config
}

// NewService wires the service; every dependency is required. Zero
// lifetimes in cfg take the defaults.
func NewService(users Users, apps Apps, passwords Passwords, secrets Secrets, tokens TokenStore, throttle Throttle, cfg Config) *Service {
	if users == nil || apps == nil || passwords == nil || secrets == nil || tokens == nil || throttle == nil {
		panic("session.NewService: nil dependency")
	}
	if cfg.AccessTTL <= 0 {
		cfg.AccessTTL = DefaultAccessTTL
	}
	if cfg.RefreshTTL <= 0 {
		cfg.RefreshTTL = DefaultRefreshTTL
	}
	if cfg.IdentifiedRecovery <= 0 {
		cfg.IdentifiedRecovery = cfg.RefreshTTL
	}
	return &Service{users: users, apps: apps, passwords: passwords, secrets: secrets, tokens: tokens, throttle: throttle, cfg: cfg}
}

// HashToken is how tokens are stored: SHA-256 of the bearer string.
func HashToken(token string) []byte {
	h := sha256.Sum256([]byte(token))
	return h[:]
}

// Throttle keys. Long names are cut so that junk input cannot bloat the
// table (no real username or client id is that long).
const maxKeyPart = 128

func cut(s string) string {
	if len(s) > maxKeyPart {
		return s[:maxKeyPart]
	}
	return s
}

// UserKey, ClientKey and IPKey name the throttle counters.
func UserKey(username string) string   { return "user:" + cut(strings.ToLower(username)) }
func ClientKey(clientID string) string { return "client:" + cut(clientID) }
func IPKey(ip netip.Addr) string       { return "ip:" + ip.Unmap().String() }

// PairKey names the counter of an account (UserKey, ClientKey, ...) signing
// in from ip; the account's own when the address is unknown.
func PairKey(account string, ip netip.Addr) string {
	if ip.IsValid() {
		return account + "|" + IPKey(ip)
	}
	return account
}

// Keys returns the counters of an attempt, as Throttle.Attempt takes them:
// the account-and-address pair's first, then, when the address is known,
// the address's.
func Keys(account string, ip netip.Addr) []string {
	if ip.IsValid() {
		return []string{PairKey(account, ip), IPKey(ip)}
	}
	return []string{account}
}

func (s *Service) attempt(ctx context.Context, keys []string) error {
	wait, err := s.throttle.Attempt(ctx, keys...)
	if err != nil {
		return err
	}
	if wait > 0 { // held back: not counted
		return fault.New(fault.TooManyRequests, msgTooManyFailure).With("retryAfter", int(math.Ceil(wait.Seconds())))
	}
	return nil
}

// succeeded takes a right attempt back: the pair's failures are forgotten
// and the address's count goes down by one.
func (s *Service) succeeded(ctx context.Context, keys []string) error {
	if err := s.throttle.Reset(ctx, keys[0]); err != nil {
		return err
	}
	return s.throttle.Forgive(ctx, keys[1:]...)
}

// PasswordGrant signs a CMS user in (grant_type=password).
func (s *Service) PasswordGrant(ctx context.Context, username, password string, ip netip.Addr) (Token, error) {
	ks := Keys(UserKey(username), ip)
	// Counted before the password is checked, so that parallel guesses
	// cannot get past the limits; taken back below when it is right.
	if err := s.attempt(ctx, ks); err != nil {
		return Token{}, err
	}
	c, err := s.users.CredentialsByUsername(ctx, username)
	switch {
	case fault.Is(err, fault.NotFound):
		s.passwords.DummyVerify(password)
		return Token{}, fault.New(fault.Unauthenticated, msgBadLogin)
	case err != nil:
		return Token{}, err
	}
	if !s.passwords.Verify(c.PasswordHash, password) {
		return Token{}, fault.New(fault.Unauthenticated, msgBadLogin)
	}
	// The password is right: not a guessing attempt, whatever follows.
	if err := s.succeeded(ctx, ks); err != nil {
		return Token{}, err
	}
	if c.Disabled {
		return Token{}, fault.New(fault.Unauthenticated, msgBadLogin)
	}
	if !identity.IPAllowed(c.AllowedIPs, ip) {
		return Token{}, fault.New(fault.Forbidden, msgIPSignIn)
	}
	return s.issue(ctx, Grant{Subject: SubjectUser, SubjectID: c.ID, Family: s.secrets.Token(TokenLength), Scope: ScopeUser}, ip)
}

// ClientCredentials signs an app in (grant_type=client_credentials).
func (s *Service) ClientCredentials(ctx context.Context, clientID, secret string, ip netip.Addr) (Token, error) {
	// Throttled per client-and-address pair and per address, as users
	// are: client ids ship inside apps, so wrong secrets sent from one
	// address must not hold back the app's devices elsewhere, nor those
	// behind the same address that never failed.
	ks := Keys(ClientKey(clientID), ip)
	if err := s.attempt(ctx, ks); err != nil {
		return Token{}, err
	}
	app, err := s.verifyClient(ctx, clientID, secret)
	if err != nil {
		return Token{}, err
	}
	if err := s.succeeded(ctx, ks); err != nil {
		return Token{}, err
	}
	return s.issue(ctx, Grant{Subject: SubjectApp, SubjectID: app.ID, App: app.ID, Family: s.secrets.Token(TokenLength), Scope: ScopeApp}, ip)
}

// IdentifiedGrant issues tokens to an identified app user who signed in
// through app (the caller checked the credentials). They have scope "app",
// as HALO's, and act for the identified user within that app.
func (s *Service) IdentifiedGrant(ctx context.Context, app, identifiedID string, ip netip.Addr) (Token, error) {
	if app == "" || identifiedID == "" {
		return Token{}, fault.Invalidf("an identified grant needs an app and an identified user")
	}
	return s.issue(ctx, Grant{Subject: SubjectIdentified, SubjectID: identifiedID, App: app, Family: s.secrets.Token(TokenLength), Scope: ScopeApp}, ip)
}

// verifyClient checks an app's client id and secret.
func (s *Service) verifyClient(ctx context.Context, clientID, secret string) (identity.AppCredentials, error) {
	app, err := s.apps.AppCredentialsByClientID(ctx, clientID)
	switch {
	case fault.Is(err, fault.NotFound):
		return app, fault.New(fault.Unauthenticated, msgBadClient)
	case err != nil:
		return app, err
	}
	if !s.passwords.VerifySecret(app.SecretHash, secret) {
		return app, fault.New(fault.Unauthenticated, msgBadClient)
	}
	return app, nil
}

// Refresh exchanges a refresh token for a new pair in the same family
// (grant_type=refresh_token). The refresh token is spent; presenting it
// again revokes the family. clientID and clientSecret, when given (iOS
// sends them), must be those of the app the token was issued to.
//
// An app that presents its client credentials with a refresh token that no
// longer works (spent, expired, revoked: a lost response, a long-idle
// device) gets a new family as client_credentials would give it, once the
// old family is revoked: iOS retries the refresh grant and never falls back
// to client credentials by itself (wire reference §2.2), so refusing would
// lock the device out for good. The credentials prove as much as a
// client_credentials sign-in does.
func (s *Service) Refresh(ctx context.Context, refreshToken, clientID, clientSecret string, ip netip.Addr) (Token, error) {
	tok, err := s.refresh(ctx, refreshToken, clientID, clientSecret, ip)
	var gone unusableRefresh
	if errors.As(err, &gone) && clientID != "" && clientSecret != "" {
		if t, cerr := s.ClientCredentials(ctx, clientID, clientSecret, ip); cerr == nil && t.Scope == ScopeApp {
			return t, nil
		}
	}
	return tok, err
}

// unusableRefresh marks a refresh token that is spent, expired, revoked or
// unknown (as opposed to credentials that do not match it).
type unusableRefresh struct{ error }

func (u unusableRefresh) Unwrap() error { return u.error }

func (s *Service) refresh(ctx context.Context, refreshToken, clientID, clientSecret string, ip netip.Addr) (Token, error) {
	if refreshToken == "" {
		return Token{}, unusableRefresh{fault.New(fault.Unauthenticated, msgBadRefresh)}
	}
	hash := HashToken(refreshToken)
	g, err := s.tokens.Refresh(ctx, hash)
	switch {
	case errors.Is(err, ErrTokenSpent):
		return Token{}, unusableRefresh{s.reused(ctx, g.Family)}
	case errors.Is(err, ErrTokenNotFound):
		return Token{}, unusableRefresh{fault.New(fault.Unauthenticated, msgBadRefresh)}
	case err != nil:
		return Token{}, err
	}
	switch g.Subject {
	case SubjectApp:
		if clientID != "" || clientSecret != "" {
			app, err := s.verifyClient(ctx, clientID, clientSecret)
			if err != nil {
				return Token{}, err
			}
			if app.ID != g.SubjectID {
				return Token{}, fault.New(fault.Unauthenticated, msgBadClient)
			}
		}
	case SubjectUser:
		if _, err := s.user(ctx, g.SubjectID, ip, msgIPSignIn); err != nil {
			return Token{}, err
		}
	case SubjectIdentified:
		if clientID != "" || clientSecret != "" {
			app, err := s.verifyClient(ctx, clientID, clientSecret)
			if err != nil {
				return Token{}, err
			}
			if app.ID != g.App {
				return Token{}, fault.New(fault.Unauthenticated, msgBadClient)
			}
		}
	default:
		return Token{}, fault.New(fault.Unauthenticated, msgBadRefresh)
	}
	access, refresh := s.secrets.Token(TokenLength), s.secrets.Token(TokenLength)
	err = s.tokens.Rotate(ctx, hash, s.pair(g, access, refresh, ip))
	switch {
	case errors.Is(err, ErrTokenSpent): // another refresh won the race
		return Token{}, s.reused(ctx, g.Family)
	case errors.Is(err, ErrTokenNotFound): // revoked or expired meanwhile
		return Token{}, fault.New(fault.Unauthenticated, msgBadRefresh)
	case err != nil:
		return Token{}, err
	}
	return Token{AccessToken: access, RefreshToken: refresh, ExpiresIn: s.cfg.AccessTTL, Scope: g.Scope}, nil
}

// reused answers the presentation of a spent refresh token: someone holds
// a copy, so every token of the family goes.
func (s *Service) reused(ctx context.Context, family string) error {
	if err := s.tokens.RevokeFamily(ctx, family); err != nil {
		return err
	}
	return fault.New(fault.Unauthenticated, msgBadRefresh)
}

// user loads a token's user and checks it may still act from ip.
func (s *Service) user(ctx context.Context, id string, ip netip.Addr, ipMessage string) (identity.Credentials, error) {
	c, err := s.users.CredentialsByID(ctx, id)
	switch {
	case fault.Is(err, fault.NotFound):
		return c, fault.New(fault.Unauthenticated, msgBadToken)
	case err != nil:
		return c, err
	case c.Disabled:
		return c, fault.New(fault.Unauthenticated, msgBadToken)
	case !identity.IPAllowed(c.AllowedIPs, ip):
		return c, &fault.Error{Kind: fault.Forbidden, Message: ipMessage}
	}
	return c, nil
}

// Authenticate checks a bearer access token and returns who it acts for.
// Unknown, expired and revoked tokens, and tokens of disabled or deleted
// users, are fault.Unauthenticated; a user outside their IP allowlist is
// fault.Forbidden. A user's admin flag is read at each call, so changes
// take effect at once.
func (s *Service) Authenticate(ctx context.Context, accessToken string, ip netip.Addr) (access.Actor, error) {
	if accessToken == "" {
		return access.Actor{}, fault.New(fault.Unauthenticated, msgBadToken)
	}
	g, err := s.tokens.Access(ctx, HashToken(accessToken))
	switch {
	case errors.Is(err, ErrTokenNotFound):
		return access.Actor{}, fault.New(fault.Unauthenticated, msgBadToken)
	case err != nil:
		return access.Actor{}, err
	}
	clientIP := ""
	if ip.IsValid() {
		clientIP = ip.Unmap().String()
	}
	switch g.Subject {
	case SubjectUser:
		c, err := s.user(ctx, g.SubjectID, ip, msgIPAccess)
		if err != nil {
			return access.Actor{}, err
		}
		return access.Actor{Kind: access.User, ID: c.ID, Admin: c.Admin, Name: c.Name, ClientIP: clientIP}, nil
	case SubjectApp:
		return access.Actor{Kind: access.App, ID: g.SubjectID, App: g.SubjectID, ClientIP: clientIP}, nil
	case SubjectIdentified:
		return access.Actor{Kind: access.Identified, ID: g.SubjectID, App: g.App, ClientIP: clientIP}, nil
	}
	return access.Actor{}, fault.New(fault.Unauthenticated, msgBadToken)
}

// RecoverIdentified lets an identified user's expired access token stand
// for its app, for the one request that signs an identified user in again:
// when the token expires, iOS logs in again with it as the bearer. Only a
// token of an identified user that is known, not revoked and expired no
// longer than Config.IdentifiedRecovery ago qualifies; the actor is then
// the app (the login checks the user's own credentials). Anything else,
// live tokens included (Authenticate serves those), is
// fault.Unauthenticated.
func (s *Service) RecoverIdentified(ctx context.Context, accessToken string, ip netip.Addr) (access.Actor, error) {
	if accessToken == "" {
		return access.Actor{}, fault.New(fault.Unauthenticated, msgBadToken)
	}
	g, err := s.tokens.Expired(ctx, HashToken(accessToken), s.cfg.IdentifiedRecovery)
	switch {
	case errors.Is(err, ErrTokenNotFound):
		return access.Actor{}, fault.New(fault.Unauthenticated, msgBadToken)
	case err != nil:
		return access.Actor{}, err
	case g.Subject != SubjectIdentified || g.App == "":
		return access.Actor{}, fault.New(fault.Unauthenticated, msgBadToken)
	}
	clientIP := ""
	if ip.IsValid() {
		clientIP = ip.Unmap().String()
	}
	return access.Actor{Kind: access.App, ID: g.App, App: g.App, ClientIP: clientIP}, nil
}

// Revoke revokes a token (access or refresh) and every token of its family.
// An unknown token is not an error (RFC 7009).
func (s *Service) Revoke(ctx context.Context, token string) error {
	if token == "" {
		return nil
	}
	return s.tokens.RevokeFamilyOf(ctx, HashToken(token))
}

// RevokeSubject revokes every token of a user ("user"), app ("app") or
// identified user ("identified"), for example when a user is disabled or
// changes password.
func (s *Service) RevokeSubject(ctx context.Context, kind, id string) error {
	k := SubjectKind(kind)
	if k != SubjectUser && k != SubjectApp && k != SubjectIdentified {
		return fault.Invalidf("subject kind must be %q, %q or %q", SubjectUser, SubjectApp, SubjectIdentified)
	}
	return s.tokens.RevokeSubject(ctx, k, id)
}

// Cleanup deletes expired tokens and ended throttle windows; run it now
// and then. It returns how many tokens it deleted.
func (s *Service) Cleanup(ctx context.Context) (int64, error) {
	n, err := s.tokens.DeleteExpired(ctx, s.cfg.IdentifiedRecovery)
	if err != nil {
		return n, err
	}
	_, err = s.throttle.Prune(ctx)
	return n, err
}

func (s *Service) pair(g Grant, access, refresh string, ip netip.Addr) Pair {
	return Pair{Grant: g, AccessHash: HashToken(access), RefreshHash: HashToken(refresh),
		AccessTTL: s.cfg.AccessTTL, RefreshTTL: s.cfg.RefreshTTL, ClientIP: ip}
}

func (s *Service) issue(ctx context.Context, g Grant, ip netip.Addr) (Token, error) {
	access, refresh := s.secrets.Token(TokenLength), s.secrets.Token(TokenLength)
	if err := s.tokens.Issue(ctx, s.pair(g, access, refresh, ip)); err != nil {
		return Token{}, err
	}
	return Token{AccessToken: access, RefreshToken: refresh, ExpiresIn: s.cfg.AccessTTL, Scope: g.Scope}, nil
}
