package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"time"

	cmdsession "github.com/halocms/halocms/commands/session"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// TokenStore keeps OAuth tokens (table oauth_tokens) by the SHA-256 hash of
// the bearer string. Expiry is judged by the database clock.
//
// Every revocation notifies TokenChannel when it commits, so that the
// access caches of all processes (see CacheAccess) drop what they hold.
type TokenStore struct {
	pool  *pgxpool.Pool
	cache *accessCache // nil: every Access reads the table
}

// TokenChannel is the LISTEN/NOTIFY channel that announces revocations.
const TokenChannel = "cms_tokens"

var _ cmdsession.TokenStore = (*TokenStore)(nil)

// NewTokenStore returns a token store over pool.
func NewTokenStore(pool *pgxpool.Pool) *TokenStore {
	if pool == nil {
		panic("postgres.NewTokenStore: nil pool")
	}
	return &TokenStore{pool: pool}
}

// micros is a duration in whole microseconds (PostgreSQL's resolution),
// at least one.
func micros(d time.Duration) int64 { return max(d.Microseconds(), 1) }

func ipArg(ip netip.Addr) any {
	if !ip.IsValid() {
		return nil
	}
	return ip.Unmap().String()
}

// insertPair writes both tokens of p in one statement.
const insertPair = `
INSERT INTO oauth_tokens (token_hash, kind, subject_kind, subject_id, family_id, scope, expires_at, client_ip, app)
VALUES ($1, 'access',  $3, $4, $5, $6, now() + $7 * interval '1 microsecond', $9::inet, $10),
       ($2, 'refresh', $3, $4, $5, $6, now() + $8 * interval '1 microsecond', $9::inet, $10)`

func pairArgs(p cmdsession.Pair) []any {
	return []any{p.AccessHash, p.RefreshHash, string(p.Subject), p.SubjectID, p.Family, p.Scope,
		micros(p.AccessTTL), micros(p.RefreshTTL), ipArg(p.ClientIP), p.App}
}

// Issue stores an access and a refresh token atomically.
func (s *TokenStore) Issue(ctx context.Context, p cmdsession.Pair) error {
	if _, err := s.pool.Exec(ctx, insertPair, pairArgs(p)...); err != nil {
		return fmt.Errorf("issue tokens: %w", err)
	}
	return nil
}

// Access returns the grant of a live (known, unexpired, unrevoked) access
// token, or session.ErrTokenNotFound. With CacheAccess, from memory when
// it can.
func (s *TokenStore) Access(ctx context.Context, hash []byte) (cmdsession.Grant, error) {
	c := s.cache
	if c == nil {
		g, _, err := s.access(ctx, hash)
		return g, err
	}
	gen, g, ok := c.get(hash)
	if ok {
		return g, nil
	}
	g, left, err := s.access(ctx, hash)
	if err == nil {
		c.put(gen, hash, g, left)
	}
	return g, err
}

// access reads a live access token's grant and how long it has left.
func (s *TokenStore) access(ctx context.Context, hash []byte) (cmdsession.Grant, time.Duration, error) {
	var (
		g    cmdsession.Grant
		left int64 // microseconds
	)
	err := s.pool.QueryRow(ctx, `
SELECT subject_kind, subject_id, family_id, scope, app,
       (extract(epoch FROM expires_at - now()) * 1000000)::bigint FROM oauth_tokens
WHERE token_hash = $1 AND kind = 'access' AND revoked_at IS NULL AND expires_at > now()`, hash).
		Scan(&g.Subject, &g.SubjectID, &g.Family, &g.Scope, &g.App, &left)
	if errors.Is(err, pgx.ErrNoRows) {
		return cmdsession.Grant{}, 0, cmdsession.ErrTokenNotFound
	}
	if err != nil {
		return cmdsession.Grant{}, 0, fmt.Errorf("access token: %w", err)
	}
	return g, time.Duration(left) * time.Microsecond, nil
}

