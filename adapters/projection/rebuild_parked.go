package projection

import (
	"context"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
)

// A rebuild leaves parked events out, as the live runners do: the new
// version equals the live one (Verify compares them), and the parked
// events wait for Replay in the new version as they did in the old one.

// withoutParked is events without those parked for the projection, read
// in tx; it notes the ones left out. An event to apply that did not decode
// (in bad) fails it.
func (r *rebuild) withoutParked(ctx context.Context, tx pgx.Tx, events []event.Recorded, bad map[event.Position]error) ([]event.Recorded, error) {
	kept, skipped, err := withoutParked(ctx, tx, r.name, events)
	if err != nil {
		return nil, err
	}
	r.skipped = append(r.skipped, skipped...)
	return kept, undecodable(r.p, kept, bad)
}

// sameParked checks, in the switch's transaction (which holds the live
// checkpoint row, as Park and Replay do), that the events parked up to
// the new version's position are those the rebuild left out: a parking
// or a replay during the rebuild would otherwise leave the new version
// with an event applied that the live one lacks, or without one it has.
func (r *rebuild) sameParked(ctx context.Context, tx pgx.Tx) error {
	parked, err := listParked(ctx, tx, r.name, 0)
	if err != nil {
		return err
	}
	var now []event.Position
	for _, p := range parked {
		if !r.pos.Less(p.Position) {
			now = append(now, p.Position)
		}
	}
	skipped := slices.Clone(r.skipped)
	slices.SortFunc(skipped, comparePositions)
	skipped = slices.Compact(skipped)
	if !slices.Equal(now, skipped) {
		return fmt.Errorf("events were parked or replayed during the rebuild (parked now: %v; left out by the rebuild: %v): rebuild again", now, skipped)
	}
	return nil
}

func comparePositions(a, b event.Position) int {
	switch {
	case a.Less(b):
		return -1
	case b.Less(a):
		return 1
	}
	return 0
}
