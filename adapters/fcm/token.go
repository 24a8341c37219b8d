package fcm

import (
	"context"
	"sync/atomic"
	"time"

	"golang.org/x/oauth2"
)

// failureCooldown is how long a failed token fetch is remembered, so that
// a dispatch of many messages does not hammer a refusing token endpoint.
const failureCooldown = 5 * time.Second

// tokenCache holds the current access token. Sends read it without
// locking; one goroutine at a time fetches a new one when it is missing
// or expired (oauth2.Token.Valid allows for a little clock skew), while
// the others wait for it or for their ctx.
type tokenCache struct {
	fetch func() (*oauth2.Token, error)
	cur   atomic.Pointer[oauth2.Token]
	sem   chan struct{} // held while fetching; guards failedErr/failedAt
	// The last fetch failure and when it happened.
	failedErr error
	failedAt  time.Time
}

func newTokenCache(fetch func() (*oauth2.Token, error)) *tokenCache {
	return &tokenCache{fetch: fetch, sem: make(chan struct{}, 1)}
}

// get returns a valid token, fetching one if needed.
func (c *tokenCache) get(ctx context.Context) (*oauth2.Token, error) {
	if t := c.cur.Load(); t.Valid() {
		return t, nil
	}
	select {
	case c.sem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	}
	defer func() { <-c.sem }()
	if t := c.cur.Load(); t.Valid() { // fetched while we waited
		return t, nil
	}
	if c.failedErr != nil && time.Since(c.failedAt) < failureCooldown {
		return nil, c.failedErr
	}
	t, err := c.fetch()
	if err != nil {
		c.failedErr, c.failedAt = err, time.Now()
		return nil, err
	}
	c.failedErr = nil
	c.cur.Store(t)
	return t, nil
}

// invalidate drops t if it is still the current token, so that the next
// get fetches a new one; many sends refused with the same token cause a
// single fetch.
func (c *tokenCache) invalidate(t *oauth2.Token) {
	c.cur.CompareAndSwap(t, nil)
}
