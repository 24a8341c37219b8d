package loyalty

import (
	"sync/atomic"
	"testing"
	"time"
)

func view(balance int64) AccountView { return AccountView{Account: Account{Balance: balance}} }

// newTestCache returns a cache of n views kept for ttl, heard while the
// returned flag is set (it starts set).
func newTestCache(n int, ttl time.Duration) (*viewCache, *atomic.Bool) {
	var heard atomic.Bool
	heard.Store(true)
	return newViewCache(n, ttl, heard.Load), &heard
}

// held reads id's view from c as Account does: the view held, or miss.
func held(c *viewCache, id string) (int64, bool) {
	v, ok, _ := c.get(id)
	return v.Balance, ok
}

func TestViewCacheKeepsAndForgets(t *testing.T) {
	c, _ := newTestCache(10, time.Hour)
	_, ok, tk := c.get("a")
	if ok || tk == nil {
		t.Fatalf("empty cache: hit %v, ticket %v", ok, tk)
	}
	c.put("a", tk, view(5))
	if b, ok := held(c, "a"); !ok || b != 5 {
		t.Fatalf("after put: %d, %v; want 5 from memory", b, ok)
	}
	_, _, tb := c.get("b")
	c.put("b", tb, view(7))

	c.forget("a", "unknown")
	if _, ok := held(c, "a"); ok {
		t.Fatal("a forgotten account's view is still served")
	}
	if b, ok := held(c, "b"); !ok || b != 7 {
		t.Fatalf("forgetting a dropped b: %d, %v", b, ok)
	}
	c.forgetAll()
	if _, ok := held(c, "b"); ok {
		t.Fatal("a view is served after forgetAll")
	}
	if st := c.stats(); st.Hits != 2 || st.Misses != 4 || st.Views != 0 {
		t.Fatalf("stats %+v, want 2 hits, 4 misses, no views", st)
	}
	// Views are counted as they come and go, evictions too.
	small, _ := newTestCache(2, time.Hour)
	for i, id := range []string{"a", "b", "c"} {
		_, _, tk := small.get(id)
		small.put(id, tk, view(int64(i)))
	}
	if st := small.stats(); st.Views != 2 {
		t.Fatalf("a cache of 2 after 3 puts: %+v", st)
	}
	small.forget("c")
	if st := small.stats(); st.Views != 1 {
		t.Fatalf("after a forget: %+v", st)
	}
}

// A read that began before a change (it may have read the rows before the
// change committed) does not keep what it read.
func TestViewCacheReadsOverlappingAChange(t *testing.T) {
	c, _ := newTestCache(10, time.Hour)

	_, _, before := c.get("a")
	c.forget("a")
	c.put("a", before, view(1))
	if _, ok := held(c, "a"); ok {
		t.Fatal("a read that began before forget kept its view")
	}
	// One that began after the change keeps its own.
	_, _, after := c.get("a")
	c.put("a", after, view(2))
	if b, ok := held(c, "a"); !ok || b != 2 {
		t.Fatalf("a read begun after the change: %d, %v; want 2", b, ok)
	}

	_, _, before = c.get("b")
	c.forgetAll()
	c.put("b", before, view(3))
	if _, ok := held(c, "b"); ok {
		t.Fatal("a read that began before forgetAll kept its view")
	}

	// A slot evicted (and made again) while a read was under way: the
	// read cannot tell what happened to it meanwhile.
	small, _ := newTestCache(1, time.Hour)
	_, _, tx := small.get("x")
	small.put("x", tx, view(4))
	small.forget("x") // x keeps its slot, with no view
	_, _, old := small.get("x")
	_, _, ty := small.get("y")
	small.put("y", ty, view(5)) // evicts x's slot
	small.get("x")              // and makes a new one
	small.put("x", old, view(6))
	if _, ok := held(small, "x"); ok {
		t.Fatal("a read kept its view in a slot made after it began")
	}
	// A read of an account with no slot is marked by a forget as well.
	_, _, pend := small.get("p")
	small.forget("p")
	small.put("p", pend, view(7))
	if _, ok := held(small, "p"); ok {
		t.Fatal("a read that began before forget kept its view (no slot)")
	}
}

// While the changes are not heard, nothing is served from memory nor
// kept; a view is served at most ttl.
func TestViewCacheNotHeardAndTTL(t *testing.T) {
	c, heard := newTestCache(10, time.Hour)
	_, _, tk := c.get("a")
	c.put("a", tk, view(1))
	heard.Store(false)
	if _, ok := held(c, "a"); ok {
		t.Fatal("a view is served while changes are not heard")
	}
	_, _, tk = c.get("b")
	if tk != nil {
		t.Fatal("a read gets a ticket while changes are not heard")
	}
	heard.Store(true)
	_, _, tk = c.get("c")
	heard.Store(false)
	c.put("c", tk, view(3))
	heard.Store(true)
	if _, ok := held(c, "c"); ok {
		t.Fatal("a view read while changes went unheard was kept")
	}

	now := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	short, _ := newTestCache(10, time.Minute)
	short.now = func() time.Time { return now }
	_, _, tk = short.get("a")
	short.put("a", tk, view(1))
	now = now.Add(59 * time.Second)
	if _, ok := held(short, "a"); !ok {
		t.Fatal("a view is not served within its ttl")
	}
	now = now.Add(time.Second)
	if _, ok := held(short, "a"); ok {
		t.Fatal("a view is served past its ttl")
	}
}

// Reads of accounts that do not exist leave no slot behind: they cannot
// push the views of real accounts out of a full cache.
func TestViewCacheAbandonedReads(t *testing.T) {
	c, _ := newTestCache(2, time.Hour)
	for i, id := range []string{"a", "b"} {
		_, _, tk := c.get(id)
		c.put(id, tk, view(int64(i+1)))
	}
	for _, id := range []string{"x", "y", "z"} {
		_, _, tk := c.get(id)
		c.abandon(id, tk)
	}
	for i, id := range []string{"a", "b"} {
		if b, ok := held(c, id); !ok || b != int64(i+1) {
			t.Fatalf("after reads of unknown accounts, %s: %d, %v; want %d from memory", id, b, ok, i+1)
		}
	}
	if len(c.pending) != 0 {
		t.Fatalf("abandoned reads left %d pending slots", len(c.pending))
	}
	// Another read of the same account still keeps its view.
	_, _, t1 := c.get("n")
	_, _, t2 := c.get("n")
	c.abandon("n", t1)
	c.put("n", t2, view(9))
	if b, ok := held(c, "n"); !ok || b != 9 {
		t.Fatalf("a read beside an abandoned one: %d, %v; want 9 from memory", b, ok)
	}
}
