-- +goose Up
-- Idempotency-Keys of POST requests (see adapters/http's idempotency
-- middleware), shared by every server: a key is scoped by its caller (the
-- token's subject) and route (method and path). body_hash is the SHA-256
-- of the first request's body. status is NULL while the first request
-- runs (until lease_until, after which a retry may take the key over);
-- then status, header (a JSON object of header lists) and body are its
-- answer. Rows past expires_at are ignored and deleted by the cleanup.
CREATE TABLE idempotency_keys (
    caller      text        NOT NULL,
    route       text        NOT NULL,
    key         text        NOT NULL,
    body_hash   bytea       NOT NULL,
    status      int,
    header      jsonb,
    body        bytea,
    created_at  timestamptz NOT NULL DEFAULT now(),
    lease_until timestamptz NOT NULL,
    expires_at  timestamptz NOT NULL,
    PRIMARY KEY (caller, route, key)
);
CREATE INDEX idempotency_keys_expires_at ON idempotency_keys (expires_at);

-- +goose Down
DROP TABLE idempotency_keys;
