// Package memstore is an event store held in memory: the event-store port
// that the PostgreSQL store implements, with the same semantics and none
// of the infrastructure.
//
// It is for tests of decisions: commands that load streams, decide,
// append with the version they read, retry on conflicts and acknowledge
// retried appends can be tested without a database. And it is the port's
// second implementation: it passes the same contract suite
// (adapters/eventstoretest), which keeps the port from drifting into
// PostgreSQL's particulars.
//
// It keeps what decisions can tell apart: optimistic concurrency per
// stream (event.ErrVersionConflict), atomic multi-stream appends with
// guards, holds (AppendHeld), the log's order by transaction id and
// global position (readers never see past a transaction still open),
// event ids (a UUIDv7 when none is given) and metadata as the PostgreSQL
// store records them, retried appends acknowledged as duplicates. Events
// cross the same codec boundary: they are stored encoded, decoded (and
// upcast) on every read, and data PostgreSQL's jsonb would refuse is
// refused with event.ErrDataRejected, so that a test passes here only
// where it would pass there.
//
// It does not do what needs infrastructure: nothing outlives the process
// (no durability), no reader is woken (no LISTEN/NOTIFY; readers poll),
// and no projection runs over it, so tests of projections, read models
// and read-your-writes stay on the PostgreSQL store.
package memstore

import (
	"context"
	"fmt"
	"math"
	"sort"
	"sync"
	"time"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/domain/event"
)

// Store is an event store in memory. It is safe for concurrent use.
type Store struct {
	codec *eventcodec.Registry
	log   *memLog
}

// New returns an empty store that encodes and decodes events with codec.
func New(codec *eventcodec.Registry) *Store {
	if codec == nil {
		panic("memstore.New: nil codec")
	}
	return &Store{codec: codec, log: &memLog{
		streams: map[string][]*record{}, ids: map[string]*record{},
		open: map[uint64]*openTx{}, claimedStreams: map[string]*openTx{}, claimedIDs: map[string]*openTx{},
		holds: map[string]chan struct{}{},
	}}
}

// memLog is the storage: the committed events, in log order, by stream
// and by event id, and what is in flight (open transactions, holds).
// Committed records never change, so they are decoded outside the lock.
type memLog struct {
	mu      sync.Mutex
	records []*record            // committed, in log order
	streams map[string][]*record // committed, record v-1 at version v
	ids     map[string]*record   // committed, by event id
	lastTx  uint64
	lastPos int64

	open           map[uint64]*openTx // by transaction id
	claimedStreams map[string]*openTx
	claimedIDs     map[string]*openTx
	holds          map[string]chan struct{} // held streams; closed on release
}

// record is an event as stored: its data encoded, its metadata with its
// event id.
type record struct {
	pos     event.Position
	stream  string
	version int64
	typ     string
	schema  int
	data    []byte
	meta    event.Metadata
	at      time.Time
}

// ReadStream returns the events of one stream with a version above after,
// in version order. A missing stream reads as empty.
func (s *Store) ReadStream(ctx context.Context, stream string, after int64) ([]event.Recorded, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.log.mu.Lock()
	recs := s.log.streams[stream]
	recs = recs[min(max(after, 0), int64(len(recs))):]
	s.log.mu.Unlock()
	return s.decode(recs)
}

// ReadAll returns up to limit committed events after the given position,
// in log order. It stops before the first transaction still open, so a
// reader that follows the log never moves past an event that could still
// commit before the ones it has read.
func (s *Store) ReadAll(ctx context.Context, after event.Position, limit int) ([]event.Recorded, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	l := s.log
	l.mu.Lock()
	horizon := l.horizon()
	i := sort.Search(len(l.records), func(i int) bool { return after.Less(l.records[i].pos) })
	var recs []*record
	for ; i < len(l.records) && len(recs) < limit && l.records[i].pos.TxID < horizon; i++ {
		recs = append(recs, l.records[i])
	}
	l.mu.Unlock()
	return s.decode(recs)
}

// Head returns the position of the newest committed event visible to a
// reader following the log.
func (s *Store) Head(ctx context.Context) (event.Position, error) {
	if err := ctx.Err(); err != nil {
		return event.Position{}, err
	}
	l := s.log
	l.mu.Lock()
	defer l.mu.Unlock()
	horizon := l.horizon()
	i := sort.Search(len(l.records), func(i int) bool { return l.records[i].pos.TxID >= horizon })
	if i == 0 {
		return event.Position{}, nil
	}
	return l.records[i-1].pos, nil
}

// Last returns the position of the newest committed event, whether or not
// readers of the log can see it yet.
func (s *Store) Last(ctx context.Context) (event.Position, error) {
	if err := ctx.Err(); err != nil {
		return event.Position{}, err
	}
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	if n := len(s.log.records); n > 0 {
		return s.log.records[n-1].pos, nil
	}
	return event.Position{}, nil
}

// StreamVersion returns the current version of a stream (0 if it does not
// exist).
func (s *Store) StreamVersion(ctx context.Context, stream string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.log.mu.Lock()
	defer s.log.mu.Unlock()
	return s.log.version(stream), nil
}

// version is stream's committed version.
func (l *memLog) version(stream string) int64 { return int64(len(l.streams[stream])) }

// horizon is the id of the oldest transaction still open (readers of the
// log see only below it), or the highest id when none is.
func (l *memLog) horizon() uint64 {
	h := uint64(math.MaxUint64)
	for id := range l.open {
		h = min(h, id)
	}
	return h
}

// decode turns records into recorded events, upcasting their data to the
// codec's current schema versions.
func (s *Store) decode(recs []*record) ([]event.Recorded, error) {
	out := make([]event.Recorded, len(recs))
	for i, r := range recs {
		d, err := s.codec.Decode(r.typ, r.schema, r.data)
		if err != nil {
			return nil, fmt.Errorf("event %d: %w", r.pos.Pos, err)
		}
		out[i] = event.Recorded{Position: r.pos, StreamID: r.stream, StreamVersion: r.version, Type: r.typ,
			SchemaVersion: r.schema, Data: d, Meta: r.meta, RecordedAt: r.at}
	}
	return out, nil
}
