// Package dbsetup installs what pgreflect needs inside a database: the API roles (anon, authenticated,
// service_role) and the login role authenticator, the default grants of schema public, the schema-version
// counter with its event triggers, and Supabase's SQL helpers (auth.uid(), auth.role(), auth.email(),
// auth.jwt()). It also holds the demo schema that `pgreflect start` loads into a new project.
//
// The SQL is embedded; Apply is idempotent and safe to run concurrently on one database (an advisory lock
// serialises it) and on several databases of one cluster (role creation tolerates a concurrent twin). It adds
// and never replaces or resets: roles that exist keep their attributes and passwords, grants are only added,
// and auth helpers the database already has are kept (ForeignHelpers names those that differ from Supabase's).
// The GraphQL engine itself needs none of it.
package dbsetup

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// NotifyChannel is the LISTEN/NOTIFY channel on which the schema version is announced.
const NotifyChannel = "pgreflect_schema_version"

// SchemaVersionQuery reads the schema version, for servers that poll it instead of listening on NotifyChannel
// (0 before the first change). Any role may run it.
const SchemaVersionQuery = "select coalesce(pg_sequence_last_value('pgreflect.schema_version'), 0)"

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

// ForeignHelpers lists the auth helpers the database has with another result than Supabase's, such as
// "auth.uid() returns integer": Apply keeps them, so RLS policies that call them go on working, but policies
// written for Supabase expect Supabase's.
func ForeignHelpers(ctx context.Context, conn *pgx.Conn) ([]string, error) {
	const q = `
select format('auth.%s() returns %s', p.proname, pg_catalog.format_type(p.prorettype, null))
  from (values ('uid', 'uuid'::regtype), ('role', 'text'), ('email', 'text'), ('jwt', 'jsonb')) as h(name, result)
  join pg_proc p on p.proname = h.name and p.pronargs = 0 and p.prorettype <> h.result
  join pg_namespace n on n.oid = p.pronamespace and n.nspname = 'auth'
 order by p.proname`
	rows, err := conn.Query(ctx, q)
	if err != nil {
		return nil, fmt.Errorf("list the auth helpers: %w", err)
	}
	foreign, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list the auth helpers: %w", err)
	}
	return foreign, nil
}

// CreateLoginRole creates name as a NOINHERIT login role with password, granted the API roles, and reports
// whether it did. A role of that name that exists already is left as it is, password included: roles belong
// to the whole cluster, so it may be another project's, whose servers log in with its password.
func CreateLoginRole(ctx context.Context, conn *pgx.Conn, name, password string) (created bool, err error) {
	err = inLockedTx(ctx, conn, func(tx pgx.Tx) error {
		var exists bool
		if err := tx.QueryRow(ctx, `select exists (select from pg_roles where rolname = $1)`, name).Scan(&exists); err != nil {
			return fmt.Errorf("look for role %s: %w", name, err)
		}
		if exists {
			return nil
		}
		// The savepoint keeps the transaction usable when a concurrent twin creates the role first.
		if _, err := tx.Exec(ctx, "savepoint create_role"); err != nil {
			return err
		}
		if err := execFormat(ctx, tx, `create role %I login noinherit password %L`, name, password); err != nil {
			var pgErr *pgconn.PgError
			if errors.As(err, &pgErr) && (pgErr.Code == "42710" || pgErr.Code == "23505") { // duplicate_object, unique_violation
				_, err = tx.Exec(ctx, "rollback to savepoint create_role")
				return err
			}
			return fmt.Errorf("create login role %s: %w", name, err)
		}
		if _, err := tx.Exec(ctx, rolesSQL); err != nil {
			return fmt.Errorf("create roles: %w", err)
		}
		if err := execFormat(ctx, tx, `grant anon, authenticated, service_role to %I`, name); err != nil {
			return fmt.Errorf("grant the API roles to %s: %w", name, err)
		}
		created = true
		return nil
	})
	return created, err
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

// querier is a connection or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// SetPassword gives the login role name a password. Only for a role of the caller's own: roles belong to the
// whole cluster, and other servers may log in with the role's present password.
func SetPassword(ctx context.Context, conn *pgx.Conn, name, password string) error {
	if err := execFormat(ctx, conn, `alter role %I with login password %L`, name, password); err != nil {
		return fmt.Errorf("set the password of %s: %w", name, err)
	}
	return nil
}

// execFormat runs the utility statement that format() makes of template and args: CREATE ROLE, GRANT and
// friends take no parameters, and format() quotes identifiers (%I) and literals (%L) as the server does.
func execFormat(ctx context.Context, tx querier, template string, args ...string) error {
	placeholders := make([]string, len(args))
	values := make([]any, len(args))
	for i, a := range args {
		placeholders[i] = fmt.Sprintf(", $%d::text", i+2)
		values[i] = a
	}
	var stmt string
	if err := tx.QueryRow(ctx, "select format($1::text"+strings.Join(placeholders, "")+")", append([]any{template}, values...)...).Scan(&stmt); err != nil {
		return err
	}
	_, err := tx.Exec(ctx, stmt)
	return err
}

func ignoreClosed(err error) error {
	if errors.Is(err, pgx.ErrTxClosed) {
		return nil
	}
	return err
}
