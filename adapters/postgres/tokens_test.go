package postgres_test

import (
	"context"
	"errors"
	"net/netip"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/halocms/halocms/adapters/ids"
	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	cmdsession "github.com/halocms/halocms/commands/session"
)

func newPair(family string, ttl time.Duration) (cmdsession.Pair, string, string) {
	a, r := ids.Token(40), ids.Token(40)
	return cmdsession.Pair{
		Grant:      cmdsession.Grant{Subject: cmdsession.SubjectUser, SubjectID: "u1", Family: family, Scope: "user"},
		AccessHash: cmdsession.HashToken(a), RefreshHash: cmdsession.HashToken(r),
		AccessTTL: ttl, RefreshTTL: ttl, ClientIP: netip.MustParseAddr("::ffff:192.0.2.1"),
	}, a, r
}

func TestTokenStoreRotateOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := postgres.NewTokenStore(pool)
	p, _, refresh := newPair("fam1", time.Hour)
	if err := s.Issue(ctx, p); err != nil {
		t.Fatal(err)
	}
	var ip string
	if err := pool.QueryRow(ctx, `SELECT host(client_ip) FROM oauth_tokens WHERE token_hash = $1`, p.AccessHash).Scan(&ip); err != nil || ip != "192.0.2.1" {
		t.Errorf("client_ip %q, %v", ip, err)
	}
	g, err := s.Access(ctx, p.AccessHash)
	if err != nil || g != p.Grant {
		t.Fatalf("access: %+v, %v", g, err)
	}

	// Concurrent rotations straight at the store: exactly one spends.
	const n = 10
	var (
		wg   sync.WaitGroup
		errs [n]error
		gate = make(chan struct{})
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			next, _, _ := newPair("fam1", time.Hour)
			<-gate
			errs[i] = s.Rotate(ctx, cmdsession.HashToken(refresh), next)
		}()
	}
	close(gate)
	wg.Wait()
	wins := 0
	for _, err := range errs {
		switch {
		case err == nil:
			wins++
		case !errors.Is(err, cmdsession.ErrTokenSpent):
			t.Errorf("loser: %v, want ErrTokenSpent", err)
		}
	}
	if wins != 1 {
		t.Fatalf("%d rotations won, want 1", wins)
	}
	var count int
	pool.QueryRow(ctx, `SELECT count(*) FROM oauth_tokens WHERE family_id = 'fam1'`).Scan(&count)
	if count != 4 {
		t.Errorf("%d tokens in the family, want 4 (losers wrote nothing)", count)
	}

	// A spent token stays reported as spent after its family is revoked.
	if _, err := s.Refresh(ctx, cmdsession.HashToken(refresh)); !errors.Is(err, cmdsession.ErrTokenSpent) {
		t.Errorf("refresh of spent token: %v", err)
	}
	if err := s.RevokeFamily(ctx, "fam1"); err != nil {
		t.Fatal(err)
	}
	if g, err := s.Refresh(ctx, cmdsession.HashToken(refresh)); !errors.Is(err, cmdsession.ErrTokenSpent) || g.Family != "fam1" {
		t.Errorf("refresh of spent, revoked token: %+v, %v", g, err)
	}
	if _, err := s.Access(ctx, p.AccessHash); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Errorf("access after revoke: %v", err)
	}
}

func TestTokenStoreRotateChecks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := postgres.NewTokenStore(pgtest.Pool(t))
	p, access, refresh := newPair("famA", time.Hour)
	if err := s.Issue(ctx, p); err != nil {
		t.Fatal(err)
	}
	wrongFamily, _, _ := newPair("famB", time.Hour)
	if err := s.Rotate(ctx, cmdsession.HashToken(refresh), wrongFamily); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Errorf("rotate into another family: %v", err)
	}
	next, _, _ := newPair("famA", time.Hour)
	if err := s.Rotate(ctx, cmdsession.HashToken(access), next); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Errorf("rotate an access token: %v", err)
	}
	if err := s.Rotate(ctx, cmdsession.HashToken("unknown"), next); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Errorf("rotate an unknown token: %v", err)
	}
	if err := s.RevokeFamilyOf(ctx, cmdsession.HashToken("unknown")); err != nil {
		t.Errorf("revoke unknown: %v", err)
	}
	if err := s.RevokeFamilyOf(ctx, cmdsession.HashToken(access)); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Refresh(ctx, cmdsession.HashToken(refresh)); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Errorf("refresh of revoked token: %v", err)
	}
	if err := s.Rotate(ctx, cmdsession.HashToken(refresh), next); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Errorf("rotate a revoked token: %v", err)
	}
}

