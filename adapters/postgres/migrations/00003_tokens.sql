-- +goose Up
-- OAuth tokens, stored only as SHA-256 hashes of the bearer strings. An
-- access token and a refresh token are issued together in one family;
-- refreshing spends the refresh token and issues a new pair in the same
-- family, and presenting a spent refresh token revokes the whole family.
CREATE TABLE oauth_tokens (
    token_hash   bytea       PRIMARY KEY,
    kind         text        NOT NULL CHECK (kind IN ('access', 'refresh')),
    subject_kind text        NOT NULL CHECK (subject_kind IN ('user', 'app')),
    subject_id   text        NOT NULL,
    family_id    text        NOT NULL,
    scope        text        NOT NULL DEFAULT '',
    issued_at    timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL,
    spent_at     timestamptz,            -- refresh tokens: when used (once)
    revoked_at   timestamptz,
    client_ip    inet,
    CHECK (length(token_hash) = 32),
    CHECK (spent_at IS NULL OR kind = 'refresh')
);
CREATE INDEX oauth_tokens_family_idx ON oauth_tokens (family_id);
CREATE INDEX oauth_tokens_subject_idx ON oauth_tokens (subject_kind, subject_id);
CREATE INDEX oauth_tokens_expires_idx ON oauth_tokens (expires_at);

-- Failed sign-in attempts per key ("user:<name>", "ip:<addr>",
-- "client:<id>") in a fixed window.
CREATE TABLE login_failures (
    key          text        PRIMARY KEY,
    window_start timestamptz NOT NULL,
    count        int         NOT NULL
);

-- +goose Down
DROP TABLE login_failures;
DROP TABLE oauth_tokens;
