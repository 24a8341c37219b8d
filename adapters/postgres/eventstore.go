package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/sync/semaphore"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/domain/event"
)

// NotifyChannel is the LISTEN/NOTIFY channel that announces new events.
const NotifyChannel = "cms_events"

// notifyEvery spaces NOTIFYs out; readers learn of new events at most this
// much later.
const notifyEvery = 5 * time.Millisecond

// Querier is what both a pool and a transaction offer.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// EventStore is the PostgreSQL event store.
type EventStore struct {
	pool   *pgxpool.Pool
	codec  *eventcodec.Registry
	notify chan struct{}
	done   chan struct{}

	typesMu sync.Mutex
	types   map[string]struct{} // appended since the last NOTIFY
	// holds bounds the AppendHeld transactions at once (see holdShare):
	// each keeps a connection while its decision reads through others.
	holds *semaphore.Weighted
	group *committer // see groupcommit.go
	// origin names the store's appends in its NOTIFYs ("@origin;types"),
	// so that a listener that has them fired as they commit (Listener.Own)
	// ignores them.
	origin    string
	committed atomic.Pointer[func(payload string)] // see OnCommitted
	// OnAppend, if set, is called after each successful append with the
	// number of events written (metrics).
	OnAppend func(n int)
}

// NewEventStore returns a store over pool that encodes and decodes events
// with codec. Close stops its notifier.
func NewEventStore(pool *pgxpool.Pool, codec *eventcodec.Registry) *EventStore {
	if pool == nil || codec == nil {
		panic("postgres.NewEventStore: nil dependency")
	}
	s := &EventStore{pool: pool, codec: codec, notify: make(chan struct{}, 1), done: make(chan struct{}),
		types: map[string]struct{}{}, holds: semaphore.NewWeighted(max(1, int64(pool.Config().MaxConns)/holdShare))}
	s.group = newCommitter(s)
	s.origin = uuid.Must(uuid.NewV7()).String()
	go s.notifier()
	return s
}

// OnCommitted has fn called with the payload of each append's types (as
// its NOTIFY would carry them) as soon as the append commits, on the
// appending goroutine: fn must be quick. See Listener.Own.
func (s *EventStore) OnCommitted(fn func(payload string)) { s.committed.Store(&fn) }

// Close stops the background notifier.
func (s *EventStore) Close() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
}

// notifier sends NOTIFY after commits, coalescing bursts, on its own
// connection: a NOTIFY inside the append transaction would serialise every
// commit on PostgreSQL's notification queue lock.
func (s *EventStore) notifier() {
	for {
		select {
		case <-s.done:
			return
		case <-s.notify:
			payload, some := s.takeTypes()
			if !some {
				// The types of the append that signalled were sent with
				// the previous NOTIFY (taken after it added them, before
				// it signalled): nothing new to announce.
				continue
			}
			ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			if _, err := s.pool.Exec(ctx, `SELECT pg_notify($1, $2)`, NotifyChannel, "@"+s.origin+";"+payload); err != nil {
				// Announced with the next append's NOTIFY, as any type;
				// until then the runners' idle polls find the events.
				// (No retry of its own: it would spin while the
				// database is down.)
				s.typesMu.Lock()
				s.types[""] = struct{}{}
				s.typesMu.Unlock()
			}
			cancel()
			// At most one NOTIFY per notifyEvery: each is a transaction
			// with a durable commit of its own (measured: about 7 points
			// of append throughput under 16 writers without this pause).
			select {
			case <-s.done:
				return
			case <-time.After(notifyEvery):
			}
		}
	}
}

// maxNotifyPayload keeps a NOTIFY payload well under PostgreSQL's 8000
// bytes.
const maxNotifyPayload = 4000

// takeTypes returns the payload of the next NOTIFY: the event types
// appended since the last one, comma-separated, or "" (any type: too
// many to list) when they do not fit; and false if none were appended
// since.
func (s *EventStore) takeTypes() (string, bool) {
	s.typesMu.Lock()
	defer s.typesMu.Unlock()
	if len(s.types) == 0 {
		return "", false
	}
	payload := typesPayload(s.types)
	clear(s.types)
	return payload, true
}

