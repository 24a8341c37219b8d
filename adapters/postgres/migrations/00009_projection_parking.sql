-- +goose Up
-- Events an operator parked for a projection (`cms projections park`):
-- its live runners and its rebuilds go on past them without applying
-- them, until `cms projections replay` applies them and deletes the rows.
-- The events stay in the log; the parking and the replay are events of
-- the log too (operations.*), with who, when and why.
CREATE TABLE projection_parked (
    projection text        NOT NULL,
    tx_id      xid8        NOT NULL,
    position   bigint      NOT NULL,
    event_id   uuid        NOT NULL,
    event_type text        NOT NULL,
    stream_id  text        NOT NULL,
    parked_at  timestamptz NOT NULL DEFAULT now(),
    parked_by  text        NOT NULL,
    reason     text        NOT NULL,
    error      text        NOT NULL DEFAULT '',
    PRIMARY KEY (projection, tx_id, position)
);

-- The last failure of each projection's live runners (any process), for
-- `cms projections status`: the checkpoint it failed at (a row whose
-- checkpoint the projection has moved past is over), the event that fails
-- when the runner could tell it, and the error.
CREATE TABLE projection_failures (
    projection     text        PRIMARY KEY,
    checkpoint_tx  xid8        NOT NULL,
    checkpoint_pos bigint      NOT NULL,
    event_tx       xid8,
    event_pos      bigint,
    error          text        NOT NULL,
    failures       int         NOT NULL,
    process        text        NOT NULL,
    since          timestamptz NOT NULL DEFAULT now(),
    at             timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE projection_failures;
DROP TABLE projection_parked;
