-- +goose Up
-- Loyalty account states, folded from their streams (see
-- commands/loyalty.Snapshots): a command on an account that is not cached
-- reads the snapshot and the events after version, not the whole stream.
-- A cache of the log: the rows may be deleted at any time. layout is
-- domain/loyalty.SnapshotLayout; rows of another layout are not read.
-- state is the snapshot encoded with encoding/gob.
CREATE TABLE loyalty_snapshots (
    account    text   PRIMARY KEY,
    layout     int    NOT NULL,
    version    bigint NOT NULL,
    tx_id      xid8   NOT NULL,
    position   bigint NOT NULL,
    state      bytea  NOT NULL,
    saved_at   timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE loyalty_snapshots;
