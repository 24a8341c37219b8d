package postgres

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
)

// TestProbeCountsSpareConnections: a local server that cannot spare the
// connections asked for is passed over (the suite then runs on the private
// cluster), and the count follows the connections others hold.
func TestProbeCountsSpareConnections(t *testing.T) {
	ctx := context.Background()
	url := os.Getenv("DATABASE_URL")
	if url == "" {
		var err error
		if url, err = EnsureServer(ctx, DefaultDataDir(), 0, testLogger(t)); err != nil {
			t.Fatal(err)
		}
	}
	free := func() int {
		conn, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		defer conn.Close(ctx)
		n, err := freeConnections(ctx, conn)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	before := free()
	const held = 5
	for range held {
		c, err := pgx.Connect(ctx, url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close(ctx) })
	}
	// Other work on the server may open or close connections meanwhile:
	// the count only has to follow the five held here, give or take.
	if after := free(); after > before-held+3 || after < 0 {
		t.Fatalf("spare connections %d before, %d with %d more held", before, after, held)
	}
	if err := tryServer(ctx, url, 1); err != nil {
		t.Fatalf("a server with connections to spare is refused: %v", err)
	}
	err := tryServer(ctx, url, 100000)
	if err == nil || !strings.Contains(err.Error(), "connections to spare") {
		t.Fatalf("a server short of connections is taken: %v", err)
	}
}
