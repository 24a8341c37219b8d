-- +goose Up
-- An event is stamped by the statement that appends it, not when its
-- transaction began: a transaction that decided for seconds (a hold that
-- waited for its lock or for a read model) would otherwise commit events
-- stamped seconds in the past, and readers that trust "every event stamped
-- before T is visible once the transactions open at T are over" (a content
-- sync's syncTimestamp, see projections.Runtime.Horizon) need the stamp to
-- follow the log's order, which a transaction takes at its first write.
-- Every event of one append still shares its stamp. Events recorded before
-- keep theirs. The change takes a brief exclusive lock on events: rather
-- than queue every append behind a long reader while it waits for it, the
-- migration fails after 10 s (run it again later).
SET LOCAL lock_timeout = '10s';
ALTER TABLE events ALTER COLUMN recorded_at SET DEFAULT statement_timestamp();

-- +goose Down
ALTER TABLE events ALTER COLUMN recorded_at SET DEFAULT now();
