package main

import (
	"context"

	httpapi "github.com/halocms/halocms/adapters/http"
	"github.com/halocms/halocms/adapters/postgres"
)

// idempotencyStore is the HTTP root's IdempotencyStore over PostgreSQL.
type idempotencyStore struct{ keys *postgres.IdempotencyKeys }

var _ httpapi.IdempotencyStore = idempotencyStore{}

func (s idempotencyStore) Reserve(ctx context.Context, k httpapi.IdempotencyScope, bodyHash []byte) (httpapi.ReserveState, httpapi.StoredAnswer, error) {
	st, a, err := s.keys.Reserve(ctx, k.Caller, k.Route, k.Key, bodyHash)
	if err != nil {
		return 0, httpapi.StoredAnswer{}, err
	}
	switch st {
	case postgres.KeyAnswered:
		return httpapi.Replay, httpapi.StoredAnswer{Status: a.Status, Header: a.Header, Body: a.Body}, nil
	case postgres.KeyInFlight:
		return httpapi.InFlight, httpapi.StoredAnswer{}, nil
	case postgres.KeyMismatch:
		return httpapi.Mismatch, httpapi.StoredAnswer{}, nil
	}
	return httpapi.Reserved, httpapi.StoredAnswer{}, nil
}

func (s idempotencyStore) Complete(ctx context.Context, k httpapi.IdempotencyScope, a httpapi.StoredAnswer) error {
	return s.keys.Complete(ctx, k.Caller, k.Route, k.Key, postgres.IdempotencyAnswer{Status: a.Status, Header: a.Header, Body: a.Body})
}

func (s idempotencyStore) Release(ctx context.Context, k httpapi.IdempotencyScope) error {
	return s.keys.Release(ctx, k.Caller, k.Route, k.Key)
}