func TestTokenStoreDeleteExpired(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := postgres.NewTokenStore(pgtest.Pool(t))
	short, _, _ := newPair("short", time.Millisecond)
	long, _, _ := newPair("long", time.Hour)
	for _, p := range []cmdsession.Pair{short, long} {
		if err := s.Issue(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	time.Sleep(10 * time.Millisecond)
	if _, err := s.Access(ctx, short.AccessHash); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Errorf("expired access token: %v", err)
	}
	n, err := s.DeleteExpired(ctx, 0)
	if err != nil || n != 2 {
		t.Errorf("deleted %d, %v; want 2", n, err)
	}
	if _, err := s.Access(ctx, long.AccessHash); err != nil {
		t.Errorf("live token: %v", err)
	}
}

// Expired finds an identified user's expired, unrevoked access token
// within the window, and DeleteExpired keeps it that long.
func TestTokenStoreExpiredIdentified(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := postgres.NewTokenStore(pgtest.Pool(t))
	idp, _, _ := newPair("id", time.Millisecond)
	idp.Subject, idp.SubjectID, idp.App, idp.Scope = cmdsession.SubjectIdentified, "i1", "app1", "app"
	rev, _, _ := newPair("rev", time.Millisecond)
	rev.Subject, rev.SubjectID, rev.App = cmdsession.SubjectIdentified, "i2", "app1"
	live, _, _ := newPair("live", time.Hour)
	for _, p := range []cmdsession.Pair{idp, rev, live} {
		if err := s.Issue(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.RevokeFamily(ctx, "rev"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(10 * time.Millisecond)
	n, err := s.DeleteExpired(ctx, time.Hour)
	if err != nil || n != 3 { // both refresh tokens and the revoked access token
		t.Errorf("deleted %d, %v; want 3", n, err)
	}
	if g, err := s.Expired(ctx, idp.AccessHash, time.Hour); err != nil || g.Subject != cmdsession.SubjectIdentified || g.App != "app1" {
		t.Errorf("expired identified token: %+v, %v", g, err)
	}
	for name, h := range map[string][]byte{"live": live.AccessHash, "revoked": rev.AccessHash, "refresh": idp.RefreshHash, "unknown": cmdsession.HashToken("x")} {
		if _, err := s.Expired(ctx, h, time.Hour); !errors.Is(err, cmdsession.ErrTokenNotFound) {
			t.Errorf("%s: %v, want ErrTokenNotFound", name, err)
		}
	}
	if _, err := s.Expired(ctx, idp.AccessHash, time.Millisecond); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Errorf("expired longer ago than the window: %v", err)
	}
	if n, err := s.DeleteExpired(ctx, time.Millisecond); err != nil || n != 1 {
		t.Errorf("after the window: deleted %d, %v; want 1", n, err)
	}
}

func TestLoginThrottle(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	th := postgres.NewLoginThrottle(pgtest.Pool(t))
	// Delays of seconds: the attempts below fall well inside them even on
	// a loaded machine.
	th.UserLimit, th.IPLimit, th.BaseDelay, th.MaxDelay = 2, 3, 5*time.Second, 20*time.Second

	attempt := func(keys ...string) time.Duration {
		t.Helper()
		d, err := th.Attempt(ctx, keys...)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	if d := attempt("pair:a", "ip:1.2.3.4"); d != 0 {
		t.Errorf("first attempt: wait %v", d)
	}
	if d := attempt("pair:a", "pair:a", "ip:1.2.3.4"); d != 0 { // a repeated key counts once
		t.Errorf("second attempt (at the pair's limit): wait %v", d)
	}
	if d := attempt("pair:a", "ip:1.2.3.4"); d <= 0 || d > 5*time.Second {
		t.Errorf("over the pair's limit: wait %v, want (0, 5s]", d)
	}
	if d := attempt("pair:b", "ip:1.2.3.4"); d != 0 {
		t.Errorf("another pair, third attempt from the address (at its limit): wait %v", d)
	}
	// The address is over its limit, but a pair that has not failed from
	// it is always checked: nobody is locked out by someone else's guesses.
	if d := attempt("pair:c", "ip:1.2.3.4"); d != 0 {
		t.Errorf("a fresh pair from an address over its limit: wait %v", d)
	}
	// A pair that has failed from that address is held back by it.
	if d := attempt("pair:b", "ip:1.2.3.4"); d <= 0 {
		t.Errorf("a failed pair from an address over its limit: wait %v", d)
	}
	// A right attempt is taken back; a reset forgets the pair.
	if err := th.Forgive(ctx, "ip:1.2.3.4"); err != nil {
		t.Fatal(err)
	}
	if err := th.Reset(ctx, "pair:a"); err != nil {
		t.Fatal(err)
	}
	if d := attempt("pair:a", "ip:1.2.3.4"); d != 0 {
		t.Errorf("after reset: wait %v", d)
	}
	if d := attempt(); d != 0 {
		t.Errorf("no keys: wait %v", d)
	}

	// Past its delay a pair may try again, and the next delay doubles.
	short := postgres.NewLoginThrottle(pgtest.Pool(t))
	short.UserLimit, short.BaseDelay, short.MaxDelay = 1, 300*time.Millisecond, 10*time.Second
	if d, err := short.Attempt(ctx, "pair:z"); err != nil || d != 0 {
		t.Fatalf("first attempt: wait %v, %v", d, err)
	}
	if d, _ := short.Attempt(ctx, "pair:z"); d <= 0 || d > 300*time.Millisecond {
		t.Errorf("over the limit: wait %v, want (0, 300ms]", d)
	}
	time.Sleep(350 * time.Millisecond)
	if d, _ := short.Attempt(ctx, "pair:z"); d != 0 {
		t.Errorf("after the delay: wait %v", d)
	}
	if d, _ := short.Attempt(ctx, "pair:z"); d <= 300*time.Millisecond || d > 600*time.Millisecond {
		t.Errorf("the next delay: %v, want (300ms, 600ms]", d)
	}
}

// Concurrent attempts cannot get past the limit: each is counted before
// any credentials are checked.
func TestLoginThrottleConcurrentAttempts(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	th := postgres.NewLoginThrottle(pgtest.Pool(t))
	th.UserLimit = 10
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		allowed int
	)
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, err := th.Attempt(ctx, "user:victim")
			if err != nil {
				t.Error(err)
				return
			}
			if d == 0 {
				mu.Lock()
				allowed++
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if allowed != 10 {
		t.Fatalf("%d of 40 concurrent attempts were allowed, want exactly the limit, 10", allowed)
	}
}

// listening starts a listener on channel and waits until it holds its
// LISTEN; it stops with the test.
func listening(t *testing.T, ctx context.Context, pool *pgxpool.Pool, channel string) *postgres.Listener {
	t.Helper()
	l := postgres.NewListener(pool, channel, nil)
	lctx, cancel := context.WithCancel(ctx)
	t.Cleanup(cancel)
	go l.Run(lctx)
	deadline := time.Now().Add(5 * time.Second)
	for !l.Listening() {
		if time.Now().After(deadline) {
			t.Fatal("listener never listened")
		}
		time.Sleep(5 * time.Millisecond)
	}
	return l
}

func issued(t *testing.T, ctx context.Context, s *postgres.TokenStore, family string, ttl time.Duration) cmdsession.Pair {
	t.Helper()
	p, _, _ := newPair(family, ttl)
	if err := s.Issue(ctx, p); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestTokenAccessCache(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	other := postgres.NewTokenStore(pool) // another process: no cache
	s := postgres.NewTokenStore(pool)
	s.CacheAccess(time.Hour, listening(t, ctx, pool, postgres.TokenChannel))
	deleteRow := func(p cmdsession.Pair) {
		t.Helper()
		if _, err := pool.Exec(ctx, `DELETE FROM oauth_tokens WHERE token_hash = $1`, p.AccessHash); err != nil {
			t.Fatal(err)
		}
	}
	access := func(st *postgres.TokenStore, p cmdsession.Pair) error {
		g, err := st.Access(ctx, p.AccessHash)
		if err == nil && g != p.Grant {
			t.Fatalf("grant %+v, want %+v", g, p.Grant)
		}
		return err
	}

	// A cached grant answers without the table: deleting the row behind
	// the store's back goes unnoticed.
	p := issued(t, ctx, s, "cached", time.Hour)
	if err := access(s, p); err != nil {
		t.Fatal(err)
	}
	deleteRow(p)
	if err := access(s, p); err != nil {
		t.Fatalf("cached grant: %v", err)
	}
	if err := access(other, p); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Fatalf("uncached store after delete: %v", err)
	}

	// A revocation through this store is seen at once.
	p = issued(t, ctx, s, "local", time.Hour)
	if err := access(s, p); err != nil {
		t.Fatal(err)
	}
	if err := s.RevokeFamily(ctx, "local"); err != nil {
		t.Fatal(err)
	}
	if err := access(s, p); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Fatalf("after a local revoke: %v", err)
	}

	// A revocation by another process reaches the cache by notification.
	for i, revoke := range []func(cmdsession.Pair) error{
		func(p cmdsession.Pair) error { return other.RevokeFamily(ctx, p.Family) },
		func(p cmdsession.Pair) error { return other.RevokeFamilyOf(ctx, p.AccessHash) },
		func(p cmdsession.Pair) error { return other.RevokeSubject(ctx, p.Subject, p.SubjectID) },
	} {
		p := issued(t, ctx, s, "remote"+string(rune('a'+i)), time.Hour)
		if err := access(s, p); err != nil {
			t.Fatal(err)
		}
		if err := revoke(p); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		for access(s, p) == nil {
			if time.Now().After(deadline) {
				t.Fatalf("revocation %d by another store never reached the cache", i)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}

	// A cached grant ends with its token.
	p = issued(t, ctx, s, "short", time.Second)
	if err := access(s, p); err != nil {
		t.Fatal(err)
	}
	time.Sleep(1100 * time.Millisecond)
	if err := access(s, p); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Fatalf("expired token: %v", err)
	}
}

func TestTokenAccessCacheBounds(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)

	// The cache keeps a grant for at most its ttl.
	s := postgres.NewTokenStore(pool)
	// A 1 s ttl: the DELETE between the two reads below must fit in it on
	// a loaded machine.
	s.CacheAccess(time.Second, listening(t, ctx, pool, postgres.TokenChannel))
	p := issued(t, ctx, s, "ttl", time.Hour)
	if _, err := s.Access(ctx, p.AccessHash); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM oauth_tokens WHERE token_hash = $1`, p.AccessHash); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Access(ctx, p.AccessHash); err != nil {
		t.Fatalf("within the ttl: %v", err)
	}
	time.Sleep(1050 * time.Millisecond)
	if _, err := s.Access(ctx, p.AccessHash); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Fatalf("after the ttl: %v", err)
	}

	// With a listener that is not listening, nothing is cached: a missed
	// notification could otherwise leave a revoked token alive.
	deaf := postgres.NewTokenStore(pool)
	deaf.CacheAccess(time.Hour, postgres.NewListener(pool, postgres.TokenChannel, nil)) // never run
	p = issued(t, ctx, deaf, "deaf", time.Hour)
	if _, err := deaf.Access(ctx, p.AccessHash); err != nil {
		t.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `DELETE FROM oauth_tokens WHERE token_hash = $1`, p.AccessHash); err != nil {
		t.Fatal(err)
	}
	if _, err := deaf.Access(ctx, p.AccessHash); !errors.Is(err, cmdsession.ErrTokenNotFound) {
		t.Fatalf("without a listener: %v", err)
	}
}
