// Package event holds the vocabulary shared by every bounded context for
// recorded domain events: positions in the global log, stream versions and
// the metadata that travels with each event. It is pure: no SQL, no JSON.
package event

import (
	"errors"
	"fmt"
	"time"
)

// Position is a place in the global log. Events are ordered by the
// transaction that wrote them first and by their global position second, so
// that a reader following the log never skips an event committed late.
type Position struct {
	TxID uint64
	Pos  int64
}

// Less reports whether p comes before o in log order.
func (p Position) Less(o Position) bool {
	if p.TxID != o.TxID {
		return p.TxID < o.TxID
	}
	return p.Pos < o.Pos
}

// IsZero reports whether p is the start of the log.
func (p Position) IsZero() bool { return p.TxID == 0 && p.Pos == 0 }

func (p Position) String() string { return fmt.Sprintf("%d/%d", p.TxID, p.Pos) }

// Metadata travels with every event: who caused it, for which app, and the
// correlation chain that links it to the request that produced it.
type Metadata struct {
	EventID       string // UUIDv7
	Actor         string // CMS user id, app id or "system"
	App           string // the app the event concerns, if any
	CorrelationID string
	CausationID   string
	ClientIP      string
}

// Event is a domain event about to be appended: a stable type name, its
// schema version and the event value itself.
type Event struct {
	Type string
	Data any
	Meta Metadata
}

// Recorded is an event as stored in the log.
type Recorded struct {
	Position
	StreamID      string
	StreamVersion int64
	Type          string
	SchemaVersion int
	Data          any
	Meta          Metadata
	RecordedAt    time.Time
}

// Expected stream versions with special meaning.
const (
	// NoStream: the stream must not exist yet.
	NoStream int64 = 0
	// AnyVersion: append whatever the stream's current version.
	AnyVersion int64 = -1
)

// AppendResult tells where the appended events landed.
type AppendResult struct {
	// Last is the position of the last appended event.
	Last Position
	// Version is the stream version after the append.
	Version int64
	// Duplicate is true when every event id was already stored: a retried
	// append, acknowledged without writing again.
	Duplicate bool
}

// Include extends r to cover an event written at p, leaving the stream at
// version (results of several appends combine the same way).
func (r *AppendResult) Include(p Position, version int64) {
	if r.Last.Less(p) {
		r.Last = p
	}
	if version > r.Version {
		r.Version = version
	}
}

// ErrVersionConflict is returned (wrapped in a *ConflictError) when the
// stream moved on since the caller read it.
var ErrVersionConflict = errors.New("stream version conflict")

// ConflictError carries the versions involved in an optimistic concurrency
// failure.
type ConflictError struct {
	StreamID string
	Expected int64
	Actual   int64
}

func (e *ConflictError) Error() string {
	return fmt.Sprintf("stream %s: expected version %d, found %d", e.StreamID, e.Expected, e.Actual)
}

func (e *ConflictError) Unwrap() error { return ErrVersionConflict }

// ErrDataRejected is returned (wrapped) when the store refuses an append
// for its data: a value it cannot hold. Nothing was written, and the same
// append will fail again.
var ErrDataRejected = errors.New("the store cannot hold this data")

// StreamID builds the conventional "<category>-<id>" stream name.
func StreamID(category, id string) string { return category + "-" + id }

// StreamAppend is one stream's part of an atomic multi-stream append.
//
// One without events is a guard: the append fails with a version conflict
// unless the stream is at ExpectedVersion (> 0), and while the stream is
// held (see the store's AppendHeld). A decision that read the stream (a
// module's fields, say) appends with a guard on it, so that it cannot
// commit after a change of that stream it did not see, nor while a holder
// of the stream is deciding. A guard orders its call against AppendHeld
// only: a stream that guards protect must change only through AppendHeld
// (its first events aside), so that it is still at ExpectedVersion when
// the call commits. Plain appends to it are not ordered with the guard.
type StreamAppend struct {
	Stream          string
	ExpectedVersion int64
	Events          []Event
}
