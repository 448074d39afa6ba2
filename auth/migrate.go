package auth

import (
	"context"
	"embed"
	"fmt"
	"io/fs"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"
)

//go:embed migrations/*.sql
var migrationFiles embed.FS

// migrationTable is goose's version table; it lives in schema auth, beside the tables it versions.
const migrationTable = "auth.schema_migrations"

// migrationLockID is the advisory-lock key that serialises migrations of several instances starting at once
// (distinct from goose's default so that other goose users in the same database do not wait on us).
const migrationLockID = 0x70677265666c6175 // "pgreflau"

// Migrate brings schema auth up to date. It is safe to call from several processes at once.
func Migrate(ctx context.Context, pool *pgxpool.Pool) error {
	if _, err := pool.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS auth`); err != nil {
		// IF NOT EXISTS is not safe against a concurrent CREATE SCHEMA (another instance, or dbsetup): the
		// loser gets a unique violation although the schema is then there, which is all that matters.
		var exists bool
		if qerr := pool.QueryRow(ctx, `SELECT to_regnamespace('auth') IS NOT NULL`).Scan(&exists); qerr != nil || !exists {
			return fmt.Errorf("create schema auth: %w", err)
		}
	}
	sub, err := fs.Sub(migrationFiles, "migrations")
	if err != nil {
		return err
	}
	locker, err := lock.NewPostgresSessionLocker(lock.WithLockID(migrationLockID))
	if err != nil {
		return err
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub,
		goose.WithTableName(migrationTable), goose.WithSessionLocker(locker), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		return fmt.Errorf("auth migrations: %w", err)
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("auth migrations: %w", err)
	}
	return nil
}
