package session_test

import (
	"context"
	"errors"
	"net/netip"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/crypto/bcrypt"

	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/password"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	cmdsession "github.com/halocms/halocms/commands/session"
	"github.com/halocms/halocms/domain/access"
	"github.com/halocms/halocms/domain/fault"
	projidentity "github.com/halocms/halocms/projections/identity"
	rmidentity "github.com/halocms/halocms/readmodels/identity"
)

const (
	userLimit = 3
	ipLimit   = 5
)

var (
	ip1 = netip.MustParseAddr("203.0.113.7")
	ip2 = netip.MustParseAddr("198.51.100.9")
)

type env struct {
	pool *pgxpool.Pool
	svc  *cmdsession.Service
	pw   password.Bcrypt
}

func newEnv(t *testing.T, cfg cmdsession.Config) *env {
	t.Helper()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	if _, err := pool.Exec(ctx, `CREATE SCHEMA proj_identity_v1`); err != nil {
		t.Fatal(err)
	}
	if err := (projidentity.Projector{}).Create(ctx, pool, "proj_identity_v1"); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `
CREATE VIEW identity_users AS SELECT * FROM proj_identity_v1.identity_users;
CREATE VIEW identity_apps AS SELECT * FROM proj_identity_v1.identity_apps;`); err != nil {
		t.Fatal(err)
	}
	th := postgres.NewLoginThrottle(pool)
	th.UserLimit, th.IPLimit = userLimit, ipLimit
	th.BaseDelay = time.Minute // so that no delay ends while a test runs
	read := rmidentity.New(pool)
	pw := password.Bcrypt{Cost: bcrypt.MinCost}
	return &env{pool: pool, pw: pw,
		svc: cmdsession.NewService(read, read, pw, ids.Generator{}, postgres.NewTokenStore(pool), th, cfg)}
}

type userOpts struct {
	admin    bool
	disabled bool
	ips      []string
}

func (e *env) addUser(t *testing.T, id, username, pw string, o userOpts) {
	t.Helper()
	h, err := e.pw.Hash(pw)
	if err != nil {
		t.Fatal(err)
	}
	ips := o.ips
	if ips == nil {
		ips = []string{}
	}
	_, err = e.pool.Exec(context.Background(), `INSERT INTO proj_identity_v1.identity_users
		(id, username, password_hash, admin, allowed_ips, disabled, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, now(), now())`, id, username, h, o.admin, ips, o.disabled)
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) addApp(t *testing.T, id, clientID, secret string) {
	t.Helper()
	h := e.pw.HashSecret(secret)
	_, err := e.pool.Exec(context.Background(), `INSERT INTO proj_identity_v1.identity_apps
		(id, name, client_id, client_secret_hash, created_at, updated_at)
		VALUES ($1, $1, $2, $3, now(), now())`, id, clientID, h)
	if err != nil {
		t.Fatal(err)
	}
}

func (e *env) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	if _, err := e.pool.Exec(context.Background(), sql, args...); err != nil {
		t.Fatal(err)
	}
}

