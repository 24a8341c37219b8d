package content

import (
	"context"
	"fmt"
)

// A batch's writes are queued (projections.Queue) and sent together, in
// one round trip, when the batch next reads (a read sees every write
// queued before it) or ends: a batch of a few new items (single creates
// over HTTP) writes its items, keys, typed columns and the app's version
// with one round trip instead of four.

// exec queues a statement that returns no rows; what names it in errors.
func (p *batch) exec(what, sql string, args ...any) { p.queued.Exec(what, sql, args...) }

// flush sends the queued statements, in order.
func (p *batch) flush(ctx context.Context) error {
	if err := p.queued.Flush(ctx, p.db); err != nil {
		return fmt.Errorf("content projection, %w", err)
	}
	return nil
}
