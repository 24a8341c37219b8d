// Package operations holds the events operators cause through the `cms`
// command rather than through the API: they are in the log so that
// auditors see who did what to the running system, when and why. No
// projection reads them; the projection engine acts on them when they are
// recorded.
package operations

// Events of the operations context. Type names are stable: never rename
// them. They are appended to the stream "projection-<name>" of the
// projection they concern.

// EventParked: an operator parked an event of the log for a projection
// that could not apply it. The projection goes on past it without
// applying it, until ParkedEventsReplayed. The event itself stays in the
// log, unchanged.
type EventParked struct {
	Projection string
	// The parked event: its place in the log (transaction id and global
	// position), id, type and stream.
	TxID     uint64
	Position int64
	EventID  string
	Type     string
	StreamID string
	// By is who parked it (the operator's name); Reason why; Error the
	// projection's failure on it, when the runners had recorded it.
	By     string
	Reason string
	Error  string
}

// ParkedEventsReplayed: the events an operator had parked for a
// projection were applied to it (Applied, in log order, in one
// transaction with the projection's tables) or, when the projection had
// not reached them yet, given back to it to apply in order (Released).
type ParkedEventsReplayed struct {
	Projection string
	Applied    []ParkedEvent
	Released   []ParkedEvent
	By         string
	Reason     string
}

// ParkedEvent names an event parked for a projection.
type ParkedEvent struct {
	TxID     uint64
	Position int64
	EventID  string
}

func (EventParked) EventType() string          { return "operations.event_parked" }
func (ParkedEventsReplayed) EventType() string { return "operations.parked_events_replayed" }

// Events lists a zero value of every event type of this context.
func Events() []interface{ EventType() string } {
	return []interface{ EventType() string }{EventParked{}, ParkedEventsReplayed{}}
}
