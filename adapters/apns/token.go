package apns

import (
	"crypto/ecdsa"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/golang-jwt/jwt/v5"
)

// refreshAfter is the provider token's age at which a new one is signed:
// Apple refuses tokens older than an hour and answers
// TooManyProviderTokenUpdates to a team that renews more often than every
// 20 minutes.
const refreshAfter = 40 * time.Minute

// providerToken is a signed JWT and when it was issued.
type providerToken struct {
	jwt    string
	issued time.Time
}

// tokenCache holds the current provider token. Sends read it without
// locking; signing a new one (fast, no I/O) happens under a mutex so that
// only one goroutine does it.
type tokenCache struct {
	key           *ecdsa.PrivateKey
	keyID, teamID string
	now           func() time.Time

	cur atomic.Pointer[providerToken]
	mu  sync.Mutex // held while signing
}

func newTokenCache(key *ecdsa.PrivateKey, keyID, teamID string, now func() time.Time) *tokenCache {
	return &tokenCache{key: key, keyID: keyID, teamID: teamID, now: now}
}

func (c *tokenCache) fresh(t *providerToken) bool {
	return t != nil && c.now().Sub(t.issued) < refreshAfter
}

// get returns the current token, signing a new one when it is missing or
// 40 minutes old: ES256, header {alg, kid}, claims {iss: team, iat}.
func (c *tokenCache) get() (*providerToken, error) {
	if t := c.cur.Load(); c.fresh(t) {
		return t, nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if t := c.cur.Load(); c.fresh(t) { // signed while we waited
		return t, nil
	}
	now := c.now()
	j := jwt.NewWithClaims(jwt.SigningMethodES256, jwt.MapClaims{"iss": c.teamID, "iat": now.Unix()})
	j.Header["kid"] = c.keyID
	signed, err := j.SignedString(c.key)
	if err != nil {
		return nil, fmt.Errorf("apns: signing the provider token: %w", err)
	}
	t := &providerToken{jwt: signed, issued: now}
	c.cur.Store(t)
	return t, nil
}

// invalidate drops t if it is still the current token, so that the next
// get signs a new one; many sends refused with the same token cause a
// single new one.
func (c *tokenCache) invalidate(t *providerToken) {
	c.cur.CompareAndSwap(t, nil)
}
