-- +goose Up
-- The pg_graphql behaviour version the project pins (gqlschema.Version); NULL until the first start stores
-- the version it began with, so that a newer pgreflect never moves a project to a newer API by itself.
ALTER TABLE auth.pgreflect_config ADD COLUMN graphql_version text;

-- +goose Down
ALTER TABLE auth.pgreflect_config DROP COLUMN graphql_version;