// typesPayload is the payload announcing types: comma-separated, or ""
// (any type: too many to list, or one unknown).
func typesPayload(types map[string]struct{}) string {
	list := make([]string, 0, len(types))
	n := 0
	for t := range types {
		list = append(list, t)
		n += len(t) + 1
	}
	if n > maxNotifyPayload || slices.Contains(list, "") {
		return ""
	}
	slices.Sort(list)
	return strings.Join(list, ",")
}

// NotifiedTypes parses a NotifyChannel payload: the event types it
// announces, or nil when it announces any type (an empty payload).
func NotifiedTypes(payload string) []string {
	if payload == "" {
		return nil
	}
	return strings.Split(payload, ",")
}

// typeName is an event's type as the codec will name it, or "" if unknown.
func typeName(e event.Event) string {
	if e.Type != "" {
		return e.Type
	}
	if t, ok := e.Data.(eventcodec.Typed); ok {
		return t.EventType()
	}
	return ""
}

// wake announces the types of the events of appends: the notifier sends
// them.
func (s *EventStore) wake(appends ...event.StreamAppend) {
	types := map[string]struct{}{}
	for _, a := range appends {
		for _, e := range a.Events {
			types[typeName(e)] = struct{}{} // "" (unknown) makes the payload "any type"
		}
	}
	s.typesMu.Lock()
	maps.Copy(s.types, types)
	s.typesMu.Unlock()
	if fn := s.committed.Load(); fn != nil {
		(*fn)(typesPayload(types))
	}
	select {
	case s.notify <- struct{}{}:
	default:
	}
}

// Append writes events to the end of stream, atomically, if the stream is at
// expectedVersion (event.NoStream for a new stream, event.AnyVersion to skip
// the check). A stale expected version returns a *event.ConflictError. An
// append whose event ids are all stored already is acknowledged as a
// duplicate without writing anything.
func (s *EventStore) Append(ctx context.Context, stream string, expectedVersion int64, events ...event.Event) (event.AppendResult, error) {
	written := []event.StreamAppend{{Stream: stream, ExpectedVersion: expectedVersion, Events: events}}
	if stream != "" {
		if res, ok := s.group.append(ctx, written, nil); ok {
			s.appended(written)
			return res, nil
		}
	}
	res, err := s.AppendTx(ctx, s.pool, stream, expectedVersion, events...)
	if err == nil && !res.Duplicate {
		s.appended(written)
	}
	return res, err
}

const appendInsert = `
INSERT INTO events (stream_id, stream_version, event_id, event_type, schema_version, data, metadata)
SELECT $1, s.version - $2 + e.ord, e.id, e.typ, e.sv, e.data, e.meta
FROM s, unnest($3::uuid[], $4::text[], $5::int[], $6::jsonb[], $7::jsonb[]) WITH ORDINALITY AS e(id, typ, sv, data, meta, ord)
RETURNING transaction_id::text::bigint, global_position, stream_version`

var (
	appendNew = `WITH s AS (INSERT INTO streams (stream_id, version) VALUES ($1, $2) ON CONFLICT (stream_id) DO NOTHING RETURNING version)` + appendInsert
	appendAny = `WITH s AS (INSERT INTO streams AS st (stream_id, version) VALUES ($1, $2)
	  ON CONFLICT (stream_id) DO UPDATE SET version = st.version + $2 RETURNING version)` + appendInsert
	appendAt = `WITH s AS (UPDATE streams SET version = version + $2 WHERE stream_id = $1 AND version = $8 RETURNING version)` + appendInsert
)

type storedMeta struct {
	EventID       string `json:"eventId"`
	Actor         string `json:"actor,omitempty"`
	App           string `json:"app,omitempty"`
	CorrelationID string `json:"correlationId,omitempty"`
	CausationID   string `json:"causationId,omitempty"`
	ClientIP      string `json:"clientIp,omitempty"`
}

