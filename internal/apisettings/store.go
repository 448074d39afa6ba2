// Package apisettings keeps the project's API settings on the engine's side: the pg_graphql behaviour version
// the project pins and the exposed schemas (the API's search path) stored through the management API or the
// console over supabase/config.toml's. They live in table pgreflect.api_settings (internal/dbsetup), are
// settled when a server starts (Settle), changed through the management API's routes (Routes), and followed
// by every other instance of the project (Follow).
package apisettings

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Stored are the values pgreflect.api_settings holds; a zero field: none stored.
type Stored struct {
	GraphQLVersion string
	// Schemas are the exposed schemas (Supabase's db_schema); nil: supabase/config.toml's apply.
	Schemas []string
}

// Querier is a connection or a pool.
type Querier interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// ErrNotSetUp says that the database lacks pgreflect.api_settings: it was set up by an older pgreflect.
var ErrNotSetUp = errors.New("the database has no pgreflect.api_settings (set up by an older pgreflect): run `pgreflect setup` on it again")

// Store reads and writes pgreflect.api_settings through a role that may update it (the owner of schema auth,
// or a superuser).
type Store struct {
	db Querier
}

// NewStore returns the store of db's settings.
func NewStore(db Querier) *Store { return &Store{db: db} }

// Get reads the stored settings: ErrNotSetUp when the table is missing.
func (s *Store) Get(ctx context.Context) (Stored, error) {
	return Read(ctx, s.db)
}

// Read reads the stored settings through any role (the table is readable by all): ErrNotSetUp when the table
// is missing. The commands that only show the settings (`pgreflect status`, `schema`) use it on a connection.
func Read(ctx context.Context, q Querier) (Stored, error) {
	var out Stored
	var version *string
	err := q.QueryRow(ctx, `SELECT graphql_version, db_schema FROM pgreflect.api_settings`).Scan(&version, &out.Schemas)
	var pgErr *pgconn.PgError
	switch {
	case errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000"): // undefined table or schema
		return Stored{}, ErrNotSetUp
	case errors.Is(err, pgx.ErrNoRows):
		return Stored{}, nil // someone deleted the row: nothing is stored
	case err != nil:
		return Stored{}, fmt.Errorf("read the API settings: %w", err)
	}
	if version != nil {
		out.GraphQLVersion = *version
	}
	return out, nil
}

// SetGraphQLVersion pins the pg_graphql behaviour version.
func (s *Store) SetGraphQLVersion(ctx context.Context, v string) error {
	if err := s.update(ctx, `graphql_version = $1`, v); err != nil {
		return fmt.Errorf("store the GraphQL version: %w", err)
	}
	return nil
}

// SetSchemas stores the exposed schemas; nil forgets them, so that supabase/config.toml's apply again.
func (s *Store) SetSchemas(ctx context.Context, schemas []string) error {
	if err := s.update(ctx, `db_schema = $1`, schemas); err != nil {
		return fmt.Errorf("store the exposed schemas: %w", err)
	}
	return nil
}

// update sets one column of the row, creating the row when someone deleted it.
func (s *Store) update(ctx context.Context, set string, value any) error {
	tag, err := s.db.Exec(ctx, `UPDATE pgreflect.api_settings SET `+set+`, updated_at = now()`, value)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "42P01" || pgErr.Code == "3F000") {
		return ErrNotSetUp
	}
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		_, err = s.db.Exec(ctx, `INSERT INTO pgreflect.api_settings (singleton) VALUES (true) ON CONFLICT DO NOTHING`)
		if err == nil {
			_, err = s.db.Exec(ctx, `UPDATE pgreflect.api_settings SET `+set+`, updated_at = now()`, value)
		}
	}
	return err
}
