-- +goose Up
-- Tokens of identified app users (APP+): issued by an app's login
-- endpoint, they act for one identified user within one app. app is that
-- app ('' for CMS users; an app token's own id for app tokens).
ALTER TABLE oauth_tokens ADD COLUMN app text NOT NULL DEFAULT '';
ALTER TABLE oauth_tokens DROP CONSTRAINT oauth_tokens_subject_kind_check;
ALTER TABLE oauth_tokens ADD CONSTRAINT oauth_tokens_subject_kind_check
    CHECK (subject_kind IN ('user', 'app', 'identified'));

-- +goose Down
DELETE FROM oauth_tokens WHERE subject_kind = 'identified';
ALTER TABLE oauth_tokens DROP CONSTRAINT oauth_tokens_subject_kind_check;
ALTER TABLE oauth_tokens ADD CONSTRAINT oauth_tokens_subject_kind_check
    CHECK (subject_kind IN ('user', 'app'));
ALTER TABLE oauth_tokens DROP COLUMN app;
