package postgres

import (
	cmdsession "github.com/halocms/halocms/commands/session"
	"sync"
	"time"
)

// DefaultTokenCacheEntries bounds an access cache (see CacheAccess).
const DefaultTokenCacheEntries = 100_000

// CacheAccess makes Access answer from memory: a live access token's grant
// is kept for at most ttl, never past the token's expiry, so that an
// authenticated request costs no round trip for its token. Revocations
// still take effect at once:
//   - a revocation through this store empties its cache before it returns;
//   - every revocation notifies TokenChannel, and l (a Listener on that
//     channel, which the caller runs) empties the cache of every other
//     process when the notification arrives, a few milliseconds later;
//   - while l is not listening (before it connects, after it lost its
//     connection) Access reads the table every time, as without a cache.
//
// A token deleted or changed behind the store's back (by SQL) can be
// honoured for up to ttl. Call before the store is used.
func (s *TokenStore) CacheAccess(ttl time.Duration, l *Listener) *TokenStore {
	if ttl <= 0 || l == nil {
		panic("postgres.CacheAccess: needs a positive ttl and a listener on TokenChannel")
	}
	s.cache = &accessCache{ttl: ttl, max: DefaultTokenCacheEntries, l: l, seen: l.C(),
		m: map[string]cachedGrant{}}
	return s
}

type cachedGrant struct {
	g     cmdsession.Grant
	until time.Time
}

// accessCache holds grants by token hash. gen counts flushes: a grant read
// from the table is kept only if no flush happened since the read began,
// so a revocation that commits during the read cannot be undone by it.
type accessCache struct {
	ttl time.Duration
	max int
	l   *Listener

	mu   sync.Mutex
	seen <-chan struct{} // closed by the listener's next notification
	gen  uint64
	m    map[string]cachedGrant
}

// syncLocked empties the cache when the listener has fired since the last
// look, and reports whether the cache may be used now.
func (c *accessCache) syncLocked() bool {
	select {
	case <-c.seen:
		c.seen = c.l.C()
		c.flushLocked()
	default:
	}
	return c.l.Listening()
}

func (c *accessCache) flushLocked() {
	c.gen++
	clear(c.m)
}

func (c *accessCache) flush() {
	c.mu.Lock()
	c.flushLocked()
	c.mu.Unlock()
}

// get returns the cached grant of hash if there is a live one; otherwise
// the generation to hand to put after reading the table.
func (c *accessCache) get(hash []byte) (uint64, cmdsession.Grant, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.syncLocked() {
		c.flushLocked()
		return c.gen, cmdsession.Grant{}, false
	}
	e, ok := c.m[string(hash)]
	if ok && time.Now().Before(e.until) {
		return c.gen, e.g, true
	}
	if ok {
		delete(c.m, string(hash))
	}
	return c.gen, cmdsession.Grant{}, false
}

// put keeps a grant read from the table with left to live, unless the
// cache was flushed since get returned gen.
func (c *accessCache) put(gen uint64, hash []byte, g cmdsession.Grant, left time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.syncLocked() || gen != c.gen {
		return
	}
	if len(c.m) >= c.max {
		clear(c.m) // cheaper than tracking age; a cold start costs one read per token
	}
	c.m[string(hash)] = cachedGrant{g: g, until: time.Now().Add(min(left, c.ttl))}
}
