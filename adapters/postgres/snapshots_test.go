package postgres_test

import (
	"context"
	"reflect"
	"testing"
	"time"

	"github.com/halocms/halocms/adapters/postgres"
	"github.com/halocms/halocms/adapters/postgres/pgtest"
	cmdloyalty "github.com/halocms/halocms/commands/loyalty"
	"github.com/halocms/halocms/domain/event"
	"github.com/halocms/halocms/domain/loyalty"
)

// TestLoyaltySnapshots is the contract of cmdloyalty.Snapshots: what is
// saved loads back equal, a newer snapshot is never replaced by an older
// one, and a snapshot of another layout is not loaded, and replaced
// when it is of an earlier one.
func TestLoyaltySnapshots(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	pool := pgtest.Pool(t)
	s := postgres.NewLoyaltySnapshots(pool)

	if _, ok, err := s.LoadSnapshot(ctx, "nobody"); ok || err != nil {
		t.Fatalf("an account without a snapshot: ok %v, %v", ok, err)
	}
	exp := time.Date(2026, 5, 1, 10, 30, 0, 123_000_000, time.UTC)
	state := loyalty.Snapshot{ID: "ann", App: "app1", Opened: true, Recorded: 120, Sum: 125, Txs: 4,
		Lots: []loyalty.SnapshotLot{{ID: "tx1", Points: 70, ExpiresAt: &exp}, {ID: "tx2", Points: 50}},
		Keys: map[string]loyalty.SnapshotKey{
			"e1":  {Transaction: "tx1", Kind: "earn", Amount: 100, Reason: "welcome", Reference: "ref", ExpiresAt: &exp},
			"s1":  {Transaction: "tx3", Kind: "stamps", Card: "c1", Stamps: 4, UserCards: []string{"uc1", "uc2"}, Completed: []string{"uc1"}},
			"tx4": {Transaction: "tx4", Kind: "card_redeem", Card: "uc1"},
		},
		Cards: map[string]loyalty.UserCard{"uc1": {ID: "uc1", Card: "c1", Reward: "coffee", Stamps: 3, Needed: 3, Completed: true, Redeemed: true},
			"uc2": {ID: "uc2", Card: "c1", Reward: "coffee", Stamps: 1, Needed: 3}},
		Open:     map[string]string{"c1": "uc2"},
		Stamping: "s1",
	}
	snap := cmdloyalty.Snapshot{Account: "ann", Version: 7, Last: event.Position{TxID: 1 << 40, Pos: 99}, State: state}
	if err := s.SaveSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	got, ok, err := s.LoadSnapshot(ctx, "ann")
	if !ok || err != nil || !reflect.DeepEqual(got, snap) {
		t.Fatalf("loaded %+v, %v, %v; want %+v", got, ok, err, snap)
	}

	older := snap
	older.Version, older.State.Recorded = 5, 1
	if err := s.SaveSnapshot(ctx, older); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.LoadSnapshot(ctx, "ann"); got.Version != 7 || got.State.Recorded != 120 {
		t.Fatalf("an older snapshot replaced a newer one: %+v", got)
	}
	newer := snap
	newer.Version, newer.State.Recorded = 9, 130
	if err := s.SaveSnapshot(ctx, newer); err != nil {
		t.Fatal(err)
	}
	if got, _, _ := s.LoadSnapshot(ctx, "ann"); got.Version != 9 || got.State.Recorded != 130 {
		t.Fatalf("a newer snapshot was not kept: %+v", got)
	}

	// A snapshot of a later layout (a newer version of the program, in a
	// rolling deployment) is not read, nor replaced.
	if _, err := pool.Exec(ctx, `UPDATE loyalty_snapshots SET layout = layout + 1, version = 1 WHERE account = 'ann'`); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.LoadSnapshot(ctx, "ann"); ok || err != nil {
		t.Fatalf("a snapshot of a later layout was loaded: ok %v, %v", ok, err)
	}
	if err := s.SaveSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	var layout int
	if err := pool.QueryRow(ctx, `SELECT layout FROM loyalty_snapshots WHERE account = 'ann'`).Scan(&layout); err != nil || layout != loyalty.SnapshotLayout+1 {
		t.Fatalf("a snapshot of a later layout was replaced: layout %d, %v", layout, err)
	}
	// One of an earlier layout is not read, and the next save replaces it
	// whatever its version.
	if _, err := pool.Exec(ctx, `UPDATE loyalty_snapshots SET layout = layout - 2, version = 1000 WHERE account = 'ann'`); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.LoadSnapshot(ctx, "ann"); ok || err != nil {
		t.Fatalf("a snapshot of an earlier layout was loaded: ok %v, %v", ok, err)
	}
	if err := s.SaveSnapshot(ctx, snap); err != nil {
		t.Fatal(err)
	}
	if got, ok, _ := s.LoadSnapshot(ctx, "ann"); !ok || got.Version != 7 {
		t.Fatalf("a snapshot of the current layout did not replace one of an earlier one: %+v, %v", got, ok)
	}
}
