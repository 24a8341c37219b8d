package loyalty

import (
	"context"
	"sync"

	"github.com/hashicorp/golang-lru/v2/simplelru"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
)

// DefaultCacheEntries is the account-state cache size when Options leave
// it 0.
const DefaultCacheEntries = 4096

// DefaultCacheBytes bounds the memory of the cached account states when
// Options leave CacheBytes 0: an account keeps every idempotency key it
// recorded, about 300 bytes per transaction (loyalty.Account.Footprint),
// so 4,096 accounts of 1,000 transactions would take over a gigabyte.
const DefaultCacheBytes = 128 << 20

// loaded is an account's folded state at a stream version, with the
// position of its last event (what a replayed request waits for).
type loaded struct {
	account *loyalty.Account
	version int64
	last    event.Position
	snapped int64 // the version of the account's last snapshot, loaded or saved
	cost    int64 // the account's footprint when it was last put in the cache
}

// accountCache keeps accounts' folded states, so that a command on an
// account with thousands of transactions reads only the events appended
// since. A state is only used (and changed) by the holder of its account's
// lock. It holds at most entries states and, by their footprints, about
// budget bytes: the least recently used go first, and a state larger than
// the whole budget is not kept. A nil lru disables the cache.
type accountCache struct {
	mu     sync.Mutex
	lru    *simplelru.LRU[string, *loaded]
	budget int64
	used   int64 // the costs of the states held
}

func newAccountCache(entries int, budget int64) *accountCache {
	if entries < 0 {
		return &accountCache{}
	}
	if entries == 0 {
		entries = DefaultCacheEntries
	}
	if budget <= 0 {
		budget = DefaultCacheBytes
	}
	c := &accountCache{budget: budget}
	l, err := simplelru.NewLRU(entries, func(_ string, l *loaded) { c.used -= l.cost }) // c.mu held
	if err != nil {
		panic(err) // only for a size < 1
	}
	c.lru = l
	return c
}

func (c *accountCache) get(account string) (*loaded, bool) {
	if c.lru == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lru.Get(account)
}

// put keeps l, or its new footprint, and evicts the least recently used
// states until the rest fit the budget.
func (c *accountCache) put(account string, l *loaded) {
	if c.lru == nil {
		return
	}
	cost := l.account.Footprint()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(account) // and its cost as last put
	if cost > c.budget {
		return
	}
	l.cost = cost
	c.used += cost
	c.lru.Add(account, l)
	for c.used > c.budget {
		if _, _, ok := c.lru.RemoveOldest(); !ok {
			break
		}
	}
}

func (c *accountCache) drop(account string) {
	if c.lru == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lru.Remove(account)
}

// footprint is what the cached states take by their footprints, and how
// many there are.
func (c *accountCache) footprint() (bytes int64, states int) {
	if c.lru == nil {
		return 0, 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.used, c.lru.Len()
}

// keyedMutex serialises work per key (an account) inside the process:
// writers of one account queue instead of racing for its stream version,
// and unrelated accounts never wait for each other.
type keyedMutex struct {
	mu    sync.Mutex
	locks map[string]*keyLock
}

type keyLock struct {
	ch    chan struct{} // holds a token while locked
	users int           // holders and waiters
}

// lock takes key's lock, or gives up when ctx ends; it returns the unlock.
func (m *keyedMutex) lock(ctx context.Context, key string) (func(), error) {
	m.mu.Lock()
	if m.locks == nil {
		m.locks = map[string]*keyLock{}
	}
	l := m.locks[key]
	if l == nil {
		l = &keyLock{ch: make(chan struct{}, 1)}
		m.locks[key] = l
	}
	l.users++
	m.mu.Unlock()
	release := func() {
		m.mu.Lock()
		if l.users--; l.users == 0 {
			delete(m.locks, key)
		}
		m.mu.Unlock()
	}
	select {
	case l.ch <- struct{}{}:
		return func() { <-l.ch; release() }, nil
	case <-ctx.Done():
		release()
		return nil, ctx.Err()
	}
}