// Expired returns the grant of an access token that is known and not
// revoked, and expired no longer than within ago; any other token, a live
// one included, is session.ErrTokenNotFound. It never reads the cache:
// what it answers is never a live token's.
func (s *TokenStore) Expired(ctx context.Context, hash []byte, within time.Duration) (cmdsession.Grant, error) {
	var g cmdsession.Grant
	err := s.pool.QueryRow(ctx, `
SELECT subject_kind, subject_id, family_id, scope, app FROM oauth_tokens
WHERE token_hash = $1 AND kind = 'access' AND revoked_at IS NULL
  AND expires_at <= now() AND expires_at > now() - $2 * interval '1 microsecond'`, hash, micros(within)).
		Scan(&g.Subject, &g.SubjectID, &g.Family, &g.Scope, &g.App)
	if errors.Is(err, pgx.ErrNoRows) {
		return cmdsession.Grant{}, cmdsession.ErrTokenNotFound
	}
	if err != nil {
		return cmdsession.Grant{}, fmt.Errorf("expired access token: %w", err)
	}
	return g, nil
}

// Refresh returns the grant of a live refresh token; for a spent one, its
// grant and session.ErrTokenSpent (even when its family was revoked since,
// so that repeated reuse keeps being reported as such); otherwise
// session.ErrTokenNotFound.
func (s *TokenStore) Refresh(ctx context.Context, hash []byte) (cmdsession.Grant, error) {
	var (
		g            cmdsession.Grant
		spent, alive bool
	)
	err := s.pool.QueryRow(ctx, `
SELECT subject_kind, subject_id, family_id, scope, app, spent_at IS NOT NULL,
       revoked_at IS NULL AND expires_at > now()
FROM oauth_tokens WHERE token_hash = $1 AND kind = 'refresh'`, hash).
		Scan(&g.Subject, &g.SubjectID, &g.Family, &g.Scope, &g.App, &spent, &alive)
	switch {
	case errors.Is(err, pgx.ErrNoRows):
		return cmdsession.Grant{}, cmdsession.ErrTokenNotFound
	case err != nil:
		return cmdsession.Grant{}, fmt.Errorf("refresh token: %w", err)
	case spent:
		return g, cmdsession.ErrTokenSpent
	case !alive:
		return cmdsession.Grant{}, cmdsession.ErrTokenNotFound
	}
	return g, nil
}

// Rotate spends a refresh token and stores next in the same transaction.
// The spend is one conditional UPDATE: of two concurrent rotations of the
// same token, the second waits for the first to commit, then finds the
// token spent and gets session.ErrTokenSpent. A token that is unknown,
// expired, revoked or of another family gives session.ErrTokenNotFound.
func (s *TokenStore) Rotate(ctx context.Context, refreshHash []byte, next cmdsession.Pair) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `
UPDATE oauth_tokens SET spent_at = now()
WHERE token_hash = $1 AND kind = 'refresh' AND family_id = $2
  AND spent_at IS NULL AND revoked_at IS NULL AND expires_at > now()`, refreshHash, next.Family)
		if err != nil {
			return fmt.Errorf("spend refresh token: %w", err)
		}
		if tag.RowsAffected() == 0 {
			var spent bool
			err := tx.QueryRow(ctx, `SELECT spent_at IS NOT NULL FROM oauth_tokens
				WHERE token_hash = $1 AND kind = 'refresh' AND family_id = $2`, refreshHash, next.Family).Scan(&spent)
			switch {
			case err == nil && spent:
				return cmdsession.ErrTokenSpent
			case err == nil || errors.Is(err, pgx.ErrNoRows):
				return cmdsession.ErrTokenNotFound
			default:
				return fmt.Errorf("spend refresh token: %w", err)
			}
		}
		if _, err := tx.Exec(ctx, insertPair, pairArgs(next)...); err != nil {
			return fmt.Errorf("issue tokens: %w", err)
		}
		return nil
	})
}

// revoke runs a revoking UPDATE and, when it revoked anything, notifies
// TokenChannel in the same transaction (delivered when it commits); then
// it empties this process's cache itself, so the caller's next request
// already sees the revocation.
func (s *TokenStore) revoke(ctx context.Context, update string, args ...any) error {
	_, err := s.pool.Exec(ctx, `WITH revoked AS (`+update+` RETURNING 1)
		SELECT pg_notify('`+TokenChannel+`', '') WHERE EXISTS (SELECT FROM revoked)`, args...)
	if s.cache != nil {
		s.cache.flush() // even on an error: the update may have committed
	}
	return err
}

// RevokeFamily revokes every token of a family.
func (s *TokenStore) RevokeFamily(ctx context.Context, family string) error {
	err := s.revoke(ctx, `UPDATE oauth_tokens SET revoked_at = now()
		WHERE family_id = $1 AND revoked_at IS NULL`, family)
	if err != nil {
		return fmt.Errorf("revoke token family: %w", err)
	}
	return nil
}

