package postgres

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestReadLine(t *testing.T) {
	ctx := context.Background()
	free := NewReadLine(0)
	for range 3 {
		if _, err := free.Enter(ctx, 5); err != nil {
			t.Fatalf("a line without a bound refused: %v", err)
		}
	}

	line := NewReadLine(2)
	leave, err := line.Enter(ctx, 5) // clamped to the line's size: it must not wait forever
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := line.Enter(short, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a full line let a read in: %v", err)
	}
	leave()
	leave1, err := line.Enter(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	leave2, err := line.Enter(ctx, 1)
	if err != nil {
		t.Fatalf("the places given back were not free: %v", err)
	}
	leave1()
	leave2()
}
