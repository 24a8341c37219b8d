package memstore

import (
	"context"

	"github.com/halocms/halocms/adapters/eventcodec"
	"github.com/halocms/halocms/domain/event"
)

// WithCodec returns a store over the same events that encodes and
// decodes with codec, as another program sharing the storage would.
func (s *Store) WithCodec(codec *eventcodec.Registry) *Store { return &Store{codec: codec, log: s.log} }

// Begin appends in a transaction left open (see openTx).
func (s *Store) Begin(ctx context.Context, stream string, expectedVersion int64, events ...event.Event) (event.AppendResult, func() error, func() error, error) {
	return s.begin(ctx, stream, expectedVersion, events...)
}

// Numeric exposes the range check of numbers.
var Numeric = numeric
