package auth

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// Settings reads the configuration overrides stored by the management API (a JSON object) and its version.
func (s *Store) Settings(ctx context.Context) (json.RawMessage, int64, error) {
	var raw json.RawMessage
	var version int64
	if err := s.pool.QueryRow(ctx, `SELECT settings, version FROM auth.pgreflect_config`).Scan(&raw, &version); err != nil {
		return nil, 0, fmt.Errorf("read auth settings: %w", err)
	}
	return raw, version, nil
}

// UpdateSettings changes the stored overrides under a row lock: update receives the current object and
// returns the new one (or an error, which changes nothing). Every instance reads the new row on its next
// request.
func (s *Store) UpdateSettings(ctx context.Context, update func(current json.RawMessage) (json.RawMessage, error)) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		var raw json.RawMessage
		if err := tx.QueryRow(ctx, `SELECT settings FROM auth.pgreflect_config FOR UPDATE`).Scan(&raw); err != nil {
			return fmt.Errorf("read auth settings: %w", err)
		}
		next, err := update(raw)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `UPDATE auth.pgreflect_config SET settings = $1, version = version + 1, updated_at = now()`,
			string(next)); err != nil {
			return fmt.Errorf("write auth settings: %w", err)
		}
		return audit(ctx, tx, nil, "auth_config_updated", "config", nil)
	})
}

// GraphQLVersion reads the pg_graphql behaviour version the project pins, "" when none is stored yet. q is
// a connection or pool that may read schema auth; a database without pgreflect's auth schema has none.
func GraphQLVersion(ctx context.Context, q querier) (string, error) {
	var exists bool
	if err := q.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_attribute WHERE attrelid = to_regclass('auth.pgreflect_config')
		AND attname = 'graphql_version' AND NOT attisdropped)`).Scan(&exists); err != nil || !exists {
		return "", wrapVersionErr(err)
	}
	return storedGraphQLVersion(ctx, q)
}

// storedGraphQLVersion reads the version from a database whose auth schema is migrated.
func storedGraphQLVersion(ctx context.Context, q querier) (string, error) {
	var v *string
	if err := q.QueryRow(ctx, `SELECT graphql_version FROM auth.pgreflect_config`).Scan(&v); err != nil || v == nil {
		return "", wrapVersionErr(err)
	}
	return *v, nil
}

func wrapVersionErr(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("read the GraphQL version: %w", err)
}

// GraphQLVersion reads the pinned pg_graphql behaviour version, "" when none is stored yet: one query, as the
// store's auth schema is migrated (every instance asks twice a second, see authapi.FollowGraphQLVersion).
func (s *Store) GraphQLVersion(ctx context.Context) (string, error) {
	return storedGraphQLVersion(ctx, s.pool)
}

// SetGraphQLVersion pins the pg_graphql behaviour version.
func (s *Store) SetGraphQLVersion(ctx context.Context, v string) error {
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `UPDATE auth.pgreflect_config SET graphql_version = $1, updated_at = now()`, v); err != nil {
			return fmt.Errorf("write the GraphQL version: %w", err)
		}
		return audit(ctx, tx, nil, "graphql_version_updated", "config", map[string]any{"version": v})
	})
}
