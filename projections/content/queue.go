package content

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// A batch's writes are queued and sent together, in one round trip, when
// the batch next reads (a read sees every write queued before it) or ends:
// a batch of a few new items (single creates over HTTP) writes its items,
// keys, typed columns and the app's version with one round trip instead of
// four.

// batchSender is the part of pgx.Tx that sends a pipeline of statements.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// exec queues a statement that returns no rows; what names it in errors.
func (p *batch) exec(what, sql string, args ...any) {
	p.queued.Queue(sql, args...)
	p.labels = append(p.labels, what)
}

// flush sends the queued statements, in order.
func (p *batch) flush(ctx context.Context) error {
	n := p.queued.Len()
	if n == 0 {
		return nil
	}
	q, labels := p.queued, p.labels
	p.queued, p.labels = pgx.Batch{}, nil
	s, ok := p.db.(batchSender)
	if !ok || n == 1 {
		for i, st := range q.QueuedQueries {
			if _, err := p.db.Exec(ctx, st.SQL, st.Arguments...); err != nil {
				return fmt.Errorf("content projection, %s: %w", labels[i], err)
			}
		}
		return nil
	}
	br := s.SendBatch(ctx, &q)
	for i := range n {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return fmt.Errorf("content projection, %s: %w", labels[i], err)
		}
	}
	return br.Close()
}