// DecodeMetadata reads the stored metadata JSON of an event.
func DecodeMetadata(raw []byte) (event.Metadata, error) {
	if m, ok := decodeFlatMeta(raw); ok {
		return m, nil
	}
	var m storedMeta
	if err := json.Unmarshal(raw, &m); err != nil {
		return event.Metadata{}, fmt.Errorf("event metadata: %w", err)
	}
	return event.Metadata(m), nil
}

// decodeFlatMeta reads metadata the way the store writes it and the
// database prints it back: one flat object of plain strings with the
// exact key names. Every projection runner decodes the metadata of every
// event it reads, so this is a hot path where encoding/json's reflection
// showed in profiles. Anything else (escapes, other keys or value types,
// bytes that would need checking) returns ok false, and json.Unmarshal,
// with its case-insensitive keys and UTF-8 repair, has the last word.
func decodeFlatMeta(b []byte) (m event.Metadata, ok bool) {
	raw := string(b) // one copy: the values are slices of it
	i := 0
	space := func() {
		for i < len(raw) && (raw[i] == ' ' || raw[i] == '\t' || raw[i] == '\n' || raw[i] == '\r') {
			i++
		}
	}
	// str reads a string without escapes, control or non-ASCII bytes.
	str := func() (string, bool) {
		if i >= len(raw) || raw[i] != '"' {
			return "", false
		}
		start := i + 1
		for j := start; j < len(raw); j++ {
			switch c := raw[j]; {
			case c == '"':
				i = j + 1
				return raw[start:j], true
			case c == '\\' || c < 0x20 || c >= 0x80:
				return "", false
			}
		}
		return "", false
	}
	space()
	if i >= len(raw) || raw[i] != '{' {
		return m, false
	}
	i++
	space()
	if i < len(raw) && raw[i] == '}' {
		i++
		space()
		return m, i == len(raw)
	}
	for {
		space()
		key, ok := str()
		if !ok {
			return m, false
		}
		space()
		if i >= len(raw) || raw[i] != ':' {
			return m, false
		}
		i++
		space()
		val, ok := str()
		if !ok {
			return m, false
		}
		switch key {
		case "eventId":
			m.EventID = val
		case "actor":
			m.Actor = val
		case "app":
			m.App = val
		case "correlationId":
			m.CorrelationID = val
		case "causationId":
			m.CausationID = val
		case "clientIp":
			m.ClientIP = val
		default:
			return m, false
		}
		space()
		if i >= len(raw) {
			return m, false
		}
		switch raw[i] {
		case ',':
			i++
		case '}':
			i++
			space()
			return m, i == len(raw)
		default:
			return m, false
		}
	}
}

// AppendTx is Append inside the caller's transaction (or on any querier). It
// does not wake readers: the caller's commit is what makes events visible.
func (s *EventStore) AppendTx(ctx context.Context, q Querier, stream string, expectedVersion int64, events ...event.Event) (event.AppendResult, error) {
	if len(events) == 0 {
		return event.AppendResult{}, errors.New("append: no events")
	}
	if stream == "" {
		return event.AppendResult{}, errors.New("append: empty stream id")
	}
	p, err := s.prepare(stream, expectedVersion, events)
	if err != nil {
		return event.AppendResult{}, err
	}
	sql, args, ids, n := p.sql, p.args, p.ids, len(events)
	// Inside a caller's transaction a failed statement would abort it, so
	// guard with a savepoint there; on the pool the statement is its own
	// transaction.
	_, inTx := q.(pgx.Tx)
	if inTx {
		if _, err := q.Exec(ctx, "SAVEPOINT cms_append"); err != nil {
			return event.AppendResult{}, err
		}
	}
	rows, err := q.Query(ctx, sql, args...)
	var res event.AppendResult
	count := 0
	if err == nil {
		count, err = includeRows(rows, &res)
	}
	if inTx {
		if err != nil {
			if _, rbErr := q.Exec(ctx, "ROLLBACK TO SAVEPOINT cms_append"); rbErr != nil {
				return event.AppendResult{}, errors.Join(err, rbErr)
			}
		} else if _, err := q.Exec(ctx, "RELEASE SAVEPOINT cms_append"); err != nil {
			return event.AppendResult{}, err
		}
	}
	var pgErr *pgconn.PgError
	isPg := errors.As(err, &pgErr)
	uniqueViolation := isPg && pgErr.Code == "23505"
	if err != nil && isPg && dataRejected(pgErr.Code) {
		return event.AppendResult{}, fmt.Errorf("append to %s: %w: %w", stream, event.ErrDataRejected, err)
	}
	if err != nil && !uniqueViolation {
		return event.AppendResult{}, fmt.Errorf("append to %s: %w", stream, err)
	}
	if err == nil && count == n {
		return res, nil
	}
	// Nothing was written: either a retry of an append that landed (all
	// event ids known), or a version conflict.
	if dup, ok, derr := s.duplicate(ctx, q, stream, ids); derr != nil {
		return event.AppendResult{}, derr
	} else if ok {
		return dup, nil
	}
	if uniqueViolation && pgErr.ConstraintName == "events_event_id_key" {
		return event.AppendResult{}, fmt.Errorf("append to %s: some event ids already stored, others not: %w", stream, err)
	}
	actual, verr := s.StreamVersion(ctx, q, stream)
	if verr != nil {
		return event.AppendResult{}, verr
	}
	return event.AppendResult{}, &event.ConflictError{StreamID: stream, Expected: expectedVersion, Actual: actual}
}

