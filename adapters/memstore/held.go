package memstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/halocms/halocms/domain/event"
)

// holdWait bounds how long AppendHeld waits for another hold of its
// stream to end, as the PostgreSQL store bounds its wait for the stream's
// lock.
const holdWait = 5 * time.Second

// AppendHeld holds stream at version while decide runs, and appends what
// decide returns, all or none. Held, the stream takes no guard (see
// event.StreamAppend): an append guarded on it fails with a version
// conflict until the hold ends, and other appends go on. A stream not at
// version, or still held by another AppendHeld after holdWait, is a
// *event.ConflictError, before decide runs; decide's own error is
// returned as it is, and so is a conflict of what it returns. The
// result's Version is that of the last stream written, as the PostgreSQL
// store reports it.
func (s *Store) AppendHeld(ctx context.Context, stream string, version int64,
	decide func(ctx context.Context) ([]event.StreamAppend, error)) (event.AppendResult, error) {
	if stream == "" || version <= 0 {
		return event.AppendResult{}, fmt.Errorf("append held: a stream and a version above 0 are needed (got %q at %d)", stream, version)
	}
	release, err := s.log.hold(ctx, stream, version)
	if err != nil {
		return event.AppendResult{}, err
	}
	defer release()
	appends, err := decide(ctx)
	if err != nil {
		return event.AppendResult{}, err
	}
	writes, guards, err := s.prepareAll(appends)
	if err != nil {
		return event.AppendResult{}, fmt.Errorf("append held %s: %w", stream, err)
	}
	var res event.AppendResult
	err = s.log.locked(ctx, writes, func() error {
		p, err := s.log.plan(writes, guards, stream)
		if err != nil {
			return err
		}
		if p.dups > 0 {
			return errors.New("append: some of the decision's events are stored already")
		}
		res = s.log.apply(p, nil)
		w := p.todo[len(p.todo)-1]
		res.Version = w.from + int64(len(w.events))
		return nil
	})
	var ce *event.ConflictError
	if err != nil && !errors.As(err, &ce) {
		return event.AppendResult{}, fmt.Errorf("append held %s: %w", stream, err)
	}
	return res, err
}

// hold marks stream held, once no other AppendHeld holds it (waiting up
// to holdWait), if it is at version; release ends the hold.
func (l *memLog) hold(ctx context.Context, stream string, version int64) (release func(), err error) {
	timeout := time.NewTimer(holdWait)
	defer timeout.Stop()
	for {
		l.mu.Lock()
		held, ok := l.holds[stream]
		if !ok {
			defer l.mu.Unlock()
			if v := l.version(stream); v != version {
				return nil, &event.ConflictError{StreamID: stream, Expected: version, Actual: v}
			}
			done := make(chan struct{})
			l.holds[stream] = done
			return func() {
				l.mu.Lock()
				delete(l.holds, stream)
				l.mu.Unlock()
				close(done)
			}, nil
		}
		l.mu.Unlock()
		select {
		case <-held:
		case <-timeout.C:
			return nil, &event.ConflictError{StreamID: stream, Expected: version, Actual: version}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}
