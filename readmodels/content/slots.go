package content

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// slotColumns are the column names a module's slot map may name (see
// projections/content.Slots): t1..t6 hold texts, n1..n4 numbers.
var slotColumns = map[string]bool{"t1": true, "t2": true, "t3": true, "t4": true, "t5": true, "t6": true,
	"n1": true, "n2": true, "n3": true, "n4": true}

// moduleSlots reads which of a module's fields have a typed column in
// content_fields: field name → column. An unknown module has none.
func moduleSlots(ctx context.Context, db interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, module string) (map[string]string, error) {
	var raw []byte
	err := db.QueryRow(ctx, `SELECT slots FROM content_modules WHERE id = $1`, module).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return map[string]string{}, nil
	}
	if err != nil {
		return nil, err
	}
	return decodeSlots(raw)
}

// modulesSlots reads the slot maps of the modules that have typed
// columns, among ids (all modules when ids is nil).
func modulesSlots(ctx context.Context, db interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, ids []string) (map[string]map[string]string, error) {
	rows, err := db.Query(ctx, `SELECT id, slots FROM content_modules WHERE slots <> '{}' AND ($1::text[] IS NULL OR id = ANY($1))`, ids)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]map[string]string{}
	for rows.Next() {
		var id string
		var raw []byte
		if err := rows.Scan(&id, &raw); err != nil {
			return nil, err
		}
		m, err := decodeSlots(raw)
		if err != nil {
			return nil, err
		}
		out[id] = m
	}
	return out, rows.Err()
}

// decodeSlots decodes a content_modules.slots map, keeping only the
// entries that name one of our columns: the map's columns go into SQL
// text.
func decodeSlots(raw []byte) (map[string]string, error) {
	m := map[string]string{}
	if err := json.Unmarshal(raw, &m); err != nil {
		return nil, fmt.Errorf("module slots: %w", err)
	}
	for f, col := range m {
		if !slotColumns[col] {
			delete(m, f)
		}
	}
	return m, nil
}
