-- +goose Up
-- Trigram indexes back the content search's "like" operator.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

-- +goose Down
DROP EXTENSION IF EXISTS pg_trgm;