func (e *env) failures(t *testing.T, key string) int {
	t.Helper()
	var n int
	err := e.pool.QueryRow(context.Background(), `SELECT coalesce((SELECT count FROM login_failures WHERE key = $1), 0)`, key).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func wantKind(t *testing.T, err error, kind fault.Kind) {
	t.Helper()
	if !fault.Is(err, kind) {
		t.Fatalf("error %v (kind %v), want kind %v", err, fault.KindOf(err), kind)
	}
}

var tokenPattern = regexp.MustCompile(`^[A-Za-z0-9]{40}$`)

func checkToken(t *testing.T, tok cmdsession.Token, scope string, ttl time.Duration) {
	t.Helper()
	if !tokenPattern.MatchString(tok.AccessToken) || !tokenPattern.MatchString(tok.RefreshToken) || tok.AccessToken == tok.RefreshToken {
		t.Errorf("tokens %q / %q: want two different 40-character alphanumeric strings", tok.AccessToken, tok.RefreshToken)
	}
	if tok.Scope != scope || tok.ExpiresIn != ttl {
		t.Errorf("scope %q, expires in %v; want %q, %v", tok.Scope, tok.ExpiresIn, scope, ttl)
	}
}

func TestPasswordGrant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addUser(t, "u1", "Alice", "alice-password", userOpts{admin: true})

	tok, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", ip1) // case-insensitive name
	if err != nil {
		t.Fatal(err)
	}
	checkToken(t, tok, "user", 24*time.Hour)

	a, err := e.svc.Authenticate(ctx, tok.AccessToken, ip1)
	if err != nil {
		t.Fatal(err)
	}
	if want := (access.Actor{Kind: access.User, ID: "u1", Admin: true, Name: "Alice", ClientIP: ip1.String()}); a != want {
		t.Errorf("actor %+v, want %+v", a, want)
	}

	// Only hashes are stored.
	var n int
	e.pool.QueryRow(ctx, `SELECT count(*) FROM oauth_tokens WHERE token_hash IN ($1, $2)`,
		[]byte(tok.AccessToken), []byte(tok.RefreshToken)).Scan(&n)
	if n != 0 {
		t.Error("a token is stored in clear")
	}
	e.pool.QueryRow(ctx, `SELECT count(*) FROM oauth_tokens WHERE token_hash IN ($1, $2)`,
		cmdsession.HashToken(tok.AccessToken), cmdsession.HashToken(tok.RefreshToken)).Scan(&n)
	if n != 2 {
		t.Errorf("%d tokens stored by hash, want 2", n)
	}

	// The refresh token is not an access token, and vice versa.
	if _, err := e.svc.Authenticate(ctx, tok.RefreshToken, ip1); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("refresh token as access token: %v", err)
	}
	if _, err := e.svc.Refresh(ctx, tok.AccessToken, "", "", ip1); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("access token as refresh token: %v", err)
	}

	// An admin change, and a new name, take effect at once.
	e.exec(t, `UPDATE proj_identity_v1.identity_users SET admin = false, name = 'Alice Liddell' WHERE id = 'u1'`)
	if a, err := e.svc.Authenticate(ctx, tok.AccessToken, ip1); err != nil || a.Admin || a.Name != "Alice Liddell" {
		t.Errorf("after demotion and renaming: %+v, %v", a, err)
	}
}

func TestWrongPasswordCounts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addUser(t, "u1", "alice", "alice-password", userOpts{})

	_, err := e.svc.PasswordGrant(ctx, "Alice", "wrong", ip1)
	wantKind(t, err, fault.Unauthenticated)
	if err.Error() != "Invalid username or password" {
		t.Errorf("message %q", err.Error())
	}
	_, err = e.svc.PasswordGrant(ctx, "nobody", "wrong", ip1)
	wantKind(t, err, fault.Unauthenticated)
	if err.Error() != "Invalid username or password" {
		t.Errorf("unknown user: message %q", err.Error())
	}
	if n := e.failures(t, pair("alice", ip1)); n != 1 {
		t.Errorf("alice failures %d, want 1", n)
	}
	if n := e.failures(t, pair("nobody", ip1)); n != 1 {
		t.Errorf("nobody failures %d, want 1", n)
	}
	if n := e.failures(t, "ip:"+ip1.String()); n != 2 {
		t.Errorf("ip failures %d, want 2", n)
	}
}

func pair(username string, ip netip.Addr) string {
	return cmdsession.PairKey(cmdsession.UserKey(username), ip)
}

func retryAfter(t *testing.T, err error) int {
	t.Helper()
	wantKind(t, err, fault.TooManyRequests)
	var fe *fault.Error
	if !errors.As(err, &fe) {
		t.Fatal(err)
	}
	s, ok := fe.Extra["retryAfter"].(int)
	if !ok || s < 1 || s > 15*60 {
		t.Errorf("retryAfter %v, want 1..900 seconds", fe.Extra["retryAfter"])
	}
	return s
}

