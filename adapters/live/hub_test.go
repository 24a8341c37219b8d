package live

import (
	"slices"
	"testing"

	"github.com/halocms/halocms/domain/fault"
	rmcontent "github.com/halocms/halocms/readmodels/content"
)

func change(pos int64, app string) rmcontent.Change {
	return rmcontent.Change{Pos: pos, App: app, Kind: rmcontent.ChangedItem, Type: "content.item_edited"}
}

func positions(cs []rmcontent.Change) []int64 {
	out := make([]int64, len(cs))
	for i, c := range cs {
		out[i] = c.Pos
	}
	return out
}

func drain(s rmcontent.LiveSubscription) []int64 {
	var out []int64
	for {
		select {
		case c, ok := <-s.Changes():
			if !ok {
				return out
			}
			out = append(out, c.Pos)
		default:
			return out
		}
	}
}

// Changes reach the subscribers of their app only; a resumed subscriber
// gets what came after its position (log order, which positions need not
// follow), then the live changes, with neither gap nor repetition.
func TestHubFanOutAndReplay(t *testing.T) {
	h := NewHub(Config{Keep: 4})
	a, err := h.Subscribe("u1", "A", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := h.Subscribe("u2", "B", 0, false)
	h.Publish(change(10, "A"), change(12, "B"), change(11, "A"))
	if got := drain(a); !slices.Equal(got, []int64{10, 11}) {
		t.Errorf("A got %v", got)
	}
	if got := drain(b); !slices.Equal(got, []int64{12}) {
		t.Errorf("B got %v", got)
	}
	r, _ := h.Subscribe("u1", "A", 10, true)
	if replay, reset := r.Replay(); reset || !slices.Equal(positions(replay), []int64{11}) {
		t.Errorf("resumed after 10: replay %v reset %v", positions(replay), reset)
	}
	h.Publish(change(13, "A"))
	if got := drain(r); !slices.Equal(got, []int64{13}) {
		t.Errorf("then live: %v", got)
	}
	// 10 has left the ring (4 changes kept): too old to replay from.
	h.Publish(change(14, "A"))
	old, _ := h.Subscribe("u1", "A", 10, true)
	if _, reset := old.Replay(); !reset || old.Mark() != 14 {
		t.Errorf("resumed after a position gone: reset %v mark %d, want a reset and mark 14", reset, old.Mark())
	}
	unknown, _ := h.Subscribe("u3", "A", -1, true)
	if _, reset := unknown.Replay(); !reset {
		t.Error("an unknown position does not reset")
	}
}

// A subscriber that falls more than Buffer behind is dropped with an
// overflow; the others go on.
func TestHubDropsSlowSubscribers(t *testing.T) {
	h := NewHub(Config{Buffer: 2})
	slow, _ := h.Subscribe("u1", "A", 0, false)
	fast, _ := h.Subscribe("u2", "A", 0, false)
	h.Publish(change(1, "A"), change(2, "A"))
	drain(fast)
	h.Publish(change(3, "A"))
	if got := drain(slow); !slices.Equal(got, []int64{1, 2}) || !slow.Overflowed() || slow.Mark() != 3 {
		t.Errorf("slow: got %v overflowed %v mark %d, want 1 2 then closed, overflowed, mark 3", got, slow.Overflowed(), slow.Mark())
	}
	if got := drain(fast); !slices.Equal(got, []int64{3}) || fast.Overflowed() {
		t.Errorf("fast: got %v overflowed %v", got, fast.Overflowed())
	}
	if h.Streams() != 1 {
		t.Errorf("%d streams, want 1", h.Streams())
	}
}

// The bounds: per owner (429), per process (503), and none after Close,
// which ends every subscription.
func TestHubBounds(t *testing.T) {
	h := NewHub(Config{MaxStreams: 3, MaxPerOwner: 2})
	s1, _ := h.Subscribe("u1", "A", 0, false)
	if _, err := h.Subscribe("u1", "A", 0, false); err != nil {
		t.Fatal(err)
	}
	if _, err := h.Subscribe("u1", "A", 0, false); !fault.Is(err, fault.TooManyRequests) {
		t.Errorf("a third stream of u1: %v, want too many requests", err)
	}
	s1.Close()
	s1.Close() // twice is harmless
	if _, err := h.Subscribe("u1", "B", 0, false); err != nil {
		t.Errorf("after closing one: %v", err)
	}
	last, err := h.Subscribe("u2", "A", 0, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.Subscribe("u3", "A", 0, false); !fault.Is(err, fault.Unavailable) {
		t.Errorf("a fourth stream: %v, want unavailable", err)
	}
	h.Close()
	if _, ok := <-last.Changes(); ok || last.Overflowed() {
		t.Error("Close left a subscription open, or called it an overflow")
	}
	if _, err := h.Subscribe("u4", "A", 0, false); !fault.Is(err, fault.Unavailable) {
		t.Errorf("after Close: %v, want unavailable", err)
	}
}