// RevokeFamilyOf revokes the family of the token with this hash; an
// unknown hash changes nothing.
func (s *TokenStore) RevokeFamilyOf(ctx context.Context, hash []byte) error {
	err := s.revoke(ctx, `UPDATE oauth_tokens SET revoked_at = now()
		WHERE family_id = (SELECT family_id FROM oauth_tokens WHERE token_hash = $1) AND revoked_at IS NULL`, hash)
	if err != nil {
		return fmt.Errorf("revoke token: %w", err)
	}
	return nil
}

// RevokeSubject revokes every token of a user, app or identified user.
func (s *TokenStore) RevokeSubject(ctx context.Context, kind cmdsession.SubjectKind, id string) error {
	err := s.revoke(ctx, `UPDATE oauth_tokens SET revoked_at = now()
		WHERE subject_kind = $1 AND subject_id = $2 AND revoked_at IS NULL`, string(kind), id)
	if err != nil {
		return fmt.Errorf("revoke tokens of %s %s: %w", kind, id, err)
	}
	return nil
}

// DeleteExpired deletes tokens past their expiry (spent refresh tokens are
// kept until then, for reuse detection), except identified users' access
// tokens that expired less than keepIdentified ago (see Expired), and
// returns how many it deleted.
func (s *TokenStore) DeleteExpired(ctx context.Context, keepIdentified time.Duration) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM oauth_tokens WHERE expires_at <= now()
		AND NOT (kind = 'access' AND subject_kind = 'identified' AND revoked_at IS NULL
		         AND expires_at > now() - $1 * interval '1 microsecond')`, micros(keepIdentified))
	if err != nil {
		return 0, fmt.Errorf("delete expired tokens: %w", err)
	}
	return tag.RowsAffected(), nil
}

// LoginThrottle counts failed sign-in attempts per key (table
// login_failures) and slows guessing with growing delays instead of locking
// anyone out. A key's first Limit attempts go through at once; after that
// each further attempt must wait BaseDelay, then twice as long, and so on up
// to MaxDelay, counted from the key's last counted attempt. A key without a
// counted attempt for Window is forgotten. (The column window_start holds
// the time of the last counted attempt.)
//
// Attempt takes the attempt's own key first (a user-and-address pair) and
// then shared keys (the address): a shared key holds an attempt back only
// when its own key has already failed, so the right password of someone who
// has not failed from that address is always checked. Keys starting with
// "ip:" have IPLimit; all others UserLimit. Set the fields before use; zero
// values take the defaults.
type LoginThrottle struct {
	pool      *pgxpool.Pool
	UserLimit int           // free attempts per pair (and account) key; default 10
	IPLimit   int           // free attempts per "ip:" key; default 50
	BaseDelay time.Duration // first delay past the limit; default 1 s
	MaxDelay  time.Duration // longest delay; default 15 minutes
	Window    time.Duration // a key is forgotten this long after its last counted attempt; default 1 hour
}

var _ cmdsession.Throttle = (*LoginThrottle)(nil)

// Throttle defaults.
const (
	DefaultUserLimit      = 10
	DefaultIPLimit        = 50
	DefaultBaseDelay      = time.Second
	DefaultMaxDelay       = 15 * time.Minute
	DefaultThrottleWindow = time.Hour
)

// NewLoginThrottle returns a throttle over pool with the default limits.
func NewLoginThrottle(pool *pgxpool.Pool) *LoginThrottle {
	if pool == nil {
		panic("postgres.NewLoginThrottle: nil pool")
	}
	return &LoginThrottle{pool: pool, UserLimit: DefaultUserLimit, IPLimit: DefaultIPLimit,
		BaseDelay: DefaultBaseDelay, MaxDelay: DefaultMaxDelay, Window: DefaultThrottleWindow}
}

func orDefault[T int | time.Duration](v, d T) T {
	if v <= 0 {
		return d
	}
	return v
}

func (t *LoginThrottle) window() time.Duration { return orDefault(t.Window, DefaultThrottleWindow) }

func (t *LoginThrottle) limit(key string) int {
	if strings.HasPrefix(key, "ip:") {
		return orDefault(t.IPLimit, DefaultIPLimit)
	}
	return orDefault(t.UserLimit, DefaultUserLimit)
}

// delay is how long a key with count counted attempts, the last one age
// ago, still holds the next attempt back (0: not at all).
func (t *LoginThrottle) delay(key string, count int, age time.Duration) time.Duration {
	over := count - t.limit(key)
	if over < 0 {
		return 0
	}
	maxDelay := orDefault(t.MaxDelay, DefaultMaxDelay)
	d := orDefault(t.BaseDelay, DefaultBaseDelay) << min(over, 30)
	if d <= 0 || d > maxDelay {
		d = maxDelay
	}
	return max(d-age, 0)
}

// Attempt decides on one sign-in attempt, atomically: when keys[0] is being
// delayed, or keys[0] has failed before and another key is being delayed, it
// returns how long to wait and counts nothing (the attempt must be refused);
// otherwise it counts the attempt against every key and returns 0. Counting
// before the credentials are checked means that concurrent guesses cannot
// slip past the limits; an attempt that turns out right is taken back with
// Reset or Forgive.
func (t *LoginThrottle) Attempt(ctx context.Context, keys ...string) (time.Duration, error) {
	if len(keys) == 0 {
		return 0, nil
	}
	wait, err := t.attempt(ctx, keys)
	if err != nil {
		return 0, fmt.Errorf("login throttle: %w", err)
	}
	return wait, nil
}

func (t *LoginThrottle) attempt(ctx context.Context, keys []string) (time.Duration, error) {
	tx, err := t.pool.Begin(ctx)
	if err != nil {
		return 0, err
	}
	defer func() { _ = tx.Rollback(ctx) }()
	// Every key gets a row, then the rows are locked in key order (one
	// lock order for every statement: no deadlock).
	if _, err := tx.Exec(ctx, `INSERT INTO login_failures (key, window_start, count)
		SELECT DISTINCT k, now(), 0 FROM unnest($1::text[]) AS k ORDER BY k ON CONFLICT (key) DO NOTHING`, keys); err != nil {
		return 0, err
	}
	rows, err := tx.Query(ctx, `SELECT key, count, extract(epoch FROM now() - window_start)
		FROM login_failures WHERE key = ANY($1) ORDER BY key FOR UPDATE`, keys)
	if err != nil {
		return 0, err
	}
	counts := map[string]int{}
	ages := map[string]time.Duration{}
	for rows.Next() {
		var (
			key   string
			count int
			age   float64
		)
		if err := rows.Scan(&key, &count, &age); err != nil {
			rows.Close()
			return 0, err
		}
		ages[key] = time.Duration(age * float64(time.Second))
		if ages[key] < t.window() {
			counts[key] = count
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}
	own := keys[0]
	wait := t.delay(own, counts[own], ages[own])
	if counts[own] > 0 {
		for _, k := range keys[1:] {
			wait = max(wait, t.delay(k, counts[k], ages[k]))
		}
	}
	if wait > 0 {
		return wait, nil // rolled back: nothing counted
	}
	if _, err := tx.Exec(ctx, `UPDATE login_failures SET window_start = now(),
		count = CASE WHEN window_start + $2 * interval '1 microsecond' <= now() THEN 1 ELSE count + 1 END
		WHERE key = ANY($1)`, keys, micros(t.window())); err != nil {
		return 0, err
	}
	return 0, tx.Commit(ctx)
}

// Forgive takes one attempt back from each key: the sign-in was right.
func (t *LoginThrottle) Forgive(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	// Rows are locked in key order, as Attempt locks them: no deadlock.
	if _, err := t.pool.Exec(ctx, `WITH l AS (SELECT key FROM login_failures WHERE key = ANY($1) ORDER BY key FOR UPDATE)
		UPDATE login_failures f SET count = greatest(f.count - 1, 0) FROM l WHERE f.key = l.key`, keys); err != nil {
		return fmt.Errorf("login throttle: %w", err)
	}
	return nil
}

// Reset forgets the failures of keys (after a successful sign-in).
func (t *LoginThrottle) Reset(ctx context.Context, keys ...string) error {
	if len(keys) == 0 {
		return nil
	}
	if _, err := t.pool.Exec(ctx, `DELETE FROM login_failures WHERE key = ANY($1)`, keys); err != nil {
		return fmt.Errorf("login throttle: %w", err)
	}
	return nil
}

// Prune deletes counters whose window has ended.
func (t *LoginThrottle) Prune(ctx context.Context) (int64, error) {
	tag, err := t.pool.Exec(ctx, `DELETE FROM login_failures
		WHERE window_start + $1 * interval '1 microsecond' <= now()`, micros(t.window()))
	if err != nil {
		return 0, fmt.Errorf("login throttle: %w", err)
	}
	return tag.RowsAffected(), nil
}