func TestThrottlePerPair(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addUser(t, "u1", "alice", "alice-password", userOpts{})
	e.addUser(t, "u2", "bob", "bob-password", userOpts{})

	// Failures below the limit are reset by a success.
	for range userLimit - 1 {
		_, err := e.svc.PasswordGrant(ctx, "alice", "wrong", ip1)
		wantKind(t, err, fault.Unauthenticated)
	}
	if _, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", ip1); err != nil {
		t.Fatal(err)
	}
	if n := e.failures(t, pair("alice", ip1)); n != 0 {
		t.Errorf("pair failures after success %d, want 0", n)
	}
	if n := e.failures(t, "ip:"+ip1.String()); n != userLimit-1 {
		t.Errorf("ip failures after success %d, want %d (not reset)", n, userLimit-1)
	}

	// At the limit, the guessing pair is slowed, whatever the name's case:
	// wrong and right passwords alike wait.
	for range userLimit {
		_, err := e.svc.PasswordGrant(ctx, "alice", "wrong", ip1)
		wantKind(t, err, fault.Unauthenticated)
	}
	_, err := e.svc.PasswordGrant(ctx, "alice", "wrong", ip1)
	first := retryAfter(t, err)
	_, err = e.svc.PasswordGrant(ctx, "ALICE", "alice-password", ip1)
	retryAfter(t, err)
	// Refused attempts are not counted.
	if n := e.failures(t, pair("alice", ip1)); n != userLimit {
		t.Errorf("pair failures %d, want %d", n, userLimit)
	}
	// The delay grows with each counted failure past the limit.
	e.exec(t, `UPDATE login_failures SET window_start = now() - interval '2 minutes' WHERE key = ANY($1)`,
		[]string{pair("alice", ip1), "ip:" + ip1.String()})
	_, err = e.svc.PasswordGrant(ctx, "alice", "wrong", ip1)
	wantKind(t, err, fault.Unauthenticated)
	_, err = e.svc.PasswordGrant(ctx, "alice", "wrong", ip1)
	if next := retryAfter(t, err); next <= first {
		t.Errorf("retryAfter %d after one more failure, want more than %d", next, first)
	}

	// The account is not locked: the right password from another address
	// signs in, and so does another user from the guessing address.
	if _, err := e.svc.PasswordGrant(ctx, "Alice", "alice-password", ip2); err != nil {
		t.Errorf("alice from another address: %v", err)
	}
	if _, err := e.svc.PasswordGrant(ctx, "bob", "bob-password", ip1); err != nil {
		t.Errorf("bob from the guessing address: %v", err)
	}
}

func TestThrottlePerIP(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addUser(t, "u1", "alice", "alice-password", userOpts{admin: true})

	// Spraying many names from one address.
	names := []string{"a", "b", "c", "d", "e", "f"}
	for i := range ipLimit {
		_, err := e.svc.PasswordGrant(ctx, names[i%len(names)]+"-user", "guess", ip1)
		wantKind(t, err, fault.Unauthenticated)
	}
	// A name that has failed from the address waits...
	_, err := e.svc.PasswordGrant(ctx, "a-user", "guess", ip1)
	retryAfter(t, err)
	_, err = e.svc.ClientCredentials(ctx, "some-client", "x", ip1)
	wantKind(t, err, fault.Unauthenticated) // a first try of that client
	_, err = e.svc.ClientCredentials(ctx, "some-client", "x", ip1)
	retryAfter(t, err)
	// ...but the right password of a user who has not failed from it
	// signs in, and so does everyone from other addresses.
	if _, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", ip1); err != nil {
		t.Errorf("alice from the sprayed address: %v", err)
	}
	if _, err := e.svc.PasswordGrant(ctx, "a-user", "guess", ip2); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("other address: %v", err)
	}
	// One wrong password from the sprayed address, and that user waits too.
	_, err = e.svc.PasswordGrant(ctx, "alice", "wrong", ip1)
	wantKind(t, err, fault.Unauthenticated)
	_, err = e.svc.PasswordGrant(ctx, "alice", "alice-password", ip1)
	retryAfter(t, err)
	if _, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", ip2); err != nil {
		t.Errorf("alice from another address: %v", err)
	}
}