// dataRejected reports whether SQLSTATE code refuses the data itself:
// class 22, data exception (a NUL character, a number jsonb cannot hold),
// or class 54, program limit exceeded (a value too large).
func dataRejected(code string) bool {
	return strings.HasPrefix(code, "22") || strings.HasPrefix(code, "54")
}

// preparedAppend is one stream's append statement, ready to run.
type preparedAppend struct {
	sql  string
	args []any
	ids  []uuid.UUID
}

// encodedEvents are events in the column arrays the append statements
// take (FlatArray: pgx encodes it without reflection).
type encodedEvents struct {
	ids      pgtype.FlatArray[uuid.UUID]
	types    []string
	versions []int32
	datas    pgtype.FlatArray[[]byte]
	metas    pgtype.FlatArray[[]byte]
}

// includeRows reads the rows an append statement returns (transaction id,
// global position and stream version of each event written) into res, and
// closes them. It returns how many it read, or the first error.
func includeRows(rows pgx.Rows, res *event.AppendResult) (int, error) {
	defer rows.Close()
	count := 0
	for rows.Next() {
		var tx, pos, ver int64
		if err := rows.Scan(&tx, &pos, &ver); err != nil {
			return count, err
		}
		count++
		res.Include(event.Position{TxID: uint64(tx), Pos: pos}, ver)
	}
	return count, rows.Err()
}

// newEncodedEvents has room for n events.
func newEncodedEvents(n int) encodedEvents {
	return encodedEvents{ids: make([]uuid.UUID, 0, n), types: make([]string, 0, n), versions: make([]int32, 0, n),
		datas: make([][]byte, 0, n), metas: make([][]byte, 0, n)}
}

// encode appends events to enc: an event id (a new UUIDv7 if the event has
// none), the registered type, schema version and data, and the metadata.
func (s *EventStore) encode(enc *encodedEvents, events []event.Event) error {
	for _, ev := range events {
		st, err := s.codec.EncodeEvent(ev)
		if err != nil {
			return err
		}
		m := ev.Meta
		meta, err := json.Marshal(storedMeta{EventID: st.ID.String(), Actor: m.Actor, App: m.App,
			CorrelationID: m.CorrelationID, CausationID: m.CausationID, ClientIP: m.ClientIP})
		if err != nil {
			return err
		}
		enc.ids = append(enc.ids, st.ID)
		enc.types = append(enc.types, st.Type)
		enc.versions = append(enc.versions, int32(st.Version))
		enc.datas = append(enc.datas, st.Data)
		enc.metas = append(enc.metas, meta)
	}
	return nil
}

