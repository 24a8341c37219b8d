package postgres

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// IdempotencyKeys keeps the Idempotency-Keys of POST requests and their
// first answers (table idempotency_keys), shared by every server. Time is
// the database's clock.
type IdempotencyKeys struct {
	pool       *pgxpool.Pool
	ttl, lease time.Duration
}

// NewIdempotencyKeys returns the store over pool: a key is kept ttl after
// its first request, and held lease while that request runs.
func NewIdempotencyKeys(pool *pgxpool.Pool, ttl, lease time.Duration) *IdempotencyKeys {
	if pool == nil || ttl <= 0 || lease <= 0 {
		panic("postgres.NewIdempotencyKeys: nil pool or no time")
	}
	return &IdempotencyKeys{pool: pool, ttl: ttl, lease: lease}
}

// IdempotencyState is what Reserve found.
type IdempotencyState int

const (
	// KeyReserved: the key was free (new, expired, or its lease over) and
	// is now held for this request.
	KeyReserved IdempotencyState = iota
	// KeyInFlight: held by a request with the same body still running.
	KeyInFlight
	// KeyAnswered: answered already, with the same body.
	KeyAnswered
	// KeyMismatch: taken with another body.
	KeyMismatch
)

// IdempotencyAnswer is a kept answer.
type IdempotencyAnswer struct {
	Status int
	Header map[string][]string
	Body   []byte
}

const reserveKey = `
INSERT INTO idempotency_keys (caller, route, key, body_hash, lease_until, expires_at)
VALUES ($1, $2, $3, $4, now() + $5 * interval '1 microsecond', now() + $6 * interval '1 microsecond')
ON CONFLICT (caller, route, key) DO UPDATE
   SET body_hash = EXCLUDED.body_hash, status = NULL, header = NULL, body = NULL, created_at = now(),
       lease_until = EXCLUDED.lease_until, expires_at = EXCLUDED.expires_at
 WHERE idempotency_keys.expires_at <= now()
    OR (idempotency_keys.status IS NULL AND idempotency_keys.lease_until <= now())
RETURNING true`

const readKey = `
SELECT body_hash, status, header, body FROM idempotency_keys
 WHERE caller = $1 AND route = $2 AND key = $3 AND expires_at > now()`

// Reserve takes the key (caller, route, key) for a request whose body
// hashes to bodyHash, or reports what holds it.
func (s *IdempotencyKeys) Reserve(ctx context.Context, caller, route, key string, bodyHash []byte) (IdempotencyState, IdempotencyAnswer, error) {
	for range 3 { // a row released or expired between the two statements: again
		var took bool
		err := s.pool.QueryRow(ctx, reserveKey, caller, route, key, bodyHash, micros(s.lease), micros(s.ttl)).Scan(&took)
		if err == nil {
			return KeyReserved, IdempotencyAnswer{}, nil
		}
		if !errors.Is(err, pgx.ErrNoRows) {
			return 0, IdempotencyAnswer{}, err
		}
		var (
			hash   []byte
			status *int
			header []byte
			a      IdempotencyAnswer
		)
		err = s.pool.QueryRow(ctx, readKey, caller, route, key).Scan(&hash, &status, &header, &a.Body)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return 0, IdempotencyAnswer{}, err
		}
		switch {
		case !bytes.Equal(hash, bodyHash):
			return KeyMismatch, IdempotencyAnswer{}, nil
		case status == nil:
			return KeyInFlight, IdempotencyAnswer{}, nil
		}
		a.Status = *status
		if len(header) > 0 {
			if err := json.Unmarshal(header, &a.Header); err != nil {
				return 0, IdempotencyAnswer{}, err
			}
		}
		return KeyAnswered, a, nil
	}
	return KeyInFlight, IdempotencyAnswer{}, nil
}

// Complete keeps the answer of a reserved key.
func (s *IdempotencyKeys) Complete(ctx context.Context, caller, route, key string, a IdempotencyAnswer) error {
	header, err := json.Marshal(a.Header)
	if err != nil {
		return err
	}
	_, err = s.pool.Exec(ctx, `UPDATE idempotency_keys SET status = $4, header = $5, body = $6
		WHERE caller = $1 AND route = $2 AND key = $3 AND status IS NULL`, caller, route, key, a.Status, header, a.Body)
	return err
}

// Release forgets a reserved key whose request did not succeed.
func (s *IdempotencyKeys) Release(ctx context.Context, caller, route, key string) error {
	_, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys
		WHERE caller = $1 AND route = $2 AND key = $3 AND status IS NULL`, caller, route, key)
	return err
}

// Cleanup deletes the expired keys and returns how many.
func (s *IdempotencyKeys) Cleanup(ctx context.Context) (int64, error) {
	tag, err := s.pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE expires_at <= now()`)
	return tag.RowsAffected(), err
}