func TestDisabledUser(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addUser(t, "u1", "alice", "alice-password", userOpts{disabled: true})
	e.addUser(t, "u2", "bob", "bob-password", userOpts{})

	_, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", ip1)
	wantKind(t, err, fault.Unauthenticated)
	if err.Error() != "Invalid username or password" {
		t.Errorf("message %q", err.Error())
	}

	tok, err := e.svc.PasswordGrant(ctx, "bob", "bob-password", ip1)
	if err != nil {
		t.Fatal(err)
	}
	e.exec(t, `UPDATE proj_identity_v1.identity_users SET disabled = true WHERE id = 'u2'`)
	_, err = e.svc.Authenticate(ctx, tok.AccessToken, ip1)
	wantKind(t, err, fault.Unauthenticated)
	_, err = e.svc.Refresh(ctx, tok.RefreshToken, "", "", ip1)
	wantKind(t, err, fault.Unauthenticated)
	// Re-enabled, the refresh token (not spent by the refused attempt) works.
	e.exec(t, `UPDATE proj_identity_v1.identity_users SET disabled = false WHERE id = 'u2'`)
	if _, err := e.svc.Refresh(ctx, tok.RefreshToken, "", "", ip1); err != nil {
		t.Errorf("refresh after re-enabling: %v", err)
	}
	// A deleted user's token is refused.
	e.exec(t, `DELETE FROM proj_identity_v1.identity_users WHERE id = 'u2'`)
	_, err = e.svc.Authenticate(ctx, tok.AccessToken, ip1)
	wantKind(t, err, fault.Unauthenticated)
}

func TestIPAllowlist(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addUser(t, "u1", "alice", "alice-password", userOpts{ips: []string{"10.0.0.0/8", "2001:db8::/32", "192.0.2.1/32"}})

	for _, s := range []string{"10.1.2.3", "::ffff:10.1.2.3", "192.0.2.1", "2001:db8::1", "2001:db8:ffff::42"} {
		if _, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", netip.MustParseAddr(s)); err != nil {
			t.Errorf("from %s: %v", s, err)
		}
	}
	for _, ip := range []netip.Addr{netip.MustParseAddr("11.0.0.1"), netip.MustParseAddr("192.0.2.2"),
		netip.MustParseAddr("2001:db9::1"), netip.MustParseAddr("::1"), {}} {
		_, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", ip)
		wantKind(t, err, fault.Forbidden)
		if err.Error() != "sign-in from this address is not allowed" {
			t.Errorf("message %q", err.Error())
		}
	}
	// A refused address is not a password failure.
	if n := e.failures(t, pair("alice", netip.MustParseAddr("11.0.0.1"))); n != 0 {
		t.Errorf("user failures %d, want 0", n)
	}
	// The wrong password from a refused address is still a plain 401.
	_, err := e.svc.PasswordGrant(ctx, "alice", "wrong", netip.MustParseAddr("11.0.0.1"))
	wantKind(t, err, fault.Unauthenticated)

	// Enforced on every request and on refresh.
	in, out := netip.MustParseAddr("2001:db8::5"), netip.MustParseAddr("172.16.0.1")
	tok, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", in)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Authenticate(ctx, tok.AccessToken, in); err != nil {
		t.Error(err)
	}
	_, err = e.svc.Authenticate(ctx, tok.AccessToken, out)
	wantKind(t, err, fault.Forbidden)
	_, err = e.svc.Refresh(ctx, tok.RefreshToken, "", "", out)
	wantKind(t, err, fault.Forbidden)
	// A changed list applies at once.
	e.exec(t, `UPDATE proj_identity_v1.identity_users SET allowed_ips = '{}' WHERE id = 'u1'`)
	if _, err := e.svc.Authenticate(ctx, tok.AccessToken, out); err != nil {
		t.Errorf("after clearing the list: %v", err)
	}
}

