package loyalty

import (
	"context"
	"sync"

	lru "github.com/hashicorp/golang-lru/v2"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
)

// DefaultCacheEntries is the account-state cache size when Options leave
// it 0.
const DefaultCacheEntries = 4096

// loaded is an account's folded state at a stream version, with the
// position of its last event (what a replayed request waits for).
type loaded struct {
	account *loyalty.Account
	version int64
	last    event.Position
	snapped int64 // the version of the account's last snapshot, loaded or saved
}

// accountCache keeps accounts' folded states, so that a command on an
// account with thousands of transactions reads only the events appended
// since. A state is only used (and changed) by the holder of its account's
// lock; nil disables the cache.
type accountCache struct {
	lru *lru.Cache[string, *loaded]
}

func newAccountCache(entries int) *accountCache {
	if entries < 0 {
		return &accountCache{}
	}
	if entries == 0 {
		entries = DefaultCacheEntries
	}
	c, err := lru.New[string, *loaded](entries)
	if err != nil {
		panic(err) // only for a size < 1
	}
	return &accountCache{lru: c}
}

func (c *accountCache) get(account string) (*loaded, bool) {
	if c.lru == nil {
		return nil, false
	}
	return c.lru.Get(account)
}

func (c *accountCache) put(account string, l *loaded) {
	if c.lru != nil {
		c.lru.Add(account, l)
	}
}

func (c *accountCache) drop(account string) {
	if c.lru != nil {
		c.lru.Remove(account)
	}
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
