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