func TestClientCredentials(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{AccessTTL: time.Hour})
	e.addApp(t, "app1", "client-1", "secret-1")

	tok, err := e.svc.ClientCredentials(ctx, "client-1", "secret-1", ip1)
	if err != nil {
		t.Fatal(err)
	}
	checkToken(t, tok, "app", time.Hour)
	a, err := e.svc.Authenticate(ctx, tok.AccessToken, ip2)
	if err != nil {
		t.Fatal(err)
	}
	if want := (access.Actor{Kind: access.App, ID: "app1", App: "app1", ClientIP: ip2.String()}); a != want {
		t.Errorf("actor %+v, want %+v", a, want)
	}

	for _, c := range [][2]string{{"client-1", "wrong"}, {"client-2", "secret-1"}, {"", ""}} {
		_, err := e.svc.ClientCredentials(ctx, c[0], c[1], ip1)
		wantKind(t, err, fault.Unauthenticated)
		if err.Error() != "Client not found or invalid secret" {
			t.Errorf("message %q", err.Error())
		}
	}
	if n := e.failures(t, cmdsession.PairKey(cmdsession.ClientKey("client-1"), ip1)); n != 1 {
		t.Errorf("client failures %d, want 1: apps are throttled per client and address", n)
	}
	if n := e.failures(t, "ip:"+ip1.String()); n != 3 {
		t.Errorf("ip failures %d, want 3", n)
	}
	// Wrong secrets from one address do not lock the app out elsewhere
	// (client ids ship inside apps: anyone could otherwise lock every
	// device out); that address is throttled.
	for range userLimit {
		_, err := e.svc.ClientCredentials(ctx, "client-1", "wrong", ip2)
		wantKind(t, err, fault.Unauthenticated)
	}
	if _, err := e.svc.ClientCredentials(ctx, "client-1", "secret-1", netip.MustParseAddr("192.0.2.99")); err != nil {
		t.Fatalf("the app was locked out by another address's failures: %v", err)
	}
}

func TestRefreshRotation(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addUser(t, "u1", "alice", "alice-password", userOpts{})

	t1, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", ip1)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := e.svc.Refresh(ctx, t1.RefreshToken, "", "", ip1)
	if err != nil {
		t.Fatal(err)
	}
	checkToken(t, t2, "user", 24*time.Hour)
	if t2.AccessToken == t1.AccessToken || t2.RefreshToken == t1.RefreshToken {
		t.Fatal("refresh returned the old tokens")
	}
	a, err := e.svc.Authenticate(ctx, t2.AccessToken, ip1)
	if err != nil || a.ID != "u1" {
		t.Fatalf("new access token: %+v, %v", a, err)
	}
	t3, err := e.svc.Refresh(ctx, t2.RefreshToken, "", "", ip1)
	if err != nil {
		t.Fatalf("new refresh token: %v", err)
	}

	// Presenting a spent refresh token revokes the family.
	_, err = e.svc.Refresh(ctx, t1.RefreshToken, "", "", ip1)
	wantKind(t, err, fault.Unauthenticated)
	for _, tok := range []string{t1.AccessToken, t2.AccessToken, t3.AccessToken} {
		_, err := e.svc.Authenticate(ctx, tok, ip1)
		wantKind(t, err, fault.Unauthenticated)
	}
	_, err = e.svc.Refresh(ctx, t3.RefreshToken, "", "", ip1)
	wantKind(t, err, fault.Unauthenticated)
	_, err = e.svc.Refresh(ctx, t1.RefreshToken, "", "", ip1) // again
	wantKind(t, err, fault.Unauthenticated)

	// Other families of the same user are untouched.
	other, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", ip1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.svc.Refresh(ctx, "not-a-token", "", "", ip1); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("unknown refresh token: %v", err)
	}
	if _, err := e.svc.Refresh(ctx, "", "", "", ip1); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("empty refresh token: %v", err)
	}
	if _, err := e.svc.Authenticate(ctx, other.AccessToken, ip1); err != nil {
		t.Errorf("other family: %v", err)
	}
}

