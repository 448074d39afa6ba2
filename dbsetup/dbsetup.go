// Package dbsetup installs what pgreflect needs inside a database: the API roles (anon, authenticated,
// service_role) and the login role authenticator, the default grants of schema public, the schema-version
// counter with its event triggers, and Supabase's SQL helpers (auth.uid(), auth.role(), auth.email(),
// auth.jwt()). It also holds the demo schema that `pgreflect start` loads into a new project.
//
// The SQL is embedded; Apply is idempotent and safe to run concurrently on one database (an advisory lock
// serialises it) and on several databases of one cluster (role creation tolerates a concurrent twin).
package dbsetup

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// NotifyChannel is the LISTEN/NOTIFY channel on which the schema version is announced.
const NotifyChannel = "pgreflect_schema_version"

// lockKey is the advisory lock every Apply and LoadDemo holds for its transaction (a fixed, arbitrary key:
// "pgrefle" in ASCII).
const lockKey int64 = 0x70677265666c65

var (
	//go:embed sql/roles.sql
	rolesSQL string
	//go:embed sql/setup.sql
	setupSQL string
	//go:embed sql/existing_grants.sql
	existingGrantsSQL string
	//go:embed sql/demo.sql
	demoSQL string
)

// Apply installs everything into the database conn is connected to. It needs a superuser (event triggers and
// roles) and runs in one transaction. Grants on objects that already exist in schema public are given on the
// first install only, so that a later REVOKE survives the next Apply; default privileges are kept every time.
func Apply(ctx context.Context, conn *pgx.Conn) error {
	return inLockedTx(ctx, conn, func(tx pgx.Tx) error {
		var fresh bool
		if err := tx.QueryRow(ctx, `select to_regnamespace('pgreflect') is null`).Scan(&fresh); err != nil {
			return fmt.Errorf("check for an earlier install: %w", err)
		}
		if _, err := tx.Exec(ctx, rolesSQL); err != nil {
			return fmt.Errorf("create roles: %w", err)
		}
		if _, err := tx.Exec(ctx, setupSQL); err != nil {
			return fmt.Errorf("install grants, schema version and auth helpers: %w", err)
		}
		if fresh {
			if _, err := tx.Exec(ctx, existingGrantsSQL); err != nil {
				return fmt.Errorf("grant existing objects of schema public: %w", err)
			}
		}
		return nil
	})
}

// LoadDemo creates the demo schema in schema public (tables with foreign keys, an enum, a view and a table
// under row level security, with a few rows). It does nothing when the demo is already there. Apply must have
// run first (the demo uses auth.uid() and the default privileges).
func LoadDemo(ctx context.Context, conn *pgx.Conn) error {
	return inLockedTx(ctx, conn, func(tx pgx.Tx) error {
		var present bool
		if err := tx.QueryRow(ctx, `select to_regtype('public.blog_post_status') is not null`).Scan(&present); err != nil {
			return fmt.Errorf("check for the demo schema: %w", err)
		}
		if present {
			return nil
		}
		if _, err := tx.Exec(ctx, demoSQL); err != nil {
			return fmt.Errorf("load demo schema: %w", err)
		}
		return nil
	})
}

// Installed reports whether Apply's objects exist in the database: the roles, the schema-version sequence,
// both event triggers and the auth helpers. Any role may call it.
func Installed(ctx context.Context, conn *pgx.Conn) (bool, error) {
	// Catalog lookups rather than to_regclass and friends, which fail without USAGE on the schema.
	const q = `
select (select count(*) from pg_roles
         where rolname in ('anon', 'authenticated', 'service_role', 'authenticator')) = 4
   and exists (select from pg_class c join pg_namespace n on n.oid = c.relnamespace
                where n.nspname = 'pgreflect' and c.relname = 'schema_version' and c.relkind = 'S')
   and (select count(*) from pg_event_trigger
         where evtname in ('pgreflect_watch_ddl', 'pgreflect_watch_drop') and evtenabled <> 'D') = 2
   and (select count(distinct p.proname) from pg_proc p join pg_namespace n on n.oid = p.pronamespace
         where n.nspname = 'auth' and p.proname in ('uid', 'role', 'email', 'jwt') and p.pronargs = 0) = 4`
	var ok bool
	if err := conn.QueryRow(ctx, q).Scan(&ok); err != nil {
		return false, fmt.Errorf("check pgreflect database setup: %w", err)
	}
	return ok, nil
}

func inLockedTx(ctx context.Context, conn *pgx.Conn, fn func(pgx.Tx) error) (err error) {
	tx, err := conn.Begin(ctx)
	if err != nil {
		return fmt.Errorf("begin: %w", err)
	}
	defer func() {
		if err != nil {
			err = errors.Join(err, ignoreClosed(tx.Rollback(context.WithoutCancel(ctx))))
		}
	}()
	if _, err := tx.Exec(ctx, `select pg_advisory_xact_lock($1)`, lockKey); err != nil {
		return fmt.Errorf("take setup lock: %w", err)
	}
	if err := fn(tx); err != nil {
		return err
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("commit: %w", err)
	}
	return nil
}

func ignoreClosed(err error) error {
	if errors.Is(err, pgx.ErrTxClosed) {
		return nil
	}
	return err
}
