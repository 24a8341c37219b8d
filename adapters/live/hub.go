// Package live fans the event log's content changes out to the live
// streams of the web CMS: one Follower per process reads the log (as a
// projection does, woken by LISTEN/NOTIFY) and hands each change to the
// Hub, which keeps the recent ones for clients that reconnect and passes
// every change to the subscribers of its app, each through a bounded
// buffer. Who may see which change is the query side's business
// (readmodels/content.Live); the wire is the HTTP adapter's.
package live

import (
	"sync"

	"github.com/halocms/halocms/domain/fault"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

// Config bounds a Hub. Zero values take the defaults.
type Config struct {
	// MaxStreams bounds the subscribers of the process (default 1000);
	// MaxPerOwner those of one owner (a CMS user; default 10).
	MaxStreams, MaxPerOwner int
	// Buffer is how many changes a subscriber may fall behind before it
	// is dropped (default 256).
	Buffer int
	// Keep is how many recent changes are kept to replay to clients that
	// reconnect (default 10000).
	Keep int
}

// Defaults of Config.
const (
	DefaultMaxStreams  = 1000
	DefaultMaxPerOwner = 10
	DefaultBuffer      = 256
	DefaultKeep        = 10000
)

// Retry-After of the refusals, in seconds.
const (
	ownerRetryAfter  = 10
	serverRetryAfter = 30
)

// Hub fans changes out to subscribers. Publish and Subscribe share one
// lock, so a subscriber's replay and its live changes neither overlap nor
// leave a gap.
type Hub struct {
	cfg Config

	mu     sync.Mutex
	ring   []rmcontent.Change // the recent changes, ring[seq%len]
	seq    uint64             // the sequence number of the newest change (0: none yet)
	bySeq  map[int64]uint64   // position → sequence number, for the changes in ring
	subs   map[*subscription]struct{}
	owners map[string]int
	closed bool
}

var _ rmcontent.LiveFeed = (*Hub)(nil)

// NewHub returns a hub bounded by cfg.
func NewHub(cfg Config) *Hub {
	if cfg.MaxStreams <= 0 {
		cfg.MaxStreams = DefaultMaxStreams
	}
	if cfg.MaxPerOwner <= 0 {
		cfg.MaxPerOwner = DefaultMaxPerOwner
	}
	if cfg.Buffer <= 0 {
		cfg.Buffer = DefaultBuffer
	}
	if cfg.Keep <= 0 {
		cfg.Keep = DefaultKeep
	}
	return &Hub{cfg: cfg, ring: make([]rmcontent.Change, cfg.Keep), bySeq: map[int64]uint64{},
		subs: map[*subscription]struct{}{}, owners: map[string]int{}}
}

// Streams is the number of subscribers now.
func (h *Hub) Streams() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.subs)
}

// Publish hands changes, in log order, to the ring and to the subscribers
// of their apps. A subscriber whose buffer is full is dropped: its
// channel is closed, and it reports Overflowed.
func (h *Hub) Publish(cs ...rmcontent.Change) {
	if len(cs) == 0 {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	var dropped []*subscription
	for _, c := range cs {
		h.keep(c)
		for s := range h.subs {
			if s.app != c.App {
				continue
			}
			select {
			case s.ch <- c:
			default:
				s.overflowed = true
				h.removeLocked(s)
				dropped = append(dropped, s)
			}
		}
	}
	for _, s := range dropped {
		s.mark = cs[len(cs)-1].Pos // what this batch brought counts as missed
	}
}

// keep puts c in the ring, forgetting the oldest change when it is full.
func (h *Hub) keep(c rmcontent.Change) {
	h.seq++
	slot := h.seq % uint64(len(h.ring))
	if h.seq > uint64(len(h.ring)) {
		if old := h.ring[slot].Pos; h.bySeq[old] == h.seq-uint64(len(h.ring)) {
			delete(h.bySeq, old)
		}
	}
	h.ring[slot] = c
	h.bySeq[c.Pos] = h.seq
}

// latestLocked is the position of the newest change (0: none).
func (h *Hub) latestLocked() int64 {
	if h.seq == 0 {
		return 0
	}
	return h.ring[h.seq%uint64(len(h.ring))].Pos
}

// Subscribe implements rmcontent.LiveFeed.
func (h *Hub) Subscribe(owner, app string, after int64, resume bool) (rmcontent.LiveSubscription, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	switch {
	case h.closed:
		return nil, fault.New(fault.Unavailable, "the server is shutting down; reconnect").With("retryAfter", 1)
	case h.owners[owner] >= h.cfg.MaxPerOwner:
		return nil, fault.New(fault.TooManyRequests, "too many live streams open for this user (at most %d): close one", h.cfg.MaxPerOwner).
			With("retryAfter", ownerRetryAfter)
	case len(h.subs) >= h.cfg.MaxStreams:
		return nil, fault.New(fault.Unavailable, "too many live streams open on this server (at most %d)", h.cfg.MaxStreams).
			With("retryAfter", serverRetryAfter)
	}
	s := &subscription{hub: h, owner: owner, app: app, ch: make(chan rmcontent.Change, h.cfg.Buffer), mark: h.latestLocked()}
	if resume {
		from, ok := h.bySeq[after]
		if !ok {
			s.reset = true
		} else {
			for seq := from + 1; seq <= h.seq; seq++ {
				if c := h.ring[seq%uint64(len(h.ring))]; c.App == app {
					s.replay = append(s.replay, c)
				}
			}
		}
	}
	h.subs[s] = struct{}{}
	h.owners[owner]++
	return s, nil
}

// removeLocked unregisters s and closes its channel, once.
func (h *Hub) removeLocked(s *subscription) {
	if _, ok := h.subs[s]; !ok {
		return
	}
	delete(h.subs, s)
	if h.owners[s.owner]--; h.owners[s.owner] <= 0 {
		delete(h.owners, s.owner)
	}
	close(s.ch)
}

// Close ends every subscription (their channels close) and refuses new
// ones: the server shuts down.
func (h *Hub) Close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.closed = true
	for s := range h.subs {
		h.removeLocked(s)
	}
}

// subscription is one subscriber of a Hub.
type subscription struct {
	hub    *Hub
	owner  string
	app    string
	ch     chan rmcontent.Change
	replay []rmcontent.Change
	reset  bool
	// Under the hub's lock:
	overflowed bool
	mark       int64
}

func (s *subscription) Replay() ([]rmcontent.Change, bool) { return s.replay, s.reset }

func (s *subscription) Changes() <-chan rmcontent.Change { return s.ch }

func (s *subscription) Overflowed() bool {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.overflowed
}

func (s *subscription) Mark() int64 {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.mark
}

func (s *subscription) Close() {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	s.hub.removeLocked(s)
}
