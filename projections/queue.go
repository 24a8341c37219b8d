package projections

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Queue holds a batch's writes (statements that return no rows) until
// they are sent together, in order and in one round trip (Flush): a
// projector queues what it writes and flushes before it next reads (a
// read must see every write queued before it) and when its batch ends.
type Queue struct {
	b      pgx.Batch
	labels []string // what each queued write is, for errors
}

// batchSender is the part of pgx.Tx that sends a pipeline of statements.
type batchSender interface {
	SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults
}

// Exec queues a statement; what names it in errors.
func (q *Queue) Exec(what, sql string, args ...any) {
	q.b.Queue(sql, args...)
	q.labels = append(q.labels, what)
}

// Flush sends the queued statements through db, in order, and empties the
// queue. A failed statement's error is wrapped with its name.
func (q *Queue) Flush(ctx context.Context, db DB) error {
	n := q.b.Len()
	if n == 0 {
		return nil
	}
	b, labels := q.b, q.labels
	q.b, q.labels = pgx.Batch{}, nil
	s, ok := db.(batchSender)
	if !ok || n == 1 {
		for i, st := range b.QueuedQueries {
			if _, err := db.Exec(ctx, st.SQL, st.Arguments...); err != nil {
				return fmt.Errorf("%s: %w", labels[i], err)
			}
		}
		return nil
	}
	br := s.SendBatch(ctx, &b)
	for i := range n {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return fmt.Errorf("%s: %w", labels[i], err)
		}
	}
	return br.Close()
}