func TestRefreshAppToken(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addApp(t, "app1", "client-1", "secret-1")
	e.addApp(t, "app2", "client-2", "secret-2")

	t1, err := e.svc.ClientCredentials(ctx, "client-1", "secret-1", ip1)
	if err != nil {
		t.Fatal(err)
	}
	// Credentials that do not match are refused and do not spend the token.
	for _, c := range [][2]string{{"client-1", "wrong"}, {"client-2", "secret-2"}, {"nope", "secret-1"}, {"client-1", ""}} {
		_, err := e.svc.Refresh(ctx, t1.RefreshToken, c[0], c[1], ip1)
		wantKind(t, err, fault.Unauthenticated)
	}
	// iOS sends the client credentials with the refresh grant.
	t2, err := e.svc.Refresh(ctx, t1.RefreshToken, "client-1", "secret-1", ip2)
	if err != nil {
		t.Fatal(err)
	}
	checkToken(t, t2, "app", 24*time.Hour)
	// Without credentials, the refresh token alone suffices.
	t3, err := e.svc.Refresh(ctx, t2.RefreshToken, "", "", ip2)
	if err != nil {
		t.Fatal(err)
	}
	if a, err := e.svc.Authenticate(ctx, t3.AccessToken, ip2); err != nil || a.Kind != access.App || a.ID != "app1" {
		t.Errorf("actor %+v, %v", a, err)
	}
}

func TestConcurrentRefreshOneWins(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addUser(t, "u1", "alice", "alice-password", userOpts{})
	tok, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", ip1)
	if err != nil {
		t.Fatal(err)
	}

	const n = 8
	var (
		wg      sync.WaitGroup
		start   = make(chan struct{})
		results [n]cmdsession.Token
		errs    [n]error
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			<-start
			results[i], errs[i] = e.svc.Refresh(ctx, tok.RefreshToken, "", "", ip1)
		}()
	}
	close(start)
	wg.Wait()
	wins := 0
	for i := range n {
		switch {
		case errs[i] == nil:
			wins++
		case !fault.Is(errs[i], fault.Unauthenticated):
			t.Errorf("loser %d: %v, want Unauthenticated", i, errs[i])
		}
	}
	if wins != 1 {
		t.Fatalf("%d refreshes won, want exactly 1", wins)
	}
	var families int
	e.pool.QueryRow(ctx, `SELECT count(*) FROM oauth_tokens WHERE kind = 'refresh'`).Scan(&families)
	if families != 2 {
		t.Errorf("%d refresh tokens stored, want 2 (the spent one and one new)", families)
	}
}

func TestExpiry(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	// The refresh token lives 2 s: long enough to outlive a stall of a
	// loaded machine between the grant and the refresh below.
	e := newEnv(t, cmdsession.Config{AccessTTL: 50 * time.Millisecond, RefreshTTL: 2 * time.Second})
	e.addUser(t, "u1", "alice", "alice-password", userOpts{})
	tok, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", ip1)
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpiresIn != 50*time.Millisecond {
		t.Errorf("expires in %v", tok.ExpiresIn)
	}
	time.Sleep(100 * time.Millisecond)
	_, err = e.svc.Authenticate(ctx, tok.AccessToken, ip1)
	wantKind(t, err, fault.Unauthenticated)
	// The refresh token outlives the access token.
	tok2, err := e.svc.Refresh(ctx, tok.RefreshToken, "", "", ip1)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(2050 * time.Millisecond)
	_, err = e.svc.Refresh(ctx, tok2.RefreshToken, "", "", ip1)
	wantKind(t, err, fault.Unauthenticated)

	n, err := e.svc.Cleanup(ctx)
	if err != nil || n != 4 {
		t.Errorf("cleanup deleted %d, %v; want 4", n, err)
	}
}

