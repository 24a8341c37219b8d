package loyalty

import (
	"sync"
	"time"

	"github.com/hashicorp/golang-lru/v2/simplelru"
)

// viewCache keeps account views in memory, so that the reads apps make
// again and again (`self`) cost no round trip to PostgreSQL. A view is
// served from memory only while nothing says it changed:
//
//   - Forget drops the views of the accounts a loyalty batch changed. This
//     process's batches call it once their transaction ended, before the
//     requests that wait for them are answered (read-your-writes); other
//     processes' batches as their notification is heard, a moment after
//     they committed.
//   - While the notifications may go unheard (heard false: the listener
//     has no connection), nothing is served from memory nor kept, and
//     ForgetAll drops everything each time the listener connects again.
//   - A view is kept at most ttl, which bounds what a change made without
//     a notification (by hand in SQL) can go unseen.
//
// A read that began before a Forget of its account (or a ForgetAll) may
// have read the rows before the change: it does not keep what it read.
// Each account has a slot that a Forget marks; a read keeps its view only
// in the slot it began with, unmarked since. The slot of an account with
// no view held waits outside the LRU (pending) until a read keeps a view
// in it: reads of accounts that do not exist take no place in the cache,
// so they cannot push the views of those that do out of it.
type viewCache struct {
	ttl   time.Duration
	heard func() bool
	now   func() time.Time

	mu           sync.Mutex
	gen          uint64 // counts ForgetAlls
	slots        *simplelru.LRU[string, *viewSlot]
	pending      map[string]*viewSlot // slots of reads under way, not in slots
	hits, misses uint64
	views        int // slots that hold a view
}

type viewSlot struct {
	view  AccountView
	held  bool // view is set
	until time.Time
	marks uint64 // counts Forgets
	reads int    // reads under way with a pending ticket for it
}

// viewTicket is what a read that missed the cache hands back to put.
type viewTicket struct {
	slot    *viewSlot
	marks   uint64
	gen     uint64
	pending bool // slot was pending when the read began
}

func newViewCache(entries int, ttl time.Duration, heard func() bool) *viewCache {
	c := &viewCache{ttl: ttl, heard: heard, now: time.Now, pending: map[string]*viewSlot{}}
	var err error
	if c.slots, err = simplelru.NewLRU(entries, func(_ string, s *viewSlot) { c.drop(s) }); err != nil { // c.mu held
		panic(err) // only for a size < 1
	}
	return c
}

// get returns the view of account id if one is held; otherwise the ticket
// to keep one with (nil: do not keep it).
func (c *viewCache) get(id string) (AccountView, bool, *viewTicket) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.heard() {
		c.misses++
		return AccountView{}, false, nil
	}
	s, ok := c.slots.Get(id)
	if ok && s.held && c.now().Before(s.until) {
		c.hits++
		return s.view, true, nil
	}
	c.misses++
	if ok {
		return AccountView{}, false, &viewTicket{slot: s, marks: s.marks, gen: c.gen}
	}
	if s = c.pending[id]; s == nil {
		s = &viewSlot{}
		c.pending[id] = s
	}
	s.reads++
	return AccountView{}, false, &viewTicket{slot: s, marks: s.marks, gen: c.gen, pending: true}
}

// done ends a pending ticket's read (c.mu held).
func (c *viewCache) done(id string, t *viewTicket) {
	if !t.pending {
		return
	}
	if t.slot.reads--; t.slot.reads == 0 && c.pending[id] == t.slot {
		delete(c.pending, id)
	}
}

// put keeps a view read after get returned t, unless its account's views
// were forgotten since.
func (c *viewCache) put(id string, t *viewTicket, v AccountView) {
	if t == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done(id, t)
	if !c.heard() || t.gen != c.gen || t.slot.marks != t.marks {
		return
	}
	s, ok := c.slots.Peek(id)
	switch {
	case ok && s != t.slot:
		return // not the slot the read began with
	case !ok && !t.pending:
		return // evicted since: forgets may have gone unmarked
	case !ok:
		c.slots.Add(id, t.slot) // a pending slot is marked while a read has it
	}
	if !t.slot.held {
		c.views++
	}
	t.slot.view, t.slot.held, t.slot.until = v, true, c.now().Add(c.ttl)
}

// abandon ends a read that found no view to keep (an unknown account, an
// error).
func (c *viewCache) abandon(id string, t *viewTicket) {
	if t == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.done(id, t)
}

// forget drops the views of ids, and keeps the reads under way from
// keeping theirs.
func (c *viewCache) forget(ids ...string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, id := range ids {
		if s, ok := c.slots.Peek(id); ok {
			s.marks++
			c.drop(s)
		}
		if s := c.pending[id]; s != nil {
			s.marks++
		}
	}
}

// forgetAll drops every view, and keeps the reads under way from keeping
// theirs.
func (c *viewCache) forgetAll() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.slots.Purge() // drop runs for each slot
}

// drop empties a slot that holds a view (c.mu held).
func (c *viewCache) drop(s *viewSlot) {
	if s.held {
		c.views--
		s.view, s.held = AccountView{}, false
	}
}

// ViewCacheStats tells what the account view cache holds and how it
// answered.
type ViewCacheStats struct {
	Views        int    // views held
	Hits, Misses uint64 // Account calls answered from memory, from the tables
}

func (c *viewCache) stats() ViewCacheStats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return ViewCacheStats{Views: c.views, Hits: c.hits, Misses: c.misses}
}
