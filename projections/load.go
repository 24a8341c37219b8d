package projections

import (
	"bytes"
	"context"
	"encoding/json"
)

// LoadJSON runs a query that selects one JSON document per row (say,
// row_to_json of the rows a batch is about to change) and hands each,
// decoded into a new T with numbers kept exact (json.Number), to add.
func LoadJSON[T any](ctx context.Context, db DB, sql string, args []any, add func(*T)) error {
	rows, err := db.Query(ctx, sql, args...)
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var raw []byte
		if err := rows.Scan(&raw); err != nil {
			return err
		}
		v := new(T)
		d := json.NewDecoder(bytes.NewReader(raw))
		d.UseNumber()
		if err := d.Decode(v); err != nil {
			return err
		}
		add(v)
	}
	return rows.Err()
}
