package projection

import (
	"context"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/halocms/halocms/projections"
)

// Planner statistics. A projection's tables start empty and grow as it
// applies the log, and PostgreSQL keeps the plan it made for a session's
// prepared statement until the statistics of the tables it reads change.
// With autovacuum off or late (a bulk import, a rebuild, catching up with a
// long log), a plan made on an empty table outlives the table's growth: the
// loyalty projection's update of its accounts by key was a sequential scan
// and a hash join, which read all 10,000 accounts in every live batch.
// Searches need statistics too (a sort that walks an index instead of
// sorting every match is chosen from them). So the runtime has ANALYZE run
// on a projection's tables as they grow: after 1,000 applied events, then
// each time their number grew fourfold (4,000, 16,000, ...), counted per
// schema in this process, and once more on a rebuilt version's tables
// before the switch. The planner scales older statistics to the tables'
// current size, so growth by a factor of four between them is enough. An
// ANALYZE takes about 0.45 s at a million loyalty transactions: one every
// 64,000 events (the content projector's schedule before) took a
// million-event loyalty rebuild from about 18 s to 22.5 s, fourfold steps
// to about 20 s. A live runner's ANALYZE runs after its batch committed,
// in the background: no batch, and so no write waiting for the
// projection, waits for it. Autovacuum, where it is on, keeps the
// statistics fresher still.
type growth struct {
	mu   sync.Mutex
	done map[string]int  // events applied per schema
	next map[string]int  // the count at which the next ANALYZE is due
	due  map[string]bool // an ANALYZE is due
}

// add counts n events applied to schema's tables and reports whether an
// ANALYZE of them is due.
func (g *growth) add(schema string, n int) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.init()
	done := g.done[schema] + n
	g.done[schema] = done
	next := g.next[schema]
	if next == 0 {
		next = 1000
	}
	if done >= next {
		g.next[schema] = next * 4
		g.due[schema] = true
	}
	return g.due[schema]
}

func (g *growth) init() {
	if g.done == nil {
		g.done, g.next, g.due = map[string]int{}, map[string]int{}, map[string]bool{}
	}
}

// analyzeDue runs the ANALYZE due on p's tables in schema, if one is.
func (g *growth) analyzeDue(ctx context.Context, db projections.DB, p projections.Projector, schema string) error {
	g.mu.Lock()
	due := g.due[schema]
	g.mu.Unlock()
	if !due {
		return nil
	}
	return g.analyze(ctx, db, p, schema)
}

// analyze runs ANALYZE on p's tables in schema now; if it fails, one is
// due.
func (g *growth) analyze(ctx context.Context, db projections.DB, p projections.Projector, schema string) error {
	g.mu.Lock()
	delete(g.due, schema)
	g.mu.Unlock()
	names := make([]string, len(p.Tables()))
	for i, t := range p.Tables() {
		names[i] = pgx.Identifier{schema, t}.Sanitize()
	}
	_, err := db.Exec(ctx, `ANALYZE `+strings.Join(names, ", "))
	if err != nil {
		g.mu.Lock()
		g.init()
		g.due[schema] = true
		g.mu.Unlock()
	}
	return err
}