func TestRevoke(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addUser(t, "u1", "alice", "alice-password", userOpts{})
	e.addApp(t, "app1", "client-1", "secret-1")
	login := func() cmdsession.Token {
		t.Helper()
		tok, err := e.svc.PasswordGrant(ctx, "alice", "alice-password", ip1)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	a, b := login(), login()

	// Revoking the access token ends its family, refresh token included.
	if err := e.svc.Revoke(ctx, a.AccessToken); err != nil {
		t.Fatal(err)
	}
	_, err := e.svc.Authenticate(ctx, a.AccessToken, ip1)
	wantKind(t, err, fault.Unauthenticated)
	_, err = e.svc.Refresh(ctx, a.RefreshToken, "", "", ip1)
	wantKind(t, err, fault.Unauthenticated)
	if _, err := e.svc.Authenticate(ctx, b.AccessToken, ip1); err != nil {
		t.Errorf("other family: %v", err)
	}
	// Revoking by refresh token works too; unknown tokens are no error.
	if err := e.svc.Revoke(ctx, b.RefreshToken); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Authenticate(ctx, b.AccessToken, ip1)
	wantKind(t, err, fault.Unauthenticated)
	for _, s := range []string{"", "unknown", a.AccessToken} {
		if err := e.svc.Revoke(ctx, s); err != nil {
			t.Errorf("revoke %q: %v", s, err)
		}
	}

	// RevokeSubject ends every session of one subject only.
	c, d := login(), login()
	app, err := e.svc.ClientCredentials(ctx, "client-1", "secret-1", ip1)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.svc.RevokeSubject(ctx, "user", "u1"); err != nil {
		t.Fatal(err)
	}
	for _, tok := range []string{c.AccessToken, d.AccessToken} {
		_, err := e.svc.Authenticate(ctx, tok, ip1)
		wantKind(t, err, fault.Unauthenticated)
	}
	if _, err := e.svc.Authenticate(ctx, app.AccessToken, ip1); err != nil {
		t.Errorf("app token: %v", err)
	}
	if err := e.svc.RevokeSubject(ctx, "app", "app1"); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Authenticate(ctx, app.AccessToken, ip1)
	wantKind(t, err, fault.Unauthenticated)
	wantKind(t, e.svc.RevokeSubject(ctx, "robot", "x"), fault.Invalid)
	// A new sign-in still works.
	if tok := login(); tok.AccessToken == "" {
		t.Error("no token")
	}
}

func TestAuthenticateUnknown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	for _, s := range []string{"", "x", "AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"} {
		_, err := e.svc.Authenticate(ctx, s, ip1)
		wantKind(t, err, fault.Unauthenticated)
	}
}

// Parallel guesses of one pair cannot get past the limit: each attempt is
// counted, under a row lock, before the password is checked.
func TestThrottleHoldsUnderParallelGuesses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addUser(t, "u1", "alice", "alice-password", userOpts{})
	const n = 30
	errs := make(chan error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := e.svc.PasswordGrant(ctx, []string{"alice", "ALICE"}[i%2], "wrong", ip1)
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	checked := 0
	for err := range errs {
		switch fault.KindOf(err) {
		case fault.Unauthenticated:
			checked++
		case fault.TooManyRequests:
		default:
			t.Errorf("unexpected error %v", err)
		}
	}
	if checked > userLimit {
		t.Fatalf("%d of %d parallel guesses had their password checked, limit %d", checked, n, userLimit)
	}
}

