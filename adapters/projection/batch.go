package projection

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/ThreeDotsLabs/watermill/message"

	cmswm "github.com/halocms/halocms/adapters/watermill"
	"github.com/halocms/halocms/domain/event"
)

// handle buffers the messages of a batch (acknowledging them to watermill
// only lets it hand over the next one: nothing commits before the end of
// the batch) and, on the batch's last message, applies the whole batch and
// writes the checkpoint in the batch transaction. watermill's ack query
// then checks that checkpoint before committing.
func (r *runner) handle(msg *message.Message) error {
	index, size, err := cmswm.BatchPlace(msg)
	if err != nil {
		return err
	}
	if index == 1 {
		r.buf = make([]event.Recorded, 0, size) // Apply may keep the slice it got
		r.pendingStart = time.Now()
	}
	rec, err := cmswm.Recorded(msg)
	if err != nil {
		return err
	}
	r.buf = append(r.buf, rec)
	if index < size {
		msg.Ack()
		return nil
	}
	if len(r.buf) != size {
		return fmt.Errorf("incomplete batch: %d of %d events buffered", len(r.buf), size)
	}
	version, err := cmswm.ProjectionVersion(msg)
	if err != nil {
		return err
	}
	tx, ok := cmswm.PgxTx(msg)
	if !ok {
		return errors.New("message carries no pgx transaction")
	}
	timeout := r.rt.opts.ApplyTimeout
	if timeout <= 0 {
		timeout = DefaultApplyTimeout
	}
	ctx, cancel := context.WithTimeout(r.stopCtx, timeout)
	defer cancel()
	last := r.buf[len(r.buf)-1].Position // the checkpoint, parked or not
	r.readUpTo.Store(r.buf[len(r.buf)-1].RecordedAt.UnixNano())
	// Parked events are left out (read in the batch's transaction: a
	// parking committed in any process counts from the next batch).
	apply, err := claimBatch(ctx, tx, r.name, r.buf, last)
	if err != nil {
		return err
	}
	if err := r.rt.decodeAll(r.p, apply); err != nil {
		return err
	}
	schema := SchemaName(r.name, version)
	if len(apply) > 0 {
		if err := r.p.Apply(ctx, tx, schema, apply); err != nil {
			r.failed = &failedBatch{schema: schema, events: apply}
			return fmt.Errorf("apply %d events up to %s to v%d: %w", len(apply), last, version, err)
		}
	}
	r.pendingChange = nil
	if a, ok := announcementOf(r.p, apply, last); ok {
		if err := announce(ctx, tx, a); err != nil {
			return err
		}
		r.pendingChange = &a
	}
	r.pending, r.pendingSchema, r.pendingLast = len(r.buf), schema, last
	r.buf = nil
	msg.Ack()
	return nil
}

// onQuery runs after each subscriber transaction ended.
func (r *runner) onQuery(subCtx context.Context, noMsg bool, err error) {
	r.batchMu.Lock()
	n, schema, last, change := r.pending, r.pendingSchema, r.pendingLast, r.pendingChange
	r.pending, r.pendingChange = 0, nil
	var took time.Duration
	if n > 0 {
		took = time.Since(r.pendingStart)
	}
	r.batchMu.Unlock()
	r.mu.Lock()
	r.lastActivity = time.Now()
	ok := err == nil && !noMsg && n > 0
	switch {
	case err == nil:
		r.failures, r.failingEvent = 0, nil
		if ok {
			r.lastBatch = r.lastActivity
		}
	case subCtx.Err() == nil:
		// A query or ack failed (the subscriber rolled back and backs off);
		// a cancelled subscription is counted by run instead.
		r.failures++
		r.lastErr, r.lastErrAt = err, r.lastActivity
	}
	r.mu.Unlock()
	if err != nil && subCtx.Err() == nil && r.rt.opts.OnError != nil {
		r.rt.opts.OnError(r.name, err)
	}
	if n > 0 && change != nil {
		r.rt.changedHere(*change)
	}
	if ok {
		if r.recorded.Load() {
			r.rt.clearFailure(r)
		}
		r.rt.batchDone(r.name, n, took, last)
		if r.rt.growth.add(schema, n) {
			r.upkeep(schema)
		}
	}
}

// upkeep runs the ANALYZE due on the projector's tables in schema (see
// growth) in the background, one at a time: asked for while one runs, it
// runs once more after it.
func (r *runner) upkeep(schema string) {
	r.upMu.Lock()
	defer r.upMu.Unlock()
	if r.upRunning {
		r.upNext = schema
		return
	}
	r.upRunning = true
	ctx := r.stopCtx
	r.rt.wg.Add(1)
	go func() {
		defer r.rt.wg.Done()
		for {
			if err := r.rt.growth.analyzeDue(ctx, r.rt.pool, r.p, schema); err != nil && ctx.Err() == nil {
				r.rt.log.Warn("projection ANALYZE failed", "projection", r.name, "schema", schema, "err", err)
			}
			r.upMu.Lock()
			schema, r.upNext = r.upNext, ""
			r.upRunning = schema != "" && ctx.Err() == nil
			again := r.upRunning
			r.upMu.Unlock()
			if !again {
				return
			}
		}
	}()
}
