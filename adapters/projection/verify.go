package projection

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/projections"
)

// verify brings the old version from its checkpoint live to pos (what its
// live runner would have done next, parked events left out) and compares
// every table.
func (rt *Runtime) verify(ctx context.Context, tx pgx.Tx, p projections.Projector, oldSchema, newSchema string, live, pos event.Position, batch int) error {
	for after := live; after.Less(pos); {
		evs, bad, err := rt.readLogLenient(ctx, tx, p, after, batch)
		if err != nil {
			return err
		}
		n := 0
		for n < len(evs) && !pos.Less(evs[n].Position) {
			n++
		}
		if n == 0 {
			return fmt.Errorf("verify: log ends at %s before %s", after, pos)
		}
		kept, _, err := withoutParked(ctx, tx, p.Name(), evs[:n])
		if err != nil {
			return err
		}
		if err := undecodable(p, kept, bad); err != nil {
			return err
		}
		if len(kept) > 0 {
			if err := p.Apply(ctx, tx, oldSchema, kept); err != nil {
				return fmt.Errorf("verify: apply to the old version: %w", err)
			}
		}
		after = evs[n-1].Position
	}
	var diffs []string
	var compared map[string][]string
	if c, ok := p.(projections.Compared); ok {
		compared = c.ComparedColumns()
	}
	for _, t := range p.Tables() {
		cols := "*"
		if cs := compared[t]; len(cs) > 0 {
			quoted := make([]string, len(cs))
			for i, c := range cs {
				quoted[i] = ident(c)
			}
			cols = strings.Join(quoted, ", ")
		}
		o, n := "SELECT "+cols+" FROM "+ident(oldSchema, t), "SELECT "+cols+" FROM "+ident(newSchema, t)
		var onlyOld, onlyNew int64
		if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM (`+o+` EXCEPT ALL `+n+`) d),
			(SELECT count(*) FROM (`+n+` EXCEPT ALL `+o+`) d)`).Scan(&onlyOld, &onlyNew); err != nil {
			return fmt.Errorf("verify %s: %w", t, err)
		}
		if onlyOld != 0 || onlyNew != 0 {
			diffs = append(diffs, fmt.Sprintf("%s: %d rows only in the live version, %d only in the rebuilt one", t, onlyOld, onlyNew))
		}
	}
	if len(diffs) > 0 {
		return fmt.Errorf("%w at %s: %s", ErrRebuildMismatch, pos, strings.Join(diffs, "; "))
	}
	return nil
}
