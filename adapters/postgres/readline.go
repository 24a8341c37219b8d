package postgres

import (
	"context"

	"golang.org/x/sync/semaphore"
)

// ReadLine bounds the hot reads that run in PostgreSQL at once (content
// searches, loyalty account reads); the others wait in line, first come
// first served. Under load, reads sharing the CPUs all slow down together
// and the slowest wait many times the average; in line, each runs nearly
// alone and the p99 stays close to the mean.
type ReadLine struct {
	places *semaphore.Weighted // nil: no bound
	size   int64
}

// NewReadLine returns a line of size places (no bound when size <= 0).
func NewReadLine(size int) *ReadLine {
	if size <= 0 {
		return &ReadLine{}
	}
	return &ReadLine{places: semaphore.NewWeighted(int64(size)), size: int64(size)}
}

// Enter waits for weight places (at most the line's size) and returns
// what gives them back.
func (l *ReadLine) Enter(ctx context.Context, weight int64) (leave func(), err error) {
	if l.places == nil {
		return func() {}, nil
	}
	weight = min(weight, l.size)
	if err := l.places.Acquire(ctx, weight); err != nil {
		return nil, err
	}
	return func() { l.places.Release(weight) }, nil
}
