package postgres

import (
	"bytes"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	cmdloyalty "github.com/halocms/halocms/commands/loyalty"
	"github.com/halocms/halocms/domain/loyalty"
)

// LoyaltySnapshots keeps loyalty account snapshots (table
// loyalty_snapshots), one per account, encoded with encoding/gob: an
// account keeps every idempotency key it recorded, so a snapshot grows
// with its history, and gob decodes one of 1,000 transactions in about
// half the time encoding/json takes (go test -bench EarnLongHistory
// ./commands/loyalty: 338 against 200 commands/s without the cache).
type LoyaltySnapshots struct{ pool *pgxpool.Pool }

var _ cmdloyalty.Snapshots = (*LoyaltySnapshots)(nil)

// NewLoyaltySnapshots returns the snapshot store over pool.
func NewLoyaltySnapshots(pool *pgxpool.Pool) *LoyaltySnapshots {
	if pool == nil {
		panic("postgres.NewLoyaltySnapshots: nil pool")
	}
	return &LoyaltySnapshots{pool: pool}
}

// LoadSnapshot returns the account's snapshot of the current layout.
func (s *LoyaltySnapshots) LoadSnapshot(ctx context.Context, account string) (cmdloyalty.Snapshot, bool, error) {
	snap := cmdloyalty.Snapshot{Account: account}
	var (
		txID  string
		state []byte
	)
	err := s.pool.QueryRow(ctx, `SELECT version, tx_id::text, position, state FROM loyalty_snapshots
		WHERE account = $1 AND layout = $2`, account, loyalty.SnapshotLayout).
		Scan(&snap.Version, &txID, &snap.Last.Pos, &state)
	if errors.Is(err, pgx.ErrNoRows) {
		return snap, false, nil
	}
	if err != nil {
		return snap, false, fmt.Errorf("load snapshot of %s: %w", account, err)
	}
	if snap.Last.TxID, err = strconv.ParseUint(txID, 10, 64); err != nil {
		return snap, false, fmt.Errorf("snapshot of %s: transaction id %q: %w", account, txID, err)
	}
	if err := gob.NewDecoder(bytes.NewReader(state)).Decode(&snap.State); err != nil {
		return snap, false, fmt.Errorf("snapshot of %s: %w", account, err)
	}
	return snap, true, nil
}

// SaveSnapshot stores snap unless the account has a newer snapshot of the
// same layout, or one of a later layout (a newer version of the program
// runs beside this one); one of an earlier layout is replaced.
func (s *LoyaltySnapshots) SaveSnapshot(ctx context.Context, snap cmdloyalty.Snapshot) error {
	var buf bytes.Buffer
	err := gob.NewEncoder(&buf).Encode(snap.State)
	state := buf.Bytes()
	if err != nil {
		return fmt.Errorf("encode snapshot of %s: %w", snap.Account, err)
	}
	_, err = s.pool.Exec(ctx, `INSERT INTO loyalty_snapshots AS s (account, layout, version, tx_id, position, state)
		VALUES ($1, $2, $3, $4::text::xid8, $5, $6)
		ON CONFLICT (account) DO UPDATE SET layout = EXCLUDED.layout, version = EXCLUDED.version, tx_id = EXCLUDED.tx_id,
			position = EXCLUDED.position, state = EXCLUDED.state, saved_at = now()
		WHERE s.layout < EXCLUDED.layout OR (s.layout = EXCLUDED.layout AND s.version < EXCLUDED.version)`,
		snap.Account, loyalty.SnapshotLayout, snap.Version, strconv.FormatUint(snap.Last.TxID, 10), snap.Last.Pos, state)
	if err != nil {
		return fmt.Errorf("save snapshot of %s: %w", snap.Account, err)
	}
	return nil
}