// An app whose refresh token no longer works but that presents its client
// credentials (iOS never falls back to client_credentials by itself) gets a
// new family; the reused family is still revoked.
func TestRefreshWithClientCredentialsRecovers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{})
	e.addApp(t, "app1", "client-1", "secret-1")
	t1, err := e.svc.ClientCredentials(ctx, "client-1", "secret-1", ip1)
	if err != nil {
		t.Fatal(err)
	}
	t2, err := e.svc.Refresh(ctx, t1.RefreshToken, "client-1", "secret-1", ip1)
	if err != nil {
		t.Fatal(err)
	}
	// The response was lost; the device retries with the spent token.
	t3, err := e.svc.Refresh(ctx, t1.RefreshToken, "client-1", "secret-1", ip1)
	if err != nil {
		t.Fatalf("retry with client credentials: %v", err)
	}
	if a, err := e.svc.Authenticate(ctx, t3.AccessToken, ip1); err != nil || a.ID != "app1" {
		t.Fatalf("new token: %+v, %v", a, err)
	}
	if _, err := e.svc.Authenticate(ctx, t2.AccessToken, ip1); !fault.Is(err, fault.Unauthenticated) {
		t.Fatalf("the reused family still works: %v", err)
	}
	// Without credentials, reuse is refused.
	_, err = e.svc.Refresh(ctx, t1.RefreshToken, "", "", ip1)
	wantKind(t, err, fault.Unauthenticated)
	// Wrong credentials do not recover either.
	_, err = e.svc.Refresh(ctx, "no-such-token", "client-1", "wrong", ip1)
	wantKind(t, err, fault.Unauthenticated)
}

// An identified user's tokens act for that user within its app, are
// refreshable (with the app's client credentials, if given, checked) and
// revocable.
func TestIdentifiedGrant(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, cmdsession.Config{AccessTTL: time.Hour})
	e.addApp(t, "app1", "client-1", "secret-1")
	e.addApp(t, "app2", "client-2", "secret-2")

	if _, err := e.svc.IdentifiedGrant(ctx, "", "identified-x", ip1); !fault.Is(err, fault.Invalid) {
		t.Errorf("a grant without an app: %v", err)
	}
	tok, err := e.svc.IdentifiedGrant(ctx, "app1", "identified-1", ip1)
	if err != nil {
		t.Fatal(err)
	}
	checkToken(t, tok, "app", time.Hour)
	a, err := e.svc.Authenticate(ctx, tok.AccessToken, ip1)
	if err != nil {
		t.Fatal(err)
	}
	if want := (access.Actor{Kind: access.Identified, ID: "identified-1", App: "app1", ClientIP: ip1.String()}); a != want {
		t.Errorf("actor %+v, want %+v", a, want)
	}
	if a.ClientApp() != "app1" || a.IsAdmin() || a.Label() != "identified:identified-1" {
		t.Errorf("client app %q, admin %v, label %q", a.ClientApp(), a.IsAdmin(), a.Label())
	}

	// Another app's credentials cannot refresh it; its own can, and so can
	// none.
	if _, err := e.svc.Refresh(ctx, tok.RefreshToken, "client-2", "secret-2", ip1); !fault.Is(err, fault.Unauthenticated) {
		t.Errorf("refresh with another app's credentials: %v", err)
	}
	t2, err := e.svc.Refresh(ctx, tok.RefreshToken, "client-1", "secret-1", ip1)
	if err != nil {
		t.Fatal(err)
	}
	a2, err := e.svc.Authenticate(ctx, t2.AccessToken, ip1)
	if err != nil || a2.Kind != access.Identified || a2.ID != "identified-1" || a2.App != "app1" {
		t.Fatalf("refreshed: %+v %v", a2, err)
	}
	t3, err := e.svc.Refresh(ctx, t2.RefreshToken, "", "", ip1)
	if err != nil {
		t.Fatal(err)
	}

	if err := e.svc.RevokeSubject(ctx, "identified", "identified-1"); err != nil {
		t.Fatal(err)
	}
	_, err = e.svc.Authenticate(ctx, t3.AccessToken, ip1)
	wantKind(t, err, fault.Unauthenticated)
	if err := e.svc.RevokeSubject(ctx, "robot", "x"); !fault.Is(err, fault.Invalid) {
		t.Errorf("unknown subject kind: %v", err)
	}
}