// prepare encodes events and picks the statement for the expected version.
func (s *EventStore) prepare(stream string, expectedVersion int64, events []event.Event) (preparedAppend, error) {
	n := len(events)
	enc := newEncodedEvents(n)
	if err := s.encode(&enc, events); err != nil {
		return preparedAppend{}, err
	}
	var sql string
	args := []any{stream, int64(n), enc.ids, enc.types, enc.versions, enc.datas, enc.metas}
	switch {
	case expectedVersion == event.NoStream:
		sql = appendNew
	case expectedVersion == event.AnyVersion:
		sql = appendAny
	case expectedVersion > 0:
		sql = appendAt
		args = append(args, expectedVersion)
	default:
		return preparedAppend{}, fmt.Errorf("append: invalid expected version %d", expectedVersion)
	}
	return preparedAppend{sql: sql, args: args, ids: enc.ids}, nil
}

func (s *EventStore) duplicate(ctx context.Context, q Querier, stream string, ids []uuid.UUID) (event.AppendResult, bool, error) {
	rows, err := q.Query(ctx, `SELECT transaction_id::text::bigint, global_position, stream_version, stream_id
		FROM events WHERE event_id = ANY($1)`, ids)
	if err != nil {
		return event.AppendResult{}, false, err
	}
	defer rows.Close()
	var res event.AppendResult
	count := 0
	for rows.Next() {
		var tx, pos, ver int64
		var sid string
		if err := rows.Scan(&tx, &pos, &ver, &sid); err != nil {
			return event.AppendResult{}, false, err
		}
		if sid != stream {
			return event.AppendResult{}, false, fmt.Errorf("append to %s: event id already used in stream %s", stream, sid)
		}
		count++
		res.Include(event.Position{TxID: uint64(tx), Pos: pos}, ver)
	}
	if err := rows.Err(); err != nil {
		return event.AppendResult{}, false, err
	}
	res.Duplicate = true
	return res, count == len(ids), nil
}

// StreamVersion returns the current version of a stream (0 if it does not
// exist).
func (s *EventStore) StreamVersion(ctx context.Context, q Querier, stream string) (int64, error) {
	if q == nil {
		q = s.pool
	}
	var v int64
	err := q.QueryRow(ctx, `SELECT version FROM streams WHERE stream_id = $1`, stream).Scan(&v)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	return v, err
}

// selectColumns: the output column of transaction_id::text::bigint is
// named transaction_id too, so ORDER BY must qualify events.transaction_id
// (or it sorts the whole rest of the log instead of using the index).
// The metadata fields are extracted by the server: one JSON parse per row
// saved on the hot catch-up path.
const selectColumns = `transaction_id::text::bigint, global_position, stream_id, stream_version,
	event_type, schema_version, data, recorded_at,
	COALESCE(metadata->>'eventId', ''), COALESCE(metadata->>'actor', ''), COALESCE(metadata->>'app', ''),
	COALESCE(metadata->>'correlationId', ''), COALESCE(metadata->>'causationId', ''), COALESCE(metadata->>'clientIp', '')`

// ReadStream returns the events of one stream with a version above after,
// in version order. A missing stream reads as empty.
func (s *EventStore) ReadStream(ctx context.Context, stream string, after int64) ([]event.Recorded, error) {
	rows, err := s.pool.Query(ctx, `SELECT `+selectColumns+` FROM events
		WHERE stream_id = $1 AND stream_version > $2 ORDER BY stream_version`, stream, after)
	if err != nil {
		return nil, fmt.Errorf("read stream %s: %w", stream, err)
	}
	return scanRecorded(rows, s.codec, 0)
}

// ReadAll returns up to limit committed events after the given position,
// in log order. It never returns an event while an older transaction that
// could still commit before it is in flight, so a reader that follows the
// log never skips an event. Each call is one index range scan, whatever the
// distance to the head.
func (s *EventStore) ReadAll(ctx context.Context, after event.Position, limit int) ([]event.Recorded, error) {
	rows, err := s.readAllRows(ctx, s.pool, after, limit)
	if err != nil {
		return nil, err
	}
	return scanRecorded(rows, s.codec, min(limit, 10000))
}

