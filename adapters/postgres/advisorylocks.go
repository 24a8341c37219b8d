package postgres

import (
	"context"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	cmdpush "github.com/halocms/halocms/commands/push"
)

// AdvisoryLocks claims keys with PostgreSQL session-level advisory locks
// (pg_try_advisory_lock on a 64-bit hash of the key), all held on one
// dedicated connection taken from the pool: when the process dies, the
// connection closes and PostgreSQL releases its locks, so another process
// (another server's push dispatcher) can resume.
//
// If that connection breaks, its locks are gone while their dispatches
// go on; the dispatches' expected-version fencing then keeps a second
// dispatcher from recording the same devices.
type AdvisoryLocks struct {
	pool *pgxpool.Pool

	mu   sync.Mutex
	conn *pgxpool.Conn
	gen  int // bumped with every new connection
}

// The push dispatcher claims each schedule with one.
var _ cmdpush.Locker = (*AdvisoryLocks)(nil)

// NewAdvisoryLocks returns a locker over pool; Close gives its connection
// back.
func NewAdvisoryLocks(pool *pgxpool.Pool) *AdvisoryLocks {
	if pool == nil {
		panic("postgres.NewAdvisoryLocks: nil pool")
	}
	return &AdvisoryLocks{pool: pool}
}

// TryLock takes the lock on key if no other session holds it. The lock is
// re-entrant within these AdvisoryLocks (one session): callers keep their
// own claims apart.
func (l *AdvisoryLocks) TryLock(ctx context.Context, key string) (release func(), ok bool, err error) {
	if err := ctx.Err(); err != nil {
		return nil, false, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		c, err := l.pool.Acquire(ctx)
		if err != nil {
			return nil, false, err
		}
		l.conn = c
		l.gen++
	}
	// Not under the caller's context: cancelling a query closes its
	// connection, which would release every other dispatch's lock too.
	qctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
	defer cancel()
	if err := l.conn.QueryRow(qctx, `SELECT pg_try_advisory_lock(hashtextextended($1, 0))`, key).Scan(&ok); err != nil {
		l.drop()
		return nil, false, err
	}
	if !ok {
		return nil, false, nil
	}
	gen := l.gen
	var once sync.Once
	return func() { once.Do(func() { l.unlock(gen, key) }) }, true, nil
}

func (l *AdvisoryLocks) unlock(gen int, key string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil || l.gen != gen {
		return // that connection, and its locks, are gone
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock(hashtextextended($1, 0))`, key); err != nil {
		l.drop()
	}
}

// drop closes a connection in doubt instead of returning it to the pool
// (where it would keep its locks).
func (l *AdvisoryLocks) drop() {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_ = l.conn.Conn().Close(ctx)
	l.conn.Release()
	l.conn = nil
}

// Close releases every lock and gives the connection back to the pool.
func (l *AdvisoryLocks) Close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.conn == nil {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := l.conn.Exec(ctx, `SELECT pg_advisory_unlock_all()`); err != nil {
		l.drop()
		return
	}
	l.conn.Release()
	l.conn = nil
}
