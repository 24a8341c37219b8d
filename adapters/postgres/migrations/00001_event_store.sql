-- +goose Up
-- The event log: the single source of truth.
CREATE TABLE events (
    global_position bigint GENERATED ALWAYS AS IDENTITY,
    transaction_id  xid8        NOT NULL DEFAULT pg_current_xact_id(),
    stream_id       text        NOT NULL,
    stream_version  bigint      NOT NULL,
    event_id        uuid        NOT NULL,
    event_type      text        NOT NULL,
    schema_version  int         NOT NULL,
    data            jsonb       NOT NULL,
    metadata        jsonb       NOT NULL,
    recorded_at     timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (transaction_id, global_position),
    CONSTRAINT events_stream_version_key UNIQUE (stream_id, stream_version),
    CONSTRAINT events_event_id_key UNIQUE (event_id)
);

-- Current version per stream: the row lock serialises appends to one stream
-- (and only to that stream) and makes the expected-version check atomic.
CREATE TABLE streams (
    stream_id text PRIMARY KEY,
    version   bigint NOT NULL
);

-- Events are never updated or deleted.
-- +goose StatementBegin
CREATE FUNCTION events_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'events are immutable (% refused)', TG_OP;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER events_no_update_delete BEFORE UPDATE OR DELETE ON events
    FOR EACH ROW EXECUTE FUNCTION events_immutable();
CREATE TRIGGER events_no_truncate BEFORE TRUNCATE ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_immutable();

-- Projection checkpoints: how far each projection got, written in the same
-- transaction as its read-model writes. version names the set of tables the
-- projection currently writes to and readers read from.
CREATE TABLE projection_checkpoints (
    name       text PRIMARY KEY,
    version    int         NOT NULL DEFAULT 1,
    tx_id      xid8        NOT NULL DEFAULT '0',
    position   bigint      NOT NULL DEFAULT 0,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE projection_checkpoints;
DROP TABLE streams;
DROP TABLE events;
DROP FUNCTION events_immutable();