// ReadAllRaw is ReadAll without decoding: Data holds the stored JSON as
// json.RawMessage. Projections that apply events set-wise use it to skip
// the decode step for events they ignore.
func (s *EventStore) ReadAllRaw(ctx context.Context, q Querier, after event.Position, limit int) ([]event.Recorded, error) {
	if q == nil {
		q = s.pool
	}
	rows, err := s.readAllRows(ctx, q, after, limit)
	if err != nil {
		return nil, err
	}
	return scanRecorded(rows, nil, min(limit, 10000))
}

func (s *EventStore) readAllRows(ctx context.Context, q Querier, after event.Position, limit int) (pgx.Rows, error) {
	rows, err := q.Query(ctx, `SELECT `+selectColumns+` FROM events
		WHERE (transaction_id, global_position) > ($1::text::xid8, $2)
		  AND transaction_id < pg_snapshot_xmin(pg_current_snapshot())
		ORDER BY events.transaction_id, events.global_position
		LIMIT $3`, fmt.Sprint(after.TxID), after.Pos, limit)
	if err != nil {
		return nil, fmt.Errorf("read all: %w", err)
	}
	return rows, nil
}

// Types lists the event types the store's codec can decode.
func (s *EventStore) Types() []string { return s.codec.Names() }

// Decode turns raw data (from ReadAllRaw) into the domain event.
func (s *EventStore) Decode(r event.Recorded) (event.Recorded, error) {
	raw, ok := r.Data.(json.RawMessage)
	if !ok {
		return r, nil
	}
	d, err := s.codec.Decode(r.Type, r.SchemaVersion, raw)
	if err != nil {
		return r, err
	}
	r.Data = d
	return r, nil
}

func scanRecorded(rows pgx.Rows, codec *eventcodec.Registry, sizeHint int) ([]event.Recorded, error) {
	defer rows.Close()
	out := make([]event.Recorded, 0, sizeHint)
	for rows.Next() {
		var (
			r    event.Recorded
			tx   int64
			data []byte
			sv   int32
			m    = &r.Meta
		)
		if err := rows.Scan(&tx, &r.Pos, &r.StreamID, &r.StreamVersion, &r.Type, &sv, &data, &r.RecordedAt,
			&m.EventID, &m.Actor, &m.App, &m.CorrelationID, &m.CausationID, &m.ClientIP); err != nil {
			return nil, err
		}
		r.TxID = uint64(tx)
		r.SchemaVersion = int(sv)
		if codec != nil {
			d, err := codec.Decode(r.Type, r.SchemaVersion, data)
			if err != nil {
				return nil, fmt.Errorf("event %d: %w", r.Pos, err)
			}
			r.Data = d
		} else {
			r.Data = json.RawMessage(data)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Last returns the position of the newest committed event, whether or not
// readers of the log can see it yet (an older transaction still open
// hides it from them): a projection that has reached it has applied every
// event committed so far.
func (s *EventStore) Last(ctx context.Context) (event.Position, error) {
	var tx, pos int64
	err := s.pool.QueryRow(ctx, `SELECT transaction_id::text::bigint, global_position FROM events
		ORDER BY events.transaction_id DESC, events.global_position DESC LIMIT 1`).Scan(&tx, &pos)
	if errors.Is(err, pgx.ErrNoRows) {
		return event.Position{}, nil
	}
	return event.Position{TxID: uint64(tx), Pos: pos}, err
}

// Head returns the position of the newest committed event visible to a
// reader following the log.
func (s *EventStore) Head(ctx context.Context) (event.Position, error) {
	var tx, pos int64
	err := s.pool.QueryRow(ctx, `SELECT transaction_id::text::bigint, global_position FROM events
		WHERE transaction_id < pg_snapshot_xmin(pg_current_snapshot())
		ORDER BY events.transaction_id DESC, events.global_position DESC LIMIT 1`).Scan(&tx, &pos)
	if errors.Is(err, pgx.ErrNoRows) {
		return event.Position{}, nil
	}
	return event.Position{TxID: uint64(tx), Pos: pos}, err
}
